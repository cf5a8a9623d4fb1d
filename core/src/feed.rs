//! The change feed of one session (live sync): its sequence counter, the changes it keeps and the
//! pages `session::changes` reads. Seqs are allocated by the one state machine every store runs
//! ([`crate::record::SessionState`]), inside the change set they describe, so a change is durable
//! exactly when its mutation is.
//!
//! **Compaction by key** (Kafka's log compaction): a message's `session::message-updated` and
//! `session::message-delta` changes are keyed by its entry id. When a newer one of the same entry
//! is recorded, the older one keeps nothing but its seq: consecutive superseded seqs are served as
//! one `session::compacted` change (`payload: {first_seq}`, its `seq` the run's last), and the
//! newest is served as a `session::message-updated` carrying the entry's current message. A
//! replica that catches up over them gets the entry's current state once; a stream of 2,000
//! updates keeps one message, not 2,000. **Retention** keeps the newest `retention` changes and
//! at most `retention_bytes` of their payloads (the newest change always).

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

use serde::Deserialize;

use crate::wire::{Change, ChangedEvent, FeedPage, MessageDelta};

/// The trigger type of the feed: every change of every session, with its seq.
pub const CHANGED: &str = "session::changed";
/// The change an `append-delta` records in place of its full `session::message-updated`.
pub const MESSAGE_DELTA: &str = "session::message-delta";
/// A run of changes compaction left without payload (`payload: {first_seq}`; `seq` the last).
pub const COMPACTED: &str = "session::compacted";
/// Changes kept per session by default (config key `feed_retention`).
pub const DEFAULT_RETENTION: usize = 1000;
/// Payload bytes kept per session by default (config key `feed_retention_bytes`): with the
/// compaction by key, a session file stays near its live size.
pub const DEFAULT_RETENTION_BYTES: u64 = 256 * 1024;

/// How much of a feed to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// The newest changes kept (at least one).
    pub changes: usize,
    /// The most payload bytes kept (the newest change is kept whatever its size).
    pub bytes: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention { changes: DEFAULT_RETENTION, bytes: DEFAULT_RETENTION_BYTES }
    }
}

/// The entry a change is keyed by for compaction: `message-updated` and `message-delta` only.
fn key_of(change: &Change) -> Option<&str> {
    match change.change_type.as_str() {
        crate::events::MESSAGE_UPDATED | MESSAGE_DELTA => change.payload.get("entry_id")?.as_str(),
        _ => None,
    }
}

/// The bytes a payload takes as JSON.
fn json_len(value: &Value) -> u64 {
    serde_json::to_vec(value).map_or(0, |v| v.len() as u64)
}

/// One element of the kept feed.
#[derive(Debug, Clone, PartialEq)]
enum Kept {
    /// A change as recorded, with its payload's size.
    Change(Change, u64),
    /// The newest keyed change of `entry_id` after an older one was compacted: served as a
    /// `session::message-updated` with the entry's current message.
    Current { seq: u64, entry_id: String, timestamp: i64 },
    /// Superseded changes `first_seq..=seq`.
    Compacted { first_seq: u64, seq: u64, timestamp: i64 },
}

impl Kept {
    /// The (last) seq it covers.
    fn seq(&self) -> u64 {
        match self {
            Kept::Change(c, _) => c.seq,
            Kept::Current { seq, .. } | Kept::Compacted { seq, .. } => *seq,
        }
    }

    fn first_seq(&self) -> u64 {
        match self {
            Kept::Compacted { first_seq, .. } => *first_seq,
            other => other.seq(),
        }
    }

    fn bytes(&self) -> u64 {
        match self {
            Kept::Change(_, bytes) => *bytes,
            _ => 0,
        }
    }

    fn timestamp(&self) -> i64 {
        match self {
            Kept::Change(c, _) => c.timestamp,
            Kept::Current { timestamp, .. } | Kept::Compacted { timestamp, .. } => *timestamp,
        }
    }

    /// The entry it is the newest keyed change of, if any.
    fn key(&self) -> Option<&str> {
        match self {
            Kept::Change(c, _) => key_of(c),
            Kept::Current { entry_id, .. } => Some(entry_id),
            Kept::Compacted { .. } => None,
        }
    }
}

/// A kept element as a page or a snapshot holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum KeptChange<'a> {
    /// A change as recorded.
    Change(&'a Change),
    /// Served as a `session::message-updated` of `entry_id`'s current message.
    Current { seq: u64, entry_id: &'a str, timestamp: i64 },
    /// The `session::compacted` change of `first_seq..=seq`.
    Compacted { first_seq: u64, seq: u64, timestamp: i64 },
}

/// The `session::compacted` change of a run.
pub fn compacted_change(first_seq: u64, seq: u64, timestamp: i64, epoch: Option<&str>) -> Change {
    Change {
        seq,
        change_type: COMPACTED.into(),
        payload: serde_json::json!({ "first_seq": first_seq }),
        timestamp,
        epoch: epoch.map(String::from),
    }
}

crate::internally_tagged! {
tag = "kind", rename_all = "snake_case", remote = "PendingChange";
/// A change the mutation asks the store to record: seqs are given when it lands.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum PendingChange {
    /// A change whose type and payload are known before the write.
    Known { change_type: String, payload: Value },
    /// The `session::message-added` of this change set's `CommitAppend`, when it commits (an
    /// idempotent replay records nothing).
    CommittedAppend,
    /// The `session::message-delta` of this change set's `AppendDelta` (its payload is the
    /// delta's).
    AppliedDelta,
}
}

impl PendingChange {
    /// True for the `session::created` of a change set that creates its session.
    pub fn creates(&self) -> bool {
        matches!(self, PendingChange::Known { change_type, .. } if change_type == crate::events::CREATED)
    }

    /// The change an event is recorded as.
    pub fn of(emitted: &crate::events::Emitted) -> Self {
        PendingChange::Known {
            change_type: emitted.event.trigger_type().into(),
            payload: emitted.event.payload(),
        }
    }
}

/// A session's feed: its epoch, the newest seq and the changes kept (the newest `retention`,
/// compacted by key). Seqs count from 1 within an epoch; a re-created session id starts a new
/// epoch (`None`: a feed written before epochs existed).
#[derive(Debug, Clone, Default)]
pub struct Feed {
    epoch: Option<String>,
    latest_seq: u64,
    kept: VecDeque<Kept>,
    /// The payload bytes of `kept`.
    bytes: u64,
}

/// Equal when they serve the same: a run of compacted seqs is one element after a snapshot's
/// replay and one per seq as it was compacted.
impl PartialEq for Feed {
    fn eq(&self, other: &Self) -> bool {
        fn served(feed: &Feed) -> Vec<KeptChange<'_>> {
            let mut kept = Vec::new();
            feed.each_kept(0, usize::MAX, |k| kept.push(k));
            kept
        }
        (&self.epoch, self.latest_seq, self.bytes) == (&other.epoch, other.latest_seq, other.bytes)
            && served(self) == served(other)
    }
}

impl Feed {
    /// The current epoch.
    pub fn epoch(&self) -> Option<&str> {
        self.epoch.as_deref()
    }

    /// Starts `epoch`: nothing kept, the next change gets seq 1 (unchanged when it is the current
    /// one, so replay is idempotent).
    pub fn start_epoch(&mut self, epoch: String) {
        if self.epoch.as_deref() != Some(epoch.as_str()) {
            *self = Feed { epoch: Some(epoch), ..Feed::default() };
        }
    }

    /// The seq of the newest change (0 when there is none).
    pub fn latest_seq(&self) -> u64 {
        self.latest_seq
    }

    /// True when the session never had a change.
    pub fn is_empty(&self) -> bool {
        self.latest_seq == 0
    }

    /// At most `limit` of the elements kept from position `start` on, oldest first, adjacent
    /// compacted runs joined into one (what a page serves and a snapshot writes).
    pub fn each_kept<'a>(&'a self, start: usize, limit: usize, mut f: impl FnMut(KeptChange<'a>)) {
        let (mut at, mut served) = (start, 0);
        while served < limit {
            let Some(element) = self.kept.get(at) else { break };
            at += 1;
            served += 1;
            f(match element {
                Kept::Change(c, _) => KeptChange::Change(c),
                Kept::Current { seq, entry_id, timestamp } => {
                    KeptChange::Current { seq: *seq, entry_id, timestamp: *timestamp }
                }
                Kept::Compacted { first_seq, seq, timestamp } => {
                    let (mut seq, mut timestamp) = (*seq, *timestamp);
                    while let Some(Kept::Compacted { seq: next, timestamp: at_next, .. }) =
                        self.kept.get(at)
                    {
                        (seq, timestamp) = (*next, *at_next);
                        at += 1;
                    }
                    KeptChange::Compacted { first_seq: *first_seq, seq, timestamp }
                }
            });
        }
    }

    /// How many elements are kept.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// The payload bytes kept.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Records a replayed or newly planned change; one of another epoch starts that epoch first.
    /// A seq at or below the newest (a replayed duplicate) is ignored, so replay is idempotent. A
    /// keyed change compacts the older one of its entry; a `session::compacted` change (a
    /// snapshot's) is kept as the run it names.
    pub fn record(&mut self, change: Change) {
        if let Some(epoch) = &change.epoch {
            self.start_epoch(epoch.clone());
        }
        if change.seq <= self.latest_seq {
            return;
        }
        self.latest_seq = change.seq;
        if change.change_type == COMPACTED {
            let first = change.payload.get("first_seq").and_then(Value::as_u64);
            let first_seq = first.unwrap_or(change.seq).min(change.seq);
            let run = Kept::Compacted { first_seq, seq: change.seq, timestamp: change.timestamp };
            return self.push(run);
        }
        let Some(key) = key_of(&change).map(String::from) else {
            let bytes = json_len(&change.payload);
            return self.push(Kept::Change(change, bytes));
        };
        // The entry's newer keyed change is usually the one right before (a stream): look back.
        let older = self.kept.iter().rposition(|k| k.key() == Some(key.as_str()));
        match older {
            Some(at) => {
                self.compact(at);
                let (seq, timestamp) = (change.seq, change.timestamp);
                self.push(Kept::Current { seq, entry_id: key, timestamp });
            }
            None => {
                let bytes = json_len(&change.payload);
                self.push(Kept::Change(change, bytes));
            }
        }
    }

    /// Records a snapshot's `Current` element: `entry_id`'s newest keyed change at `seq`.
    pub fn record_current(&mut self, seq: u64, entry_id: String, timestamp: i64) {
        if seq <= self.latest_seq {
            return;
        }
        self.latest_seq = seq;
        self.push(Kept::Current { seq, entry_id, timestamp });
    }

    fn push(&mut self, kept: Kept) {
        self.bytes += kept.bytes();
        self.kept.push_back(kept);
    }

    /// Compacts the element at `at` (an entry's older keyed change) into a run of its own seq;
    /// adjacent runs are joined where they are served ([`Self::each_kept`]).
    fn compact(&mut self, at: usize) {
        let Some(element) = self.kept.get_mut(at) else { return };
        self.bytes -= element.bytes();
        let (seq, timestamp) = (element.seq(), element.timestamp());
        *element = Kept::Compacted { first_seq: element.first_seq(), seq, timestamp };
    }

    /// Keeps the newest `retention.changes` elements and at most `retention.bytes` of payload
    /// (at least the newest element, so the feed's end survives a snapshot rewrite).
    pub fn trim(&mut self, retention: Retention) {
        let keep = retention.changes.max(1);
        while self.kept.len() > keep || (self.kept.len() > 1 && self.bytes > retention.bytes) {
            let Some(gone) = self.kept.pop_front() else { break };
            self.bytes -= gone.bytes();
        }
    }

    /// At most `limit` changes after `after_seq` (a compacted run that ends after it counts).
    /// Truncated when a change after `after_seq` is no longer kept. `current(entry_id,
    /// timestamp)` is the `session::message-updated` payload of the entry's current message (a
    /// run when it has none).
    pub fn page(
        &self,
        after_seq: u64,
        limit: usize,
        mut current: impl FnMut(&str, i64) -> Option<Value>,
    ) -> FeedPage {
        let oldest = self.kept.front().map_or(self.latest_seq + 1, Kept::first_seq);
        let epoch = self.epoch.as_deref();
        if after_seq.saturating_add(1) < oldest && after_seq < self.latest_seq {
            return FeedPage {
                epoch: self.epoch.clone(),
                changes: Vec::new(),
                latest_seq: self.latest_seq,
                truncated: true,
            };
        }
        let start = self.kept.partition_point(|k| k.seq() <= after_seq);
        let mut changes = Vec::new();
        self.each_kept(start, limit, |kept| {
            changes.push(match kept {
                KeptChange::Change(c) => c.clone(),
                KeptChange::Current { seq, entry_id, timestamp } => {
                    match current(entry_id, timestamp) {
                        Some(payload) => Change {
                            seq,
                            change_type: crate::events::MESSAGE_UPDATED.into(),
                            payload,
                            timestamp,
                            epoch: epoch.map(String::from),
                        },
                        None => compacted_change(seq, seq, timestamp, epoch),
                    }
                }
                KeptChange::Compacted { first_seq, seq, timestamp } => {
                    compacted_change(first_seq, seq, timestamp, epoch)
                }
            })
        });
        FeedPage {
            epoch: self.epoch.clone(),
            changes,
            latest_seq: self.latest_seq,
            truncated: false,
        }
    }
}

/// Merges `next` into `pending` when both are `session::message-delta` deliveries of one block
/// and `next` comes right after it: the text joined, `seq`, `revision` and `timestamp` of `next`,
/// `first_seq` of `pending` (a coalescing `session::changed` binding). `false`, and nothing
/// changed, otherwise.
pub fn merge_delta(pending: &mut ChangedEvent, next: &ChangedEvent) -> bool {
    if pending.change_type != MESSAGE_DELTA
        || next.change_type != MESSAGE_DELTA
        || next.first_seq.is_some()
        || pending.session_id != next.session_id
        || next.seq != pending.seq + 1
    {
        return false;
    }
    let (Ok(mut joined), Ok(more)) =
        (MessageDelta::deserialize(&pending.payload), MessageDelta::deserialize(&next.payload))
    else {
        return false;
    };
    if joined.entry_id != more.entry_id || joined.block_index != more.block_index {
        return false;
    }
    match (&mut joined.text, &more.text, &mut joined.thinking, &more.thinking) {
        (Some(text), Some(more), None, None) => text.push_str(more),
        (None, None, Some(thinking), Some(more)) => thinking.push_str(more),
        _ => return false,
    }
    joined.revision = more.revision;
    let Ok(payload) = serde_json::to_value(&joined) else { return false };
    pending.payload = payload;
    pending.first_seq = Some(pending.first_seq.unwrap_or(pending.seq));
    pending.seq = next.seq;
    pending.timestamp = next.timestamp;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(seq: u64) -> Change {
        Change { seq, change_type: "t".into(), payload: Value::Null, timestamp: 0, epoch: None }
    }

    fn page(feed: &Feed, after_seq: u64, limit: usize) -> FeedPage {
        feed.page(after_seq, limit, |id, _| Some(serde_json::json!({ "current": id })))
    }

    fn keep(changes: usize) -> Retention {
        Retention { changes, ..Retention::default() }
    }

    #[test]
    fn pages_truncation_and_idempotent_replay() {
        let mut feed = Feed::default();
        (1..=5).for_each(|s| feed.record(change(s)));
        feed.record(change(3));
        assert_eq!(feed.latest_seq(), 5);
        let seqs = |p: FeedPage| p.changes.iter().map(|c| c.seq).collect::<Vec<_>>();
        assert_eq!(seqs(page(&feed, 0, 2)), [1, 2]);
        assert_eq!(seqs(page(&feed, 3, 10)), [4, 5]);
        assert!(page(&feed, 5, 10).changes.is_empty());
        feed.trim(keep(2));
        assert!(page(&feed, 2, 10).truncated);
        assert!(!page(&feed, 3, 10).truncated);
        assert_eq!(seqs(page(&feed, 3, 10)), [4, 5]);
        assert!(!page(&feed, 5, 10).truncated, "nothing after the newest is missing");
        feed.trim(keep(0));
        assert_eq!(seqs(page(&feed, 4, 10)), [5]);
    }

    fn keyed(seq: u64, change_type: &str, entry: &str) -> Change {
        let payload = serde_json::json!({"entry_id": entry, "text": "x".repeat(100)});
        Change { seq, change_type: change_type.into(), payload, timestamp: seq as i64, epoch: None }
    }

    /// An entry's newer keyed change compacts its older one: superseded seqs are served as one
    /// `session::compacted` run (joined across entries when they are adjacent), the newest as the
    /// entry's current message; other changes and other entries keep theirs.
    #[test]
    fn keyed_changes_compact_into_runs_and_the_current_message() {
        let mut feed = Feed::default();
        feed.record(change(1));
        feed.record(keyed(2, MESSAGE_DELTA, "a"));
        feed.record(keyed(3, crate::events::MESSAGE_UPDATED, "b"));
        feed.record(keyed(4, MESSAGE_DELTA, "a"));
        feed.record(keyed(5, MESSAGE_DELTA, "b"));
        feed.record(keyed(6, MESSAGE_DELTA, "a"));
        feed.record(change(7));
        let got: Vec<(u64, String, Value)> = page(&feed, 0, 50)
            .changes
            .into_iter()
            .map(|c| (c.seq, c.change_type, c.payload))
            .collect();
        let updated = crate::events::MESSAGE_UPDATED.to_string();
        assert_eq!(
            got,
            [
                (1, "t".into(), Value::Null),
                (4, COMPACTED.into(), serde_json::json!({"first_seq": 2})),
                (5, updated.clone(), serde_json::json!({"current": "b"})),
                (6, updated, serde_json::json!({"current": "a"})),
                (7, "t".into(), Value::Null),
            ]
        );
        assert_eq!(feed.len(), 7, "one element per seq: runs join where they are served");
        assert_eq!(feed.bytes(), 8, "only the two plain changes' payloads (null) are kept");
        let after = page(&feed, 3, 50).changes;
        assert_eq!(after[0].seq, 4, "a run that ends after after_seq is served");
    }

    /// Retention by bytes drops the oldest until the payloads fit, the newest always kept.
    #[test]
    fn retention_by_bytes_keeps_the_newest_that_fit() {
        let mut feed = Feed::default();
        (1..=4).for_each(|seq| feed.record(keyed(seq, "t", "x")));
        let one = feed.bytes() / 4;
        feed.trim(Retention { changes: 100, bytes: 2 * one });
        assert_eq!(feed.len(), 2);
        assert!(page(&feed, 1, 10).truncated && !page(&feed, 2, 10).truncated);
        feed.trim(Retention { changes: 100, bytes: 0 });
        assert_eq!((feed.len(), feed.latest_seq()), (1, 4));
    }

    fn delta(seq: u64, block_index: usize, text: &str) -> ChangedEvent {
        let payload = serde_json::json!({"session_id": "s", "entry_id": "e", "revision": seq,
            "block_index": block_index, "text": text});
        ChangedEvent {
            epoch: None,
            session_id: "s".into(),
            seq,
            first_seq: None,
            change_type: MESSAGE_DELTA.into(),
            payload,
            timestamp: seq as i64,
        }
    }

    #[test]
    fn consecutive_deltas_of_one_block_merge() {
        let mut pending = delta(3, 0, "He");
        assert!(merge_delta(&mut pending, &delta(4, 0, "ll")));
        assert!(merge_delta(&mut pending, &delta(5, 0, "o")));
        assert_eq!((pending.first_seq, pending.seq, pending.timestamp), (Some(3), 5, 5));
        assert_eq!(pending.payload["text"], "Hello");
        assert_eq!(pending.payload["revision"], 5);
        assert!(!merge_delta(&mut pending, &delta(7, 0, "!")), "not the next seq");
        assert!(!merge_delta(&mut pending, &delta(6, 1, "!")), "another block");
        let mut thinking = delta(6, 0, "x");
        thinking.payload = serde_json::json!({"session_id": "s", "entry_id": "e", "revision": 6,
            "block_index": 0, "thinking": "x"});
        assert!(!merge_delta(&mut pending, &thinking), "another kind");
        assert_eq!(pending.payload["text"], "Hello", "a refused merge changes nothing");
    }
}
