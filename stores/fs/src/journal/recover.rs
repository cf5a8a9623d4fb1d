//! Opening the journal: create it, or replay what its current epoch holds into the session files
//! and start the next epoch.
//!
//! Replay, per session file, applies the records after the file's last reset in order: each
//! writes its bytes at its offset (where the file does not already hold them), and the file is
//! cut to its last record's end, since any byte after it belongs to a write whose record never
//! became durable, so that write was never acknowledged. The repaired files are synced before
//! the new epoch's header makes the old records void.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use session_core::StoreError;

use super::record::{self, Header, Record};
use crate::io::{io_err, sync_dir};
use crate::vfs::FsIo;

/// The journal's file name in the data_dir (not `*.jsonl`: never a session).
pub(crate) const FILE_NAME: &str = ".session-journal";

/// An opened journal, its current epoch empty.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) file: File,
    pub(crate) path: PathBuf,
    pub(crate) epoch: u64,
    /// The file's length: records fit below it.
    pub(crate) cap: u64,
    /// Session files the replay wrote to or cut.
    pub(crate) repaired: Vec<String>,
}

/// Opens (creating with `initial_cap` zero-filled bytes) the journal of `data_dir`, replaying
/// its current epoch first.
pub(crate) fn open(data_dir: &Path, io: &dyn FsIo, initial_cap: u64) -> Result<Opened, StoreError> {
    let path = data_dir.join(FILE_NAME);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return create(data_dir, io, initial_cap)
        }
        Err(e) => return Err(io_err("read", &path, &e)),
    };
    let epoch = match record::read_header(&bytes) {
        Header::Epoch(epoch) => epoch,
        Header::Blank => 0,
        Header::Corrupt => {
            return Err(StoreError::Io(format!(
                "{} is not a session-manager journal (bad header); move it away to open this \
                 data_dir",
                path.display()
            )))
        }
    };
    let repaired = replay(data_dir, io, &record::walk(&bytes, epoch))?;
    let file = io.open_write(&path).map_err(|e| io_err("open", &path, &e))?;
    let cap = (bytes.len() as u64).max(initial_cap);
    if cap > bytes.len() as u64 {
        zero_fill(io, &file, &path, bytes.len() as u64, cap)?;
    }
    let epoch = epoch + 1;
    start_epoch(io, &file, &path, epoch)?;
    Ok(Opened { file, path, epoch, cap, repaired })
}

fn create(data_dir: &Path, io: &dyn FsIo, cap: u64) -> Result<Opened, StoreError> {
    let path = data_dir.join(FILE_NAME);
    let file = io.create(&path).map_err(|e| io_err("create", &path, &e))?;
    drop(file);
    let file = io.open_write(&path).map_err(|e| io_err("open", &path, &e))?;
    zero_fill(io, &file, &path, 0, cap)?;
    start_epoch(io, &file, &path, 1)?;
    sync_dir(io, data_dir)?;
    Ok(Opened { file, path, epoch: 1, cap, repaired: Vec::new() })
}

/// Writes zeros over `[from, to)` and syncs them: records later overwrite them in place, so a
/// flush of the journal writes no inode.
pub(crate) fn zero_fill(
    io: &dyn FsIo,
    file: &File,
    path: &Path,
    from: u64,
    to: u64,
) -> Result<(), StoreError> {
    const CHUNK: u64 = 1 << 20;
    let zeros = vec![0u8; CHUNK.min(to.saturating_sub(from)) as usize];
    let mut at = from;
    while at < to {
        let n = CHUNK.min(to - at) as usize;
        io.write_at(file, path, at, &zeros[..n]).map_err(|e| io_err("extend", path, &e))?;
        at += n as u64;
    }
    io.sync_data(file, path).map_err(|e| io_err("flush", path, &e))
}

/// Makes `epoch` the journal's current one: every record of an earlier epoch is void.
pub(crate) fn start_epoch(
    io: &dyn FsIo,
    file: &File,
    path: &Path,
    epoch: u64,
) -> Result<(), StoreError> {
    io.write_at(file, path, 0, &record::header(epoch)).map_err(|e| io_err("write", path, &e))?;
    io.sync_data(file, path).map_err(|e| io_err("flush", path, &e))
}

/// A record's file name, when it names a session file of this data_dir (a damaged journal must
/// not write elsewhere).
fn session_file(name: &str) -> bool {
    name.ends_with(".jsonl") && !name.starts_with('.') && !name.contains(['/', '\\', '\0'])
}

/// Applies the records (see the module docs); returns the names of the files it changed.
fn replay(
    data_dir: &Path,
    io: &dyn FsIo,
    records: &[Record<'_>],
) -> Result<Vec<String>, StoreError> {
    // Per file, the records after its last reset, in journal order.
    let mut order: Vec<&str> = Vec::new();
    let mut per_file: HashMap<&str, Vec<(u64, &[u8])>> = HashMap::new();
    for record in records {
        let name = record.name();
        let writes = per_file.entry(name).or_insert_with(|| {
            order.push(name);
            Vec::new()
        });
        match record {
            Record::Reset { .. } => writes.clear(),
            Record::Write { offset, data, .. } => writes.push((*offset, data)),
        }
    }
    let mut repaired = Vec::new();
    for name in order {
        let writes = &per_file[name];
        if writes.is_empty() {
            continue;
        }
        if !session_file(name) {
            eprintln!(
                "session-manager: fs store: journal names {name:?}, not a session file: skipped"
            );
            continue;
        }
        let path = data_dir.join(name);
        if apply(io, &path, writes)? {
            repaired.push(name.to_string());
        }
    }
    Ok(repaired)
}

/// Replays one file's writes; true when the file changed.
fn apply(io: &dyn FsIo, path: &Path, writes: &[(u64, &[u8])]) -> Result<bool, StoreError> {
    use std::os::unix::fs::FileExt;
    let file = match io.open_write(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Created and its directory synced before its first record: removed by hand since.
            eprintln!(
                "session-manager: fs store: journal names {}, which is gone: skipped",
                path.display()
            );
            return Ok(false);
        }
        Err(e) => return Err(io_err("open", path, &e)),
    };
    let len_of =
        |file: &File| file.metadata().map(|m| m.len()).map_err(|e| io_err("stat", path, &e));
    let mut changed = false;
    let mut end = 0;
    for &(offset, data) in writes {
        let len = len_of(&file)?;
        if offset > len {
            eprintln!(
                "session-manager: fs store: journal writes {} at {offset}, past its end ({len}): \
                 the rest of its records skipped",
                path.display()
            );
            return finish(io, &file, path, changed);
        }
        let mut have = vec![0u8; data.len()];
        let held = (len - offset).min(data.len() as u64) as usize;
        file.read_exact_at(&mut have[..held], offset).map_err(|e| io_err("read", path, &e))?;
        if held < data.len() || have != data {
            io.write_at(&file, path, offset, data).map_err(|e| io_err("repair", path, &e))?;
            changed = true;
        }
        end = offset + data.len() as u64;
    }
    if len_of(&file)? > end {
        io.set_len(&file, path, end).map_err(|e| io_err("cut", path, &e))?;
        changed = true;
    }
    finish(io, &file, path, changed)
}

fn finish(io: &dyn FsIo, file: &File, path: &Path, changed: bool) -> Result<bool, StoreError> {
    if changed {
        io.sync_data(file, path).map_err(|e| io_err("flush", path, &e))?;
    }
    Ok(changed)
}
