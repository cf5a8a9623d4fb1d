//! One journal for the appends of every session (`fsync: group`): an append writes its session
//! file as before, then the same bytes as a record here, and is durable once the journal is
//! flushed past its record. A record waits in memory (the batch) until a flush writes the batch
//! with one `pwrite` and syncs it with one `fdatasync` (of a zero-filled file: no inode write), so
//! one flush covers the appends of every session that arrived meanwhile; session files are synced
//! only when the journal rolls over to a new epoch or before a file is replaced
//! ([`Journal::reset`]). Nothing waits on a record that no flush has written: a crash before the
//! flush loses only appends that were never acknowledged.
//!
//! One flusher thread flushes whenever records wait, but it first gathers, for at most
//! [`GATHER`]: while write calls are still on their way to the journal ([`Journal::landing`]),
//! and until the batch holds as many records as the previous flush covered (writers that were
//! acknowledged together come back together). So many busy writers share few `fdatasync`s; a
//! lone write flushes on its own thread and never waits here.
//!
//! Opening replays the current epoch into the session files (`recover.rs`); a clean close rolls
//! over, so a data_dir a stopped worker leaves holds everything in its session files (what
//! v1.0.32 reads). One journal serves every store of a data_dir in this process (a hot reload
//! opens the new store while the old one finishes): [`shared`].

mod record;
mod recover;

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use session_core::StoreError;

use super::group_wait::{next_step, CountedCondvar, Next};
use super::io::io_err;
use super::vfs::FsIo;
use record::{Record, HEADER_LEN};
pub(crate) use recover::FILE_NAME;

/// The journal's first size; it doubles when full up to [`MAX_CAP`], then rolls over.
pub(crate) const INITIAL_CAP: u64 = 1 << 20;
/// The smallest journal (a configured size below it is raised to it).
const MIN_CAP: u64 = 64 << 10;
pub(crate) const MAX_CAP: u64 = 32 << 20;
/// Longest a flush waits for the write calls still landing ([`Journal::landing`]) while others'
/// records wait: about one flush of this disk, so a lone straggler costs at most one flush more.
const GATHER: Duration = Duration::from_micros(250);
/// The most records a flush gathers for before it may go (the deadline still applies).
const MAX_GATHER_RECORDS: u64 = 256;
/// A batch buffer up to this size is kept for the next batch (a larger one is given back).
const KEEP_BATCH: usize = 1 << 20;
/// Session files written in one epoch before it rolls over (each is held open until then, beside
/// the cache's own open files; a rollover syncs them all, at most one `fdatasync` per append).
const MAX_DIRTY_FILES: usize = 128;

/// The live journal of one data_dir.
#[derive(Debug)]
pub(crate) struct Journal {
    data_dir: PathBuf,
    path: PathBuf,
    file: File,
    io: Arc<dyn FsIo>,
    max_cap: u64,
    /// How long a flush gathers at most ([`GATHER`]; tests stretch it).
    gather: Duration,
    st: Mutex<State>,
    /// Wakes blocking waiters after each flush …
    flushed: CountedCondvar,
    /// … and async ones.
    flushed_async: tokio::sync::Notify,
    /// Wakes the flusher thread.
    work: CountedCondvar,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

#[derive(Debug)]
struct State {
    epoch: u64,
    /// Where the next record goes (after the batch), and the file's length.
    pos: u64,
    /// The records not written yet, in order (see the module docs); they go at `batch_at`, so
    /// `pos == batch_at + batch.len()`.
    batch: Vec<u8>,
    batch_at: u64,
    /// Write calls on their way to the journal ([`Journal::landing`]).
    landing: usize,
    /// The last record a flush took into its write, and how many records that flush took.
    taken: u64,
    last_batch: u64,
    cap: u64,
    /// Records appended in this process (their sequence numbers), and of them the durable ones.
    written: u64,
    durable: u64,
    flushing: bool,
    /// Ranges `(from, to]` of records a failed flush dropped, and why.
    failed: Vec<(u64, u64, String)>,
    /// A flush failed: the next append rolls over first, so no later record follows a lost one.
    broken: bool,
    /// Session files with records in this epoch.
    dirty: HashMap<String, Arc<File>>,
    stop: bool,
    /// Threads waiting on `Journal::flushed`, and on `Journal::work` (the flusher thread, idle or
    /// gathering the records of landing writes).
    blocked: usize,
    idle: usize,
    gathering: usize,
}

impl State {
    fn next(&self, seq: u64) -> Next {
        next_step(&self.failed, self.durable, self.flushing, seq)
    }

    /// Whether the flusher thread stops gathering (see the module docs): no write call is still
    /// landing and the batch holds as many records as the last flush took.
    fn gathered(&self) -> bool {
        self.landing == 0 && self.written - self.taken >= self.last_batch.min(MAX_GATHER_RECORDS)
    }
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Journal {
    fn open(
        data_dir: &Path,
        io: Arc<dyn FsIo>,
        initial_cap: u64,
        max_cap: u64,
        gather: Duration,
    ) -> Result<(Arc<Journal>, Vec<String>), StoreError> {
        let initial_cap = initial_cap.max(MIN_CAP);
        let opened = recover::open(data_dir, &*io, initial_cap)?;
        let journal = Arc::new(Journal {
            data_dir: data_dir.to_path_buf(),
            path: opened.path,
            file: opened.file,
            io,
            max_cap: max_cap.max(initial_cap),
            gather,
            st: Mutex::new(State {
                epoch: opened.epoch,
                pos: HEADER_LEN,
                batch: Vec::new(),
                batch_at: HEADER_LEN,
                landing: 0,
                taken: 0,
                last_batch: 0,
                cap: opened.cap,
                written: 0,
                durable: 0,
                flushing: false,
                failed: Vec::new(),
                broken: false,
                dirty: HashMap::new(),
                stop: false,
                blocked: 0,
                idle: 0,
                gathering: 0,
            }),
            flushed: CountedCondvar::default(),
            flushed_async: tokio::sync::Notify::new(),
            work: CountedCondvar::default(),
            thread: Mutex::new(None),
        });
        let runner = Arc::clone(&journal);
        let thread = std::thread::Builder::new()
            .name("session-journal".into())
            .spawn(move || runner.run())
            .map_err(|e| StoreError::Internal(format!("journal thread: {e}")))?;
        *journal.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(thread);
        Ok((journal, opened.repaired))
    }

    /// Records that `data` was written at `offset` of the session file `name` (open as `file`);
    /// returns the record's sequence number for [`Self::wait`]. Called under the session's slot
    /// lock right after the write.
    pub(crate) fn append(
        &self,
        name: &str,
        file: &Arc<File>,
        offset: u64,
        data: &[u8],
    ) -> Result<u64, StoreError> {
        let mut st = lock(&self.st);
        // Each file written this epoch stays open until the next: a bounded number of them.
        if st.broken || (st.dirty.len() >= MAX_DIRTY_FILES && !st.dirty.contains_key(name)) {
            self.roll_over(&mut st)?;
        }
        let seq = self.put(&mut st, &Record::Write { name, offset, data })?;
        if st.gathering > 0 && st.gathered() {
            self.work.notify_all(st.gathering);
        }
        match st.dirty.get_mut(name) {
            Some(held) if Arc::ptr_eq(held, file) => {}
            Some(held) => *held = Arc::clone(file),
            None => {
                st.dirty.insert(name.to_string(), Arc::clone(file));
            }
        }
        Ok(seq)
    }

    /// Adds one record to the batch, at the end (making room in the file first); its sequence
    /// number. The next flush writes it.
    fn put(&self, st: &mut State, record: &Record<'_>) -> Result<u64, StoreError> {
        let len = record::encoded_len(record) as u64;
        if st.pos + len > st.cap {
            self.make_room(st, len)?;
        }
        let epoch = st.epoch;
        record::encode_into(epoch, record, &mut st.batch);
        st.pos += len;
        st.written += 1;
        Ok(st.written)
    }

    /// Doubles the journal while below its maximum, else rolls over (and grows past the maximum
    /// only for a record larger than the journal).
    fn make_room(&self, st: &mut State, need: u64) -> Result<(), StoreError> {
        if st.cap >= self.max_cap {
            self.roll_over(st)?;
        }
        if st.pos + need <= st.cap {
            return Ok(());
        }
        let mut cap = st.cap.max(MIN_CAP) * 2;
        while st.pos + need > cap {
            cap *= 2;
        }
        recover::zero_fill(&*self.io, &self.file, &self.path, st.cap, cap)?;
        st.cap = cap;
        Ok(())
    }

    /// Syncs every session file written this epoch, then starts the next epoch: every record so
    /// far is durable through its file, and void in the journal. A failure leaves the journal
    /// broken (the header on disk may name either epoch): every append fails until a rollover
    /// succeeds, so no acknowledged write rests on a header in doubt.
    fn roll_over(&self, st: &mut State) -> Result<(), StoreError> {
        let rolled = self.try_roll_over(st);
        if rolled.is_err() {
            st.broken = true;
        }
        rolled
    }

    fn try_roll_over(&self, st: &mut State) -> Result<(), StoreError> {
        for (name, file) in &st.dirty {
            let path = self.data_dir.join(name);
            self.io.sync_data(file, &path).map_err(|e| io_err("flush", &path, &e))?;
        }
        recover::start_epoch(&*self.io, &self.file, &self.path, st.epoch + 1)?;
        st.epoch += 1;
        // The batch's records are void with their epoch (a flush writing an older batch right
        // now puts records of the old epoch there, which a replay skips).
        st.batch.clear();
        (st.pos, st.batch_at, st.taken) = (HEADER_LEN, HEADER_LEN, st.written);
        st.dirty.clear();
        st.durable = st.written;
        st.broken = false;
        self.flushed.notify_all(st.blocked);
        self.flushed_async.notify_waiters();
        Ok(())
    }

    /// Before the session file `name` is replaced or removed (under its slot lock, its appends
    /// durable): syncs it and records a durable reset, so a replay never applies its old records
    /// to the new file.
    pub(crate) fn reset(&self, name: &str) -> Result<(), StoreError> {
        let mut st = lock(&self.st);
        let Some(file) = st.dirty.remove(name) else {
            return Ok(()); // no record of it in this epoch
        };
        let path = self.data_dir.join(name);
        if let Err(e) = self.io.sync_data(&file, &path) {
            st.dirty.insert(name.to_string(), file);
            return Err(io_err("flush", &path, &e));
        }
        let seq = self.put(&mut st, &Record::Reset { name })?;
        drop(st);
        self.wait(seq)
    }

    /// Waits until record `seq` is durable, leading a flush when none runs (a caller with
    /// nothing else to do saves the hand-off to the flusher thread).
    pub(crate) fn wait(&self, seq: u64) -> Result<(), StoreError> {
        let mut st = lock(&self.st);
        loop {
            match st.next(seq) {
                Next::Done(result) => return result,
                Next::Wait => st = self.flushed.wait(st, |st| &mut st.blocked),
                Next::Lead => {
                    drop(st);
                    self.lead();
                    st = lock(&self.st);
                }
            }
        }
    }

    /// [`Self::wait`] without a thread: the flusher thread flushes (woken here; a blocking
    /// waiter leads its flush itself).
    pub(crate) async fn wait_async(&self, seq: u64) -> Result<(), StoreError> {
        loop {
            let notified = self.flushed_async.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let idle = {
                let st = lock(&self.st);
                match st.next(seq) {
                    Next::Done(result) => return result,
                    // A gathering flusher is woken by the last landing write instead.
                    Next::Wait | Next::Lead => st.idle,
                }
            };
            self.work.notify_all(idle);
            notified.await;
        }
    }

    /// One flush covering every record so far: the batch written with one `pwrite`, then one
    /// `fdatasync` (nothing when a flush runs already).
    fn lead(&self) {
        let mut st = lock(&self.st);
        if st.flushing || st.durable >= st.written {
            return;
        }
        st.flushing = true;
        let target = st.written;
        st.last_batch = target - st.taken;
        st.taken = target;
        let batch = std::mem::take(&mut st.batch);
        let pos = st.pos;
        let at = std::mem::replace(&mut st.batch_at, pos);
        drop(st);
        let result = match batch.is_empty() {
            true => Ok(()),
            false => self.io.write_at(&self.file, &self.path, at, &batch),
        }
        .and_then(|()| self.io.sync_data(&self.file, &self.path));
        let mut st = lock(&self.st);
        st.flushing = false;
        if st.batch.is_empty() && batch.capacity() <= KEEP_BATCH {
            st.batch = batch;
            st.batch.clear();
        }
        match result {
            Ok(()) => st.durable = st.durable.max(target),
            Err(e) => {
                let why = io_err("flush", &self.path, &e).to_string();
                let (from, to) = (st.durable, st.written);
                st.failed.push((from, to, why));
                st.broken = true;
            }
        }
        let blocked = st.blocked;
        drop(st);
        self.flushed.notify_all(blocked);
        self.flushed_async.notify_waiters();
    }

    /// The flusher thread: flushes whenever records wait, until [`Self::close`]; while write calls
    /// are landing it first gathers their records, for at most [`GATHER`].
    fn run(&self) {
        let mut st = lock(&self.st);
        let mut waiting_since = None;
        while !st.stop {
            if st.written > st.durable && !st.flushing && !st.broken {
                let since = *waiting_since.get_or_insert_with(Instant::now);
                match self.gather.checked_sub(since.elapsed()) {
                    Some(left) if !st.gathered() => {
                        st = self.work.wait_timeout(st, left, |st| &mut st.gathering);
                        continue;
                    }
                    _ => {}
                }
                waiting_since = None;
                drop(st);
                self.lead();
                st = lock(&self.st);
            } else {
                waiting_since = None;
                st = self.work.wait(st, |st| &mut st.idle);
            }
        }
    }

    /// A write call on its way to the journal, from before it takes its session's lock until it
    /// wrote (or failed): while one is, the flusher thread gathers ([`Self::run`]).
    pub(crate) fn landing(self: &Arc<Self>) -> Landing {
        lock(&self.st).landing += 1;
        Landing(Arc::clone(self))
    }

    /// Rolls over when the epoch holds anything: the session files then hold everything and
    /// the journal nothing (a worker's shutdown; v1.0.32 reads the data_dir as it is).
    pub(crate) fn empty(&self) -> Result<(), StoreError> {
        let mut st = lock(&self.st);
        if st.pos > HEADER_LEN || !st.dirty.is_empty() {
            self.roll_over(&mut st)?;
        }
        Ok(())
    }

    /// For an erasure: rolls over (every session file durable, every record void) and overwrites
    /// what the records held with zeros, so no byte of an erased session stays in the journal.
    pub(crate) fn scrub(&self) -> Result<(), StoreError> {
        let mut st = lock(&self.st);
        self.roll_over(&mut st)?;
        recover::zero_fill(&*self.io, &self.file, &self.path, HEADER_LEN, st.cap)
    }

    /// Stops the flusher thread and empties the journal.
    fn close(&self) {
        let waiting = {
            let mut st = lock(&self.st);
            st.stop = true;
            st.idle + st.gathering
        };
        self.work.notify_all(waiting);
        if let Some(thread) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = thread.join();
        }
        if let Err(e) = self.empty() {
            eprintln!("session-manager: fs store: journal left for the next open: {e}");
        }
    }
}

/// A write call counted in the journal's `landing` while it lives ([`super::FsStore::landing`]).
#[derive(Debug)]
pub struct Landing(Arc<Journal>);

impl Drop for Landing {
    fn drop(&mut self) {
        let gathering = {
            let mut st = lock(&self.0.st);
            st.landing -= 1;
            if !st.gathered() {
                return;
            }
            st.gathering
        };
        self.0.work.notify_all(gathering);
    }
}

/// A store's use of its data_dir's journal; the last one dropped closes it.
#[derive(Debug)]
pub(crate) struct JournalHandle {
    journal: Arc<Journal>,
    key: PathBuf,
}

impl JournalHandle {
    pub(crate) fn journal(&self) -> &Arc<Journal> {
        &self.journal
    }
}

impl Drop for JournalHandle {
    fn drop(&mut self) {
        self.journal.close();
        let mut open = registry();
        if open.get(&self.key).is_some_and(|w| w.strong_count() == 0) {
            open.remove(&self.key);
        }
    }
}

type Registry = HashMap<PathBuf, Weak<JournalHandle>>;

fn registry() -> MutexGuard<'static, Registry> {
    static OPEN: std::sync::LazyLock<Mutex<Registry>> =
        std::sync::LazyLock::new(|| Mutex::new(HashMap::new()));
    OPEN.lock().unwrap_or_else(|p| p.into_inner())
}

/// The journal of `data_dir` (created, or opened and replayed, on first use in this process), and
/// the session files its replay changed.
pub(crate) fn shared(
    data_dir: &Path,
    io: &Arc<dyn FsIo>,
    initial_cap: u64,
    max_cap: u64,
) -> Result<(Arc<JournalHandle>, Vec<String>), StoreError> {
    let key = std::fs::canonicalize(data_dir).map_err(|e| io_err("open", data_dir, &e))?;
    loop {
        let mut open = registry();
        match open.get(&key) {
            Some(weak) => match weak.upgrade() {
                Some(handle) => return Ok((handle, Vec::new())),
                // The last user is closing it: let it finish first.
                None => {
                    drop(open);
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    continue;
                }
            },
            None => {
                let (journal, repaired) =
                    Journal::open(data_dir, Arc::clone(io), initial_cap, max_cap, GATHER)?;
                let handle = Arc::new(JournalHandle { journal, key: key.clone() });
                open.insert(key, Arc::downgrade(&handle));
                return Ok((handle, repaired));
            }
        }
    }
}

/// Replays a journal left by a crash when no store of this process uses it (a store opened with
/// `fsync: always` or `never`); nothing when there is none.
pub(crate) fn recover_if_left(data_dir: &Path, io: &dyn FsIo) -> Result<Vec<String>, StoreError> {
    if !data_dir.join(FILE_NAME).exists() {
        return Ok(Vec::new());
    }
    let key = std::fs::canonicalize(data_dir).map_err(|e| io_err("open", data_dir, &e))?;
    let open = registry();
    if open.contains_key(&key) {
        return Ok(Vec::new()); // live: it rolls over when closed
    }
    Ok(recover::open(data_dir, io, 0)?.repaired)
}

#[cfg(test)]
mod tests;
