//! Simulation of a session log: turns the records of an exported `.jsonl` file into the public
//! calls that would have produced them (ensure, append, update-message, set-active-leaf,
//! set-meta, set-status, set-draft), each with the clock value to run it at, so a host can replay
//! a session step by step through [`crate::catalog::dispatch`] and show the events every step fires.
//!
//! A live log keeps every streamed revision of an entry, so its simulation replays the stream; a
//! snapshot (compacted or exported) only holds final entries, which are appended whole. What the
//! public API cannot express is left out: a second root entry, entries whose parent never appears,
//! `forked_from`, draft attachments and deletions.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;
use serde::Serialize;
use serde_json::Value;

use crate::record::Record;
use crate::wire::{
    AgentMessage, AppendRequest, CustomPayload, EnsureRequest, SessionEntry, SessionMeta,
    SetActiveLeafRequest, SetDraftRequest, SetMetaRequest, SetStatusRequest, UpdateMessageRequest,
};

/// One call of a simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Step {
    /// Clock value (ms since epoch) to run the call at.
    pub at: i64,
    /// 1-based line of the log the step comes from (a group's first record line).
    pub line: usize,
    pub function_id: &'static str,
    pub request: Value,
}

/// The calls that rebuild session `session_id` from `bytes` (a session log), in order.
pub fn steps(session_id: &str, bytes: &[u8]) -> Vec<Step> {
    let mut sim = Sim { sid: session_id.into(), ..Sim::default() };
    // Change set by change set, as replay applies them (a torn group is left out).
    crate::jsonl::walk(bytes, |line, records| {
        sim.line = line;
        if let Some(at) = records.iter().filter_map(record_time).max() {
            sim.now = sim.now.max(at);
        }
        for record in records {
            sim.record(record);
        }
    });
    sim.flush();
    sim.steps
}

fn record_time(record: &Record) -> Option<i64> {
    match record {
        Record::Meta { meta } | Record::Append { meta, .. } => Some(meta.updated_at),
        _ => None,
    }
}

#[derive(Default)]
struct Sim {
    sid: String,
    line: usize,
    now: i64,
    meta: Option<SessionMeta>,
    /// Revision of every entry the simulation has appended (message entries only are updatable).
    revisions: BTreeMap<String, u64>,
    leaf: Option<String>,
    /// New entries waiting to be appended once their parent is known.
    batch: Vec<(usize, SessionEntry)>,
    steps: Vec<Step>,
}

fn to_value<T: Serialize>(request: &T) -> Value {
    serde_json::to_value(request).unwrap_or(Value::Null)
}

impl Sim {
    fn push<T: Serialize>(&mut self, at: i64, function_id: &'static str, request: &T) {
        self.push_at_line(self.line, at, function_id, request);
    }

    fn push_at_line<T: Serialize>(&mut self, line: usize, at: i64, id: &'static str, req: &T) {
        self.steps.push(Step { at, line, function_id: id, request: to_value(req) });
    }

    fn record(&mut self, record: &Record) {
        match record {
            Record::Meta { meta } => {
                self.flush();
                self.meta_changed(meta);
            }
            Record::Entry { entry } => {
                if self.revisions.contains_key(entry.id()) {
                    self.flush();
                    self.updated(entry);
                } else {
                    self.batch.push((self.line, entry.clone()));
                }
            }
            Record::Append { entry, meta } => {
                self.flush();
                if self.meta.is_none() {
                    self.meta_changed(meta);
                }
                if !self.revisions.contains_key(entry.id()) {
                    self.append(self.line, entry);
                }
                self.meta_changed(meta);
            }
            Record::Leaf { entry_id: Some(id) } => {
                self.flush();
                if self.leaf.as_deref() != Some(id.as_str()) && self.revisions.contains_key(id) {
                    let req =
                        SetActiveLeafRequest { session_id: self.sid.clone(), entry_id: id.clone() };
                    self.push(self.now, "session::set-active-leaf", &req);
                    self.leaf = Some(id.clone());
                }
            }
            Record::Delta { delta, at } => {
                self.flush();
                if let Some(revision) = self.revisions.get_mut(&delta.entry_id) {
                    *revision = delta.revision;
                    let req = crate::wire::AppendDeltaRequest {
                        session_id: self.sid.clone(),
                        entry_id: delta.entry_id.clone(),
                        text: delta.text.clone(),
                        thinking: delta.thinking.clone(),
                        expected_revision: None,
                        origin: None,
                    };
                    self.push(*at, "session::append-delta", &req);
                }
            }
            Record::Leaf { entry_id: None }
            | Record::Commit { .. }
            | Record::Settle
            | Record::Change { .. }
            | Record::Trash { .. }
            | Record::Restore
            | Record::Expiry { .. } => {}
        }
    }

    /// The calls that turn the simulated meta into `meta` (ensure first).
    fn meta_changed(&mut self, meta: &SessionMeta) {
        let sid = self.sid.clone();
        let at = meta.updated_at;
        let before = match self.meta.take() {
            Some(before) => before,
            None => {
                let req = EnsureRequest {
                    session_id: sid.clone(),
                    title: Some(meta.title.clone()).filter(|t| !t.is_empty()),
                    description: Some(meta.description.clone()).filter(|d| !d.is_empty()),
                    metadata: meta.metadata.clone(),
                    kind: Some(meta.kind),
                };
                self.push(meta.created_at, "session::ensure", &req);
                let mut created = meta.clone();
                created.status = crate::wire::SessionStatus::Idle;
                created.status_reason = None;
                created.draft = None;
                created
            }
        };
        if (&before.title, &before.description, &before.metadata)
            != (&meta.title, &meta.description, &meta.metadata)
        {
            let req = SetMetaRequest {
                session_id: sid.clone(),
                title: Some(meta.title.clone()),
                description: Some(meta.description.clone()),
                metadata: meta.metadata.clone(),
            };
            self.push(at, "session::set-meta", &req);
        }
        if (before.status, &before.status_reason) != (meta.status, &meta.status_reason) {
            let req = SetStatusRequest {
                session_id: sid.clone(),
                status: meta.status,
                reason: meta.status_reason.clone(),
            };
            self.push(at, "session::set-status", &req);
        }
        if before.draft != meta.draft {
            let req = SetDraftRequest {
                session_id: sid,
                draft: Some(meta.draft.clone().unwrap_or_default()),
                attachment_ids: None,
            };
            self.push(at, "session::set-draft", &req);
        }
        self.meta = Some(meta.clone());
    }

    /// An `entry` record for an entry already appended: a streamed update when its revision grew.
    fn updated(&mut self, entry: &SessionEntry) {
        let SessionEntry::Message { id, revision, message, origin, .. } = entry else { return };
        let known = self.revisions.get(id).copied().unwrap_or_default();
        if *revision <= known {
            return;
        }
        let (details, usage) = match message {
            AgentMessage::FunctionResult { details, .. } => (Some(details.clone()), None),
            AgentMessage::Custom { details, .. } => (details.clone(), None),
            AgentMessage::Assistant { usage, .. } => (None, usage.clone()),
            AgentMessage::User { .. } => (None, None),
        };
        let req = UpdateMessageRequest {
            session_id: self.sid.clone(),
            entry_id: id.clone(),
            content: message.content().to_vec(),
            details,
            usage,
            expected_revision: Some(known),
            origin: origin.clone(),
        };
        self.push(self.now, "session::update-message", &req);
        self.revisions.insert(id.clone(), known + 1);
    }

    fn append(&mut self, line: usize, entry: &SessionEntry) {
        let (message, custom, origin) = match entry {
            SessionEntry::Message { message, origin, .. } => (Some(message.clone()), None, origin),
            SessionEntry::Custom { custom_type, data, origin, .. } => {
                let payload =
                    CustomPayload { custom_type: custom_type.clone(), data: data.clone() };
                (None, Some(payload), origin)
            }
        };
        let req = AppendRequest {
            session_id: self.sid.clone(),
            message,
            custom,
            parent_id: entry.parent_id().map(String::from),
            entry_id: Some(entry.id().into()),
            origin: origin.clone(),
        };
        self.push_at_line(line, entry.timestamp(), "session::append", &req);
        self.revisions.insert(entry.id().into(), 0);
        self.leaf = Some(entry.id().into());
    }

    /// Appends the waiting new entries, oldest first, each after its parent.
    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let mut batch = core::mem::take(&mut self.batch);
        crate::order::sort_by(&mut batch, |(_, a), (_, b)| a.timestamp().cmp(&b.timestamp()));
        // Inserted one by one: `collect` would sort them first (the bundle's size).
        let mut ids = BTreeSet::new();
        for (_, entry) in &batch {
            ids.insert(String::from(entry.id()));
        }
        let mut waiting: BTreeMap<String, Vec<(usize, SessionEntry)>> = BTreeMap::new();
        for (line, entry) in batch {
            let ready = match entry.parent_id() {
                None => true,
                Some(parent) => self.revisions.contains_key(parent) || !ids.contains(parent),
            };
            if !ready {
                waiting
                    .entry(entry.parent_id().unwrap_or_default().into())
                    .or_default()
                    .push((line, entry));
                continue;
            }
            let mut stack = alloc::vec![(line, entry)];
            while let Some((line, entry)) = stack.pop() {
                let parent_ok = entry.parent_id().is_none_or(|p| self.revisions.contains_key(p));
                if !parent_ok || self.revisions.contains_key(entry.id()) {
                    continue;
                }
                self.append(line, &entry);
                if let Some(children) = waiting.remove(entry.id()) {
                    stack.extend(children.into_iter().rev());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
