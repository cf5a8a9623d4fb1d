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
use alloc::vec::Vec;
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
            entries: {
                // Inserted one by one: `collect` would sort them first (the bundle's size).
                let mut map = BTreeMap::new();
                for entry in entries {
                    map.insert(String::from(entry.id()), entry);
                }
                map
            },
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
    /// entry. The difference names the fields and entry ids, never their values.
    pub fn differs_from(&self, state: &SessionState) -> Option<String> {
        let id = &self.session_id;
        let (mine, theirs) = match (&self.meta, &state.meta) {
            // A deleted session serves no entries.
            (None, None) => return None,
            (Some(_), None) => {
                return Some(format!("{id}: the replica has a session the store deleted"))
            }
            (None, Some(_)) => {
                return Some(format!("{id}: the store has a session the replica does not"))
            }
            (Some(mine), Some(theirs)) => (mine, theirs),
        };
        let fields = [
            ("title", mine.title == theirs.title),
            ("description", mine.description == theirs.description),
            ("status", mine.status == theirs.status),
            ("status_reason", mine.status_reason == theirs.status_reason),
            ("forked_from", mine.forked_from == theirs.forked_from),
            ("created_at", mine.created_at == theirs.created_at),
            ("message_count", mine.message_count == theirs.message_count),
            ("metadata", mine.metadata.as_ref().is_none_or(|m| *m == theirs.metadata)),
        ];
        let mut differ = String::new();
        for (field, same) in fields {
            if !same {
                list_item(&mut differ, ", ", field);
            }
        }
        if !differ.is_empty() {
            return Some(format!("{id}: meta differs in {differ}"));
        }
        let (mut only_mine, mut changed) = (Vec::new(), Vec::new());
        for (entry_id, entry) in &self.entries {
            match state.entries.get(entry_id) {
                None => only_mine.push(entry_id.as_str()),
                Some(served) if served != entry => changed.push(entry_id.as_str()),
                Some(_) => {}
            }
        }
        let only_theirs: Vec<&str> = state
            .entries
            .keys()
            .filter(|entry_id| !self.entries.contains_key(*entry_id))
            .map(String::as_str)
            .collect();
        let lists = [
            ("only in the replica: ", only_mine),
            ("only in the store: ", only_theirs),
            ("different: ", changed),
        ];
        for (what, ids) in &lists {
            if ids.is_empty() {
                continue;
            }
            list_item(&mut differ, "; ", what);
            for (i, entry_id) in ids.iter().enumerate() {
                differ.push_str(if i == 0 { "" } else { ", " });
                differ.push_str(entry_id);
            }
        }
        if differ.is_empty() {
            return None;
        }
        Some(format!("{id}: entries differ ({differ})"))
    }
}

/// Appends `item` to a list written as text, after `separator` unless it is the first.
fn list_item(list: &mut String, separator: &str, item: &str) {
    if !list.is_empty() {
        list.push_str(separator);
    }
    list.push_str(item);
}
