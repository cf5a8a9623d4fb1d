//! A replica rebuilt from one session's change feed: what a client holds that subscribes to
//! `session::changed`, catches up with `session::changes` and applies deltas. It keeps the session
//! fields the seed events carry and every entry (every branch: content, revision, parent). The
//! one implementation the model test, the web bench and the example client share.
//!
//! The seed's events do not carry everything: a fork's copied history, the active-leaf switch,
//! the draft, the kind and the metadata given at creation are event-silent. A replica takes a
//! snapshot read where it needs them: [`Step::NeedsSnapshot`] after a fork's `session::created`,
//! and [`Replica::from_snapshot`] after a `truncated` page. [`rebuild`] is the whole catch-up
//! (`session::changes` page by page, with those snapshots) for any host.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use crate::events::{
    CREATED, DELETED, MESSAGE_ADDED, MESSAGE_UPDATED, META_UPDATED, STATUS_CHANGED,
};
use crate::feed::MESSAGE_DELTA;
use crate::record::{add_delta, SessionState};
use crate::wire::{
    Change, ChangesResponse, CreatedEvent, MessageAddedEvent, MessageDelta, MessageUpdatedEvent,
    MetaUpdatedEvent, Object, SessionEntry, SessionMeta, SessionStatus, StatusChangedEvent,
    StoreWrite,
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
    /// The feed epoch its seqs count in (a re-created session id starts a new one).
    pub epoch: Option<String>,
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
            epoch: None,
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

    /// Follows the feed's `epoch` (a page's or a change's): when it is not the replica's, the
    /// session id was deleted (and maybe created again) since, so the replica empties and counts
    /// from seq 0 in that epoch. True when that dropped anything the replica held.
    pub fn enter_epoch(&mut self, epoch: &Option<String>) -> bool {
        if *epoch == self.epoch {
            return false;
        }
        let held = self.applied_seq > 0;
        *self =
            Replica { epoch: epoch.clone(), ..Replica::new(core::mem::take(&mut self.session_id)) };
        held
    }

    /// Applies one change of this session, in seq order.
    pub fn apply(&mut self, change: &Change) -> Step {
        self.apply_range(change.seq, change)
    }

    /// Applies a change that covers `first_seq..=change.seq`: a coalesced `session::changed`
    /// delivery (`coalesce_ms`: consecutive deltas of one block, their text joined), or with
    /// `first_seq == change.seq` any single change. One that starts inside what is applied
    /// already is a gap: read the single changes after `applied_seq` (then it is a duplicate).
    /// A change of another epoch (the session id was deleted and created again) empties the
    /// replica first: the new epoch's first change applies, a later one is a gap after seq 0.
    pub fn apply_range(&mut self, first_seq: u64, change: &Change) -> Step {
        if change.epoch.is_some() && change.epoch != self.epoch {
            *self =
                Replica { epoch: change.epoch.clone(), ..Replica::new(self.session_id.clone()) };
        }
        if change.seq <= self.applied_seq {
            return Step::Duplicate;
        }
        if change.change_type == crate::feed::COMPACTED {
            // Superseded changes of entries whose newer change follows: nothing to apply, only
            // seqs to pass (a run may start inside what is applied already).
            let first =
                change.payload.get("first_seq").and_then(Value::as_u64).unwrap_or(change.seq);
            if first > self.applied_seq + 1 {
                return Step::Gap { after_seq: self.applied_seq };
            }
            self.applied_seq = change.seq;
            return Step::Applied;
        }
        if first_seq != self.applied_seq + 1 || first_seq > change.seq {
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
            T::deserialize(v).map_err(|e| malformed(t, e))
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
                let d = parse_delta(payload).map_err(|e| malformed(change_type, e))?;
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

/// Why a change's payload does not decode: `<type>: <serde's reason>` (written once, not once per
/// payload type).
fn malformed(change_type: &str, e: serde_json::Error) -> String {
    format!("{change_type}: {e}")
}

/// A `session::message-delta` payload, decoded as the `delta` of a store-protocol `append_delta`
/// write (`{"type": "append_delta", "delta": payload, "at": 0}`): the wasm bundle already holds
/// that decoder of a [`MessageDelta`], so the replica adds no second one. The errors are the
/// same as decoding the payload directly (they come from the `MessageDelta` decoder).
fn parse_delta(payload: &Value) -> Result<MessageDelta, serde_json::Error> {
    let mut write = Object::new();
    write.insert("type".into(), Value::from("append_delta"));
    write.insert("delta".into(), payload.clone());
    write.insert("at".into(), Value::from(0));
    match StoreWrite::deserialize(Value::Object(write))? {
        StoreWrite::AppendDelta { delta, .. } => Ok(delta),
        _ => Err(serde::de::Error::custom("not an append_delta write")),
    }
}

/// Appends `item` to a list written as text, after `separator` unless it is the first.
fn list_item(list: &mut String, separator: &str, item: &str) {
    if !list.is_empty() {
        list.push_str(separator);
    }
    list.push_str(item);
}

/// Why [`rebuild`] took a snapshot read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotReason {
    /// A fork's `session::created`: its copied history is event-silent.
    Fork,
    /// The feed no longer keeps the changes asked for (`feed_retention`).
    Truncated,
    /// The feed is of another epoch than the pages before (the id was deleted and re-created).
    NewEpoch,
}

/// A snapshot read [`rebuild`] took, at the feed's `latest_seq` of the page it was reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub at_seq: u64,
    pub reason: SnapshotReason,
}

/// Why [`rebuild`] stopped before the feed's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The change at `seq` does not follow the replica's `after_seq`: a change is missing.
    Gap { seq: u64, after_seq: u64 },
    /// The change at `seq` could not be applied ([`Step::Rejected`]).
    Rejected { seq: u64, why: String },
}

impl core::fmt::Display for Stop {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Stop::Gap { seq, after_seq } => write!(f, "seq {seq}: a gap after seq {after_seq}"),
            Stop::Rejected { seq, why } => write!(f, "seq {seq}: {why}"),
        }
    }
}

/// What [`rebuild`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebuild {
    /// The session as its feed rebuilt it.
    pub replica: Replica,
    /// The feed's newest seq (of the last page read).
    pub latest_seq: u64,
    /// `session::changes` pages read.
    pub pages: u64,
    /// Changes applied one by one (the rest came with a snapshot).
    pub applied: u64,
    /// The snapshot reads taken, in order.
    pub snapshots: Vec<Snapshot>,
    /// Why it stopped early; `None` when it read the feed to its end.
    pub stopped: Option<Stop>,
}

/// Rebuilds session `session_id` from its change feed: reads `session::changes` pages
/// (`read_page(after_seq)`, from 0, then each page's `next_after_seq`) and applies every change.
/// On a `truncated` page, and after a fork's `session::created` ([`Step::NeedsSnapshot`]), it
/// takes `snapshot(seq)` — the session read at the page's `latest_seq` — and goes on from there
/// (the rest of that page is then duplicates). It stops at a gap or a rejected change
/// ([`Rebuild::stopped`]); an error of `read_page` ends it.
pub fn rebuild<E>(
    session_id: &str,
    mut read_page: impl FnMut(u64) -> Result<ChangesResponse, E>,
    mut snapshot: impl FnMut(u64) -> Replica,
) -> Result<Rebuild, E> {
    let mut out = Rebuild {
        replica: Replica::new(session_id),
        latest_seq: 0,
        pages: 0,
        applied: 0,
        snapshots: Vec::new(),
        stopped: None,
    };
    let mut after_seq = 0;
    loop {
        let page = read_page(after_seq)?;
        out.pages += 1;
        out.latest_seq = page.latest_seq;
        let mut take = |out: &mut Rebuild, reason| {
            out.replica = snapshot(page.latest_seq);
            out.replica.epoch = page.epoch.clone();
            out.snapshots.push(Snapshot { at_seq: page.latest_seq, reason });
        };
        if out.replica.enter_epoch(&page.epoch) && !page.truncated {
            take(&mut out, SnapshotReason::NewEpoch);
        }
        if page.truncated {
            take(&mut out, SnapshotReason::Truncated);
        }
        for change in &page.changes {
            match out.replica.apply(change) {
                Step::Applied => out.applied += 1,
                Step::Duplicate => {}
                Step::NeedsSnapshot => {
                    out.applied += 1;
                    take(&mut out, SnapshotReason::Fork);
                }
                Step::Gap { after_seq } => {
                    out.stopped = Some(Stop::Gap { seq: change.seq, after_seq });
                    return Ok(out);
                }
                Step::Rejected(why) => {
                    out.stopped = Some(Stop::Rejected { seq: change.seq, why });
                    return Ok(out);
                }
            }
        }
        match page.next_after_seq {
            Some(next) if next > after_seq => after_seq = next,
            _ => return Ok(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;
    use serde_json::json;

    /// A coalesced delivery (deltas merged by `feed::merge_delta`) applies like its single
    /// changes; one overlapping what is applied is a gap, one past it a duplicate.
    #[test]
    fn a_coalesced_delivery_applies_like_its_changes() {
        let host = TestHost::new();
        let (store, env) = (&host.store, host.env());
        let call = |id: &str, req: Value| host.call(id, req);
        call("session::ensure", json!({"session_id": "s"}));
        let msg = assistant("");
        call("session::append", json!({"session_id": "s", "entry_id": "e", "message": msg}));
        let mut merged: Option<crate::wire::ChangedEvent> = None;
        for text in ["He", "ll", "o"] {
            let out = call(
                "session::append-delta",
                json!({"session_id": "s", "entry_id": "e", "text": text}),
            );
            let event = out.events[0].changed_event().expect("a change");
            match &mut merged {
                None => merged = Some(event),
                Some(m) => assert!(crate::feed::merge_delta(m, &event)),
            }
        }
        let merged = merged.expect("merged");
        assert_eq!((merged.first_seq, merged.seq), (Some(3), 5));
        let as_change = |e: &crate::wire::ChangedEvent| e.clone().into_change();
        let page = ops::changes::decide(
            store,
            &env,
            ChangesRequest { session_id: "s".into(), after_seq: None, limit: None },
        )
        .map(crate::Outcome::silent)
        .expect("page")
        .response;
        let mut replica = Replica::new("s");
        assert_eq!(replica.apply(&page.changes[0]), Step::Applied);
        assert_eq!(replica.apply_range(3, &as_change(&merged)), Step::Gap { after_seq: 1 });
        assert_eq!(replica.apply(&page.changes[1]), Step::Applied);
        assert_eq!(replica.apply_range(3, &as_change(&merged)), Step::Applied);
        assert_eq!(replica.applied_seq, 5);
        assert_eq!(replica.apply_range(3, &as_change(&merged)), Step::Duplicate);
        assert_eq!(replica.differs_from(&store.session_state("s")), None);
        let mut overlapping = Replica::new("s");
        for change in &page.changes[..3] {
            assert_eq!(overlapping.apply(change), Step::Applied);
        }
        // The page's third change is the run of superseded deltas 3..=4 (the feed compacted
        // them: the entry's newer delta 5 follows), so the replica stands at 4.
        assert_eq!(page.changes[2].change_type, crate::feed::COMPACTED);
        assert_eq!(
            overlapping.apply_range(3, &as_change(&merged)),
            Step::Gap { after_seq: 4 },
            "starts inside what is applied"
        );
        assert_eq!(overlapping.apply(&page.changes[3]), Step::Applied, "the current message");
        assert_eq!(overlapping.differs_from(&store.session_state("s")), None);
    }

    use super::*;
    use crate::store::Store;
    use crate::test_support::{assistant, busy_session, TestHost};
    use crate::wire::ChangesRequest;
    use crate::{catalog, ops, Env, Limits, ManualClock, MemStore, SeqIds, SessionError};

    /// `rebuild` over a `MemStore` through the catalog, as a host runs it: pages of
    /// `session::changes` (two changes each) and snapshots read from the store.
    fn rebuild_from(store: &MemStore, env: &Env<'_>, sid: &str) -> Rebuild {
        let mut reads = Vec::new();
        let rebuilt = rebuild(
            sid,
            |after_seq| {
                reads.push(after_seq);
                let req = ChangesRequest {
                    session_id: sid.into(),
                    after_seq: Some(after_seq),
                    limit: Some(2),
                };
                ops::changes::decide(store, env, req)
            },
            |seq| {
                let state = store.session_state(sid);
                Replica::from_snapshot(sid, state.meta.as_ref(), state.entries.into_values(), seq)
            },
        )
        .map_err(|e: SessionError| e.to_string())
        .expect("every page reads");
        assert_eq!(reads.len() as u64, rebuilt.pages, "one read per page");
        assert_eq!(reads[0], 0, "from the feed's start");
        assert_eq!(rebuilt.replica.differs_from(&store.session_state(sid)), None, "{rebuilt:?}");
        rebuilt
    }

    /// The whole feed is kept: every change applied, page by page, no snapshot.
    #[test]
    fn rebuild_pages_through_a_kept_feed() {
        let (clock, ids) = (ManualClock::new(), SeqIds::new());
        let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
        let store = MemStore::new();
        busy_session(&store, &env);
        let rebuilt = rebuild_from(&store, &env, "s");
        assert_eq!((rebuilt.latest_seq, rebuilt.replica.applied_seq), (5, 5));
        assert_eq!((rebuilt.pages, rebuilt.applied), (3, 5));
        assert!(rebuilt.snapshots.is_empty() && rebuilt.stopped.is_none());
    }

    /// A feed trimmed to its last two changes: the first page is `truncated`, so the rebuild
    /// starts from a snapshot at `latest_seq` and applies nothing one by one.
    #[test]
    fn rebuild_takes_a_snapshot_of_a_truncated_feed() {
        let (clock, ids) = (ManualClock::new(), SeqIds::new());
        let limits = Limits { feed_retention: 2, ..Limits::default() };
        let env = Env { clock: &clock, ids: &ids, limits };
        let store = MemStore::new();
        busy_session(&store, &env);
        let rebuilt = rebuild_from(&store, &env, "s");
        let truncated = Snapshot { at_seq: 5, reason: SnapshotReason::Truncated };
        assert_eq!(rebuilt.snapshots, [truncated]);
        assert_eq!((rebuilt.pages, rebuilt.applied, rebuilt.replica.applied_seq), (1, 0, 5));
        assert_eq!(rebuilt.replica.meta.as_ref().map(|m| m.title.as_str()), Some("t"));
        assert_eq!(rebuilt.stopped, None);
    }

    /// A fork's copied history is event-silent: after its `session::created` the rebuild reads a
    /// snapshot at the page's `latest_seq`, then goes on with the fork's own changes.
    #[test]
    fn rebuild_takes_a_snapshot_after_a_fork() {
        let (clock, ids) = (ManualClock::new(), SeqIds::new());
        let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
        let store = MemStore::new();
        busy_session(&store, &env);
        let fork = catalog::dispatch(
            &store,
            &env,
            "session::fork",
            json!({"session_id": "s", "entry_id": "e1"}),
        )
        .expect("in catalog")
        .expect("fork");
        let fork_id = fork.response["session_id"].as_str().expect("fork id").to_string();
        let copy = store.get_active_leaf(&fork_id).expect("leaf").expect("a copied leaf");
        for text in ["c", "d", "e"] {
            let req = json!({"session_id": fork_id, "entry_id": copy, "text": text});
            catalog::dispatch(&store, &env, "session::append-delta", req)
                .expect("in catalog")
                .expect("append-delta");
        }
        let rebuilt = rebuild_from(&store, &env, &fork_id);
        // Page 1: created (seq 1, then the snapshot at the page's latest_seq 4) and a delta the
        // snapshot holds; page 2: two more it holds.
        assert_eq!(rebuilt.snapshots, [Snapshot { at_seq: 4, reason: SnapshotReason::Fork }]);
        assert_eq!((rebuilt.latest_seq, rebuilt.replica.applied_seq), (4, 4));
        assert_eq!((rebuilt.pages, rebuilt.applied), (2, 1));
        let meta = rebuilt.replica.meta.as_ref().expect("the fork exists");
        assert_eq!(meta.forked_from.as_deref(), Some("s"));
        assert_eq!(rebuilt.stopped, None);
    }

    /// A replica that follows deliveries across a delete and a re-creation of the same id: the
    /// new epoch's first change empties it and starts over at seq 1; a later change of a new
    /// epoch it missed the start of is a gap after seq 0 (read the new feed from its start).
    #[test]
    fn a_new_epoch_starts_the_replica_over() {
        let host = TestHost::new();
        let call = |id: &str, req: Value| host.call(id, req);
        let mut replica = Replica::new("s");
        let mut follow = |out: crate::Outcome<Value>| {
            let steps: Vec<Step> = out
                .events
                .iter()
                .map(|e| replica.apply(e.change.as_ref().expect("recorded")))
                .collect();
            (steps, replica.clone())
        };
        follow(call("session::ensure", json!({"session_id": "s"})));
        let msg = assistant("old");
        follow(call(
            "session::append",
            json!({"session_id": "s", "entry_id": "e", "message": msg}),
        ));
        let (_, deleted) = follow(call("session::delete", json!({"session_id": "s"})));
        assert_eq!((deleted.meta.is_none(), deleted.applied_seq), (true, 3));
        let (steps, again) = follow(call("session::ensure", json!({"session_id": "s"})));
        assert_eq!(steps, [Step::Applied]);
        assert_eq!((again.applied_seq, again.entries.len()), (1, 0), "started over");
        assert_ne!(again.epoch, deleted.epoch);
        assert_eq!(again.differs_from(&host.store.session_state("s")), None);
        let stale = deleted.clone();
        call("session::delete", json!({"session_id": "s"}));
        call("session::ensure", json!({"session_id": "s"}));
        let msg = assistant("new");
        let added =
            call("session::append", json!({"session_id": "s", "entry_id": "e", "message": msg}));
        let mut late = stale;
        assert_eq!(
            late.apply(added.events[0].change.as_ref().expect("recorded")),
            Step::Gap { after_seq: 0 }
        );
        assert!(late.meta.is_none() && late.entries.is_empty(), "nothing of the old epoch is kept");
    }

    /// A page that skips a seq stops the rebuild with the gap; a change it cannot apply stops it
    /// with the reason. Neither reads further.
    #[test]
    fn rebuild_stops_at_a_gap_or_a_rejected_change() {
        let change = |seq, change_type: &str, payload| Change {
            seq,
            change_type: change_type.into(),
            payload,
            timestamp: 0,
            epoch: None,
        };
        let created = json!({"session_id": "s", "title": "", "description": "", "status": "idle",
            "created_at": 0, "timestamp": 0});
        let page = |changes: Vec<Change>| ChangesResponse {
            session_id: "s".into(),
            epoch: None,
            changes,
            latest_seq: 9,
            next_after_seq: Some(3),
            truncated: false,
        };
        let no_snapshot = |_| unreachable!("no snapshot needed");
        let gap =
            page(alloc::vec![change(1, CREATED, created.clone()), change(3, DELETED, json!({}))]);
        let rebuilt =
            rebuild("s", |_| Ok::<_, ()>(gap.clone()), no_snapshot).expect("no read error");
        assert_eq!(rebuilt.stopped, Some(Stop::Gap { seq: 3, after_seq: 1 }));
        assert_eq!(
            rebuilt.stopped.map(|s| s.to_string()).as_deref(),
            Some("seq 3: a gap after seq 1")
        );
        assert_eq!((rebuilt.pages, rebuilt.applied, rebuilt.replica.applied_seq), (1, 1, 1));
        let bad = page(alloc::vec![change(1, "session::unknown", json!({}))]);
        let rebuilt =
            rebuild("s", |_| Ok::<_, ()>(bad.clone()), no_snapshot).expect("no read error");
        let why = "unknown change type session::unknown".to_string();
        assert_eq!(rebuilt.stopped, Some(Stop::Rejected { seq: 1, why }));
        assert_eq!(rebuilt.pages, 1);
        assert_eq!(rebuild("s", |_| Err::<ChangesResponse, _>("down"), no_snapshot), Err("down"));
    }

    /// `parse_delta` decodes and fails exactly as decoding a `MessageDelta` directly.
    #[test]
    fn a_delta_decodes_as_a_message_delta_would() {
        let good = json!({"session_id": "s", "entry_id": "e", "revision": 2, "block_index": 0,
            "text": "x", "extra": true});
        let bad = [
            json!("x"),
            json!(5),
            json!(null),
            json!([]),
            json!({"session_id": "s"}),
            json!({"session_id": "s", "entry_id": "e", "revision": -1, "block_index": 0}),
            json!({"session_id": "s", "entry_id": "e", "revision": 1.5, "block_index": 0}),
            json!({"session_id": "s", "entry_id": 3, "revision": 1, "block_index": 0}),
        ];
        let direct = |v: &Value| MessageDelta::deserialize(v).map_err(|e| e.to_string());
        let ours = |v: &Value| parse_delta(v).map_err(|e| e.to_string());
        assert_eq!(ours(&good), direct(&good));
        assert!(ours(&good).is_ok());
        for payload in &bad {
            assert_eq!(ours(payload), direct(payload), "{payload}");
            assert!(ours(payload).is_err(), "{payload}");
        }
    }
}
