//! Events: the seven trigger type ids, the typed `SessionEvent`, and `Emitted` — an event plus the
//! session metadata its bindings' filters are evaluated against (contract §3).

use alloc::string::String;
use serde_json::Value;

use crate::wire::{
    Change, ChangedEvent, CreatedEvent, DeletedEvent, EventEnvelope, MessageAddedEvent,
    MessageUpdatedEvent, MetaUpdatedEvent, Object, Role, SessionEntry, SessionMeta,
    StatusChangedEvent,
};

pub const CREATED: &str = "session::created";
pub const MESSAGE_ADDED: &str = "session::message-added";
pub const MESSAGE_UPDATED: &str = "session::message-updated";
pub const STATUS_CHANGED: &str = "session::status-changed";
pub const META_UPDATED: &str = "session::meta-updated";
pub const DELETED: &str = "session::deleted";
/// Internal bridge feed: every event as an `EventEnvelope`, unfiltered.
pub const STORE_EVENTS: &str = "session::store::events";

/// The six public trigger types, in catalog order.
pub const PUBLIC_TRIGGER_TYPES: [&str; 6] =
    [CREATED, MESSAGE_ADDED, MESSAGE_UPDATED, STATUS_CHANGED, META_UPDATED, DELETED];

/// The `session::message-added` event of a committed entry.
pub fn message_added(session_id: &str, entry: &SessionEntry, timestamp: i64) -> SessionEvent {
    SessionEvent::MessageAdded(MessageAddedEvent {
        session_id: session_id.into(),
        entry_id: entry.id().into(),
        parent_id: entry.parent_id().map(Into::into),
        message: entry.message().cloned(),
        custom: entry.custom_payload(),
        origin: entry.origin().cloned(),
        timestamp,
    })
}

/// One event of one of the six public trigger types.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    Created(CreatedEvent),
    MessageAdded(MessageAddedEvent),
    MessageUpdated(MessageUpdatedEvent),
    StatusChanged(StatusChangedEvent),
    MetaUpdated(MetaUpdatedEvent),
    Deleted(DeletedEvent),
}

impl SessionEvent {
    /// The trigger type id this event fires.
    pub fn trigger_type(&self) -> &'static str {
        match self {
            SessionEvent::Created(_) => CREATED,
            SessionEvent::MessageAdded(_) => MESSAGE_ADDED,
            SessionEvent::MessageUpdated(_) => MESSAGE_UPDATED,
            SessionEvent::StatusChanged(_) => STATUS_CHANGED,
            SessionEvent::MetaUpdated(_) => META_UPDATED,
            SessionEvent::Deleted(_) => DELETED,
        }
    }

    /// The session the event is about.
    pub fn session_id(&self) -> &str {
        match self {
            SessionEvent::Created(e) => &e.session_id,
            SessionEvent::MessageAdded(e) => &e.session_id,
            SessionEvent::MessageUpdated(e) => &e.session_id,
            SessionEvent::StatusChanged(e) => &e.session_id,
            SessionEvent::MetaUpdated(e) => &e.session_id,
            SessionEvent::Deleted(e) => &e.session_id,
        }
    }

    /// The role of the event's message; `None` for custom entries and non-message events.
    pub fn role(&self) -> Option<Role> {
        match self {
            SessionEvent::MessageAdded(e) => e.message.as_ref().map(|m| m.role()),
            SessionEvent::MessageUpdated(e) => Some(e.message.role()),
            _ => None,
        }
    }

    /// The payload a bound function receives.
    pub fn payload(&self) -> Value {
        let value = match self {
            SessionEvent::Created(e) => serde_json::to_value(e),
            SessionEvent::MessageAdded(e) => serde_json::to_value(e),
            SessionEvent::MessageUpdated(e) => serde_json::to_value(e),
            SessionEvent::StatusChanged(e) => serde_json::to_value(e),
            SessionEvent::MetaUpdated(e) => serde_json::to_value(e),
            SessionEvent::Deleted(e) => serde_json::to_value(e),
        };
        value.unwrap_or(Value::Null)
    }

    /// Rebuilds an event from a trigger type id and payload; `None` for an unknown type or a
    /// payload of the wrong shape.
    pub fn from_parts(trigger_type: &str, payload: &Value) -> Option<SessionEvent> {
        fn parse<T: serde::de::DeserializeOwned>(v: &Value) -> Option<T> {
            T::deserialize(v).ok()
        }
        Some(match trigger_type {
            CREATED => SessionEvent::Created(parse(payload)?),
            MESSAGE_ADDED => {
                let e: MessageAddedEvent = parse(payload)?;
                if e.message.is_some() == e.custom.is_some() {
                    return None;
                }
                SessionEvent::MessageAdded(e)
            }
            MESSAGE_UPDATED => SessionEvent::MessageUpdated(parse(payload)?),
            STATUS_CHANGED => SessionEvent::StatusChanged(parse(payload)?),
            META_UPDATED => SessionEvent::MetaUpdated(parse(payload)?),
            DELETED => SessionEvent::Deleted(parse(payload)?),
            _ => return None,
        })
    }
}

/// An event ready to publish: the event, the session metadata as of the mutation and, once the
/// write landed in a store that keeps a feed, the change it was recorded as.
#[derive(Debug, Clone, PartialEq)]
pub struct Emitted {
    pub event: SessionEvent,
    pub session_metadata: Option<Object>,
    /// The feed change (seq) of this event: `None` before the write, for a store without a feed
    /// and for resync replays (which allocate no seq).
    pub change: Option<Change>,
}

impl Emitted {
    /// An event filtered against `meta`'s metadata.
    pub fn new(event: SessionEvent, meta: &SessionMeta) -> Self {
        Emitted { event, session_metadata: meta.metadata.clone(), change: None }
    }

    /// The `session::changed` delivery of this event's change, if it has one.
    pub fn changed_event(&self) -> Option<ChangedEvent> {
        let change = self.change.as_ref()?;
        Some(ChangedEvent {
            session_id: self.event.session_id().into(),
            epoch: change.epoch.clone(),
            seq: change.seq,
            first_seq: None,
            change_type: change.change_type.clone(),
            payload: change.payload.clone(),
            timestamp: change.timestamp,
        })
    }

    /// The cross-instance wire form.
    pub fn to_envelope(&self) -> EventEnvelope {
        EventEnvelope {
            trigger_type: String::from(self.event.trigger_type()),
            payload: self.event.payload(),
            session_metadata: self.session_metadata.clone(),
            change: self.change.clone(),
        }
    }

    /// Parses an envelope; `None` when its type is unknown or its payload malformed.
    pub fn from_envelope(envelope: &EventEnvelope) -> Option<Emitted> {
        Some(Emitted {
            event: SessionEvent::from_parts(&envelope.trigger_type, &envelope.payload)?,
            session_metadata: envelope.session_metadata.clone(),
            change: envelope.change.clone(),
        })
    }
}
