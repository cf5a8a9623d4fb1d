//! Group commit of one session's appends (`fsync: group`, issue 16): a write lands in the log
//! under the session's slot lock and is acknowledged once one `fdatasync` that started after it
//! returns; writers that arrive while a flush runs are covered together by the next one.
//!
//! Every slot has a [`Flusher`]: how many bytes were appended to the session's log in this
//! process (`written`, counted across files, never decreasing) and how many of them are known
//! durable (`durable`). An append registers its bytes under the slot lock and gets a [`Ticket`]
//! (`upto`: the count after its bytes); [`Flusher::wait`] (a blocking caller: `FsStore::apply`)
//! or [`Ticket::wait_async`] (the worker, after releasing the session lock) returns once
//! `durable >= upto`. The first waiter that finds no flush running leads one: it syncs the file
//! with no lock held (an async waiter on a blocking thread), so the next writers decide, write
//! and register meanwhile, and one flush then covers all of them.
//!
//! A failed flush fails every write not yet durable, those it covered and those written while
//! it ran (each was decided against the state its predecessors left): their range is recorded
//! as failed and the flusher is *poisoned*. The call the failure reached, or else the next
//! thread that takes the slot lock ([`Flusher::clean_after_failure`]), cuts the log back to the durable length and drops the
//! cached state, so the next touch replays what the disk holds. A write that registers while
//! the flusher is poisoned fails with the rest. Nothing is acknowledged that a failed flush may
//! have lost, and no acknowledged write depends on one that failed.
//!
//! Whatever replaces the log file (a snapshot rewrite, a compaction) first makes the pending
//! bytes durable ([`Flusher::flush_pending`], under the slot lock), so a flush always syncs the
//! file the pending bytes are in.
//!
//! With the journal (`fsync: group`, `journal/`) a flush of the session waits for the journal
//! to be durable past the session's latest record instead of syncing the file: an async waiter
//! awaits the journal's flusher thread (no blocking thread per write), a blocking one leads the
//! journal's flush itself; [`Flusher::flush_pending`] then also records the journal reset of the
//! file about to be replaced.

use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use session_core::StoreError;

use super::group_wait::{next_step, CountedCondvar, Next};
use super::io::io_err;
use super::journal::Journal;
use super::vfs::FsIo;

/// One session's group commit state (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Flusher {
    state: Mutex<FlushState>,
    /// Wakes the blocking waiters after each flush ([`Flusher::wait`]) …
    flushed: CountedCondvar,
    /// … and the async ones ([`Ticket::wait_async`]).
    flushed_async: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct FlushState {
    /// Bytes appended in this process, across files.
    written: u64,
    /// Of `written`, the bytes known durable (or cut after a failure).
    durable: u64,
    /// A leader is in `fdatasync` (holding no lock).
    flushing: bool,
    /// The file the pending bytes are in.
    file: Option<(Arc<File>, Arc<Path>)>,
    /// The log's length after the `written` bytes.
    written_len: u64,
    /// The log's length after the `durable` bytes: where a failed flush cuts it back to.
    durable_len: u64,
    /// A flush failed and the log is not cut back yet.
    poisoned: bool,
    /// With the journal (`fsync: group`): it, and the sequence number of the session's latest
    /// record there; a flush then waits for the journal instead of syncing the file.
    journal: Option<(Arc<Journal>, u64)>,
    /// Ranges `(from, to]` of `written` that a failed flush dropped, and why.
    failed: Vec<(u64, u64, String)>,
    /// Threads waiting on `Flusher::flushed`.
    blocked: usize,
}

impl FlushState {
    /// What a waiter for `upto` does next (the one rule of both [`Flusher::wait`] and
    /// [`Ticket::wait_async`]).
    fn next(&self, upto: u64) -> Next {
        next_step(&self.failed, self.durable, self.flushing, upto)
    }
}

/// A registered append: durable once its flusher's `durable` reaches `upto`.
#[derive(Debug)]
pub(crate) struct Ticket {
    pub(crate) flusher: Arc<Flusher>,
    pub(crate) upto: u64,
}

impl Ticket {
    /// Waits until this append is durable (leading a flush when none runs).
    pub(crate) fn wait(&self, io: &dyn FsIo) -> Result<(), StoreError> {
        self.flusher.wait(io, self.upto)
    }

    /// [`Self::wait`] for async callers: no thread waits; a flush this call leads runs on a
    /// blocking thread (and finishes even when this future is dropped).
    pub(crate) async fn wait_async(&self, io: &Arc<dyn FsIo>) -> Result<(), StoreError> {
        let flusher = &self.flusher;
        loop {
            let notified = flusher.flushed_async.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let next = lock(&flusher.state).next(self.upto);
            match next {
                Next::Done(result) => return result,
                Next::Wait => notified.await,
                Next::Lead if flusher.journaled().is_some() => {
                    let (journal, seq, target, target_len) =
                        flusher.journaled().expect("checked just before");
                    let result = journal.wait_async(seq).await;
                    flusher.finish(target, target_len, result);
                }
                Next::Lead => {
                    let (flusher, io) = (Arc::clone(&self.flusher), Arc::clone(io));
                    let led = tokio::task::spawn_blocking(move || flusher.lead(&*io));
                    led.await
                        .map_err(|e| StoreError::Internal(format!("group flush panicked: {e}")))?;
                }
            }
        }
    }
}

/// The flush tickets of one call's writes, waited for after the session lock is released.
#[derive(Debug)]
pub struct Flushes {
    tickets: Vec<Ticket>,
    io: Arc<dyn FsIo>,
}

impl Flushes {
    pub(crate) fn new(tickets: Vec<Ticket>, io: Arc<dyn FsIo>) -> Self {
        Flushes { tickets, io }
    }

    /// Whether there is nothing to wait for (`fsync: never`, or writes that appended nothing).
    pub fn is_empty(&self) -> bool {
        self.tickets.is_empty()
    }

    /// [`Self::wait`] on this thread: a flush this call leads runs here (for a caller that has
    /// nothing else to do meanwhile; an async caller blocks its runtime for the flush).
    pub fn wait_here(self) -> Result<(), StoreError> {
        self.tickets.iter().try_for_each(|ticket| ticket.wait(&*self.io))
    }

    /// Resolves once every write is durable; `Err` when a flush failed (the writes are not
    /// acknowledged).
    pub async fn wait(self) -> Result<(), StoreError> {
        for ticket in &self.tickets {
            ticket.wait_async(&self.io).await?;
        }
        Ok(())
    }
}

fn lock(m: &Mutex<FlushState>) -> MutexGuard<'_, FlushState> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Flusher {
    /// Registers an append of `bytes` to `file` (at `path`), written at log length `base`; called
    /// under the slot lock right after the write. Returns the count its ticket waits for.
    /// `journal`: the journal and the sequence number of the record this append wrote there.
    pub(crate) fn register(
        &self,
        file: &Arc<File>,
        path: Arc<Path>,
        base: u64,
        bytes: u64,
        journal: Option<(&Arc<Journal>, u64)>,
    ) -> u64 {
        let mut st = lock(&self.state);
        st.journal = journal.map(|(j, seq)| (Arc::clone(j), seq));
        if st.durable == st.written && !st.poisoned {
            st.durable_len = base;
        }
        st.written += bytes;
        st.written_len = base + bytes;
        st.file = Some((Arc::clone(file), path));
        if st.poisoned {
            // Decided against writes a failed flush dropped: it fails with them.
            let end = st.written;
            if let Some(last) = st.failed.last_mut() {
                last.1 = end;
            }
        }
        st.written
    }

    /// The count a reader that just looked at the session must see durable, when some of what
    /// it saw is not yet ([`super::FsStore::read_settles`]).
    pub(crate) fn pending(&self) -> Option<u64> {
        let st = lock(&self.state);
        (st.durable < st.written).then_some(st.written)
    }

    /// A flush failed and the log is not cut back yet.
    pub(crate) fn poisoned(&self) -> bool {
        lock(&self.state).poisoned
    }

    /// Waits until `durable >= upto`, leading flushes as needed; the error of the failed flush
    /// that dropped it otherwise.
    pub(crate) fn wait(&self, io: &dyn FsIo, upto: u64) -> Result<(), StoreError> {
        let mut st = lock(&self.state);
        loop {
            match st.next(upto) {
                Next::Done(result) => return result,
                Next::Wait => st = self.flushed.wait(st, |st| &mut st.blocked),
                Next::Lead => {
                    drop(st);
                    self.lead(io);
                    st = lock(&self.state);
                }
            }
        }
    }

    /// One flush of everything written so far, with no lock held while it runs (nothing when a
    /// flush runs already, nothing is pending or the flusher is poisoned).
    fn lead(&self, io: &dyn FsIo) {
        let mut st = lock(&self.state);
        if st.flushing || st.durable >= st.written || st.poisoned {
            return;
        }
        st.flushing = true;
        let (target, target_len) = (st.written, st.written_len);
        let file = st.file.clone();
        let journal = st.journal.clone();
        drop(st);
        let result = match (&journal, &file) {
            (Some((journal, seq)), _) => journal.wait(*seq),
            (None, Some((file, path))) => {
                io.sync_data(file, path).map_err(|e| io_err("flush", path, &e))
            }
            (None, None) => Ok(()),
        };
        lock(&self.state).flushing = false;
        self.finish(target, target_len, result);
    }

    /// With the journal: it, its sequence number to wait for, and the count and log length that
    /// are durable once it is.
    fn journaled(&self) -> Option<(Arc<Journal>, u64, u64, u64)> {
        let st = lock(&self.state);
        let (journal, seq) = st.journal.clone()?;
        Some((journal, seq, st.written, st.written_len))
    }

    /// Records how a flush covering the first `target` bytes (log length `target_len`) ended.
    fn finish(&self, target: u64, target_len: u64, result: Result<(), StoreError>) {
        let mut st = lock(&self.state);
        match result {
            Ok(()) if !st.poisoned => {
                if target > st.durable {
                    st.durable = target;
                    st.durable_len = target_len;
                }
            }
            Ok(()) => {}
            Err(e) if st.durable < target => {
                let (from, to) = (st.durable, st.written);
                st.failed.push((from, to, e.to_string()));
                st.poisoned = true;
            }
            Err(_) => {}
        }
        let blocked = st.blocked;
        drop(st);
        self.flushed.notify_all(blocked);
        self.flushed_async.notify_waiters();
    }

    /// Makes every pending byte durable now (the slot lock held: no write can register
    /// meanwhile). Called before the log file is replaced. A failure poisons as in [`Self::wait`].
    /// With the journal, the file at `path` is then synced and a durable reset recorded
    /// ([`Journal::reset`]; also for records another store of the data_dir wrote, e.g. before a
    /// hot reload), so a replay never applies its records to the file that replaces it.
    pub(crate) fn flush_pending(
        &self,
        io: &dyn FsIo,
        journal: Option<&Arc<Journal>>,
        path: &std::path::Path,
    ) -> Result<(), StoreError> {
        let upto = lock(&self.state).written;
        self.wait(io, upto)?;
        match (journal, path.file_name()) {
            (Some(journal), Some(name)) => journal.reset(&name.to_string_lossy()),
            _ => Ok(()),
        }
    }

    /// After the log was replaced by a file of `len` bytes holding everything written (a rewrite
    /// or compaction, after [`Self::flush_pending`]): the next flush syncs the new file.
    pub(crate) fn moved(&self, len: u64) {
        let mut st = lock(&self.state);
        st.file = None;
        st.journal = None;
        st.durable = st.written;
        (st.written_len, st.durable_len) = (len, len);
    }

    /// After a failed flush, under the slot lock: cuts the log back to its durable length and
    /// returns true (the caller drops the cached state and the catalog re-reads the session).
    /// False when nothing failed.
    pub(crate) fn clean_after_failure(&self, io: &dyn FsIo) -> bool {
        let mut st = lock(&self.state);
        if !st.poisoned {
            return false;
        }
        while st.flushing {
            st = self.flushed.wait(st, |st| &mut st.blocked);
        }
        if let Some((file, path)) = st.file.take() {
            if let Err(e) = io.set_len(&file, &path, st.durable_len) {
                eprintln!(
                    "session-manager: fs store: could not cut {} back after a failed flush: {e}",
                    path.display()
                );
            }
        }
        st.durable = st.written;
        st.written_len = st.durable_len;
        st.poisoned = false;
        true
    }
}
