//! Background compaction of the fs store: a session log that grew past twice its live snapshot is
//! rewritten by one background thread, off the writers' path.
//!
//! A job runs in three steps. (1) Under the session lock: encode the live snapshot and note the
//! file length and the cached state's epoch (a new epoch per load and per inline rewrite). (2)
//! Without the lock: write the snapshot to `<file>.jsonl.compact.tmp` and fsync it; writers keep
//! appending to the live file meanwhile. (3) Under the lock again: if the epoch changed (the state
//! was evicted, reloaded or rewritten) give up; otherwise copy the lines appended since step 1
//! (complete lines: appends hold the same lock) to the tmp file, fsync, rename it over the log and
//! fsync the directory. Readers and writers only ever see the old file or the new one (rename is
//! atomic); a crash before the rename leaves the old file whole plus a stray tmp file (never
//! listed, overwritten by the next job), a crash after it the new one, which holds everything
//! acknowledged before the rename. Replaying snapshot + later lines gives the same state as the
//! old file because a snapshot replays to the state it was taken from.
//!
//! Its own tmp name keeps it clear of the inline tmp + rename rewrites of delete paths. Step (3)
//! also gives up (and drops the cached state) when the file's length on disk is not the cached
//! one: during a hot reload two stores share the data_dir, and the new one may append behind the
//! old one's cache. (Only the instant between that check and the rename stays unguarded.) If the
//! copied tail leaves the file above twice the snapshot, the job queues itself again, so an idle
//! session ends within 2× its live size.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use session_core::jsonl::{self, TailRepair};
use session_core::StoreError;

use super::checkpoint::Checkpoint;
use super::io::{io_err, sync_dir};
use super::journal::Journal;
use super::session::{next_epoch, Loaded, Slot};
use super::spill::{self, SnapshotPlan};
use super::vfs::FsIo;

type Job = (String, Arc<Slot>);

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    /// Checkpoint jobs ([`super::checkpoint`]) and when each is due.
    checkpoints: Vec<(Instant, Job)>,
    running: bool,
    stop: bool,
}

/// How long after a large session's write its checkpoint is taken: writes in a burst share
/// one checkpoint.
pub(crate) const CHECKPOINT_DELAY: Duration = Duration::from_secs(1);

enum Task {
    Compact(Job),
    Checkpoint(Job),
}

struct Shared {
    queue: Mutex<Queue>,
    changed: Condvar,
    data_dir: PathBuf,
    durable: bool,
    compact_min: u64,
    io: Arc<dyn FsIo>,
    /// `fsync: group`: a replaced file's records are reset there first.
    journal: Option<Arc<Journal>>,
}

/// The compaction thread and its queue.
pub(crate) struct Compactor {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Compactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compactor").field("data_dir", &self.shared.data_dir).finish()
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Compactor {
    pub(crate) fn start(
        data_dir: &Path,
        durable: bool,
        compact_min: u64,
        io: Arc<dyn FsIo>,
        journal: Option<Arc<Journal>>,
    ) -> Compactor {
        let shared = Arc::new(Shared {
            queue: Mutex::default(),
            changed: Condvar::new(),
            data_dir: data_dir.to_path_buf(),
            durable,
            compact_min,
            io,
            journal,
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("fs-compact".into())
            .spawn(move || run(&worker))
            .map_err(|e| eprintln!("session-manager: fs store: no compaction thread: {e}"))
            .ok();
        Compactor { shared, thread }
    }

    /// Queues a session whose log passed its compaction threshold.
    pub(crate) fn submit(&self, sid: &str, slot: Arc<Slot>) {
        self.shared.lock().jobs.push_back((sid.to_string(), slot));
        self.shared.changed.notify_all();
    }

    /// Queues a checkpoint of a large session, due [`CHECKPOINT_DELAY`] from now.
    pub(crate) fn submit_checkpoint(&self, sid: &str, slot: Arc<Slot>) {
        let due = Instant::now() + CHECKPOINT_DELAY;
        self.shared.lock().checkpoints.push((due, (sid.to_string(), slot)));
        self.shared.changed.notify_all();
    }

    /// Makes the queued checkpoints due now and blocks until no job of either kind is queued or
    /// running: afterwards nothing in the background holds a slot lock (tests that assert what
    /// the non-blocking view serves).
    #[cfg(test)]
    pub(crate) fn drain(&self) {
        let now = Instant::now();
        self.shared.lock().checkpoints.iter_mut().for_each(|(due, _)| *due = now);
        self.shared.changed.notify_all();
        self.wait_while(|q| !q.jobs.is_empty() || !q.checkpoints.is_empty() || q.running);
    }

    /// Blocks until the compaction queue is empty and no job runs.
    pub(crate) fn wait_idle(&self) {
        self.wait_while(|q| !q.jobs.is_empty() || q.running);
    }

    /// Blocks while `busy` holds for the queue (at once when there is no compaction thread).
    fn wait_while(&self, busy: impl Fn(&Queue) -> bool) {
        if self.thread.is_none() {
            return;
        }
        let mut q = self.shared.lock();
        while busy(&q) {
            q = self.shared.changed.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Compactor {
    /// Finishes the running job, drops the queued ones (a big file is compacted again after its
    /// next load and append).
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(shared: &Shared) {
    loop {
        let task = {
            let mut q = shared.lock();
            loop {
                if q.stop {
                    q.jobs.clear();
                    q.checkpoints.clear();
                    shared.changed.notify_all();
                    return;
                }
                if let Some(job) = q.jobs.pop_front() {
                    q.running = true;
                    break Task::Compact(job);
                }
                let now = Instant::now();
                if let Some(i) = q.checkpoints.iter().position(|(due, _)| *due <= now) {
                    q.running = true;
                    break Task::Checkpoint(q.checkpoints.swap_remove(i).1);
                }
                q = match q.checkpoints.iter().map(|(due, _)| *due).min() {
                    Some(due) => {
                        let waited = shared.changed.wait_timeout(q, due - now);
                        waited.unwrap_or_else(|p| p.into_inner()).0
                    }
                    None => shared.changed.wait(q).unwrap_or_else(|p| p.into_inner()),
                };
            }
        };
        let (sid, slot, what) = match &task {
            Task::Compact((sid, slot)) => (sid, slot, "compaction"),
            Task::Checkpoint((sid, slot)) => (sid, slot, "checkpoint"),
        };
        // A panicking job must not leave `running` set (waiters would hang) nor kill the thread.
        let job = std::panic::AssertUnwindSafe(|| match &task {
            Task::Compact(_) => compact(shared, sid, slot),
            Task::Checkpoint(_) => checkpoint(shared, sid, slot).map(|()| false),
        });
        let again = match std::panic::catch_unwind(job) {
            Ok(Ok(again)) => again,
            Ok(Err(e)) => {
                eprintln!("session-manager: fs store: {what} of {sid:?} failed: {e}");
                false
            }
            Err(_) => {
                eprintln!("session-manager: fs store: {what} of {sid:?} panicked");
                false
            }
        };
        let mut q = shared.lock();
        q.running = false;
        if again && !q.stop {
            if let Task::Compact(job) = task {
                q.jobs.push_back(job);
            }
        }
        shared.changed.notify_all();
    }
}

/// One checkpoint job: the checkpoint taken under the lock, written without it.
fn checkpoint(shared: &Shared, sid: &str, slot: &Slot) -> Result<(), StoreError> {
    let path = shared.data_dir.join(format!("{}.jsonl", jsonl::enc(sid)));
    let (taken, epoch) = {
        let mut guard = lock(slot);
        let Some(loaded) = guard.as_mut() else { return Ok(()) };
        loaded.checkpoint_queued = false;
        if loaded.checkpoint_len == Some(loaded.len) {
            return Ok(());
        }
        (Checkpoint::take(loaded.source(), &path)?, loaded.epoch)
    };
    let Some(taken) = taken else { return Ok(()) };
    taken.write()?;
    if let Some(loaded) = lock(slot).as_mut().filter(|l| l.epoch == epoch) {
        loaded.checkpoint_len = Some(taken.log_len());
    }
    Ok(())
}

fn lock(slot: &Slot) -> MutexGuard<'_, Option<Box<Loaded>>> {
    slot.inner.lock().unwrap_or_else(|p| p.into_inner())
}

/// One job; `Ok(true)` when the file should be checked again right away.
fn compact(shared: &Shared, sid: &str, slot: &Slot) -> Result<bool, StoreError> {
    let path = shared.data_dir.join(format!("{}.jsonl", jsonl::enc(sid)));
    // (1) Snapshot under the lock.
    let (snapshot, log, epoch, from) = {
        let mut guard = lock(slot);
        let Some(loaded) = guard.as_mut() else { return Ok(false) };
        loaded.compact_queued = false;
        if !loaded.on_disk || loaded.repair != TailRepair::None {
            return Ok(false);
        }
        // Stubs stay spans: their bodies stream from the live file in step 2 (`spill.rs`).
        let live = SnapshotPlan::estimate(&loaded.state, &loaded.spilled);
        if loaded.len <= 2 * live {
            loaded.compact_at = (2 * live).max(shared.compact_min);
            return Ok(false);
        }
        let snapshot = SnapshotPlan::take(&loaded.state, &loaded.spilled);
        let log = File::open(&path).map_err(|e| io_err("open", &path, &e))?;
        loaded.compact_queued = true; // no second job for this file while this one runs
        (snapshot, log, loaded.epoch, loaded.len)
    };
    // (2) The snapshot to the tmp file, without the lock.
    let mut tmp = path.clone().into_os_string();
    tmp.push(".compact.tmp");
    let tmp = PathBuf::from(tmp);
    let io = &*shared.io;
    let written = (|| -> Result<(File, u64, HashMap<String, spill::Span>), StoreError> {
        let file = io.create(&tmp).map_err(|e| io_err("create", &tmp, &e))?;
        let write =
            |chunk: &[u8]| io.write(&file, &tmp, chunk).map_err(|e| io_err("write", &tmp, &e));
        let (live, moved) = snapshot.write(&log, &path, write)?;
        Ok((file, live, moved))
    })();
    let give_up = |slot: &Slot| {
        let _ = io.remove_file(&tmp);
        if let Some(loaded) = lock(slot).as_mut().filter(|l| l.epoch == epoch) {
            loaded.compact_queued = false;
        }
    };
    let (file, live, moved) = match written {
        Ok(written) => written,
        Err(e) => {
            give_up(slot);
            return Err(e);
        }
    };
    // (3) Under the lock: the lines appended meanwhile, flush, rename.
    let mut guard = lock(slot);
    let Some(loaded) = guard.as_mut().filter(|l| l.epoch == epoch && l.len >= from) else {
        drop(guard);
        give_up(slot);
        return Ok(false);
    };
    loaded.compact_queued = false;
    // Another writer of the same data_dir (the store a hot reload swapped in while this one
    // finishes) may have appended behind this cache: never rename over what it does not know.
    if std::fs::metadata(&path).map(|m| m.len()).ok() != Some(loaded.len) {
        *guard = None;
        drop(guard);
        give_up(slot);
        return Ok(false);
    }
    let tail = (|| -> std::io::Result<Vec<u8>> {
        let mut live = File::open(&path)?;
        live.seek(SeekFrom::Start(from))?;
        let mut tail = Vec::with_capacity((loaded.len - from) as usize);
        live.take(loaded.len - from).read_to_end(&mut tail)?;
        Ok(tail)
    })();
    let finished = tail.and_then(|tail| {
        io.write(&file, &tmp, &tail)?;
        if shared.durable {
            io.sync_data(&file, &tmp)?;
        }
        Ok(tail.len() as u64)
    });
    let tail_len = match finished {
        Ok(len) => len,
        Err(e) => {
            drop(guard);
            give_up(slot);
            return Err(io_err("write", &tmp, &e));
        }
    };
    // Group commit: the old file's pending appends are flushed before it is replaced (a flush
    // that failed after the rename would otherwise cut the new file, `flush.rs`).
    if let Err(e) = slot.flusher.flush_pending(io, shared.journal.as_ref(), &path) {
        drop(guard);
        give_up(slot);
        return Err(e);
    }
    if let Err(e) = io.rename(&tmp, &path) {
        drop(guard);
        give_up(slot);
        return Err(io_err("rename", &tmp, &e));
    }
    slot.flusher.moved(live + tail_len);
    // The new file is live: the cached handle points at the old one, and the stubs' spans too
    // (moved to their lines in the new file; replayed from it if one cannot be).
    if !loaded.spilled.moved(&moved, from, live) {
        *guard = None;
        if shared.durable {
            sync_dir(io, &shared.data_dir)?;
        }
        return Ok(false);
    }
    loaded.checkpoint_len = None;
    loaded.file = None;
    loaded.len = live + tail_len;
    loaded.epoch = next_epoch();
    loaded.compact_at = (2 * live).max(shared.compact_min);
    let again = loaded.len > loaded.compact_at;
    if again {
        loaded.compact_queued = true;
    }
    if shared.durable {
        if let Err(e) = sync_dir(io, &shared.data_dir) {
            // Same content either way; replay whatever the disk holds on next touch.
            *guard = None;
            return Err(e);
        }
    }
    Ok(again)
}
