//! Resync after an adapter swap (contract §6.4): the events that replay a store's current state to
//! subscribers, computed by a read-only walk of the new store. The host publishes them.

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::StoreError;
use crate::events::{Emitted, SessionEvent};
use crate::store::Store;
use crate::wire::{
    DeletedEvent, MessageAddedEvent, MessageUpdatedEvent, SessionEntry, SessionMeta,
};

/// The resync events, in order: `session::deleted` (timestamp `now_ms`, filtered with the old
/// metadata) for every session of `before` the new store no longer has, then per session of the
/// new store `session::created` from its current meta followed by one event per stored entry
/// (listing order): `message-updated` for a message with `revision > 0`, else `message-added`.
pub fn resync_events(
    before: &[SessionMeta],
    store: &dyn Store,
    now_ms: i64,
) -> Result<Vec<Emitted>, StoreError> {
    let metas = store.list_metas()?;
    let present: BTreeSet<&str> = metas.iter().map(|m| m.session_id.as_str()).collect();
    let mut out = Vec::new();
    for old in before.iter().filter(|m| !present.contains(m.session_id.as_str())) {
        let event = SessionEvent::Deleted(DeletedEvent {
            session_id: old.session_id.clone(),
            timestamp: now_ms,
        });
        out.push(Emitted::new(event, old));
    }
    for meta in &metas {
        out.push(crate::ops::create::created_event(meta));
        for entry in store.list_entries(&meta.session_id)? {
            out.push(Emitted::new(entry_event(&meta.session_id, entry), meta));
        }
    }
    Ok(out)
}

fn entry_event(session_id: &str, entry: SessionEntry) -> SessionEvent {
    let session_id = String::from(session_id);
    match entry {
        SessionEntry::Message { id, revision, origin, message, timestamp, .. } if revision > 0 => {
            SessionEvent::MessageUpdated(MessageUpdatedEvent {
                session_id,
                entry_id: id,
                message,
                revision,
                origin,
                timestamp,
            })
        }
        other => SessionEvent::MessageAdded(MessageAddedEvent {
            session_id,
            entry_id: String::from(other.id()),
            parent_id: other.parent_id().map(String::from),
            custom: other.custom_payload(),
            origin: other.origin().cloned(),
            timestamp: other.timestamp(),
            message: match other {
                SessionEntry::Message { message, .. } => Some(message),
                SessionEntry::Custom { .. } => None,
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::dispatch;
    use crate::{Env, Limits, ManualClock, MemStore, SeqIds};
    use serde_json::json;

    #[test]
    fn replays_deleted_created_then_entries() {
        let (store, clock, ids) = (MemStore::new(), ManualClock::new(), SeqIds::new());
        let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
        let call = |id: &str, p| dispatch(&store, &env, id, p).unwrap().unwrap().response;
        let sid = call("session::create", json!({"metadata": {"owner": "u"}}))["session_id"]
            .as_str()
            .unwrap()
            .to_string();
        let msg =
            json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1});
        let eid = call("session::append", json!({"session_id": sid, "message": msg}))["entry_id"]
            .as_str()
            .unwrap()
            .to_string();
        call(
            "session::append",
            json!({"session_id": sid, "custom": {"custom_type": "x", "data": 1}}),
        );
        let content = json!([{"type": "text", "text": "hey"}]);
        call(
            "session::update-message",
            json!({"session_id": sid, "entry_id": eid, "content": content}),
        );
        let gone =
            SessionMeta { session_id: "s_gone".into(), ..store.get_meta(&sid).unwrap().unwrap() };
        let events = resync_events(&[gone], &store, 7).unwrap();
        let types: Vec<&str> = events.iter().map(|e| e.event.trigger_type()).collect();
        assert_eq!(types[0], crate::events::DELETED);
        assert_eq!(events[0].event.payload(), json!({"session_id": "s_gone", "timestamp": 7}));
        assert_eq!(types[1], crate::events::CREATED);
        assert_eq!(events.len(), 4);
        assert!(types.contains(&crate::events::MESSAGE_UPDATED));
        assert!(types.contains(&crate::events::MESSAGE_ADDED));
        assert!(events.iter().all(
            |e| e.session_metadata == Some(json!({"owner": "u"}).as_object().unwrap().clone())
        ));
    }
}
