//! The relay (contract §5.8): a uniquely named function on the main's engine, bound to
//! `session::store::events`, whose handler re-emits each envelope through this instance's local
//! emitter only (local bindings, local filters against the envelope's `session_metadata`). It
//! never republishes, so there are no echo loops.

use iii_sdk::RegisterFunction;
use serde_json::Value;
use session_core::catalog::OpKind;
use session_core::wire::api_store::OkResponse;
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
    serde_json::to_value(OkResponse::OK).unwrap_or(Value::Null)
}

/// The relay function's registration (metadata `{trace_hidden: true}`, a read's flags).
pub fn registration(emitter: Emitter) -> RegisterFunction {
    RegisterFunction::new_async(move |payload: Value| {
        let emitter = emitter.clone();
        async move { Ok::<Value, iii_sdk::Error>(deliver(&emitter, payload).await) }
    })
    .description("Internal: session-manager bridge relay (re-emits the main's events locally).")
    .metadata(OpKind::Read.flags().to_json())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emitter::Recorder;
    use serde::Serialize;
    use session_core::events::{DELETED, STORE_EVENTS};
    use session_core::feed::CHANGED;
    use session_core::wire::{
        Change, DeletedEvent, Object, SessionBindingConfig, StoreEventsBindingConfig,
    };
    use std::sync::Arc;

    fn value(of: impl Serialize) -> Value {
        serde_json::to_value(of).expect("serializable")
    }

    fn owner(name: &str) -> Object {
        Object::from_iter([("owner".to_string(), Value::from(name))])
    }

    fn owned_by(name: &str) -> Value {
        value(SessionBindingConfig { session_id: None, metadata: Some(owner(name)) })
    }

    /// Local bindings with local filters against the envelope's metadata; never the feed.
    #[tokio::test]
    async fn re_emits_locally_only() {
        let rec = Arc::new(Recorder::default());
        let emitter = Emitter::new(rec.clone());
        {
            let mut subs = emitter.subscriptions.write().unwrap();
            subs.bind(DELETED, "1", "f::mine", &owned_by("u")).unwrap();
            subs.bind(DELETED, "2", "f::theirs", &owned_by("v")).unwrap();
            subs.bind(STORE_EVENTS, "3", "other::relay", &value(StoreEventsBindingConfig {}))
                .unwrap();
        }
        let deleted = value(DeletedEvent { session_id: "s".into(), timestamp: 1 });
        emitter
            .subscriptions
            .write()
            .unwrap()
            .bind(CHANGED, "4", "f::feed", &serde_json::json!({"session_id": "s"}))
            .unwrap();
        let change =
            Change { seq: 7, change_type: DELETED.into(), payload: deleted.clone(), timestamp: 1 };
        let envelope = EventEnvelope {
            trigger_type: DELETED.into(),
            payload: deleted.clone(),
            session_metadata: Some(owner("u")),
            change: Some(change),
        };
        let unknown = EventEnvelope { trigger_type: "nope".into(), ..envelope.clone() };
        assert_eq!(deliver(&emitter, value(&envelope)).await, value(OkResponse::OK));
        assert_eq!(deliver(&emitter, value(&unknown)).await, value(OkResponse::OK));
        assert_eq!(deliver(&emitter, Value::from("not an envelope")).await, value(OkResponse::OK));
        let got = rec.0.lock().unwrap();
        let ids: Vec<&str> = got.iter().map(|d| d.function_id.as_str()).collect();
        assert_eq!(ids, ["f::mine", "f::feed"], "the seed binding, then the feed's");
        assert_eq!(got[0].payload, deleted);
        assert_eq!(got[1].payload["seq"], 7, "the envelope's change reaches session::changed");
        assert_eq!(relay_id(&uuid::Uuid::nil()), format!("{RELAY_PREFIX}{}", "0".repeat(32)));
    }
}
