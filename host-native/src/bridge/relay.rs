//! The relay (contract §5.8): a uniquely named function on the main's engine, bound to
//! `session::store::events`, whose handler re-emits each envelope through this instance's local
//! emitter only (local bindings, local filters against the envelope's `session_metadata`). It
//! never republishes, so there are no echo loops.

use iii_sdk::RegisterFunction;
use serde_json::{json, Value};
use session_core::wire::EventEnvelope;
use session_core::Emitted;

use crate::emitter::Emitter;

/// Prefix of relay function ids; the rest is a uuid in simple form.
pub const RELAY_PREFIX: &str = "session::bridge::recv::";

/// A fresh relay function id, `session::bridge::recv::<uuid simple>`.
pub fn relay_id(uuid: &uuid::Uuid) -> String {
    format!("{RELAY_PREFIX}{}", uuid.simple())
}

/// Re-emits one envelope locally; a malformed one is logged and dropped. Always `{ok: true}`.
pub async fn deliver(emitter: &Emitter, payload: Value) -> Value {
    let emitted = serde_json::from_value::<EventEnvelope>(payload)
        .ok()
        .and_then(|envelope| Emitted::from_envelope(&envelope));
    match emitted {
        Some(emitted) => emitter.publish(std::slice::from_ref(&emitted), false).await,
        None => tracing::warn!("bridge relay: dropped a malformed event envelope"),
    }
    json!({ "ok": true })
}

/// The relay function's registration (metadata `{trace_hidden: true}`).
pub fn registration(emitter: Emitter) -> RegisterFunction {
    RegisterFunction::new_async(move |payload: Value| {
        let emitter = emitter.clone();
        async move { Ok::<Value, iii_sdk::Error>(deliver(&emitter, payload).await) }
    })
    .description("Internal: session-manager bridge relay (re-emits the main's events locally).")
    .metadata(json!({ "trace_hidden": true }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emitter::Recorder;
    use session_core::events::{DELETED, STORE_EVENTS};
    use std::sync::Arc;

    /// Local bindings with local filters against the envelope's metadata; never the feed.
    #[tokio::test]
    async fn re_emits_locally_only() {
        let rec = Arc::new(Recorder::default());
        let emitter = Emitter::new(rec.clone());
        {
            let mut subs = emitter.subscriptions.write().unwrap();
            subs.bind(DELETED, "1", "f::mine", &json!({"metadata": {"owner": "u"}})).unwrap();
            subs.bind(DELETED, "2", "f::theirs", &json!({"metadata": {"owner": "v"}})).unwrap();
            subs.bind(STORE_EVENTS, "3", "other::relay", &json!({})).unwrap();
        }
        let envelope = json!({
            "trigger_type": DELETED,
            "payload": {"session_id": "s", "timestamp": 1},
            "session_metadata": {"owner": "u"},
        });
        assert_eq!(deliver(&emitter, envelope).await, json!({"ok": true}));
        assert_eq!(deliver(&emitter, json!({"trigger_type": "nope"})).await, json!({"ok": true}));
        let got = rec.0.lock().unwrap();
        let ids: Vec<&str> = got.iter().map(|d| d.function_id.as_str()).collect();
        assert_eq!(ids, ["f::mine"]);
        assert_eq!(got[0].payload, json!({"session_id": "s", "timestamp": 1}));
        assert_eq!(relay_id(&uuid::Uuid::nil()), format!("{RELAY_PREFIX}{}", "0".repeat(32)));
    }
}
