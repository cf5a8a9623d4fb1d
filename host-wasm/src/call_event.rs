//! One event of a `Workspace::call` answer: its envelope and the feed change (seq) it was
//! recorded as.

use serde::Serialize;
use serde_json::Value;
use session_core::wire::Object;
use session_core::Emitted;

/// One event `call` returns: the envelope (`trigger_type`, `payload`, `session_metadata?`) and
/// the feed change it was recorded as.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct CallEvent {
    /// One of the six public trigger type ids.
    trigger_type: String,
    /// The payload of that trigger type.
    payload: Value,
    /// `SessionMeta.metadata` as of the mutation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_metadata: Option<Object>,
    /// The event's seq in its session's change feed (`session::changes`: from 1, no gaps);
    /// absent only for an event the feed did not record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
    /// The epoch of that seq (one per incarnation of the session id: a re-created id starts a
    /// new one at seq 1); absent with `seq`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    epoch: Option<String>,
    /// The change the feed recorded, when it is not the event itself: `session::append-delta`
    /// fires `session::message-updated` (the full message) and records a compact
    /// `session::message-delta` (payload `MessageDelta`). Absent when the change is the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    change: Option<RecordedChange>,
}

/// A feed change's type and payload (the seq is its event's).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct RecordedChange {
    #[serde(rename = "type")]
    change_type: String,
    payload: Value,
}

impl CallEvent {
    /// The event's envelope (`Emitted::to_envelope`) with its change.
    pub(crate) fn of(emitted: &Emitted) -> Self {
        let envelope = emitted.to_envelope();
        let change = emitted.change.as_ref();
        let differs = change
            .filter(|c| c.change_type != envelope.trigger_type || c.payload != envelope.payload);
        CallEvent {
            seq: change.map(|c| c.seq),
            epoch: change.and_then(|c| c.epoch.clone()),
            change: differs.map(|c| RecordedChange {
                change_type: c.change_type.clone(),
                payload: c.payload.clone(),
            }),
            trigger_type: envelope.trigger_type,
            payload: envelope.payload,
            session_metadata: envelope.session_metadata,
        }
    }
}
