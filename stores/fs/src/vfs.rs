//! The IO seam of the fs store: every file operation that changes the disk (creating, writing,
//! flushing, truncating, renaming and removing files and directories) goes through [`FsIo`], so a
//! test double ([`super::FaultyIo`]) can make any one of them fail. Reads stay on `std::fs`:
//! they change nothing, and their errors already surface as `session/storage`.
//!
//! Every method names the path it touches (also for operations on an open file), so a double can
//! record and match write points by kind and path.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// The write-side file operations of the fs store.
pub trait FsIo: Send + Sync + fmt::Debug {
    /// Opens (creating) a session log for appending and reading.
    fn open_append(&self, path: &Path) -> io::Result<File>;
    /// Creates or truncates a file for writing (tmp files of rewrites and attachments).
    fn create(&self, path: &Path) -> io::Result<File>;
    /// Writes all of `bytes` to `file` (at its end for append-mode files).
    fn write(&self, file: &File, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// Opens an existing file for positional reads and writes (no append mode: the journal, and
    /// the session files its replay repairs).
    fn open_write(&self, path: &Path) -> io::Result<File>;
    /// Writes all of `bytes` at `offset` of a file from [`FsIo::open_write`].
    fn write_at(&self, file: &File, path: &Path, offset: u64, bytes: &[u8]) -> io::Result<()>;
    /// `fdatasync` of one file.
    fn sync_data(&self, file: &File, path: &Path) -> io::Result<()>;
    /// Flushes the whole file system holding `file` (`syncfs` on Linux; else `fdatasync`).
    fn sync_fs(&self, file: &File, path: &Path) -> io::Result<()>;
    /// Truncates (or extends) `file` to `len` bytes.
    fn set_len(&self, file: &File, path: &Path, len: u64) -> io::Result<()>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    fn remove_dir_all(&self, path: &Path) -> io::Result<()>;
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Fsyncs a directory so entries created, renamed or removed in it survive a power loss.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealIo;

impl FsIo for RealIo {
    fn open_append(&self, path: &Path) -> io::Result<File> {
        OpenOptions::new().read(true).append(true).create(true).open(path)
    }

    fn create(&self, path: &Path) -> io::Result<File> {
        OpenOptions::new().write(true).create(true).truncate(true).open(path)
    }

    fn write(&self, file: &File, _: &Path, bytes: &[u8]) -> io::Result<()> {
        (&*file).write_all(bytes)
    }

    fn open_write(&self, path: &Path) -> io::Result<File> {
        OpenOptions::new().read(true).write(true).open(path)
    }

    fn write_at(&self, file: &File, _: &Path, offset: u64, bytes: &[u8]) -> io::Result<()> {
        #[cfg(unix)]
        return std::os::unix::fs::FileExt::write_all_at(file, bytes, offset);
        #[cfg(not(unix))]
        {
            use std::io::{Seek, SeekFrom};
            (&*file).seek(SeekFrom::Start(offset))?;
            (&*file).write_all(bytes)
        }
    }

    fn sync_data(&self, file: &File, _: &Path) -> io::Result<()> {
        file.sync_data()
    }

    fn sync_fs(&self, file: &File, _: &Path) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        return rustix::fs::syncfs(file).map_err(io::Error::from);
        #[cfg(not(target_os = "linux"))]
        return file.sync_data();
    }

    fn set_len(&self, file: &File, _: &Path, len: u64) -> io::Result<()> {
        file.set_len(len)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::remove_dir_all(path)
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }
}
