//! [`FaultyIo`]: a test double of the fs store's IO seam ([`FsIo`]) that records every write-side
//! operation and fails a chosen one with `ENOSPC`, `EIO` or a short write (half the bytes land,
//! then `ENOSPC`), delegating everything else to [`RealIo`].
//!
//! Typical use: run a scenario once to record its operations ([`FaultyIo::ops`]), then rerun it
//! once per recorded operation with [`FaultyIo::fail_nth`] armed at that index — every write point
//! of the scenario gets every fault.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::vfs::{FsIo, RealIo};

/// The kinds of write-side operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IoOp {
    OpenAppend,
    OpenWrite,
    Create,
    Write,
    SyncData,
    SyncFs,
    SetLen,
    Rename,
    RemoveFile,
    RemoveDir,
    CreateDir,
    SyncDir,
}

/// An injected failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// `ENOSPC` before anything is written.
    NoSpace,
    /// `EIO` before anything is written.
    Io,
    /// Writes: the first half of the bytes land, then `ENOSPC`. Other operations: `EIO`.
    Short,
}

impl Fault {
    pub const ALL: [Fault; 3] = [Fault::NoSpace, Fault::Io, Fault::Short];

    fn error(self) -> io::Error {
        match self {
            Fault::NoSpace | Fault::Short => io::Error::from_raw_os_error(28), // ENOSPC
            Fault::Io => io::Error::from_raw_os_error(5),                      // EIO
        }
    }
}

#[derive(Debug, Default)]
struct State {
    ops: Vec<(IoOp, PathBuf)>,
    /// `(index in ops, fault)` armed failures.
    armed: Vec<(usize, Fault)>,
    /// `(kind, path suffix, fault)`: the next matching operation fails.
    matching: Vec<(IoOp, String, Fault)>,
    fired: Vec<(IoOp, PathBuf, Fault)>,
}

/// Called before each operation, outside any lock of the double (see [`FaultyIo::set_hook`]).
pub type Hook = Arc<dyn Fn(IoOp, &Path) + Send + Sync>;

/// Records operations and fails the armed ones; see the module doc.
#[derive(Default)]
pub struct FaultyIo {
    state: Mutex<State>,
    hook: Mutex<Option<Hook>>,
}

impl std::fmt::Debug for FaultyIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultyIo").field("state", &self.state).finish_non_exhaustive()
    }
}

impl FaultyIo {
    pub fn new() -> Self {
        FaultyIo::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every operation seen so far, in order.
    pub fn ops(&self) -> Vec<(IoOp, PathBuf)> {
        self.lock().ops.clone()
    }

    /// Number of operations seen so far.
    pub fn op_count(&self) -> usize {
        self.lock().ops.len()
    }

    /// Fails the `n`-th operation from now (0 = the next one) with `fault`.
    pub fn fail_nth(&self, n: usize, fault: Fault) {
        let mut st = self.lock();
        let at = st.ops.len() + n;
        st.armed.push((at, fault));
    }

    /// Fails the next operation of `kind` whose path ends with `suffix`.
    pub fn fail_next(&self, kind: IoOp, suffix: &str, fault: Fault) {
        self.lock().matching.push((kind, suffix.to_string(), fault));
    }

    /// The faults that fired: `(kind, path, fault)`.
    pub fn fired(&self) -> Vec<(IoOp, PathBuf, Fault)> {
        self.lock().fired.clone()
    }

    /// Disarms every pending fault.
    pub fn disarm(&self) {
        let mut st = self.lock();
        st.armed.clear();
        st.matching.clear();
    }

    /// Runs `hook` before every later operation, on the thread doing it (e.g. to let another
    /// writer act at an exact point of a background job).
    pub fn set_hook(&self, hook: Hook) {
        *self.hook.lock().unwrap_or_else(|p| p.into_inner()) = Some(hook);
    }

    /// Records the operation; `Some(fault)` when it must fail.
    fn check(&self, kind: IoOp, path: &Path) -> Option<Fault> {
        let hook = self.hook.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(hook) = hook {
            hook(kind, path);
        }
        let mut st = self.lock();
        let index = st.ops.len();
        st.ops.push((kind, path.to_path_buf()));
        let fault = if let Some(pos) = st.armed.iter().position(|(at, _)| *at == index) {
            st.armed.remove(pos).1
        } else {
            let suffix = |s: &String| path.as_os_str().to_string_lossy().ends_with(s.as_str());
            let pos = st.matching.iter().position(|(k, s, _)| *k == kind && suffix(s))?;
            st.matching.remove(pos).2
        };
        st.fired.push((kind, path.to_path_buf(), fault));
        Some(fault)
    }

    fn run<T>(&self, kind: IoOp, path: &Path, op: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        match self.check(kind, path) {
            Some(fault) => Err(fault.error()),
            None => op(),
        }
    }
}

impl FsIo for FaultyIo {
    fn open_append(&self, path: &Path) -> io::Result<File> {
        self.run(IoOp::OpenAppend, path, || RealIo.open_append(path))
    }

    fn create(&self, path: &Path) -> io::Result<File> {
        self.run(IoOp::Create, path, || RealIo.create(path))
    }

    fn write(&self, file: &File, path: &Path, bytes: &[u8]) -> io::Result<()> {
        match self.check(IoOp::Write, path) {
            Some(Fault::Short) => {
                RealIo.write(file, path, &bytes[..bytes.len() / 2])?;
                Err(Fault::Short.error())
            }
            Some(fault) => Err(fault.error()),
            None => RealIo.write(file, path, bytes),
        }
    }

    fn open_write(&self, path: &Path) -> io::Result<File> {
        self.run(IoOp::OpenWrite, path, || RealIo.open_write(path))
    }

    fn write_at(&self, file: &File, path: &Path, offset: u64, bytes: &[u8]) -> io::Result<()> {
        match self.check(IoOp::Write, path) {
            Some(Fault::Short) => {
                RealIo.write_at(file, path, offset, &bytes[..bytes.len() / 2])?;
                Err(Fault::Short.error())
            }
            Some(fault) => Err(fault.error()),
            None => RealIo.write_at(file, path, offset, bytes),
        }
    }

    fn sync_data(&self, file: &File, path: &Path) -> io::Result<()> {
        self.run(IoOp::SyncData, path, || RealIo.sync_data(file, path))
    }

    fn sync_fs(&self, file: &File, path: &Path) -> io::Result<()> {
        self.run(IoOp::SyncFs, path, || RealIo.sync_fs(file, path))
    }

    fn set_len(&self, file: &File, path: &Path, len: u64) -> io::Result<()> {
        self.run(IoOp::SetLen, path, || RealIo.set_len(file, path, len))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.run(IoOp::Rename, from, || RealIo.rename(from, to))
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.run(IoOp::RemoveFile, path, || RealIo.remove_file(path))
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.run(IoOp::RemoveDir, path, || RealIo.remove_dir_all(path))
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.run(IoOp::CreateDir, path, || RealIo.create_dir_all(path))
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.run(IoOp::SyncDir, path, || RealIo.sync_dir(path))
    }
}
