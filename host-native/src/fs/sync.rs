//! Durability of the fs store: the `fsync` modes and the group commit that lets concurrent writers
//! share one flush.
//!
//! Group commit is leader/follower without a thread: a writer that finished its `write` takes a
//! ticket and queues its file; if no flush is running it becomes the leader, takes the whole queue
//! and flushes it (one `fdatasync` when the batch holds one file, one `syncfs` for several files on
//! Linux, else one `fdatasync` per distinct file) while later writers queue for the next batch.
//! Every writer returns only once a flush that started after its write has succeeded, so
//! acknowledged writes are durable in `group` mode exactly as in `always` mode.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use session_core::StoreError;

use super::vfs::FsIo;

/// When the fs store flushes to stable storage.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SyncMode {
    /// `fdatasync` of the session file after every write, before the answer.
    Always,
    /// Durable before the answer like `always`, but concurrent writers share one flush (default:
    /// the same guarantee as `always`, at a fraction of the flushes under concurrency).
    #[default]
    Group,
    /// Never flush: the OS writes back when it likes. Survives a process crash, not a power loss.
    Never,
}

#[derive(Debug, Default)]
struct State {
    issued: u64,
    done: u64,
    leader: bool,
    queue: Vec<(Arc<File>, PathBuf)>,
    /// `(first, last, error)` ticket ranges whose flush failed (recent ones only).
    failed: Vec<(u64, u64, String)>,
}

/// The shared flush of `group` mode.
#[derive(Debug, Default)]
pub(crate) struct GroupSync {
    state: Mutex<State>,
    flushed: Condvar,
}

impl GroupSync {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Returns once everything written to `file` before the call is on stable storage.
    pub(crate) fn sync(
        &self,
        io: &dyn FsIo,
        file: &Arc<File>,
        path: &Path,
    ) -> Result<(), StoreError> {
        let mut st = self.lock();
        st.issued += 1;
        let ticket = st.issued;
        st.queue.push((Arc::clone(file), path.to_path_buf()));
        loop {
            if st.done >= ticket {
                return match st.failed.iter().find(|(lo, hi, _)| (*lo..=*hi).contains(&ticket)) {
                    Some((_, _, e)) => Err(StoreError::new(format!("fs store: flush failed: {e}"))),
                    None => Ok(()),
                };
            }
            if !st.leader {
                st.leader = true;
                let batch = std::mem::take(&mut st.queue);
                let (first, last) = (st.done + 1, st.issued);
                drop(st);
                let result = flush(io, &batch);
                st = self.lock();
                st.leader = false;
                st.done = last;
                if let Err(e) = result {
                    st.failed.push((first, last, e.to_string()));
                    if st.failed.len() > 64 {
                        st.failed.remove(0);
                    }
                }
                self.flushed.notify_all();
                continue;
            }
            st = self.flushed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }
}

fn flush(io: &dyn FsIo, batch: &[(Arc<File>, PathBuf)]) -> std::io::Result<()> {
    let mut distinct: Vec<&(Arc<File>, PathBuf)> = Vec::with_capacity(batch.len());
    for file in batch {
        if !distinct.iter().any(|f| Arc::ptr_eq(&f.0, &file.0)) {
            distinct.push(file);
        }
    }
    match distinct.as_slice() {
        [] => Ok(()),
        [(one, path)] => io.sync_data(one, path),
        #[cfg(target_os = "linux")]
        [(first, path), ..] => io.sync_fs(first, path),
        #[cfg(not(target_os = "linux"))]
        many => many.iter().try_for_each(|(f, path)| io.sync_data(f, path)),
    }
}
