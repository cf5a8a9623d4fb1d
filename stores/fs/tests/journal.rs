//! The journal of `fsync: group` (`fs/journal`): after a power loss the session files may miss
//! their unsynced tail; what the journal holds durable brings back every acknowledged append on
//! open, and a torn journal record brings back nothing of its write.

mod common;

use std::fs;
use std::path::Path;

use common::{copy_dir, visible};
use session_core::conformance::{message_entry, sample_meta};
use session_core::{ChangeSet, Store, Write};
use session_store_fs::{FsConfig, FsStore, SyncMode};

const JOURNAL: &str = ".session-journal";

fn open(dir: &Path, journal_bytes: u64) -> FsStore {
    let cfg = FsConfig { journal_bytes, ..FsConfig::new(dir).sync(SyncMode::Group) };
    FsStore::open(cfg).expect("open")
}

fn apply(store: &dyn Store, sid: &str, writes: Vec<Write>) {
    store.apply(&ChangeSet { session_id: sid.into(), writes }).expect("apply");
}

/// Creates session `sid` and appends `n` messages `m0..` to it.
fn session(store: &dyn Store, sid: &str, n: usize) {
    apply(store, sid, vec![Write::PutMeta(sample_meta(sid, 1))]);
    for i in 0..n {
        append(store, sid, i);
    }
}

fn append(store: &dyn Store, sid: &str, i: usize) {
    let parent = (i > 0).then(|| format!("m{}", i - 1));
    let entry = message_entry(&format!("m{i}"), parent.as_deref(), 10 + i as i64, "journal");
    apply(store, sid, vec![Write::CommitAppend { entry, parent_explicit: false }]);
}

/// The data_dir as a power loss right now could leave it: the journal as written (every
/// acknowledged record is durable), the session file `sid` cut to `keep` bytes or, with `zeros`,
/// its tail past `keep` zeroed (ext4 without a journal may show a grown file's lost blocks so).
fn power_loss_copy(live: &Path, sid: &str, keep: usize, zeros: bool) -> tempfile::TempDir {
    let copy = tempfile::tempdir().expect("tempdir");
    copy_dir(live, copy.path());
    let file = copy.path().join(format!("{sid}.jsonl"));
    let mut bytes = fs::read(&file).expect("read");
    if zeros {
        bytes[keep..].fill(0);
    } else {
        bytes.truncate(keep);
    }
    fs::write(&file, bytes).expect("write");
    copy
}

#[test]
fn acknowledged_appends_come_back_from_the_journal_at_every_lost_length() {
    let live = tempfile::tempdir().expect("tempdir");
    let store = open(live.path(), 1 << 20);
    session(&store, "s", 6);
    let want = visible(&store, "s");
    let len = fs::metadata(live.path().join("s.jsonl")).expect("stat").len() as usize;
    for keep in (0..=len).step_by(7).chain([len]) {
        for zeros in [false, true] {
            let copy = power_loss_copy(live.path(), "s", keep, zeros);
            let reopened = open(copy.path(), 1 << 20);
            assert_eq!(visible(&reopened, "s"), want, "kept {keep} of {len} bytes, zeros {zeros}");
            drop(reopened);
            // A clean close leaves the session file whole: what v1.0.32 reads.
            assert_eq!(
                fs::read(copy.path().join("s.jsonl")).expect("read"),
                fs::read(live.path().join("s.jsonl")).expect("read"),
            );
        }
    }
}

#[test]
fn a_torn_last_record_brings_back_none_of_its_write() {
    let live = tempfile::tempdir().expect("tempdir");
    let store = open(live.path(), 1 << 20);
    session(&store, "s", 1);
    let before = visible(&store, "s");
    let len_before = fs::metadata(live.path().join("s.jsonl")).expect("stat").len() as usize;
    let journal_before = journal_end(live.path());
    append(&store, "s", 1);
    let journal_after = journal_end(live.path());
    assert!(journal_after > journal_before, "the append wrote a record");
    for cut in journal_before..journal_after {
        let copy = power_loss_copy(live.path(), "s", len_before, false);
        let path = copy.path().join(JOURNAL);
        let mut bytes = fs::read(&path).expect("read");
        bytes[cut..journal_after].fill(0);
        fs::write(&path, bytes).expect("write");
        let reopened = open(copy.path(), 1 << 20);
        assert_eq!(visible(&reopened, "s"), before, "journal torn at {cut}");
    }
}

/// The end of the journal's records: the last non-zero byte + 1 (records never end in zeros:
/// the last bytes of an append are its line's newline).
fn journal_end(dir: &Path) -> usize {
    let bytes = fs::read(dir.join(JOURNAL)).expect("read");
    bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1)
}

#[test]
fn a_replaced_file_never_gets_its_old_records_and_rollovers_keep_everything() {
    // Rewrites (a delete of the entries: snapshot, tmp + rename) replace the file while its old
    // records are in the journal (1 MiB: one epoch), or after rollovers voided them (64 KiB);
    // the reset before each makes them void either way.
    for journal_bytes in [1 << 20, 64 << 10] {
        let live = tempfile::tempdir().expect("tempdir");
        let store = open(live.path(), journal_bytes);
        apply(&store, "s", vec![Write::PutMeta(sample_meta("s", 1))]);
        for round in 0..12 {
            for i in 0..12 {
                let parent = (i > 0).then(|| format!("r{round}m{}", i - 1));
                let id = format!("r{round}m{i}");
                let entry = message_entry(&id, parent.as_deref(), 10 + i, "journal");
                apply(&store, "s", vec![Write::CommitAppend { entry, parent_explicit: false }]);
            }
            if round < 11 {
                apply(&store, "s", vec![Write::DeleteEntries]);
            }
        }
        let want = visible(&store, "s");
        let len = fs::metadata(live.path().join("s.jsonl")).expect("stat").len();
        let copy = power_loss_copy(live.path(), "s", len as usize, false);
        let reopened = open(copy.path(), journal_bytes);
        assert_eq!(visible(&reopened, "s"), want, "journal of {journal_bytes} bytes");
        assert!(fs::metadata(live.path().join(JOURNAL)).expect("stat").len() <= journal_bytes);
    }
}

#[test]
fn two_stores_of_one_data_dir_share_its_journal() {
    // A hot reload opens the new store while the old one finishes its calls.
    let live = tempfile::tempdir().expect("tempdir");
    let old = open(live.path(), 1 << 20);
    let new = open(live.path(), 1 << 20);
    for (store, sid) in [(&old, "a"), (&new, "b")] {
        apply(store, sid, vec![Write::PutMeta(sample_meta(sid, 1))]);
    }
    for i in 0..5 {
        append(&old, "a", i);
        append(&new, "b", i);
    }
    let want = (visible(&old, "a"), visible(&new, "b"));
    let copy = power_loss_copy(live.path(), "a", 0, false);
    let copy = {
        let again = power_loss_copy(copy.path(), "b", 0, false);
        drop(copy);
        again
    };
    let reopened = open(copy.path(), 1 << 20);
    assert_eq!((visible(&reopened, "a"), visible(&reopened, "b")), want, "both from one journal");
    drop((old, new));
    let clean = open(live.path(), 1 << 20);
    assert_eq!((visible(&clean, "a"), visible(&clean, "b")), want, "after both closed");
}

#[test]
fn many_sessions_in_one_epoch_roll_the_journal_over() {
    let live = tempfile::tempdir().expect("tempdir");
    let store = open(live.path(), 1 << 20);
    let sids: Vec<String> = (0..300).map(|i| format!("s{i}")).collect();
    for sid in &sids {
        session(&store, sid, 1);
    }
    let want: Vec<_> = sids.iter().map(|sid| visible(&store, sid)).collect();
    // The last session's file loses everything: its records are in the current epoch.
    let copy = power_loss_copy(live.path(), "s299", 0, false);
    let reopened = open(copy.path(), 1 << 20);
    let got: Vec<_> = sids.iter().map(|sid| visible(&reopened, sid)).collect();
    assert!(got == want, "every session back after rollovers");
}

#[test]
fn the_offline_commands_replay_a_journal_a_crash_left() {
    let live = tempfile::tempdir().expect("tempdir");
    let store = open(live.path(), 1 << 20);
    session(&store, "s", 3);
    let whole = fs::read(live.path().join("s.jsonl")).expect("read");
    let copy = power_loss_copy(live.path(), "s", 10, false);
    let changed = session_store_fs::recover_journal(copy.path()).expect("recover");
    assert_eq!(changed, ["s.jsonl"]);
    assert_eq!(fs::read(copy.path().join("s.jsonl")).expect("read"), whole, "what v1.0.32 reads");
    assert!(session_store_fs::recover_journal(copy.path()).expect("again").is_empty());
}

#[test]
fn a_worker_shutdown_leaves_everything_in_the_session_files() {
    let live = tempfile::tempdir().expect("tempdir");
    let store = open(live.path(), 1 << 20);
    session(&store, "s", 1);
    store.flush_journal().expect("empty the journal");
    let synced = fs::metadata(live.path().join("s.jsonl")).expect("stat").len() as usize;
    // The journal holds nothing now: a copy whose session file is gone replays nothing into it.
    let copy = power_loss_copy(live.path(), "s", 0, false);
    let reopened = open(copy.path(), 1 << 20);
    assert_eq!(reopened.list_entries("s").expect("list"), [], "nothing came from the journal");
    assert_eq!(fs::metadata(copy.path().join("s.jsonl")).expect("stat").len(), 0);
    // … and writing goes on through it (what the flush synced survives a power loss).
    append(&store, "s", 1);
    let copy = power_loss_copy(live.path(), "s", synced, false);
    let reopened = open(copy.path(), 1 << 20);
    let ids: Vec<String> =
        reopened.list_entries("s").expect("list").iter().map(|e| e.id().to_string()).collect();
    assert_eq!(ids, ["m0", "m1"], "the append after the shutdown flush came back from the journal");
}

#[test]
fn a_journal_configured_below_its_minimum_still_works() {
    let live = tempfile::tempdir().expect("tempdir");
    let store = open(live.path(), 0);
    session(&store, "s", 300);
    assert_eq!(store.list_entries("s").expect("list").len(), 300);
    assert!(fs::metadata(live.path().join(JOURNAL)).expect("stat").len() <= 64 << 10);
}

#[test]
fn a_rewrite_by_another_store_of_the_data_dir_resets_the_records_the_first_one_wrote() {
    // After a hot reload the new store may replace a file whose records the old store wrote.
    let live = tempfile::tempdir().expect("tempdir");
    let old = open(live.path(), 1 << 20);
    session(&old, "s", 5);
    let new = open(live.path(), 1 << 20);
    apply(&new, "s", vec![Write::DeleteEntries]);
    let want = visible(&new, "s");
    let len = fs::metadata(live.path().join("s.jsonl")).expect("stat").len() as usize;
    let copy = power_loss_copy(live.path(), "s", len, false);
    let reopened = open(copy.path(), 1 << 20);
    assert_eq!(visible(&reopened, "s"), want, "none of the old store's records applied");
    drop((old, new));
}
