//! One journal for the appends of every session (`fsync: group`): an append writes its session
//! file as before, then the same bytes as a record here, and is durable once the journal is
//! flushed past its record. One flusher thread syncs the journal whenever it holds unflushed
//! records, so one `fdatasync` (of a zero-filled file: no inode write) covers the appends of
//! every session that arrived meanwhile; session files are synced only when the journal rolls
//! over to a new epoch or before a file is replaced ([`Journal::reset`]).
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

use session_core::StoreError;

use super::flush::{next_step, CountedCondvar, Next};
use super::io::io_err;
use super::vfs::FsIo;
use record::{Record, HEADER_LEN};
pub(crate) use recover::FILE_NAME;

/// The journal's first size; it doubles when full up to [`MAX_CAP`], then rolls over.
pub(crate) const INITIAL_CAP: u64 = 1 << 20;
/// The smallest journal (a configured size below it is raised to it).
const MIN_CAP: u64 = 64 << 10;
pub(crate) const MAX_CAP: u64 = 32 << 20;
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
    /// Where the next record goes, and the file's length.
    pos: u64,
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
    /// Threads waiting on `Journal::flushed`, and on `Journal::work` (the flusher thread).
    blocked: usize,
    idle: usize,
}

impl State {
    fn next(&self, seq: u64) -> Next {
        next_step(&self.failed, self.durable, self.flushing, seq)
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
    ) -> Result<(Arc<Journal>, Vec<String>), StoreError> {
        let initial_cap = initial_cap.max(MIN_CAP);
        let opened = recover::open(data_dir, &*io, initial_cap)?;
        let journal = Arc::new(Journal {
            data_dir: data_dir.to_path_buf(),
            path: opened.path,
            file: opened.file,
            io,
            max_cap: max_cap.max(initial_cap),
            st: Mutex::new(State {
                epoch: opened.epoch,
                pos: HEADER_LEN,
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
        match st.dirty.get_mut(name) {
            Some(held) if Arc::ptr_eq(held, file) => {}
            Some(held) => *held = Arc::clone(file),
            None => {
                st.dirty.insert(name.to_string(), Arc::clone(file));
            }
        }
        Ok(seq)
    }

    /// Writes one record at the end (making room first); its sequence number.
    fn put(&self, st: &mut State, record: &Record<'_>) -> Result<u64, StoreError> {
        let mut bytes = record::encode(st.epoch, record);
        if st.pos + bytes.len() as u64 > st.cap {
            self.make_room(st, bytes.len() as u64)?;
            bytes = record::encode(st.epoch, record);
        }
        self.io
            .write_at(&self.file, &self.path, st.pos, &bytes)
            .map_err(|e| io_err("write", &self.path, &e))?;
        st.pos += bytes.len() as u64;
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
        st.pos = HEADER_LEN;
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
                    Next::Wait | Next::Lead => st.idle,
                }
            };
            self.work.notify_all(idle);
            notified.await;
        }
    }

    /// One `fdatasync` covering every record written so far (nothing when one runs already).
    fn lead(&self) {
        let mut st = lock(&self.st);
        if st.flushing || st.durable >= st.written {
            return;
        }
        st.flushing = true;
        let target = st.written;
        drop(st);
        let result = self.io.sync_data(&self.file, &self.path);
        let mut st = lock(&self.st);
        st.flushing = false;
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

    /// The flusher thread: flushes whenever records wait, until [`Self::close`].
    fn run(&self) {
        let mut st = lock(&self.st);
        while !st.stop {
            if st.written > st.durable && !st.flushing && !st.broken {
                drop(st);
                self.lead();
                st = lock(&self.st);
            } else {
                st = self.work.wait(st, |st| &mut st.idle);
            }
        }
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

    /// Stops the flusher thread and empties the journal.
    fn close(&self) {
        let idle = {
            let mut st = lock(&self.st);
            st.stop = true;
            st.idle
        };
        self.work.notify_all(idle);
        if let Some(thread) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = thread.join();
        }
        if let Err(e) = self.empty() {
            eprintln!("session-manager: fs store: journal left for the next open: {e}");
        }
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
                    Journal::open(data_dir, Arc::clone(io), initial_cap, max_cap)?;
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
