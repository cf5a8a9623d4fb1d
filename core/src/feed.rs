//! The change feed of one session (live sync): its sequence counter, the changes it keeps and the
//! pages `session::changes` reads. Seqs are allocated by the one state machine every store runs
//! ([`crate::record::SessionState`]), inside the change set they describe, so a change is durable
//! exactly when its mutation is.

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
/// Changes kept per session by default (config key `feed_retention`).
pub const DEFAULT_RETENTION: usize = 1000;

/// A change the mutation asks the store to record: seqs are given when it lands.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
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

/// A session's feed: its epoch, the newest seq and the changes kept (the newest `retention`).
/// Seqs count from 1 within an epoch; a re-created session id starts a new epoch (`None`: a feed
/// written before epochs existed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Feed {
    epoch: Option<String>,
    latest_seq: u64,
    kept: VecDeque<Change>,
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
            *self = Feed { epoch: Some(epoch), latest_seq: 0, kept: VecDeque::new() };
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

    /// The changes kept, oldest first.
    pub fn kept(&self) -> impl Iterator<Item = &Change> {
        self.kept.iter()
    }

    /// Records a replayed or newly planned change; one of another epoch starts that epoch first.
    /// A seq at or below the newest (a replayed duplicate) is ignored, so replay is idempotent.
    pub fn record(&mut self, change: Change) {
        if let Some(epoch) = &change.epoch {
            self.start_epoch(epoch.clone());
        }
        if change.seq <= self.latest_seq {
            return;
        }
        self.latest_seq = change.seq;
        self.kept.push_back(change);
    }

    /// Keeps the newest `retention` changes (at least the newest one, so the feed's end survives
    /// a snapshot rewrite).
    pub fn trim(&mut self, retention: usize) {
        let keep = retention.max(1);
        while self.kept.len() > keep {
            self.kept.pop_front();
        }
    }

    /// At most `limit` changes after `after_seq`. Truncated when a change after `after_seq` is no
    /// longer kept.
    pub fn page(&self, after_seq: u64, limit: usize) -> FeedPage {
        let oldest = self.kept.front().map_or(self.latest_seq + 1, |c| c.seq);
        if after_seq.saturating_add(1) < oldest && after_seq < self.latest_seq {
            return FeedPage {
                epoch: self.epoch.clone(),
                changes: Vec::new(),
                latest_seq: self.latest_seq,
                truncated: true,
            };
        }
        let start = self.kept.partition_point(|c| c.seq <= after_seq);
        let changes = self.kept.iter().skip(start).take(limit).cloned().collect();
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

    #[test]
    fn pages_truncation_and_idempotent_replay() {
        let mut feed = Feed::default();
        (1..=5).for_each(|s| feed.record(change(s)));
        feed.record(change(3));
        assert_eq!(feed.latest_seq(), 5);
        let seqs = |p: FeedPage| p.changes.iter().map(|c| c.seq).collect::<Vec<_>>();
        assert_eq!(seqs(feed.page(0, 2)), [1, 2]);
        assert_eq!(seqs(feed.page(3, 10)), [4, 5]);
        assert!(feed.page(5, 10).changes.is_empty());
        feed.trim(2);
        assert!(feed.page(2, 10).truncated);
        assert!(!feed.page(3, 10).truncated);
        assert_eq!(seqs(feed.page(3, 10)), [4, 5]);
        assert!(!feed.page(5, 10).truncated, "nothing after the newest is missing");
        feed.trim(0);
        assert_eq!(seqs(feed.page(4, 10)), [5]);
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
