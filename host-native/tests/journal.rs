//! The journal of `fsync: group` (`fs/journal`): after a power loss the session files may miss
//! their unsynced tail; what the journal holds durable brings back every acknowledged append on
//! open, and a torn journal record brings back nothing of its write.

mod common;

use std::fs;
use std::path::Path;

use common::{copy_dir, visible};
use session_core::conformance::{message_entry, sample_meta};
use session_core::{ChangeSet, Store, Write};
use session_manager::{FsConfig, FsStore, SyncMode};

const JOURNAL: &str = ".session-journal";

fn open(dir: &Path, journal_bytes: u64) -> FsStore {
    let cfg = FsConfig { journal_bytes, ..FsConfig::new(dir).sync(SyncMode::Group) };
    FsStore::open(cfg).expect("open")
}

fn apply(store: &dyn Store, sid: &str, writes: Vec<Write>) {
    store.apply(&ChangeSet { session_id: sid.into(), writes }).expect("apply");
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
    apply(&store, "s", vec![Write::PutMeta(sample_meta("s", 1))]);
    for i in 0..6 {
        append(&store, "s", i);
    }
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
    apply(&store, "s", vec![Write::PutMeta(sample_meta("s", 1))]);
    append(&store, "s", 0);
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
    // A 16 KiB journal rolls over many times; a rewrite (delete of the session's entries via a
    // snapshot) resets the file's records before replacing it.
    let live = tempfile::tempdir().expect("tempdir");
    let mut cfg = FsConfig::new(live.path()).sync(SyncMode::Group);
    cfg.journal_bytes = 16 << 10;
    cfg.compact_min_bytes = 4 << 10;
    let store = FsStore::open(cfg).expect("open");
    apply(&store, "s", vec![Write::PutMeta(sample_meta("s", 1))]);
    for i in 0..200 {
        append(&store, "s", i);
    }
    store.wait_for_compactions();
    let want = visible(&store, "s");
    let len = fs::metadata(live.path().join("s.jsonl")).expect("stat").len() as usize;
    let copy = power_loss_copy(live.path(), "s", len, false);
    let reopened = open(copy.path(), 16 << 10);
    assert_eq!(visible(&reopened, "s"), want, "a reopen of the file as it is");
    assert!(fs::metadata(live.path().join(JOURNAL)).expect("stat").len() <= 16 << 10);
}
