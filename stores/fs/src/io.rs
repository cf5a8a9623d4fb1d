//! Small file-system helpers of the fs store: error text, atomic tmp + rename writes, directory
//! fsync and the file stamps the catalog validates against. Writes go through the [`FsIo`] seam.

use std::fs;
use std::io;
use std::path::Path;

use session_core::StoreError;

use super::vfs::FsIo;

/// A storage error naming the action and the path.
pub(crate) fn io_err(action: &str, path: &Path, e: &io::Error) -> StoreError {
    StoreError::Io(format!("fs store: {action} {}: {e}", path.display()))
}

/// Writes `bytes` to `tmp`, optionally fsyncs it, then renames it over `path`. The directory entry
/// is made durable by the caller ([`sync_dir`]) when it needs to be.
pub(crate) fn write_atomic(
    io: &dyn FsIo,
    path: &Path,
    tmp: &Path,
    bytes: &[u8],
    sync: bool,
) -> Result<(), StoreError> {
    let result = (|| -> io::Result<()> {
        let file = io.create(tmp)?;
        io.write(&file, tmp, bytes)?;
        if sync {
            io.sync_data(&file, tmp)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = io.remove_file(tmp);
        return Err(io_err("write", tmp, &e));
    }
    io.rename(tmp, path).map_err(|e| {
        let _ = io.remove_file(tmp);
        io_err("rename", tmp, &e)
    })
}

/// Fsyncs a directory so creations, renames and removals inside it survive a power loss.
pub(crate) fn sync_dir(io: &dyn FsIo, dir: &Path) -> Result<(), StoreError> {
    io.sync_dir(dir).map_err(|e| io_err("sync directory", dir, &e))
}

/// Removes a file; a missing file is fine. Returns whether it existed.
pub(crate) fn remove_file_if_exists(io: &dyn FsIo, path: &Path) -> Result<bool, StoreError> {
    match io.remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err("remove", path, &e)),
    }
}

/// Identity of a file's content as far as the catalog cares: length, mtime (ns) and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Stamp {
    pub len: u64,
    pub mtime_ns: i128,
    pub ino: u64,
}

impl Stamp {
    pub(crate) fn of(meta: &fs::Metadata) -> Stamp {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let ino = 0;
        Stamp { len: meta.len(), mtime_ns, ino }
    }
}

/// A session's log in a data_dir.
#[derive(Debug)]
pub(crate) struct SessionFile {
    /// The file's name (`<enc(id)>.jsonl`).
    pub name: String,
    pub sid: String,
    pub path: std::path::PathBuf,
    pub stamp: Stamp,
}

/// Every session log in `data_dir` (files named `<enc(id)>.jsonl`; an undecodable name is
/// skipped with a warning, a file that went meanwhile is left out).
pub(crate) fn session_files(data_dir: &Path) -> Result<Vec<SessionFile>, StoreError> {
    let entries = fs::read_dir(data_dir).map_err(|e| io_err("list", data_dir, &e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_err("list", data_dir, &e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(stem) = name.strip_suffix(".jsonl") else { continue };
        let Some(sid) = session_core::jsonl::dec(stem) else {
            eprintln!("session-manager: fs store: skipping undecodable session file {name:?}");
            continue;
        };
        let stat = match entry.metadata() {
            Ok(stat) if stat.is_file() => stat,
            Ok(_) => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_err("stat", &entry.path(), &e)),
        };
        out.push(SessionFile {
            name: name.to_string(),
            sid,
            path: entry.path(),
            stamp: Stamp::of(&stat),
        });
    }
    Ok(out)
}
