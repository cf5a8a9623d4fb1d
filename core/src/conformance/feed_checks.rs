//! Conformance checks of the live-sync part of a store (`feed_*`): seqs given inside the change
//! set, the append's change only when it commits, nothing consumed by a failed change set,
//! retention, a delete that takes the feed with it and a re-created id's new epoch, and
//! `append_delta` writes. A bridge to a seed
//! main keeps no feed and is expected to fail these with `StoreError::Unsupported`.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde_json::json;

use super::{apply, commit, ensure, eq, message_entry, sample_meta, st, Make};
use crate::feed::{PendingChange, Retention};
use crate::store::{ChangeSet, Store, Write};
use crate::wire::{ContentBlock, MessageDelta, SessionEntry};

fn known(change_type: &str, n: i64) -> PendingChange {
    PendingChange::Known { change_type: change_type.into(), payload: json!({ "n": n }) }
}

fn feed(timestamp: i64, retention: usize, changes: Vec<PendingChange>) -> Write {
    let retention = Retention { changes: retention, ..Retention::default() };
    Write::Feed { timestamp, retention, epoch: None, changes }
}

/// A creating change set's feed write: it starts `epoch`.
fn feed_in(epoch: &str, timestamp: i64, changes: Vec<PendingChange>) -> Write {
    let retention = Retention { changes: 10, ..Retention::default() };
    Write::Feed { timestamp, retention, epoch: Some(epoch.into()), changes }
}

fn seqs(store: &dyn Store, sid: &str, after: u64, limit: usize) -> Result<Vec<u64>, String> {
    Ok(st(store.changes(sid, after, limit))?.changes.iter().map(|c| c.seq).collect())
}

pub fn check_feed_seqs_and_pages(make: Make<'_>) -> Result<(), String> {
    let s = make();
    let applied = apply(
        &*s,
        "s",
        vec![Write::PutMeta(sample_meta("s", 1)), feed(7, 10, vec![known("a", 1), known("b", 2)])],
    )?;
    let got: Vec<(u64, String)> =
        applied.changes.iter().map(|c| (c.seq, c.change_type.clone())).collect();
    eq(got, vec![(1, "a".into()), (2, "b".into())], "seqs from 1 in order")?;
    eq(applied.changes[1].timestamp, 7, "the write's timestamp")?;
    eq(applied.changes[1].payload.clone(), json!({"n": 2}), "the payload")?;
    apply(&*s, "s", vec![feed(8, 10, vec![known("c", 3)])])?;
    eq(seqs(&*s, "s", 0, 10)?, vec![1, 2, 3], "the whole feed")?;
    eq(seqs(&*s, "s", 1, 1)?, vec![2], "a page after a seq")?;
    let page = st(s.changes("s", 3, 10))?;
    eq((page.changes.len(), page.latest_seq, page.truncated), (0, 3, false), "past the end")?;
    let other = st(s.changes("t", 0, 10))?;
    eq((other.changes.len(), other.latest_seq), (0, 0), "an unknown session's feed is empty")
}

pub fn check_feed_append_change_only_when_committed(make: Make<'_>) -> Result<(), String> {
    let s = make();
    apply(&*s, "s", vec![Write::PutMeta(sample_meta("s", 1))])?;
    let mut writes = commit(message_entry("e1", None, 2, "hi"), false);
    writes.push(feed(9, 10, vec![PendingChange::CommittedAppend]));
    let first = apply(&*s, "s", writes.clone())?;
    eq(first.changes.len(), 1, "a commit records its change")?;
    let change = &first.changes[0];
    eq(change.change_type.as_str(), crate::events::MESSAGE_ADDED, "its type")?;
    eq(change.payload["entry_id"].clone(), json!("e1"), "its payload")?;
    eq(change.payload["message"]["content"][0]["text"].clone(), json!("hi"), "the message")?;
    let replay = apply(&*s, "s", writes)?;
    eq(replay.changes.len(), 0, "an idempotent replay records nothing")?;
    let page = st(s.changes("s", 0, 10))?;
    eq(page.changes, first.changes, "the stored change equals the reported one")
}

pub fn check_feed_failed_change_set_takes_no_seq(make: Make<'_>) -> Result<(), String> {
    let s = make();
    apply(&*s, "s", vec![Write::PutMeta(sample_meta("s", 1)), feed(1, 10, vec![known("a", 1)])])?;
    let bad = ChangeSet {
        session_id: "s".into(),
        writes: vec![
            Write::CommitAppend {
                entry: message_entry("y", Some("nope"), 4, "y"),
                parent_explicit: true,
            },
            feed(2, 10, vec![PendingChange::CommittedAppend, known("b", 2)]),
        ],
    };
    ensure(s.apply(&bad).is_err(), "the failing change set reports an error")?;
    let applied = apply(&*s, "s", vec![feed(3, 10, vec![known("c", 3)])])?;
    eq(applied.changes.iter().map(|c| c.seq).collect::<Vec<_>>(), vec![2], "no seq consumed")
}

pub fn check_feed_retention_and_delete(make: Make<'_>) -> Result<(), String> {
    let s = make();
    apply(&*s, "s", vec![Write::PutMeta(sample_meta("s", 1)), feed(1, 2, vec![known("a", 1)])])?;
    apply(&*s, "s", vec![feed(2, 2, vec![known("b", 2), known("c", 3)])])?;
    // At least the newest `retention` are kept (a store may keep more until its next write,
    // e.g. after a replay); a reader behind what is kept is told so.
    let page = st(s.changes("s", 0, 10))?;
    let all: Vec<u64> = page.changes.iter().map(|c| c.seq).collect();
    ensure(page.truncated || all == vec![1, 2, 3], "either truncated or complete")?;
    eq(page.latest_seq, 3, "the newest seq")?;
    eq(seqs(&*s, "s", 1, 10)?, vec![2, 3], "the kept ones")?;
    apply(
        &*s,
        "s",
        vec![
            Write::DeleteEntries,
            Write::DeleteActiveLeaf,
            Write::DeleteMeta,
            feed(3, 2, vec![known("session::deleted", 4)]),
        ],
    )?;
    eq(st(s.get_meta("s"))?, None, "deleted")?;
    ensure(!st(s.list_metas())?.iter().any(|m| m.session_id == "s"), "not listed")?;
    let gone = st(s.changes("s", 0, 10))?;
    eq((gone.changes.len(), gone.latest_seq, gone.epoch), (0, 0, None), "the feed went with it")?;
    let again = apply(
        &*s,
        "s",
        vec![Write::PutMeta(sample_meta("s", 5)), feed_in("f2", 5, vec![known("a", 5)])],
    )?;
    let got: Vec<(u64, Option<String>)> =
        again.changes.iter().map(|c| (c.seq, c.epoch.clone())).collect();
    eq(got, vec![(1, Some("f2".into()))], "a re-created id starts a new epoch at seq 1")?;
    apply(&*s, "s", vec![feed(6, 10, vec![known("b", 6)])])?;
    let page = st(s.changes("s", 0, 10))?;
    eq(page.epoch.as_deref(), Some("f2"), "the page names its epoch")?;
    let seqs: Vec<(u64, Option<&str>)> =
        page.changes.iter().map(|c| (c.seq, c.epoch.as_deref())).collect();
    eq(seqs, vec![(1, Some("f2")), (2, Some("f2"))], "every change of it carries it")
}

pub fn check_feed_append_delta(make: Make<'_>) -> Result<(), String> {
    let s = make();
    apply(&*s, "s", vec![Write::PutMeta(sample_meta("s", 1))])?;
    apply(&*s, "s", commit(message_entry("e1", None, 2, "He"), false))?;
    let delta = |block_index, text: Option<&str>, thinking: Option<&str>, revision| MessageDelta {
        session_id: "s".into(),
        entry_id: "e1".into(),
        revision,
        block_index,
        text: text.map(String::from),
        thinking: thinking.map(String::from),
    };
    apply(&*s, "s", vec![Write::AppendDelta { delta: delta(0, Some("llo"), None, 1), at: 30 }])?;
    apply(&*s, "s", vec![Write::AppendDelta { delta: delta(1, None, Some("t"), 2), at: 31 }])?;
    let wrong_kind = Write::AppendDelta { delta: delta(0, None, Some("x"), 3), at: 32 };
    ensure(s.apply(&ChangeSet::new("s").with(wrong_kind)).is_err(), "a delta of another kind")?;
    let out_of_range = Write::AppendDelta { delta: delta(5, Some("x"), None, 3), at: 32 };
    ensure(s.apply(&ChangeSet::new("s").with(out_of_range)).is_err(), "out of range")?;
    let Some(SessionEntry::Message { message, revision, .. }) = st(s.get_entry("s", "e1"))? else {
        return Err("the message is gone".into());
    };
    let want = vec![
        ContentBlock::Text { text: "Hello".into() },
        ContentBlock::Thinking { text: "t".into(), signature: None },
    ];
    eq(message.content().to_vec(), want, "the deltas landed in their blocks")?;
    eq(revision, 2, "the revision of the last delta")?;
    eq(st(s.get_meta("s"))?.map(|m| m.updated_at), Some(31), "updated_at of the last delta")
}

/// Compaction by key: an entry's superseded deltas are served as one `session::compacted` run and
/// its newest as a `session::message-updated` of its current message, also after the store
/// reloads them (a restarted store replays the same feed), and a replica rebuilt over them equals
/// the stored session.
pub fn check_feed_compacts_by_key(make: Make<'_>) -> Result<(), String> {
    let s = make();
    let created = PendingChange::Known {
        change_type: crate::events::CREATED.into(),
        payload: json!({"session_id": "s", "title": "", "description": "", "status": "idle",
            "created_at": 1, "timestamp": 1}),
    };
    apply(&*s, "s", vec![Write::PutMeta(sample_meta("s", 1)), feed(1, 100, vec![created])])?;
    let mut writes = commit(message_entry("e1", None, 2, "He"), false);
    writes.push(feed(2, 100, vec![PendingChange::CommittedAppend]));
    apply(&*s, "s", writes)?;
    for (revision, text) in [(1, "l"), (2, "l"), (3, "o")] {
        let delta = MessageDelta {
            session_id: "s".into(),
            entry_id: "e1".into(),
            revision,
            block_index: 0,
            text: Some(text.into()),
            thinking: None,
        };
        let at = 10 + revision as i64;
        let writes = vec![
            Write::AppendDelta { delta, at },
            feed(at, 100, vec![PendingChange::AppliedDelta]),
        ];
        apply(&*s, "s", writes)?;
    }
    let page = st(s.changes("s", 0, 10))?;
    let got: Vec<(u64, &str)> =
        page.changes.iter().map(|c| (c.seq, c.change_type.as_str())).collect();
    let want = vec![
        (1, crate::events::CREATED),
        (2, crate::events::MESSAGE_ADDED),
        (4, crate::feed::COMPACTED),
        (5, crate::events::MESSAGE_UPDATED),
    ];
    eq(got, want, "superseded deltas compact into a run, the newest is the current message")?;
    eq(page.changes[2].payload.clone(), json!({"first_seq": 3}), "the run's first seq")?;
    let current = &page.changes[3].payload;
    eq(current["message"]["content"][0]["text"].clone(), json!("Hello"), "the current text")?;
    eq(current["revision"].clone(), json!(3), "the current revision")?;
    let mut replica = crate::replica::Replica::new("s");
    for change in &page.changes {
        let step = replica.apply(change);
        ensure(step == crate::replica::Step::Applied, &alloc::format!("{change:?}: {step:?}"))?;
    }
    let mut state = crate::record::SessionState::default();
    state.meta = st(s.get_meta("s"))?;
    state.entries = st(s.list_entries("s"))?.into_iter().map(|e| (e.id().into(), e)).collect();
    eq(replica.differs_from(&state), None, "the replica rebuilt over the compacted feed")
}
