//! A replica rebuilt from one session's change feed: what a client holds that subscribes to
//! `session::changed`, catches up with `session::changes` and applies deltas. It keeps the session
//! fields the seed events carry and every entry (every branch: content, revision, parent). The
//! one implementation the model test, the web bench and the example client share.
//!
//! The seed's events do not carry everything: a fork's copied history, the active-leaf switch,
//! the draft, the kind and the metadata given at creation are event-silent. A replica takes a
//! snapshot read where it needs them: [`Step::NeedsSnapshot`] after a fork's `session::created`,
//! and [`Replica::from_snapshot`] after a `truncated` page.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::events::{
    CREATED, DELETED, MESSAGE_ADDED, MESSAGE_UPDATED, META_UPDATED, STATUS_CHANGED,
};
use crate::feed::MESSAGE_DELTA;
use crate::record::{add_delta, SessionState};
use crate::wire::{
    Change, CreatedEvent, MessageAddedEvent, MessageDelta, MessageUpdatedEvent, MetaUpdatedEvent,
    Object, SessionEntry, SessionMeta, SessionStatus, StatusChangedEvent,
};

/// The session fields a replica knows.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaMeta {
    pub title: String,
    pub description: String,
    pub status: SessionStatus,
    pub status_reason: Option<String>,
    pub forked_from: Option<String>,
    pub created_at: i64,
    pub message_count: u64,
    /// `None` until a snapshot or a `session::meta-updated` told it (creation does not).
    pub metadata: Option<Option<Object>>,
}

/// One session as its feed rebuilt it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replica {
    pub session_id: String,
    /// The seq of the last change applied.
    pub applied_seq: u64,
    /// `None` while the session does not exist (never created, or deleted).
    pub meta: Option<ReplicaMeta>,
    pub entries: BTreeMap<String, SessionEntry>,
}

/// What applying one change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Applied,
    /// Seen before (at or below `applied_seq`): nothing changed. Deliveries are at least once.
    Duplicate,
    /// Changes are missing between `applied_seq` and this one: fetch `session::changes` after
    /// `applied_seq`, then apply this one again.
    Gap {
        after_seq: u64,
    },
    /// Applied, but the session's entries came silently (a fork): read a snapshot.
    NeedsSnapshot,
    /// The change could not be applied (unknown type, malformed payload, unknown entry).
    Rejected(String),
}

impl Replica {
    pub fn new(session_id: impl Into<String>) -> Self {
        Replica { session_id: session_id.into(), ..Replica::default() }
    }

    /// The replica of a snapshot read (`session::get` + every entry) taken at `seq`.
    pub fn from_snapshot(
        session_id: impl Into<String>,
        meta: Option<&SessionMeta>,
        entries: impl IntoIterator<Item = SessionEntry>,
        seq: u64,
    ) -> Self {
        Replica {
            session_id: session_id.into(),
            applied_seq: seq,
            meta: meta.map(|m| ReplicaMeta {
                title: m.title.clone(),
                description: m.description.clone(),
                status: m.status,
                status_reason: m.status_reason.clone(),
                forked_from: m.forked_from.clone(),
                created_at: m.created_at,
                message_count: m.message_count,
                metadata: Some(m.metadata.clone()),
            }),
            entries: entries.into_iter().map(|e| (String::from(e.id()), e)).collect(),
        }
    }

    /// Applies one change of this session, in seq order.
    pub fn apply(&mut self, change: &Change) -> Step {
        if change.seq <= self.applied_seq {
            return Step::Duplicate;
        }
        if change.seq != self.applied_seq + 1 {
            return Step::Gap { after_seq: self.applied_seq };
        }
        let step = match self.apply_payload(&change.change_type, &change.payload) {
            Ok(step) => step,
            Err(why) => return Step::Rejected(why),
        };
        self.applied_seq = change.seq;
        step
    }

    fn apply_payload(&mut self, change_type: &str, payload: &Value) -> Result<Step, String> {
        fn parse<T: DeserializeOwned>(t: &str, v: &Value) -> Result<T, String> {
            T::deserialize(v).map_err(|e| format!("{t}: {e}"))
        }
        match change_type {
            CREATED => {
                let e: CreatedEvent = parse(change_type, payload)?;
                let forked = e.forked_from.is_some();
                self.entries.clear();
                self.meta = Some(ReplicaMeta {
                    title: e.title,
                    description: e.description,
                    status: e.status,
                    status_reason: None,
                    forked_from: e.forked_from,
                    created_at: e.created_at,
                    message_count: 0,
                    metadata: None,
                });
                return Ok(if forked { Step::NeedsSnapshot } else { Step::Applied });
            }
            MESSAGE_ADDED => {
                let e: MessageAddedEvent = parse(change_type, payload)?;
                let meta = self.meta.as_mut().ok_or("message-added before created")?;
                let entry = match (e.message, e.custom) {
                    (Some(message), None) => {
                        meta.message_count += 1;
                        SessionEntry::Message {
                            id: e.entry_id.clone(),
                            parent_id: e.parent_id,
                            timestamp: e.timestamp,
                            revision: 0,
                            origin: e.origin,
                            message,
                        }
                    }
                    (None, Some(custom)) => SessionEntry::Custom {
                        id: e.entry_id.clone(),
                        parent_id: e.parent_id,
                        timestamp: e.timestamp,
                        revision: 0,
                        origin: e.origin,
                        custom_type: custom.custom_type,
                        data: custom.data,
                    },
                    _ => return Err("message-added with both or neither of message/custom".into()),
                };
                self.entries.insert(e.entry_id, entry);
            }
            MESSAGE_UPDATED => {
                let e: MessageUpdatedEvent = parse(change_type, payload)?;
                match self.entries.get_mut(&e.entry_id) {
                    Some(SessionEntry::Message { message, revision, .. }) => {
                        *message = e.message;
                        *revision = e.revision;
                    }
                    _ => return Err(format!("message-updated of unknown message {}", e.entry_id)),
                }
            }
            MESSAGE_DELTA => {
                let d: MessageDelta = parse(change_type, payload)?;
                match self.entries.get_mut(&d.entry_id) {
                    Some(SessionEntry::Message { message, revision, .. }) => {
                        add_delta(message.content_mut(), &d).map_err(String::from)?;
                        *revision = d.revision;
                    }
                    _ => return Err(format!("message-delta of unknown message {}", d.entry_id)),
                }
            }
            STATUS_CHANGED => {
                let e: StatusChangedEvent = parse(change_type, payload)?;
                let meta = self.meta.as_mut().ok_or("status-changed before created")?;
                meta.status = e.status;
                meta.status_reason = e.status_reason;
            }
            META_UPDATED => {
                let e: MetaUpdatedEvent = parse(change_type, payload)?;
                let meta = self.meta.as_mut().ok_or("meta-updated before created")?;
                meta.title = e.title;
                meta.description = e.description;
                meta.metadata = Some(e.metadata);
            }
            DELETED => {
                self.meta = None;
                self.entries.clear();
            }
            other => return Err(format!("unknown change type {other}")),
        }
        Ok(Step::Applied)
    }

    /// How this replica differs from what `state` serves (`None`: it agrees). Compares what a
    /// feed carries: existence, the fields of [`ReplicaMeta`] (metadata once known) and every
    /// entry.
    pub fn differs_from(&self, state: &SessionState) -> Option<String> {
        let snapshot = Replica::from_snapshot(
            self.session_id.clone(),
            state.meta.as_ref(),
            state.entries.values().cloned(),
            self.applied_seq,
        );
        let mut ours = self.clone();
        if let (Some(mine), Some(theirs)) = (&mut ours.meta, &snapshot.meta) {
            if mine.metadata.is_none() {
                mine.metadata = theirs.metadata.clone();
            }
        }
        if snapshot.meta.is_none() {
            // A deleted session serves no entries.
            if ours.meta.is_some() {
                return Some(format!(
                    "{}: the replica has a session the store deleted",
                    self.session_id
                ));
            }
            return None;
        }
        if ours.meta != snapshot.meta {
            return Some(format!(
                "{}: meta {:?} != {:?}",
                self.session_id, ours.meta, snapshot.meta
            ));
        }
        if ours.entries != snapshot.entries {
            let theirs: alloc::vec::Vec<&String> = snapshot.entries.keys().collect();
            let mine: alloc::vec::Vec<&String> = ours.entries.keys().collect();
            return Some(format!(
                "{}: entries differ (replica {mine:?}, store {theirs:?})",
                self.session_id
            ));
        }
        None
    }
}
