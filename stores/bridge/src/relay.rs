//! The relay (contract §5.8): a uniquely named function on the main's engine, bound to
//! `session::store::events`, whose handler hands each envelope's event to the host's
//! [`EventSink`], which re-emits it through this instance's local emitter only (local bindings,
//! local filters against the envelope's `session_metadata`). It never republishes, so there are
//! no echo loops.

use iii_sdk::RegisterFunction;
use serde_json::Value;
use session_core::catalog::OpKind;
use session_core::wire::api_store::OkResponse;
use session_core::wire::EventEnvelope;
use session_core::Emitted;

use std::sync::Arc;

use session_core::EventSink;

/// Prefix of relay function ids; the rest is a uuid in simple form.
pub const RELAY_PREFIX: &str = "session::bridge::recv::";

/// A fresh relay function id, `session::bridge::recv::<uuid simple>`.
pub fn relay_id(uuid: &uuid::Uuid) -> String {
    format!("{RELAY_PREFIX}{}", uuid.simple())
}

/// Hands one envelope's event to `sink`; a malformed one is logged and dropped. Always
/// `{ok: true}`.
pub async fn deliver(sink: &dyn EventSink, payload: Value) -> Value {
    let emitted = serde_json::from_value::<EventEnvelope>(payload)
        .ok()
        .and_then(|envelope| Emitted::from_envelope(&envelope));
    match emitted {
        Some(emitted) => sink.publish(vec![emitted]).await,
        None => tracing::warn!("bridge relay: dropped a malformed event envelope"),
    }
    serde_json::to_value(OkResponse::OK).unwrap_or(Value::Null)
}

/// The relay function's registration (metadata `{trace_hidden: true}`, a read's flags).
pub fn registration(sink: Arc<dyn EventSink>) -> RegisterFunction {
    RegisterFunction::new_async(move |payload: Value| {
        let sink = sink.clone();
        async move { Ok::<Value, iii_sdk::Error>(deliver(&*sink, payload).await) }
    })
    .description("Internal: session-manager bridge relay (re-emits the main's events locally).")
    .metadata(OpKind::Read.flags().to_json())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use session_core::events::DELETED;
    use session_core::wire::{Change, DeletedEvent, Object};
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Mutex;

    #[derive(Debug, Default)]
    struct Recorded(Mutex<Vec<Emitted>>);

    impl EventSink for Recorded {
        fn publish(&self, events: Vec<Emitted>) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
            self.0.lock().unwrap().extend(events);
            Box::pin(async {})
        }
    }

    fn value(of: impl Serialize) -> Value {
        serde_json::to_value(of).expect("serializable")
    }

    /// An envelope's event (with its change and the session's metadata) reaches the sink; an
    /// unknown trigger type or a malformed payload is dropped; every call answers `{ok: true}`.
    #[tokio::test]
    async fn hands_envelopes_to_the_sink() {
        let sink = Recorded::default();
        let deleted = value(DeletedEvent { session_id: "s".into(), timestamp: 1 });
        let change = Change {
            seq: 7,
            change_type: DELETED.into(),
            payload: deleted.clone(),
            timestamp: 1,
            epoch: None,
        };
        let owner = Object::from_iter([("owner".to_string(), Value::from("u"))]);
        let envelope = EventEnvelope {
            trigger_type: DELETED.into(),
            payload: deleted.clone(),
            session_metadata: Some(owner),
            change: Some(change),
        };
        let unknown = EventEnvelope { trigger_type: "nope".into(), ..envelope.clone() };
        assert_eq!(deliver(&sink, value(&envelope)).await, value(OkResponse::OK));
        assert_eq!(deliver(&sink, value(&unknown)).await, value(OkResponse::OK));
        assert_eq!(deliver(&sink, Value::from("not an envelope")).await, value(OkResponse::OK));
        let got = sink.0.lock().unwrap();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].to_envelope(), envelope);
        assert_eq!(relay_id(&uuid::Uuid::nil()), format!("{RELAY_PREFIX}{}", "0".repeat(32)));
    }
}
