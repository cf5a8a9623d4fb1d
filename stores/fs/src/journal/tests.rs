//! The flusher thread's gathering, step by step: which records one `fdatasync` covers.

use std::fs::File;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use super::{Journal, FILE_NAME, INITIAL_CAP, MAX_CAP};
use crate::{FaultyIo, IoOp};

/// Long enough that a flush that went early did so because gathering ended, not its deadline.
const PATIENT: Duration = Duration::from_secs(30);
/// How long the tests give a flusher that should not flush to do so anyway.
const GRACE: Duration = Duration::from_millis(100);
/// How long a flush that should come may take.
const DUE: Duration = Duration::from_secs(10);

struct Fixture {
    _dir: tempfile::TempDir,
    io: Arc<FaultyIo>,
    journal: Arc<Journal>,
    file: Arc<File>,
}

impl Fixture {
    fn new(gather: Duration) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let io = Arc::new(FaultyIo::new());
        let (journal, _) =
            Journal::open(dir.path(), io.clone(), INITIAL_CAP, MAX_CAP, gather).unwrap();
        let file = Arc::new(File::create(dir.path().join("s.jsonl")).unwrap());
        Fixture { _dir: dir, io, journal, file }
    }

    /// `fdatasync`s of the journal file so far.
    fn flushes(&self) -> usize {
        let ops = self.io.ops();
        ops.iter()
            .filter(|(kind, path)| *kind == IoOp::SyncData && path.ends_with(FILE_NAME))
            .count()
    }

    fn append(&self, data: &[u8]) -> u64 {
        self.journal.append("s.jsonl", &self.file, 0, data).unwrap()
    }

    /// Waits for `seq` the way the worker does (the flusher thread flushes), on its own thread;
    /// the receiver gets the result.
    fn wait_in_background(&self, seq: u64) -> mpsc::Receiver<Result<(), String>> {
        let (tx, rx) = mpsc::channel();
        let journal = Arc::clone(&self.journal);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
            let result = runtime.unwrap().block_on(journal.wait_async(seq));
            let _ = tx.send(result.map_err(|e| e.to_string()));
        });
        rx
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.journal.close();
    }
}

#[test]
fn a_flush_waits_for_the_writes_still_landing_then_covers_them_all() {
    let fx = Fixture::new(PATIENT);
    let before = fx.flushes();
    let (first, second) = (fx.journal.landing(), fx.journal.landing());
    let seq = fx.append(b"one");
    drop(first);
    let acked = fx.wait_in_background(seq);
    assert!(acked.recv_timeout(GRACE).is_err(), "flushed while a write was still landing");
    assert_eq!(fx.flushes(), before);

    let seq2 = fx.append(b"two");
    drop(second);
    assert_eq!(acked.recv_timeout(DUE).unwrap(), Ok(()));
    assert_eq!(fx.flushes(), before + 1, "one fdatasync for both writes");
    let acked2 = fx.wait_in_background(seq2);
    assert_eq!(acked2.recv_timeout(DUE).unwrap(), Ok(()));
    assert_eq!(fx.flushes(), before + 1, "the second write was already durable");
}

#[test]
fn a_flush_gathers_as_many_records_as_the_last_one_covered() {
    let fx = Fixture::new(PATIENT);
    let landing = (fx.journal.landing(), fx.journal.landing());
    let pair = (fx.append(b"one"), fx.append(b"two"));
    drop(landing);
    assert_eq!(fx.wait_in_background(pair.1).recv_timeout(DUE).unwrap(), Ok(()));
    let before = fx.flushes();

    // No write is landing, but the last flush took two records: the next waits for a second.
    let acked = fx.wait_in_background(fx.append(b"three"));
    assert!(acked.recv_timeout(GRACE).is_err(), "flushed before the batch filled");
    fx.append(b"four");
    assert_eq!(acked.recv_timeout(DUE).unwrap(), Ok(()));
    assert_eq!(fx.flushes(), before + 1);
}

#[test]
fn a_write_that_never_lands_holds_a_flush_only_until_the_deadline() {
    let fx = Fixture::new(Duration::from_millis(20));
    let before = fx.flushes();
    let _stuck = fx.journal.landing();
    let acked = fx.wait_in_background(fx.append(b"one"));
    assert_eq!(acked.recv_timeout(DUE).unwrap(), Ok(()));
    assert_eq!(fx.flushes(), before + 1);
}

#[test]
fn a_blocking_waiter_flushes_at_once_without_gathering() {
    let fx = Fixture::new(PATIENT);
    let before = fx.flushes();
    let _stuck = fx.journal.landing();
    let seq = fx.append(b"one");
    fx.journal.wait(seq).unwrap();
    assert_eq!(fx.flushes(), before + 1);
}
