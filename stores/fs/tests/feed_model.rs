//! Model test of the live-sync change feed: random sequences of public calls (every mutation,
//! `append-delta`, fork and delete included) against `FsStore` and the `MemStore` oracle, with
//! restarts, offline compactions, background compactions, evictions and crashes that tear the
//! last write at any byte. After every step, for every session:
//!
//! * each store's indexed reads agree with a walk of the chain and a sort of the metas, and the
//!   oracle's path index with one rebuilt from scratch (issue 12);
//! * both stores answer every call the same (response, events, the seqs the events carry) and
//!   serve the same meta, entries and leaf;
//! * each acknowledged change takes the session's next seq in its epoch, and the feed ends at the
//!   last one, so within an epoch `latest_seq` never goes down and no seq is given twice (across
//!   restarts, crashes and compactions); a delete takes the feed and the session's log file with
//!   it (`latest_seq` 0, no epoch), and a re-created id starts a new epoch at seq 1;
//! * the feed read page by page (3 a page, following `next_after_seq`) is contiguous from its
//!   oldest kept seq to `latest_seq`; every `after_seq` below the oldest kept one is `truncated`
//!   and none from it on; a change, once observed (in a page of either store or in an event), never
//!   comes back different;
//! * a `Replica` rebuilt from the feed — from 0, or from a `truncated` point plus one snapshot
//!   read, with the state served right after a fork where `Step::NeedsSnapshot` asks for it —
//!   agrees with what the store serves, as do two replicas that follow the fs store through the
//!   whole run (one catching up after every step, one every third step; a page of another epoch
//!   starts them over).
//!
//! **Crashes.** A `crash` on an operation stops the store right after that operation's last call
//! and, when that call's write was a plain append to its session's log, cuts the log at a random
//! byte inside that write (a torn write), or right before its final `\n`. A write cut before its
//! final `\n` is lost (replay drops a torn line or group) and counts as never acknowledged: the
//! cut happens before anything observes the call (no feed read, no event recorded), the oracle is
//! put back to its state before the call, and the call's changes are never seen. So the "never
//! reused" rule needs no exception here: a seq is only recorded from an acknowledged write, and
//! the seq of a lost write may (and does) go to the next acknowledged change. That is what a
//! client can see with `sync: always|group`, where a write is durable before the call answers and
//! its `session::changed` goes out. A cut of only the final `\n` leaves the write whole (its last
//! line parses): it stays acknowledged.
//!
//! **Retention.** Half the cases run with a `feed_retention` of 1 to 4 (fewer changes than one
//! `append-many` may record), so catch-ups and rebuilds from 0 go through `truncated` pages. The
//! oracle keeps the newest `feed_retention` changes of the epoch. The fs store trims on each write too, but a replay (restart, eviction) keeps every
//! change its log still holds until the next write trims again, so it may keep more: the two
//! agree on `latest_seq` and on every change both keep, and the fs store keeps at least as many.
//!
//! `PROPTEST_CASES` overrides the default of 32 cases (under 2 s on an idle machine); with 32 or
//! more, the test also requires that every path above ran (torn and whole-but-unterminated
//! writes, truncated catch-ups, fork snapshots, deltas, re-created ids).

mod common;

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{json, Value};
use session_core::feed::{COMPACTED, MESSAGE_DELTA};
use session_core::jsonl::{self, enc};
use session_core::record::SessionState;
use session_core::replica::{Replica, Step as ReplicaStep};
use session_core::wire::{
    AttachmentMeta, Change, ChangesResponse, FeedPage, SessionEntry, SessionMeta,
};
use session_core::{
    catalog, Applied, ChangeSet, Env, Limits, ManualClock, MemStore, Outcome, SeqIds, SessionError,
    Store, StoreError,
};
use session_store_fs::{FsConfig, FsStore, SyncMode};

/// Session ids chosen by the caller (`ensure`); created and forked sessions add `s_NNN` ids.
const FIXED: &[&str] = &["a", "b 1", "%"];
/// Entry ids a caller chooses (first append creates, later ones replay).
const CHOSEN: &[&str] = &["k0", "k1"];
/// The page size of every feed read: small, so reads take several pages.
const PAGE: usize = 3;
/// The crash offset that cuts only a write's final `\n` (others are per mille of the write).
const ALL_BUT_NEWLINE: u16 = 1000;
/// Feed retentions of the small-retention cases (one op may record more changes than kept).
const SMALL_RETENTION: std::ops::RangeInclusive<usize> = 1..=4;

#[derive(Debug, Clone)]
enum EntryId {
    Generated,
    Chosen(usize),
    /// An id the session already holds (a replay, or the commit of a forked entry).
    Existing(usize),
}

#[derive(Debug, Clone)]
enum Op {
    Ensure {
        s: usize,
        metadata: bool,
    },
    Create {
        titled: bool,
    },
    Append {
        s: usize,
        custom: bool,
        assistant: bool,
        id: EntryId,
        parent: Option<usize>,
        text: String,
        origin: bool,
    },
    AppendMany {
        s: usize,
        n: usize,
        parent: Option<usize>,
    },
    /// New content: text, thinking (signed), text then an image, or none (the next delta then
    /// opens a new block).
    Update {
        s: usize,
        e: usize,
        text: String,
        content: usize,
    },
    Delta {
        s: usize,
        e: usize,
        thinking: bool,
        text: String,
        expected: Option<bool>,
    },
    SetStatus {
        s: usize,
        status: usize,
        reason: bool,
    },
    SetMeta {
        s: usize,
        title: Option<String>,
        metadata: Option<String>,
    },
    SetDraft {
        s: usize,
        draft: Option<String>,
    },
    SetLeaf {
        s: usize,
        e: usize,
    },
    Fork {
        s: usize,
        e: usize,
        titled: bool,
    },
    /// `session::delete`, then (`again`) `session::ensure` of the same id.
    Delete {
        s: usize,
        again: bool,
    },
}

#[derive(Debug, Clone)]
enum Step {
    /// One operation; `crash: Some(at)` stops the store right after it and cuts its last write at
    /// `at` per mille of its length, or right before its final `\n` (`ALL_BUT_NEWLINE`).
    Op {
        op: Op,
        crash: Option<u16>,
    },
    Restart,
    /// Stop, rewrite every log as its snapshot (what a compaction job installs), reopen.
    Compact,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let s = 0usize..6;
    let e = 0usize..8;
    let text = "[a-z ]{0,12}";
    let expected = proptest::option::weighted(0.3, any::<bool>());
    let id = prop_oneof![
        3 => Just(EntryId::Generated),
        2 => (0..CHOSEN.len()).prop_map(EntryId::Chosen),
        1 => (0usize..8).prop_map(EntryId::Existing),
    ];
    prop_oneof![
        3 => (s.clone(), any::<bool>()).prop_map(|(s, metadata)| Op::Ensure { s, metadata }),
        1 => any::<bool>().prop_map(|titled| Op::Create { titled }),
        6 => (
            (s.clone(), any::<bool>(), any::<bool>(), id),
            (proptest::option::weighted(0.2, e.clone()), text, any::<bool>()),
        )
            .prop_map(|((s, custom, assistant, id), (parent, text, origin))| {
                Op::Append { s, custom, assistant, id, parent, text, origin }
            }),
        2 => (s.clone(), 1usize..4, proptest::option::weighted(0.3, e.clone()))
            .prop_map(|(s, n, parent)| Op::AppendMany { s, n, parent }),
        2 => (s.clone(), e.clone(), text, 0usize..4)
            .prop_map(|(s, e, text, content)| Op::Update { s, e, text, content }),
        5 => (s.clone(), e.clone(), any::<bool>(), "[a-z ]{1,6}", expected)
            .prop_map(|(s, e, thinking, text, expected)| {
                Op::Delta { s, e, thinking, text, expected }
            }),
        2 => (s.clone(), 0usize..4, any::<bool>())
            .prop_map(|(s, status, reason)| Op::SetStatus { s, status, reason }),
        2 => (s.clone(), proptest::option::of("[a-z]{0,4}"), proptest::option::of("[a-z]{1,3}"))
            .prop_map(|(s, title, metadata)| Op::SetMeta { s, title, metadata }),
        1 => (s.clone(), proptest::option::of("[a-z ]{0,5}"))
            .prop_map(|(s, draft)| Op::SetDraft { s, draft }),
        1 => (s.clone(), e.clone()).prop_map(|(s, e)| Op::SetLeaf { s, e }),
        2 => (s.clone(), e, any::<bool>()).prop_map(|(s, e, titled)| Op::Fork { s, e, titled }),
        2 => (s, any::<bool>()).prop_map(|(s, again)| Op::Delete { s, again }),
    ]
}

fn step_strategy() -> impl Strategy<Value = Step> {
    let cut = prop_oneof![0u16..1000, Just(ALL_BUT_NEWLINE)];
    prop_oneof![
        20 => (op_strategy(), proptest::option::weighted(0.15, cut))
            .prop_map(|(op, crash)| Step::Op { op, crash }),
        1 => Just(Step::Restart),
        2 => Just(Step::Compact),
    ]
}

fn open(dir: &Path) -> FsStore {
    let mut cfg = FsConfig::new(dir).sync(SyncMode::Never);
    cfg.compact_min_bytes = 256; // background compactions within short sequences
    cfg.max_cached_sessions = 2; // and evictions (a reload replays the log)
    cfg.spill_above = 2048; // sessions that grow past 2 KB keep stubs, their bodies on disk
    FsStore::open(cfg).expect("open")
}

fn log_path(dir: &Path, sid: &str) -> PathBuf {
    dir.join(format!("{}.jsonl", enc(sid)))
}

fn message(assistant: bool, text: &str) -> Value {
    if assistant {
        json!({"role": "assistant", "content": [{"type": "text", "text": text}],
            "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 1})
    } else {
        json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
    }
}

/// What a snapshot read serves of one session (`session::get` + every entry), as the state
/// `Replica::differs_from` compares with.
fn served(store: &dyn Store, sid: &str) -> SessionState {
    let mut state = SessionState::default();
    state.meta = store.get_meta(sid).expect("get_meta");
    state.entries = store
        .list_entries(sid)
        .expect("list_entries")
        .into_iter()
        .map(|e| (e.id().into(), e))
        .collect();
    state.leaf = store.get_active_leaf(sid).expect("leaf");
    state
}

/// Whether `bytes` are one appended change set: one line, or a `begin` marker and its lines.
fn one_change_set(bytes: &[u8]) -> bool {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    let marker = format!("{{\"type\":\"begin\",\"lines\":{}}}\n", newlines.saturating_sub(1));
    bytes.last() == Some(&b'\n') && (newlines == 1 || bytes.starts_with(marker.as_bytes()))
}

fn session_files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) == Some("jsonl") {
            files.insert(path.clone(), fs::read(&path).expect("read"));
        }
    }
    files
}

fn env<'a>(clock: &'a ManualClock, ids: &'a SeqIds, limits: Limits) -> Env<'a> {
    Env { clock, ids, limits }
}

type R<T = ()> = Result<T, TestCaseError>;

/// One page of `session::changes`, through the catalog like any caller.
fn changes(
    store: &dyn Store,
    env: &Env<'_>,
    sid: &str,
    after: u64,
    limit: usize,
) -> R<ChangesResponse> {
    let req = json!({"session_id": sid, "after_seq": after, "limit": limit});
    let outcome = catalog::dispatch(store, env, "session::changes", req)
        .expect("in catalog")
        .map_err(|e: SessionError| TestCaseError::fail(format!("changes of {sid}: {e}")))?;
    prop_assert!(outcome.events.is_empty(), "a read fired events");
    let page: ChangesResponse = serde_json::from_value(outcome.response).expect("page");
    prop_assert_eq!(&page.session_id, sid);
    Ok(page)
}

/// One read of a session's whole kept feed: its `latest_seq` and the changes kept, oldest first.
#[derive(Debug)]
struct FeedRead {
    epoch: Option<String>,
    latest: u64,
    kept: Vec<Change>,
}

/// Counters proving the interesting paths ran, summed over the whole proptest run.
#[derive(Default, Debug, Clone, Copy)]
struct Stats {
    cases: usize,
    torn: usize,
    unterminated: usize,
    truncated_catch_ups: usize,
    fork_snapshots_used: usize,
    deltas: usize,
    recreated: usize,
    epoch_restarts: usize,
}

impl Stats {
    fn add(&mut self, o: Stats) {
        self.cases += o.cases;
        self.torn += o.torn;
        self.unterminated += o.unterminated;
        self.truncated_catch_ups += o.truncated_catch_ups;
        self.fork_snapshots_used += o.fork_snapshots_used;
        self.deltas += o.deltas;
        self.recreated += o.recreated;
        self.epoch_restarts += o.epoch_restarts;
    }
}

/// Per session: its epoch, the seq of its last acknowledged change and the clients following it.
#[derive(Default)]
struct Followers {
    /// The epoch of the session's feed (`None` while it does not exist) and how many it had.
    epoch: Option<String>,
    epochs: usize,
    /// Only grows within an epoch: each acknowledged change must take the next seq, and the feed
    /// must end there (0 once a delete ended the epoch).
    high: u64,
    /// Caught up after every step.
    live: Option<Replica>,
    /// Caught up every third step, so it falls behind and meets `truncated` pages.
    lagging: Option<Replica>,
}

/// What the run observed; kept apart from the stores so reads borrow them independently.
#[derive(Default)]
struct Observer {
    /// The state served right after each fork, keyed by the fork's session and its created
    /// seq: the snapshot a replica reads on `Step::NeedsSnapshot`.
    fork_snapshots: HashMap<(String, u64), SessionState>,
    /// Every change observed (by session, epoch and seq): feed pages of both stores, events of
    /// acknowledged calls.
    seen: HashMap<(String, Option<String>, u64), Change>,
    followers: HashMap<String, Followers>,
    stats: Stats,
}

impl Observer {
    /// Records an observed change. One seen before must come back the same, except as the feed
    /// compacts it: into a `session::compacted` run, or (a message update or delta) as the
    /// `session::message-updated` of the same entry at a newer revision (the same one for a
    /// delta: its message whole).
    fn see(&mut self, sid: &str, change: &Change, from: &str) -> R {
        let key = (sid.to_string(), change.epoch.clone(), change.seq);
        let Some(before) = self.seen.get(&key) else {
            self.seen.insert(key, change.clone());
            return Ok(());
        };
        if before == change {
            return Ok(());
        }
        let keyed = [MESSAGE_DELTA, "session::message-updated"];
        let revision = |c: &Change| c.payload["revision"].as_u64();
        // A run ending at a seq starts where the page reading it started, or earlier once more
        // is compacted before it.
        let compacted = change.change_type == COMPACTED;
        let current = keyed.contains(&before.change_type.as_str())
            && change.change_type == "session::message-updated"
            && before.payload["entry_id"] == change.payload["entry_id"]
            // The same revision as a delta (its full state), a newer one than an update.
            && match before.change_type == MESSAGE_DELTA {
                true => revision(change) >= revision(before),
                false => revision(change) > revision(before),
            };
        // A replay trims after the whole log, a write after its change set: a store that still
        // holds an entry's older change serves its newest delta as the current message, one
        // that dropped it as the delta itself.
        let same_state = before.change_type == "session::message-updated"
            && change.change_type == MESSAGE_DELTA
            && before.payload["entry_id"] == change.payload["entry_id"]
            && revision(change) == revision(before);
        prop_assert!(
            compacted || current || same_state,
            "{} seq {} came back different ({}): {:?} then {:?}",
            sid,
            change.seq,
            from,
            before,
            change
        );
        self.seen.insert(key, change.clone());
        Ok(())
    }

    /// Reads a session's kept feed page by page, checking the page protocol: a `truncated` page
    /// is empty; the smallest `after_seq` that is not truncated is found by probing down from
    /// `latest_seq` (and with `full`, every one below it must be truncated); from there the pages
    /// hold every seq up to `latest_seq` in order, each `next_after_seq` naming its last seq.
    fn read_feed(
        &mut self,
        store: &dyn Store,
        env: &Env<'_>,
        sid: &str,
        full: bool,
    ) -> R<FeedRead> {
        let first = changes(store, env, sid, 0, PAGE)?;
        let (latest, epoch) = (first.latest_seq, first.epoch.clone());
        let mut start = 0;
        if first.truncated {
            prop_assert!(first.changes.is_empty() && first.next_after_seq.is_none());
            prop_assert!(latest > 1, "{}: truncated with latest_seq {}", sid, latest);
            start = latest - 1;
            while start > 0 && !changes(store, env, sid, start - 1, 1)?.truncated {
                start -= 1;
            }
            prop_assert!(start > 0, "{}: truncated after 0 but not after 1", sid);
            if full {
                for after in 0..start {
                    let page = changes(store, env, sid, after, 1)?;
                    prop_assert!(
                        page.truncated,
                        "{}: not truncated after {} < {}",
                        sid,
                        after,
                        start
                    );
                }
            }
        }
        let mut kept: Vec<Change> = Vec::new();
        let mut after = start;
        loop {
            let page = changes(store, env, sid, after, PAGE)?;
            prop_assert!(
                !page.truncated,
                "{}: truncated after {} (kept from {})",
                sid,
                after,
                start + 1
            );
            prop_assert_eq!(page.latest_seq, latest, "{}: latest_seq moved during a read", sid);
            prop_assert_eq!(&page.epoch, &epoch, "{}: the epoch moved during a read", sid);
            prop_assert!(page.changes.len() <= PAGE);
            for change in &page.changes {
                // A compacted run covers `first_seq..=seq`.
                let want = kept.last().map_or(start + 1, |c| c.seq + 1);
                let first = match change.change_type == COMPACTED {
                    true => change.payload["first_seq"].as_u64().unwrap_or(0),
                    false => change.seq,
                };
                prop_assert_eq!(first, want, "{}: seqs not contiguous", sid);
                prop_assert!(first <= change.seq, "{}: a run that ends before it starts", sid);
                kept.push(change.clone());
            }
            match page.next_after_seq {
                Some(next) => {
                    prop_assert_eq!(
                        Some(next),
                        kept.last().map(|c| c.seq),
                        "{}: next_after_seq",
                        sid
                    );
                    prop_assert!(next < latest);
                    after = next;
                }
                None => {
                    let last = kept.last().map_or(start, |c| c.seq);
                    prop_assert_eq!(last, latest, "{}: the feed ends before latest_seq", sid);
                    break;
                }
            }
        }
        for change in &kept {
            self.see(sid, change, "feed")?;
        }
        prop_assert!(kept.iter().all(|c| c.epoch == epoch), "{}: a change of another epoch", sid);
        Ok(FeedRead { epoch, latest, kept })
    }

    /// A replica rebuilt from 0 agrees with what the store serves.
    fn rebuilt_from_zero_agrees(
        &mut self,
        store: &dyn Store,
        env: &Env<'_>,
        sid: &str,
        served_now: &SessionState,
    ) -> R {
        let mut replica = Replica::new(sid);
        self.catch_up(&mut replica, store, env, served_now)?;
        prop_assert_eq!(replica.differs_from(served_now), None, "{} rebuilt from 0", sid);
        Ok(())
    }

    /// A client's catch-up: pages after what it applied; a `truncated` page means one snapshot
    /// read at `latest_seq` (`served_now`), a fork's created change the state right after the
    /// fork.
    fn catch_up(
        &mut self,
        replica: &mut Replica,
        store: &dyn Store,
        env: &Env<'_>,
        served_now: &SessionState,
    ) -> R {
        let sid = replica.session_id.clone();
        let (mut snapshots, mut restarts) = (0, 0);
        loop {
            let page = changes(store, env, &sid, replica.applied_seq, PAGE)?;
            if replica.enter_epoch(&page.epoch) {
                // Deleted (and maybe re-created) since it last read: it starts over.
                prop_assert!(restarts == 0, "{}: another epoch again", sid);
                restarts += 1;
                self.stats.epoch_restarts += 1;
                continue;
            }
            if page.truncated {
                prop_assert!(snapshots == 0, "{}: truncated again after a snapshot", sid);
                snapshots += 1;
                self.stats.truncated_catch_ups += 1;
                *replica = Replica::from_snapshot(
                    sid.clone(),
                    served_now.meta.as_ref(),
                    served_now.entries.values().cloned(),
                    page.latest_seq,
                );
                replica.epoch = page.epoch.clone();
                continue;
            }
            for change in &page.changes {
                self.see(&sid, change, "catch-up")?;
                match replica.apply(change) {
                    ReplicaStep::Applied => {}
                    ReplicaStep::NeedsSnapshot => {
                        let key = (sid.clone(), change.seq);
                        let snapshot = self.fork_snapshots.get(&key);
                        prop_assert!(
                            snapshot.is_some(),
                            "{} seq {}: no fork snapshot",
                            sid,
                            change.seq
                        );
                        let snapshot = snapshot.expect("checked");
                        *replica = Replica::from_snapshot(
                            sid.clone(),
                            snapshot.meta.as_ref(),
                            snapshot.entries.values().cloned(),
                            change.seq,
                        );
                        replica.epoch = change.epoch.clone();
                        self.stats.fork_snapshots_used += 1;
                    }
                    other => {
                        prop_assert!(
                            false,
                            "{} seq {}: {:?} applying {:?}",
                            sid,
                            change.seq,
                            other,
                            change
                        )
                    }
                }
            }
            match page.next_after_seq {
                Some(next) => prop_assert_eq!(next, replica.applied_seq, "{}", sid),
                None => {
                    prop_assert_eq!(replica.applied_seq, page.latest_seq, "{}: not caught up", sid);
                    return Ok(());
                }
            }
        }
    }
}

/// One call's outcome, and the log it wrote with that log's bytes before the call.
struct Called {
    outcome: Option<Outcome<Value>>,
    written: Option<(PathBuf, Vec<u8>)>,
}

struct World {
    dir: PathBuf,
    fs: Option<FsStore>,
    mem: MemStore,
    clock: ManualClock,
    fs_ids: SeqIds,
    mem_ids: SeqIds,
    limits: Limits,
    /// Every session id the run made, fixed ids first.
    sessions: Vec<String>,
    obs: Observer,
}

impl World {
    fn new(dir: PathBuf, retention: usize) -> World {
        World {
            fs: Some(open(&dir)),
            dir,
            mem: MemStore::new(),
            clock: ManualClock::new(),
            fs_ids: SeqIds::new(),
            mem_ids: SeqIds::new(),
            limits: Limits { feed_retention: retention, ..Limits::default() },
            sessions: FIXED.iter().map(|s| String::from(*s)).collect(),
            obs: Observer::default(),
        }
    }

    fn fs(&self) -> &FsStore {
        self.fs.as_ref().expect("store open")
    }

    fn session(&self, s: usize) -> String {
        self.sessions[s % self.sessions.len()].clone()
    }

    /// A session holding a message when there is one (what `append-delta` and `update-message`
    /// need to land), else any.
    fn session_with_messages(&self, s: usize) -> String {
        let with: Vec<&String> = self
            .sessions
            .iter()
            .filter(|sid| self.mem.list_entries(sid).expect("list").iter().any(|e| e.is_message()))
            .collect();
        if with.is_empty() {
            self.session(s)
        } else {
            with[s % with.len()].clone()
        }
    }

    /// The `pick`-th entry id of a session (sorted), from the oracle; with `messages`, of its
    /// message entries (what `append-delta` and `update-message` accept), if it has any.
    fn entry_of(&self, sid: &str, pick: usize, messages: bool) -> String {
        let entries = self.mem.list_entries(sid).expect("list");
        let wanted = entries.iter().filter(|e| e.is_message()).count();
        let mut ids: Vec<String> = entries
            .iter()
            .filter(|e| !messages || wanted == 0 || e.is_message())
            .map(|e| e.id().into())
            .collect();
        ids.sort();
        if ids.is_empty() {
            "e_none".into()
        } else {
            ids[pick % ids.len()].clone()
        }
    }

    fn entry(&self, sid: &str, pick: usize) -> String {
        self.entry_of(sid, pick, false)
    }

    /// The calls of one operation, as (function, payload), picked against the oracle.
    fn calls_of(&self, op: &Op) -> Vec<(&'static str, Value)> {
        match op.clone() {
            Op::Ensure { s, metadata } => {
                let mut req = json!({"session_id": self.session(s)});
                if metadata {
                    req["metadata"] = json!({"owner": "u"});
                    req["title"] = json!("t");
                }
                vec![("session::ensure", req)]
            }
            Op::Create { titled } => {
                vec![("session::create", if titled { json!({"title": "new"}) } else { json!({}) })]
            }
            Op::Append { s, custom, assistant, id, parent, text, origin } => {
                let sid = self.session(s);
                let mut req = if custom {
                    json!({"session_id": sid, "custom": {"custom_type": "note", "data": text}})
                } else {
                    json!({"session_id": sid, "message": message(assistant, &text)})
                };
                match id {
                    EntryId::Generated => {}
                    EntryId::Chosen(k) => req["entry_id"] = json!(CHOSEN[k]),
                    EntryId::Existing(e) => req["entry_id"] = json!(self.entry(&sid, e)),
                }
                if let Some(p) = parent {
                    req["parent_id"] = json!(self.entry(&sid, p));
                }
                if origin {
                    req["origin"] = json!({"by": "model"});
                }
                vec![("session::append", req)]
            }
            Op::AppendMany { s, n, parent } => {
                let sid = self.session(s);
                let messages: Vec<Value> = (0..n).map(|i| message(i % 2 == 1, "many")).collect();
                let mut req = json!({"session_id": sid, "messages": messages});
                if let Some(p) = parent {
                    req["parent_id"] = json!(self.entry(&sid, p));
                }
                vec![("session::append-many", req)]
            }
            Op::Update { s, e, text, content } => {
                let sid = self.session_with_messages(s);
                let content = match content {
                    0 => json!([{"type": "text", "text": text}]),
                    1 => json!([{"type": "thinking", "text": text, "signature": "sig"}]),
                    2 => json!([{"type": "text", "text": text},
                        {"type": "image", "mime": "image/png", "data": "aGk="}]),
                    _ => json!([]),
                };
                let eid = self.entry_of(&sid, e, e % 4 != 0);
                let req = json!({"session_id": sid, "entry_id": eid, "content": content});
                vec![("session::update-message", req)]
            }
            Op::Delta { s, e, thinking, text, expected } => {
                let sid = self.session_with_messages(s);
                // Mostly a message (a custom entry is rejected: that is tried too).
                let eid = self.entry_of(&sid, e, e % 4 != 0);
                let mut req = json!({"session_id": sid, "entry_id": eid});
                req[if thinking { "thinking" } else { "text" }] = json!(text);
                if let Some(current) = expected {
                    let revision =
                        self.mem.get_entry(&sid, &eid).expect("get").map_or(0, |e| e.revision());
                    req["expected_revision"] = json!(revision + u64::from(!current));
                }
                vec![("session::append-delta", req)]
            }
            Op::SetStatus { s, status, reason } => {
                let status = ["idle", "working", "done", "error"][status];
                let mut req = json!({"session_id": self.session(s), "status": status});
                if reason {
                    req["reason"] = json!("because");
                }
                vec![("session::set-status", req)]
            }
            Op::SetMeta { s, title, metadata } => {
                let mut req = json!({"session_id": self.session(s)});
                if let Some(title) = title {
                    req["title"] = json!(title);
                }
                if let Some(m) = metadata {
                    req["metadata"] = json!({"tag": m});
                }
                vec![("session::set-meta", req)]
            }
            Op::SetDraft { s, draft } => {
                let mut req = json!({"session_id": self.session(s)});
                if let Some(draft) = draft {
                    req["draft"] = json!(draft);
                }
                vec![("session::set-draft", req)]
            }
            Op::SetLeaf { s, e } => {
                let sid = self.session(s);
                vec![(
                    "session::set-active-leaf",
                    json!({"session_id": sid, "entry_id": self.entry(&sid, e)}),
                )]
            }
            Op::Fork { s, e, titled } => {
                let sid = self.session(s);
                let mut req = json!({"session_id": sid, "entry_id": self.entry(&sid, e)});
                if titled {
                    req["title"] = json!("forked");
                }
                vec![("session::fork", req)]
            }
            Op::Delete { s, again } => {
                let sid = self.session(s);
                let mut calls = vec![("session::delete", json!({"session_id": sid}))];
                if again {
                    calls.push(("session::ensure", json!({"session_id": sid})));
                }
                calls
            }
        }
    }

    /// Runs one call on both stores: they must answer the same (response, events, seqs).
    fn call(&mut self, id: &str, payload: Value) -> R<Called> {
        self.clock.advance(7);
        let before = session_files(&self.dir);
        let want = catalog::dispatch(
            &self.mem,
            &env(&self.clock, &self.mem_ids, self.limits),
            id,
            payload.clone(),
        )
        .expect("in catalog");
        let fs = self.fs.as_ref().expect("store open");
        let got = catalog::dispatch(
            fs,
            &env(&self.clock, &self.fs_ids, self.limits),
            id,
            payload.clone(),
        )
        .expect("in catalog");
        fs.wait_for_compactions(); // the file layout is settled per call
        prop_assert_eq!(&got, &want, "{} {}", id, payload);
        let outcome = got.ok();
        let target = outcome.as_ref().and_then(|o| match id {
            "session::fork" | "session::create" => {
                o.response["session_id"].as_str().map(String::from)
            }
            _ => payload["session_id"].as_str().map(String::from),
        });
        let written = target.map(|sid| {
            let path = log_path(&self.dir, &sid);
            let old = before.get(&path).cloned().unwrap_or_default();
            (path, old)
        });
        Ok(Called { outcome, written })
    }

    fn run_op(&mut self, op: &Op, crash: Option<u16>) -> R {
        let calls = self.calls_of(op);
        let last = calls.len() - 1;
        for (i, (id, payload)) in calls.into_iter().enumerate() {
            let crash = crash.filter(|_| i == last);
            let saved: Option<Vec<(String, SessionState)>> = crash.map(|_| {
                self.mem
                    .session_ids()
                    .into_iter()
                    .map(|s| (s.clone(), self.mem.session_state(&s)))
                    .collect()
            });
            let called = self.call(id, payload)?;
            if let Some(at) = crash {
                if self.crash(&called, at) {
                    // Torn before its end: never acknowledged, never observed.
                    self.mem = MemStore::new();
                    for (sid, state) in saved.expect("saved") {
                        self.mem.import_state(&sid, state);
                    }
                    continue;
                }
            }
            if let Some(outcome) = &called.outcome {
                self.acknowledge(id, outcome)?;
            }
        }
        Ok(())
    }

    /// An acknowledged call: its events carry changes with the next seqs of their session, each
    /// recorded as seen; a new session joins the run; a fork's served state is its snapshot.
    fn acknowledge(&mut self, id: &str, outcome: &Outcome<Value>) -> R {
        let mut next: HashMap<String, u64> = HashMap::new();
        for emitted in &outcome.events {
            prop_assert!(emitted.change.is_some(), "{}: an event without its change", id);
            let change = emitted.change.clone().expect("checked");
            // The change is what the trigger delivered; an append-delta's is the compact delta.
            let trigger = emitted.event.trigger_type();
            if change.change_type == MESSAGE_DELTA {
                prop_assert_eq!(trigger, "session::message-updated", "{}", id);
                prop_assert_eq!(id, "session::append-delta");
            } else {
                prop_assert_eq!(change.change_type.as_str(), trigger, "{}", id);
                prop_assert_eq!(&change.payload, &emitted.event.payload(), "{}", id);
            }
            let sid = change.payload["session_id"].as_str().map(String::from);
            prop_assert!(sid.is_some(), "{}: a change without session_id: {:?}", id, change);
            let sid = sid.expect("checked");
            let follower = self.obs.followers.entry(sid.clone()).or_default();
            if change.change_type == "session::created" {
                // A creation starts a new epoch at seq 1.
                prop_assert!(change.epoch.is_some(), "{}: a creation without its epoch", id);
                prop_assert!(change.epoch != follower.epoch, "{}: an epoch again", id);
                self.obs.stats.recreated += usize::from(follower.epochs > 0);
                follower.epoch = change.epoch.clone();
                follower.epochs += 1;
                follower.high = 0;
                next.remove(&sid);
            }
            prop_assert_eq!(&change.epoch, &follower.epoch, "{}: the epoch of {:?}", id, change);
            let want = next.get(&sid).copied().unwrap_or(follower.high + 1);
            prop_assert_eq!(change.seq, want, "{}: the seq of {:?}", id, change);
            next.insert(sid.clone(), want + 1);
            follower.high = want;
            if change.change_type == "session::deleted" {
                // The epoch's last change: the feed goes with the session.
                (follower.epoch, follower.high) = (None, 0);
            }
            if change.change_type == MESSAGE_DELTA {
                self.obs.stats.deltas += 1;
            }
            self.obs.see(&sid, &change, "event")?;
        }
        if id == "session::fork" || id == "session::create" {
            let sid = outcome.response["session_id"].as_str().expect("new id").to_string();
            prop_assert!(!self.sessions.contains(&sid), "session id {} reused", sid);
            if id == "session::fork" {
                let seq =
                    outcome.events.first().and_then(|e| e.change.as_ref()).map_or(0, |c| c.seq);
                let state = served(self.fs(), &sid);
                self.obs.fork_snapshots.insert((sid.clone(), seq), state);
            }
            self.sessions.push(sid);
        }
        Ok(())
    }

    /// Stops the store after `called`; when its write was a plain append to its log, cuts that
    /// write at `at` per mille (or right before its final `\n`). True when the cut falls before
    /// the write's final `\n`: the write is lost (replay drops a torn line or group) and was
    /// never acknowledged.
    fn crash(&mut self, called: &Called, at: u16) -> bool {
        drop(self.fs.take());
        let mut lost = false;
        if let (Some(_), Some((path, before))) = (&called.outcome, &called.written) {
            let after = fs::read(path).unwrap_or_default();
            let plain_append = after.len() > before.len()
                && after.starts_with(before)
                && before.last().is_none_or(|b| *b == b'\n')
                && one_change_set(&after[before.len()..]);
            if plain_append {
                let (start, end) = (before.len() as u64, after.len() as u64);
                let cut = match at {
                    ALL_BUT_NEWLINE => end - 1,
                    at => start + (end - start) * u64::from(at) / 1000,
                };
                OpenOptions::new().write(true).open(path).expect("open").set_len(cut).expect("cut");
                lost = cut + 1 < end;
                self.obs.stats.torn += usize::from(lost);
                self.obs.stats.unterminated += usize::from(!lost);
            }
        }
        self.fs = Some(open(&self.dir));
        lost
    }

    fn restart(&mut self) {
        drop(self.fs.take());
        self.fs = Some(open(&self.dir));
    }

    /// Stops the store and rewrites every log as the snapshot of its replayed state (what a
    /// compaction job installs): the snapshot must replay to the same state, feed included.
    fn compact(&mut self) -> R {
        drop(self.fs.take());
        for (path, bytes) in session_files(&self.dir) {
            let (state, _) = jsonl::replay(&bytes);
            if state.is_empty() {
                fs::remove_file(&path).expect("remove");
                continue;
            }
            let snapshot = jsonl::encode_snapshot(&state);
            let (again, stats) = jsonl::replay(&snapshot);
            prop_assert_eq!(stats.skipped, 0);
            prop_assert!(
                again == state,
                "{}: the snapshot replays to another state",
                path.display()
            );
            let tmp = path.with_extension("jsonl.tmp");
            fs::write(&tmp, &snapshot).expect("write");
            fs::rename(&tmp, &path).expect("rename");
        }
        self.fs = Some(open(&self.dir));
        Ok(())
    }

    /// Every check of the module doc, for every session the run made; `full` adds the exhaustive
    /// truncation probe. A file of an id the run does not know may only be a torn, never
    /// acknowledged creation: no session, no feed.
    fn check(&mut self, step: usize, full: bool) -> R {
        prop_assert_eq!(common::listed(self.fs()), common::listed(&self.mem), "listed");
        for path in session_files(&self.dir).keys() {
            let name = path.file_stem().and_then(|n| n.to_str()).expect("name");
            let sid = jsonl::dec(name).expect("a session file name");
            if !self.sessions.contains(&sid) {
                prop_assert!(served(self.fs(), &sid).meta.is_none(), "unknown session {}", sid);
                prop_assert_eq!(self.fs().changes(&sid, 0, 10).map(|p| p.latest_seq), Ok(0));
            }
        }
        for sid in self.sessions.clone() {
            self.check_session(&sid, step, full)?;
        }
        Ok(())
    }

    fn check_session(&mut self, sid: &str, step: usize, full: bool) -> R {
        let fs = self.fs.as_ref().expect("store open");
        let served_fs = served(fs, sid);
        let served_mem = served(&self.mem, sid);
        prop_assert_eq!(&served_fs.meta, &served_mem.meta, "{} meta", sid);
        prop_assert_eq!(&served_fs.entries, &served_mem.entries, "{} entries", sid);
        prop_assert_eq!(&served_fs.leaf, &served_mem.leaf, "{} leaf", sid);
        let mem_state = self.mem.session_state(sid);
        common::indexed_reads_agree(fs, None, sid)
            .and_then(|()| common::indexed_reads_agree(&self.mem, Some(&mem_state), sid))
            .map_err(|e| TestCaseError::fail(format!("indexed reads at step {step}: {e}")))?;
        let fs_env = env(&self.clock, &self.fs_ids, self.limits);
        let mem_env = env(&self.clock, &self.mem_ids, self.limits);
        let obs = &mut self.obs;

        // The feed of both stores: one epoch and one latest_seq that never goes down within it;
        // the oracle keeps the newest `feed_retention`, the fs store at least as much.
        let on_fs = obs.read_feed(fs, &fs_env, sid, full)?;
        let on_mem = obs.read_feed(&self.mem, &mem_env, sid, full)?;
        prop_assert_eq!(on_fs.latest, on_mem.latest, "{} latest_seq", sid);
        // Every seq comes from an acknowledged call's event: the feed ends at the last one.
        let follower = obs.followers.entry(sid.to_string()).or_default();
        let high = follower.high;
        prop_assert_eq!(on_fs.latest, high, "{}: latest_seq is not the last acknowledged", sid);
        prop_assert_eq!(&on_fs.epoch, &follower.epoch, "{}: the feed's epoch", sid);
        prop_assert_eq!(&on_mem.epoch, &follower.epoch, "{}: the oracle's epoch", sid);
        let retention = self.limits.feed_retention as u64;
        // At most `retention` kept (a compacted run is one), all of them while fewer seqs were
        // ever recorded.
        let kept_mem = on_mem.kept.len();
        prop_assert!(kept_mem as u64 <= retention, "{}: the oracle keeps {}", sid, kept_mem);
        prop_assert_eq!(kept_mem == 0, high == 0, "{}: the newest change is kept", sid);
        if high <= retention {
            let first = on_mem.kept.first().map(|c| match c.change_type == COMPACTED {
                true => c.payload["first_seq"].as_u64().unwrap_or(0),
                false => c.seq,
            });
            prop_assert!(first.is_none_or(|f| f == 1), "{}: trimmed below the retention", sid);
        }
        if served_mem.meta.is_none() {
            // Deleted (or never created): nothing of it is left, its log file included (a torn,
            // never acknowledged re-creation may leave a log that holds nothing).
            prop_assert_eq!(high, 0, "{}: a feed left behind", sid);
            let path = log_path(&self.dir, sid);
            let left = fs::read(&path).map(|bytes| !jsonl::replay(&bytes).0.is_empty());
            prop_assert!(!left.unwrap_or(false), "{}: its log is left behind", path.display());
        }
        prop_assert!(
            on_fs.kept.len() >= kept_mem,
            "{}: fs keeps {} < {}",
            sid,
            on_fs.kept.len(),
            kept_mem
        );

        // Rebuilt from 0 (through a truncated point or a fork snapshot when needed).
        for (store, env, state) in [
            (fs as &dyn Store, &fs_env, &served_fs),
            (&self.mem as &dyn Store, &mem_env, &served_mem),
        ] {
            obs.rebuilt_from_zero_agrees(store, env, sid, state)?;
        }

        // The clients that followed the fs store since the start of the run.
        let follower = obs.followers.get_mut(sid).expect("inserted above");
        let mut live = follower.live.take().unwrap_or_else(|| Replica::new(sid));
        let lagging = (step.is_multiple_of(3) || full)
            .then(|| follower.lagging.take().unwrap_or_else(|| Replica::new(sid)));
        obs.catch_up(&mut live, fs, &fs_env, &served_fs)?;
        prop_assert_eq!(live.differs_from(&served_fs), None, "{}: the live replica", sid);
        obs.followers.get_mut(sid).expect("inserted above").live = Some(live);
        if let Some(mut lagging) = lagging {
            obs.catch_up(&mut lagging, fs, &fs_env, &served_fs)?;
            prop_assert_eq!(lagging.differs_from(&served_fs), None, "{}: the lagging replica", sid);
            obs.followers.get_mut(sid).expect("inserted above").lagging = Some(lagging);
        }
        Ok(())
    }
}

fn run(steps: Vec<Step>, retention: usize) -> R<Stats> {
    let base = tempfile::tempdir().expect("tempdir");
    let mut world = World::new(base.path().join("data"), retention);
    // Most calls then find their session; deletes and forks still make calls that do not.
    for s in 0..FIXED.len() {
        world.run_op(&Op::Ensure { s, metadata: s == 0 }, None)?;
    }
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Op { op, crash } => world.run_op(op, *crash)?,
            Step::Restart => world.restart(),
            Step::Compact => world.compact()?,
        }
        world
            .check(i, false)
            .map_err(|e| TestCaseError::fail(format!("step {i} {step:?}: {e}")))?;
    }
    world.restart();
    world
        .check(steps.len(), true)
        .map_err(|e| TestCaseError::fail(format!("final restart: {e}")))?;
    world.compact()?;
    world
        .check(steps.len() + 1, true)
        .map_err(|e| TestCaseError::fail(format!("final compact: {e}")))?;
    world.obs.stats.cases = 1;
    Ok(world.obs.stats)
}

#[test]
fn the_feed_rebuilds_what_the_store_serves_across_restarts_crashes_and_compactions() {
    use proptest::test_runner::{Config, TestRunner};
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(32);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 512,
        ..Config::default()
    });
    let total = std::sync::Mutex::new(Stats::default());
    let retention = prop_oneof![SMALL_RETENTION, Just(Limits::default().feed_retention)];
    let strategy = (proptest::collection::vec(step_strategy(), 1..40), retention);
    let result = runner.run(&strategy, |(steps, retention)| {
        let stats = run(steps, retention)?;
        total.lock().expect("stats").add(stats);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The paths this test exists for ran (with enough cases to expect each of them).
    let total = *total.lock().expect("stats");
    if cases >= 32 {
        assert!(total.torn > 0, "no write was torn: {total:?}");
        assert!(total.unterminated > 0, "no write lost only its final newline: {total:?}");
        assert!(total.truncated_catch_ups > 0, "no catch-up met a truncated page: {total:?}");
        assert!(total.fork_snapshots_used > 0, "no fork snapshot was read: {total:?}");
        assert!(total.deltas > 0, "no append-delta landed: {total:?}");
        assert!(total.recreated > 0, "no deleted id was re-created: {total:?}");
        assert!(total.epoch_restarts > 0, "no follower met a new epoch: {total:?}");
    }
}

/// A way to break a feed, for [`the_checks_catch_a_broken_feed`].
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Pages leave this seq out.
    Skip(u64),
    /// This seq's payload text is changed.
    Forge(u64),
    /// `latest_seq` is one less than the newest change.
    Behind,
}

/// A `MemStore` whose `changes` are broken in one way.
struct Broken(MemStore, Fault);

impl Store for Broken {
    fn get_meta(&self, sid: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.0.get_meta(sid)
    }
    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.0.list_metas()
    }
    fn get_entry(&self, sid: &str, eid: &str) -> Result<Option<SessionEntry>, StoreError> {
        self.0.get_entry(sid, eid)
    }
    fn list_entries(&self, sid: &str) -> Result<Vec<SessionEntry>, StoreError> {
        self.0.list_entries(sid)
    }
    fn get_active_leaf(&self, sid: &str) -> Result<Option<String>, StoreError> {
        self.0.get_active_leaf(sid)
    }
    fn get_attachment(
        &self,
        sid: &str,
        aid: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        self.0.get_attachment(sid, aid)
    }
    fn list_attachments(&self, sid: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        self.0.list_attachments(sid)
    }
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        self.0.apply(changes)
    }
    fn changes(&self, sid: &str, after: u64, limit: usize) -> Result<FeedPage, StoreError> {
        let mut page = self.0.changes(sid, after, limit)?;
        match self.1 {
            Fault::Skip(seq) => page.changes.retain(|c| c.seq != seq),
            Fault::Forge(seq) => {
                for change in page.changes.iter_mut().filter(|c| c.seq == seq) {
                    match change.payload.pointer_mut("/message/content/0/text") {
                        Some(text) => *text = json!("forged"),
                        None => change.payload["text"] = json!("forged"),
                    }
                }
            }
            Fault::Behind => page.latest_seq -= 1,
        }
        Ok(page)
    }
}

/// The checks of the model test fail on a feed that skips a seq, forges a change, or ends
/// before its newest change; they pass on the honest one.
#[test]
fn the_checks_catch_a_broken_feed() {
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let mem = MemStore::new();
    let call = |id: &str, req: Value| {
        clock.advance(1);
        catalog::dispatch(&mem, &env, id, req).expect("in catalog").expect(id);
    };
    call("session::ensure", json!({"session_id": "s"}));
    call(
        "session::append",
        json!({"session_id": "s", "entry_id": "m", "message": message(true, "a")}),
    );
    call("session::append-delta", json!({"session_id": "s", "entry_id": "m", "text": "b"}));
    call("session::append-delta", json!({"session_id": "s", "entry_id": "m", "text": "c"}));
    let served_now = served(&mem, "s");
    let mut honest = Observer::default();
    assert!(honest.read_feed(&mem, &env, "s", true).is_ok());
    assert!(honest.rebuilt_from_zero_agrees(&mem, &env, "s", &served_now).is_ok());

    let inner = || {
        let copy = MemStore::new();
        copy.import_state("s", mem.session_state("s"));
        copy
    };
    // Seq 3 (delta "b") is compacted: served as a run; seq 4 as the message's current state.
    for fault in [Fault::Skip(2), Fault::Skip(3), Fault::Skip(4), Fault::Forge(4), Fault::Behind] {
        let broken = Broken(inner(), fault);
        // A fresh observer: the feed alone must give the fault away.
        let mut fresh = Observer::default();
        let caught = fresh.read_feed(&broken, &env, "s", true).is_err()
            || fresh.rebuilt_from_zero_agrees(&broken, &env, "s", &served_now).is_err();
        assert!(caught, "{fault:?} went unnoticed");
    }
    // An observer that saw the honest feed also notices a seq coming back different.
    let broken = Broken(inner(), Fault::Forge(4));
    let mut seen_before = Observer::default();
    assert!(seen_before.read_feed(&mem, &env, "s", false).is_ok());
    assert!(seen_before.read_feed(&broken, &env, "s", false).is_err(), "a forged seq came back");
}
