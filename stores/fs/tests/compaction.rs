//! Background compaction of the fs store: rewrites happen off the writers' path, writers keep
//! appending while a job runs, readers opening the file meanwhile see a whole file (old or new),
//! a failure or crash at any step of a job loses nothing acknowledged, and an idle session ends
//! within twice its live size.

mod common;

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use session_core::conformance::{message_entry, sample_meta};
use session_core::jsonl;
use session_core::wire::SessionEntry;
use session_core::{ChangeSet, Store, Write};
use session_store_fs::{Fault, FaultyIo, IoOp};
use session_store_fs::{FsConfig, FsStore, SyncMode};

fn open(dir: &Path, sync: SyncMode, io: Option<Arc<FaultyIo>>) -> FsStore {
    let mut cfg = FsConfig::new(dir).sync(sync);
    cfg.compact_min_bytes = 1024;
    if let Some(io) = io {
        cfg = cfg.io(io);
    }
    FsStore::open(cfg).expect("open")
}

/// One streamed revision of entry `e`: a full copy of the growing message (what makes files grow
/// quadratically without compaction).
fn revision(store: &FsStore, n: u64) {
    let mut entry = message_entry("e", None, 2, &"tok ".repeat(n as usize));
    if let SessionEntry::Message { revision, .. } = &mut entry {
        *revision = n;
    }
    store.apply(&ChangeSet::new("s").with(Write::PutEntry(entry))).expect("update");
}

fn append(store: &FsStore, i: usize) {
    let entry = message_entry(&format!("m{i}"), None, i as i64, "appended while compacting");
    let write = Write::CommitAppend { entry, parent_explicit: false };
    store.apply(&ChangeSet::new("s").with(write)).expect("append");
}

fn disk_and_live(dir: &Path) -> (u64, u64) {
    let bytes = fs::read(dir.join("s.jsonl")).expect("read");
    let live = jsonl::encode_snapshot(&jsonl::replay(&bytes).0).len() as u64;
    (bytes.len() as u64, live)
}

fn revision_of(store: &dyn Store) -> u64 {
    store.get_entry("s", "e").expect("get").map_or(0, |e| e.revision())
}

#[test]
fn streaming_ends_within_twice_live_after_the_background_jobs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path(), SyncMode::Never, None);
    store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).expect("meta");
    for n in 1..=1500 {
        revision(&store, n);
    }
    store.wait_for_compactions();
    let (disk, live) = disk_and_live(dir.path());
    assert!(disk <= 2 * live, "disk {disk} > 2 × live {live}");
    assert!(!dir.path().join("s.jsonl.compact.tmp").exists(), "tmp left behind");
    drop(store);
    assert_eq!(revision_of(&open(dir.path(), SyncMode::Never, None)), 1500);
}

#[test]
fn writers_and_fresh_readers_during_compaction_see_every_acknowledged_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(open(dir.path(), SyncMode::Always, None));
    store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).expect("meta");
    let acked = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    // A reader that replays the file from disk with a fresh store, over and over.
    let reader = {
        let (dir, acked, done) = (dir.path().to_path_buf(), Arc::clone(&acked), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut reads = 0;
            while !done.load(Ordering::SeqCst) || reads == 0 {
                let floor = acked.load(Ordering::SeqCst);
                let mut bytes = fs::read(dir.join("s.jsonl")).expect("read");
                // An append in flight may show as a torn last line (replay skips it); every
                // complete line must parse: no partial file, no hole.
                let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
                bytes.truncate(whole);
                let (state, stats) = jsonl::replay(&bytes);
                assert_eq!(stats.skipped, 0, "a reader saw a partial file");
                let revision = state.entries.get("e").map_or(0, |e| e.revision()) as usize;
                assert!(revision >= floor, "read revision {revision} < acknowledged {floor}");
                reads += 1;
            }
            reads
        })
    };
    for n in 1..=400 {
        revision(&store, n);
        acked.store(n as usize, Ordering::SeqCst);
        if n % 50 == 0 {
            append(&store, n as usize); // other records interleave with the jobs
        }
    }
    done.store(true, Ordering::SeqCst);
    assert!(reader.join().expect("reader") > 0);
    store.wait_for_compactions();
    let served = common::visible(&*store, "s");
    let (disk, live) = disk_and_live(dir.path());
    assert!(disk <= 2 * live, "disk {disk} > 2 × live {live}");
    drop(store);
    let reopened = open(dir.path(), SyncMode::Never, None);
    assert_eq!(common::visible(&reopened, "s"), served);
    assert_eq!(revision_of(&reopened), 400);
    assert_eq!(reopened.list_entries("s").expect("list").len(), 9);
}

/// Every operation of a compaction job fails once (ENOSPC, EIO, short write): the job gives up
/// or the disk is re-read, and nothing acknowledged is lost; the next job succeeds.
#[test]
fn a_failure_at_any_step_of_a_job_loses_nothing() {
    // Record the operations of the first job of a clean run.
    let ops = {
        let dir = tempfile::tempdir().expect("tempdir");
        let io = Arc::new(FaultyIo::new());
        let store = open(dir.path(), SyncMode::Always, Some(Arc::clone(&io)));
        for n in 1..=40 {
            revision(&store, n);
            store.wait_for_compactions(); // jobs never interleave with writes: a fixed order
        }
        io.ops()
    };
    let job: Vec<usize> = (0..ops.len())
        .filter(|i| {
            ops[*i].1.to_string_lossy().contains(".compact.tmp") || {
                // the directory fsync right after the rename
                *i > 0 && ops[*i - 1].0 == IoOp::Rename && ops[*i].0 == IoOp::SyncDir
            }
        })
        .collect();
    // The first job's operations (every job runs the same steps).
    let end = job.iter().position(|i| ops[*i].0 == IoOp::SyncDir).expect("dir sync");
    let job = &job[..=end];
    assert_eq!(job.len(), 6, "create, write ×2, sync, rename, dir sync: {job:?}");
    for &at in job {
        for fault in Fault::ALL {
            if fault == Fault::Short && ops[at].0 != IoOp::Write {
                continue;
            }
            let dir = tempfile::tempdir().expect("tempdir");
            let io = Arc::new(FaultyIo::new());
            let store = open(dir.path(), SyncMode::Always, Some(Arc::clone(&io)));
            io.fail_nth(at - io.op_count(), fault); // `at` counts from the open
            for n in 1..=40 {
                revision(&store, n);
                store.wait_for_compactions(); // as in the recording: jobs run in the same order
            }
            assert_eq!(io.fired().len(), 1, "op {at} {:?} {fault:?} did not fire", ops[at]);
            assert_eq!(revision_of(&store), 40, "op {at} {fault:?}: served");
            let bytes = fs::read(dir.path().join("s.jsonl")).expect("read");
            assert_eq!(jsonl::replay(&bytes).1.skipped, 0, "op {at} {fault:?}: torn file");
            drop(store);
            assert_eq!(revision_of(&open(dir.path(), SyncMode::Never, None)), 40, "op {at}");
        }
    }
}

/// A crash in the middle of a job, before its rename: the live log still holds everything
/// acknowledged, the stray tmp file is no session, and a later job replaces it.
#[test]
fn a_crash_before_the_rename_leaves_the_old_file_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let io = Arc::new(FaultyIo::new());
    let store = open(dir.path(), SyncMode::Always, Some(Arc::clone(&io)));
    store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).expect("meta");
    io.fail_next(IoOp::Rename, ".compact.tmp", Fault::Io);
    let mut acked = 0;
    while io.fired().is_empty() {
        acked += 1;
        revision(&store, acked);
        store.wait_for_compactions();
    }
    std::mem::forget(store); // crash: no orderly shutdown
    let tmp = dir.path().join("s.jsonl.compact.tmp");
    fs::write(&tmp, b"{\"type\":\"meta\",\"meta\":{\"session_id\":\"torn").expect("leftover");
    let reopened = open(dir.path(), SyncMode::Always, None);
    assert_eq!(revision_of(&reopened), acked);
    assert_eq!(common::listed(&reopened), ["s"], "the tmp file is not a session");
    for n in acked + 1..=acked + 60 {
        revision(&reopened, n);
    }
    reopened.wait_for_compactions();
    assert!(!tmp.exists(), "a later job replaced the stray tmp file");
    drop(reopened);
    assert_eq!(revision_of(&open(dir.path(), SyncMode::Never, None)), acked + 60);
}

/// During a hot reload two stores share the data_dir: the new one may append to a session while
/// the old one's compaction job writes its tmp file. The job must not rename its snapshot over
/// that append (it would be lost): it checks the file length and gives up.
#[test]
fn a_job_never_renames_over_an_append_by_another_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let io = Arc::new(FaultyIo::new());
    let old = open(dir.path(), SyncMode::Always, Some(Arc::clone(&io)));
    old.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).expect("meta");
    let path = dir.path().to_path_buf();
    let appended = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&appended);
    io.set_hook(Arc::new(move |kind, p| {
        let tmp = p.to_string_lossy().ends_with(".compact.tmp");
        if kind == IoOp::Create && tmp && !flag.swap(true, Ordering::SeqCst) {
            // Step (2) of the old store's job: the new store appends meanwhile.
            let new = open(&path, SyncMode::Always, None);
            append(&new, 999);
        }
    }));
    let mut n = 0;
    while !appended.load(Ordering::SeqCst) {
        n += 1;
        revision(&old, n);
        old.wait_for_compactions();
    }
    drop(old);
    let reopened = open(dir.path(), SyncMode::Never, None);
    assert!(
        reopened.get_entry("s", "m999").expect("get").is_some(),
        "the other store's append was lost"
    );
    assert_eq!(revision_of(&reopened), n);
}

/// A large session (every entry a stub, its body on its line) compacted while it is written:
/// the stubs' spans follow their lines into the new file — those the snapshot rewrote and those
/// appended while the job ran — so every read of the cached session finds its body.
#[test]
fn stubs_follow_their_lines_through_compactions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = FsConfig::new(dir.path()).sync(SyncMode::Never);
    cfg.compact_min_bytes = 1024;
    cfg.spill_above = 0;
    let store = FsStore::open(cfg).expect("open");
    store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).expect("meta");
    for n in 1..=600 {
        revision(&store, n);
        if n % 3 == 0 {
            append(&store, n as usize);
        }
        assert_eq!(revision_of(&store), n, "the cached stub of e after revision {n}");
        if n % 20 == 0 {
            let entries = store.list_entries("s").expect("every body read back");
            assert_eq!(entries.len(), 1 + n as usize / 3);
        }
    }
    store.wait_for_compactions();
    let served = common::visible(&store, "s");
    drop(store);
    let reopened = open(dir.path(), SyncMode::Never, None);
    assert_eq!(common::visible(&reopened, "s"), served);
}
