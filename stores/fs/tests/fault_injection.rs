//! Fault injection (issue 7): every write-side file operation of `FsStore` (through the `FsIo`
//! seam) fails once with ENOSPC, EIO or a short write, for every mutation path. Each scenario is
//! first run clean to record its operations; then, for every recorded operation and every fault,
//! a fresh data_dir runs the acknowledged setup, arms the fault at that operation and runs the
//! mutation through `session_core::catalog::dispatch`. Checked every time: the caller gets
//! `session/storage` (or success, when the failed operation was cleanup after the commit point),
//! the store then serves either the state before the mutation or the state after it (all or
//! nothing; nothing acknowledged is damaged), a second store opened on the same disk serves the
//! same (the cache equals the disk), the next write succeeds, and a reopen after it agrees again.

mod common;

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use session_core::{catalog, Env, ErrorCode, Limits, ManualClock, MemStore, SeqIds, Store};
use session_store_fs::{Fault, FaultyIo, IoOp};
use session_store_fs::{FsConfig, FsStore, SyncMode};

const SESSIONS: &[&str] = &["s", "t", "s_001", "s_002"];

/// Deterministic ids and time for one run (every run makes the same calls in the same order).
struct Caller {
    clock: ManualClock,
    ids: SeqIds,
}

impl Caller {
    fn new() -> Self {
        Caller { clock: ManualClock::new(), ids: SeqIds::new() }
    }

    fn call(&self, store: &dyn Store, op: &str, payload: Value) -> Result<Value, ErrorCode> {
        let env = Env { clock: &self.clock, ids: &self.ids, limits: Limits::default() };
        match catalog::dispatch(store, &env, op, payload).expect("known op") {
            Ok(outcome) => Ok(outcome.response),
            Err(e) => Err(e.code),
        }
    }

    fn ok(&self, store: &dyn Store, op: &str, payload: Value) -> Value {
        self.call(store, op, payload).unwrap_or_else(|e| panic!("{op}: {e:?}"))
    }
}

fn msg(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
}

/// The acknowledged history every scenario starts from.
fn setup(c: &Caller, store: &dyn Store) {
    c.ok(store, "session::ensure", json!({"session_id": "s", "title": "kept"}));
    c.ok(store, "session::append", json!({"session_id": "s", "message": msg("one")}));
    c.ok(store, "session::append", json!({"session_id": "s", "message": msg("two")}));
    let data = "aGVsbG8="; // "hello"
    c.ok(
        store,
        "session::put-attachment",
        json!({"session_id": "s", "name": "a.txt", "mime": "text/plain", "data": data}),
    );
    c.ok(store, "session::ensure", json!({"session_id": "t", "title": "other"}));
    c.ok(store, "session::append", json!({"session_id": "t", "message": msg("t1")}));
}

type Act = fn(&Caller, &dyn Store) -> Result<Value, ErrorCode>;

/// The mutations under test, each through the catalog dispatcher.
const SCENARIOS: &[(&str, Act)] = &[
    ("create", |c, s| c.call(s, "session::create", json!({"title": "new"}))),
    ("append", |c, s| {
        c.call(s, "session::append", json!({"session_id": "s", "message": msg("x")}))
    }),
    ("append-many", |c, s| {
        let messages = json!([msg("m1"), msg("m2")]);
        c.call(s, "session::append-many", json!({"session_id": "s", "messages": messages}))
    }),
    ("update-message", |c, s| {
        let content = json!([{"type": "text", "text": "edited"}]);
        c.call(
            s,
            "session::update-message",
            json!({"session_id": "s", "entry_id": "e_002", "content": content}),
        )
    }),
    ("fork", |c, s| c.call(s, "session::fork", json!({"session_id": "s", "entry_id": "e_001"}))),
    ("set-status", |c, s| {
        c.call(s, "session::set-status", json!({"session_id": "t", "status": "working"}))
    }),
    ("put-attachment", |c, s| {
        let data = "d29ybGQ="; // "world"
        let req = json!({"session_id": "t", "name": "b.bin", "mime": "x/y", "data": data});
        c.call(s, "session::put-attachment", req)
    }),
    ("delete-attachment", |c, s| {
        let req = json!({"session_id": "s", "attachment_id": "a_001"});
        c.call(s, "session::delete-attachment", req)
    }),
    ("delete-session", |c, s| c.call(s, "session::delete", json!({"session_id": "s"}))),
    ("store-delete-entries (snapshot rewrite)", |c, s| {
        c.call(s, "session::store::delete-entries", json!({"session_id": "t"}))
    }),
];

/// Everything a reader can see of the sessions the scenarios touch.
#[derive(Debug, PartialEq)]
struct Seen {
    listed: Vec<String>,
    sessions: Vec<common::Visible>,
}

fn seen(store: &dyn Store) -> Seen {
    Seen {
        listed: common::listed(store),
        sessions: SESSIONS.iter().map(|sid| common::visible(store, sid)).collect(),
    }
}

fn open(dir: &Path, io: Option<Arc<FaultyIo>>, sync: SyncMode) -> FsStore {
    let mut cfg = FsConfig::new(dir).sync(sync);
    if let Some(io) = io {
        cfg = cfg.io(io);
    }
    FsStore::open(cfg).expect("open")
}

/// What the setup alone, and the setup plus a successful mutation, look like (in-memory model).
fn model(act: Act) -> (Seen, Seen) {
    let (c, mem) = (Caller::new(), MemStore::new());
    setup(&c, &mem);
    let before = seen(&mem);
    act(&c, &mem).expect("model mutation");
    (before, seen(&mem))
}

/// Runs one scenario with a fault at its `n`-th operation; returns what the failing call answered.
fn run_faulted(name: &str, act: Act, sync: SyncMode, n: usize, fault: Fault) -> String {
    let (before, after) = model(act);
    let dir = tempfile::tempdir().expect("tempdir");
    let io = Arc::new(FaultyIo::new());
    let store = open(dir.path(), Some(Arc::clone(&io)), sync);
    let c = Caller::new();
    setup(&c, &store);
    assert_eq!(seen(&store), before, "{name}: setup");
    io.fail_nth(n, fault);
    let result = act(&c, &store);
    let fired = io.fired();
    assert_eq!(fired.len(), 1, "{name}: op {n} {fault:?}: fault did not fire");
    let what = format!("{name}: op {n} = {:?} {:?}, {fault:?}", fired[0].0, fired[0].1);
    if let Err(code) = &result {
        assert_eq!(*code, ErrorCode::Storage, "{what}: error code");
    }
    let served = seen(&store);
    let outcome = if served == before {
        "before"
    } else if served == after {
        "after"
    } else {
        panic!("{what}: neither before nor after:\nserved {served:#?}\nbefore {before:#?}\nafter {after:#?}");
    };
    match (&result, outcome, fired[0].0) {
        // Failed: nothing happened.
        (Err(_), "before", _) => {}
        // A directory fsync after the rename / removal of a snapshot rewrite failed: the change
        // is visible but its durability unknown, so the caller is told it failed.
        (Err(_), "after", IoOp::SyncDir) => {}
        // Cleanup after the commit point (trash, orphan bytes) failed: the mutation is complete.
        (Ok(_), "after", IoOp::RemoveDir | IoOp::RemoveFile) => {}
        _ => panic!("{what}: answered {result:?} but serves the state {outcome} the mutation"),
    }
    // The cache equals the disk: an independent store on the same data_dir serves the same.
    let other = open(dir.path(), None, SyncMode::Never);
    assert_eq!(seen(&other), served, "{what}: cache != disk");
    drop(other);
    // The next write works, and survives a reopen.
    c.ok(&store, "session::append", json!({"session_id": "t", "message": msg("next")}));
    let after_next = seen(&store);
    drop(store);
    assert_eq!(seen(&open(dir.path(), None, SyncMode::Never)), after_next, "{what}: after reopen");
    format!("{what} -> {} ({outcome})", if result.is_ok() { "ok" } else { "session/storage" })
}

/// The operations a clean run of the scenario performs after the setup.
fn record(act: Act, sync: SyncMode) -> Vec<(IoOp, std::path::PathBuf)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let io = Arc::new(FaultyIo::new());
    let store = open(dir.path(), Some(Arc::clone(&io)), sync);
    let c = Caller::new();
    setup(&c, &store);
    let start = io.op_count();
    act(&c, &store).expect("clean run");
    io.ops()[start..].to_vec()
}

fn every_write_point(sync: SyncMode, only: Option<&str>) {
    let mut report = Vec::new();
    for (name, act) in SCENARIOS.iter().filter(|(n, _)| only.is_none_or(|o| o == *n)) {
        let ops = record(*act, sync);
        assert!(!ops.is_empty(), "{name}: no write points recorded");
        for (n, (kind, _)) in ops.iter().enumerate() {
            for fault in Fault::ALL {
                if fault == Fault::Short && *kind != IoOp::Write {
                    continue; // a short write needs a write
                }
                report.push(run_faulted(name, *act, sync, n, fault));
            }
        }
    }
    eprintln!("{}", report.join("\n"));
}

#[test]
fn every_write_point_of_every_mutation_fails_cleanly_sync_always() {
    every_write_point(SyncMode::Always, None);
}

#[test]
fn every_write_point_fails_cleanly_sync_group() {
    for name in ["append", "fork", "delete-session"] {
        every_write_point(SyncMode::Group, Some(name));
    }
}

#[test]
fn every_write_point_fails_cleanly_sync_never() {
    for name in ["append", "put-attachment", "delete-session"] {
        every_write_point(SyncMode::Never, Some(name));
    }
}

#[test]
fn a_failed_catalog_save_keeps_listing_right() {
    for n in 0..4 {
        for fault in Fault::ALL {
            let dir = tempfile::tempdir().expect("tempdir");
            let io = Arc::new(FaultyIo::new());
            let store = open(dir.path(), Some(Arc::clone(&io)), SyncMode::Always);
            let c = Caller::new();
            setup(&c, &store);
            let listed = common::listed(&store);
            store.flush_catalog().expect("first save");
            c.ok(&store, "session::set-status", json!({"session_id": "s", "status": "working"}));
            io.fail_nth(n, fault);
            let failed = store.flush_catalog();
            if io.fired().is_empty() {
                continue; // fewer operations than n
            }
            assert!(failed.is_err(), "op {n} {fault:?}: a failed save must say so");
            io.disarm();
            let served = seen(&store);
            std::mem::forget(store); // as after a crash: the catalog on disk is the old one
            let reopened = open(dir.path(), None, SyncMode::Never);
            assert_eq!(common::listed(&reopened), listed, "op {n} {fault:?}");
            assert_eq!(seen(&reopened), served, "op {n} {fault:?}: stale catalog line trusted");
        }
    }
}

/// Runs the setup, then `act` with a fault at the last operation of `kind` on a path ending with
/// `suffix` (found by a clean recording run); returns the directory, the store and the answer.
fn faulted_once(
    act: Act,
    kind: IoOp,
    suffix: &str,
    fault: Fault,
) -> (tempfile::TempDir, FsStore, Result<Value, ErrorCode>) {
    let ops = record(act, SyncMode::Always);
    let matches =
        |(k, p): &(IoOp, std::path::PathBuf)| *k == kind && p.to_string_lossy().ends_with(suffix);
    let n = ops.iter().rposition(matches).expect("no such write point");
    let dir = tempfile::tempdir().expect("tempdir");
    let io = Arc::new(FaultyIo::new());
    let store = open(dir.path(), Some(Arc::clone(&io)), SyncMode::Always);
    let c = Caller::new();
    setup(&c, &store);
    io.fail_nth(n, fault);
    let result = act(&c, &store);
    let fired = io.fired();
    assert_eq!(fired.len(), 1, "fault did not fire");
    assert!(fired[0].1.to_string_lossy().ends_with(suffix), "{fired:?}");
    (dir, store, result)
}

fn delete_session(c: &Caller, s: &dyn Store) -> Result<Value, ErrorCode> {
    c.call(s, "session::delete", json!({"session_id": "s"}))
}

/// Found by fault injection: a session delete moves the attachment folder into `%trash` before
/// the log is removed; when the directory fsync after that move failed, the delete failed but the
/// folder stayed in the trash, so the live session's attachments vanished until a restart.
#[test]
fn regression_a_failed_trash_sync_does_not_hide_the_attachments() {
    let (_dir, store, result) =
        faulted_once(delete_session, IoOp::SyncDir, "attachments", Fault::Io);
    assert_eq!(result, Err(ErrorCode::Storage));
    assert!(store.get_meta("s").expect("meta").is_some());
    assert_eq!(store.list_attachments("s").expect("list").len(), 1, "attachments hidden");
}

/// Found by fault injection: when the data_dir fsync after the log removal of a session delete
/// failed, the store restored the trashed attachment folder of the deleted session and kept
/// listing it from the in-memory catalog, while the disk no longer had it.
#[test]
fn regression_a_failed_sync_after_the_commit_point_leaves_cache_catalog_and_disk_agreeing() {
    // The last directory fsync of a delete is the data_dir's, after the log removal.
    let (dir, store, result) = faulted_once(delete_session, IoOp::SyncDir, "", Fault::NoSpace);
    assert_eq!(result, Err(ErrorCode::Storage));
    // The log is gone: the delete landed, only its durability is unknown.
    assert_eq!(common::listed(&store), ["t"], "stale catalog");
    assert!(store.list_attachments("s").expect("list").is_empty(), "trash restored");
    assert_eq!(seen(&open(dir.path(), None, SyncMode::Never)), seen(&store));
}

/// Found by fault injection: a put-attachment whose `.json` rename or directory fsync failed
/// answered `session/storage` but left the new attachment listed under an id nobody was told.
#[test]
fn regression_a_failed_put_leaves_no_listed_attachment() {
    let put = SCENARIOS.iter().find(|(n, _)| *n == "put-attachment").expect("scenario").1;
    for (kind, suffix) in [(IoOp::Rename, ".json.tmp"), (IoOp::SyncDir, "attachments/t")] {
        let (_dir, store, result) = faulted_once(put, kind, suffix, Fault::Io);
        assert_eq!(result, Err(ErrorCode::Storage));
        assert!(store.list_attachments("t").expect("list").is_empty(), "{kind:?}: orphan listed");
    }
}

/// Found by fault injection: cleanup after the commit point failing (the trash of a deleted
/// session, the `.bin` of a deleted attachment whose `.json` is gone) failed the whole call,
/// though the mutation was complete and durable and its events were then never published.
#[test]
fn regression_cleanup_after_the_commit_point_does_not_fail_the_call() {
    let (dir, store, result) = faulted_once(delete_session, IoOp::RemoveDir, "%trash/s", Fault::Io);
    assert!(result.is_ok(), "{result:?}");
    assert!(store.get_meta("s").expect("meta").is_none());
    drop(store);
    let reopened = open(dir.path(), None, SyncMode::Never);
    assert!(!dir.path().join("attachments/%trash/s").exists(), "open removes the leftover");
    assert!(reopened.list_attachments("s").expect("list").is_empty());
    let delete = SCENARIOS.iter().find(|(n, _)| *n == "delete-attachment").expect("scenario").1;
    let (_dir, store, result) = faulted_once(delete, IoOp::RemoveFile, ".bin", Fault::Io);
    assert_eq!(result.map(|v| v["deleted"].clone()), Ok(json!(true)));
    assert!(store.list_attachments("s").expect("list").is_empty());
}

/// A flush (`fdatasync`) of `group` mode fails once while two writers run concurrently: the
/// writer it belonged to is told `session/storage` and its line is gone, every acknowledged write
/// of both writers survives a reopen, and writing goes on.
#[test]
fn a_failed_flush_under_concurrent_writers_fails_exactly_its_writer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let io = Arc::new(FaultyIo::new());
    let store = Arc::new(open(dir.path(), Some(Arc::clone(&io)), SyncMode::Group));
    let c = Caller::new();
    for sid in ["g0", "g1"] {
        c.ok(&*store, "session::ensure", json!({"session_id": sid}));
    }
    io.fail_next(IoOp::SyncData, "", Fault::Io);
    let outcomes: Vec<Vec<(String, bool)>> = std::thread::scope(|scope| {
        let writers: Vec<_> = ["g0", "g1"]
            .into_iter()
            .map(|sid| {
                let (store, io) = (Arc::clone(&store), Arc::clone(&io));
                scope.spawn(move || {
                    let c = Caller::new();
                    let mut out = Vec::new();
                    for i in 0..400 {
                        let text = format!("{sid}-{i}");
                        let req = json!({"session_id": sid, "message": msg(&text)});
                        let r = c.call(&*store, "session::append", req);
                        if let Err(code) = &r {
                            assert_eq!(*code, ErrorCode::Storage);
                        }
                        out.push((text, r.is_ok()));
                        if !io.fired().is_empty() && i > 20 && out.iter().any(|o| !o.1) {
                            break;
                        }
                    }
                    out
                })
            })
            .collect();
        writers.into_iter().map(|w| w.join().expect("writer")).collect()
    });
    assert!(!io.fired().is_empty(), "the injected flush fault never fired");
    let failed: Vec<&String> = outcomes.iter().flatten().filter(|o| !o.1).map(|o| &o.0).collect();
    assert!(!failed.is_empty(), "the failed flush reached nobody");
    drop(store);
    let reopened = open(dir.path(), None, SyncMode::Never);
    let texts: Vec<String> = ["g0", "g1"]
        .iter()
        .flat_map(|sid| reopened.list_entries(sid).expect("list"))
        .map(|e| serde_json::to_string(&e).expect("json"))
        .collect();
    let present = |t: &str| texts.iter().any(|e| e.contains(&format!("\"{t}\"")));
    for (text, ok) in outcomes.iter().flatten() {
        assert_eq!(present(text), *ok, "{text}: acknowledged {ok}");
    }
}
