//! `session-manager export` / `import`: moving sessions between a data_dir and standalone
//! `.jsonl` files (contract §5.2 names and layout), offline (no worker needs to run).
//!
//! An export directory has the data_dir layout: `<enc(id)>.jsonl` per session, plus the session's
//! attachment folder under `attachments/` when it has one, so an export can itself be opened as a
//! data_dir and imported back. Export writes the log as stored ([`Format::Log`], every streamed
//! revision kept, a torn tail dropped) or its snapshot ([`Format::Snapshot`], one line per record
//! of the replayed state). Import replays each file with the fs store's rules (session id from the
//! meta, else the file name), then writes the bytes unchanged, so export → import → export gives
//! back the same bytes in either format.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use session_core::jsonl::{self, attachment_dir_name, TailRepair};
use session_core::transfer::{self, EXTENSION};

/// How a session leaves the data_dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// The log as stored: full history (the web bench's simulation replays it).
    #[default]
    Log,
    /// The replayed state as snapshot lines (what compaction writes).
    Snapshot,
}

/// One session moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    pub session_id: String,
    /// The file written.
    pub file: PathBuf,
    /// Non-blank lines and how many of them replay skipped.
    pub lines: usize,
    pub skipped: usize,
    /// Attachment files copied (`.bin` + `.json` count separately).
    pub attachment_files: usize,
}

/// `s_1 → out/s_1.jsonl (12 lines, 1 skipped, 2 attachment files)`: the line a command prints.
impl fmt::Display for Moved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} → {} ({} lines", self.session_id, self.file.display(), self.lines)?;
        if self.skipped > 0 {
            write!(f, ", {} skipped", self.skipped)?;
        }
        write!(f, ", {} attachment files)", self.attachment_files)
    }
}

/// A failed export or import.
#[derive(Debug)]
pub struct TransferError(pub String);

impl fmt::Display for TransferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TransferError {}

type Result<T> = std::result::Result<T, TransferError>;

fn io_err(action: &str, path: &Path, e: &io::Error) -> TransferError {
    TransferError(format!("{action} {}: {e}", path.display()))
}

/// Exports one session of `data_dir` into `out_dir` (created if needed).
pub fn export_session(
    data_dir: &Path,
    session_id: &str,
    out_dir: &Path,
    format: Format,
) -> Result<Moved> {
    let source = data_dir.join(transfer::file_name(session_id));
    let bytes = match fs::read(&source) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(TransferError(format!(
                "session {session_id:?} is not in {}",
                data_dir.display()
            )))
        }
        Err(e) => return Err(io_err("read", &source, &e)),
    };
    let (state, stats) = jsonl::replay(&bytes);
    let out = match format {
        Format::Log => repaired(bytes),
        Format::Snapshot => jsonl::encode_snapshot(&state),
    };
    fs::create_dir_all(out_dir).map_err(|e| io_err("create", out_dir, &e))?;
    let file = out_dir.join(transfer::file_name(session_id));
    fs::write(&file, out).map_err(|e| io_err("write", &file, &e))?;
    let attachment_files = copy_attachments(data_dir, out_dir, session_id)?;
    Ok(Moved {
        session_id: session_id.into(),
        file,
        lines: stats.lines,
        skipped: stats.skipped,
        attachment_files,
    })
}

/// Exports every session of `data_dir` (every `*.jsonl` whose name decodes), sorted by id.
pub fn export_all(data_dir: &Path, out_dir: &Path, format: Format) -> Result<Vec<Moved>> {
    let mut moved = Vec::new();
    for session_id in session_ids(data_dir)? {
        moved.push(export_session(data_dir, &session_id, out_dir, format)?);
    }
    Ok(moved)
}

/// Ids of the sessions stored in `data_dir`, sorted (names that do not decode are skipped, as
/// the fs store's listing does).
pub fn session_ids(data_dir: &Path) -> Result<Vec<String>> {
    let read = fs::read_dir(data_dir).map_err(|e| io_err("list", data_dir, &e))?;
    let mut ids = Vec::new();
    for item in read {
        let item = item.map_err(|e| io_err("list", data_dir, &e))?;
        let name = item.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.ends_with(EXTENSION) || !item.path().is_file() {
            continue;
        }
        match transfer::session_id_of_file(name) {
            Some(id) => ids.push(id),
            None => eprintln!("session-manager: skipping {name}: not an encoded session id"),
        }
    }
    ids.sort();
    Ok(ids)
}

/// Imports one exported `.jsonl` file into `data_dir`, with its attachment folder when one sits
/// beside it (`<dir>/attachments/<enc(id)>/`). Refuses to replace a stored session unless
/// `replace`.
pub fn import_file(data_dir: &Path, file: &Path, replace: bool) -> Result<Moved> {
    let bytes = fs::read(file).map_err(|e| io_err("read", file, &e))?;
    if let Some(format) = session_core::formats::detect(&bytes) {
        return Err(TransferError(format!(
            "{}: this is not a session-manager log, it looks like {format}: pass --from {format}",
            file.display()
        )));
    }
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let (imported, _) = transfer::import(name, &bytes).ok_or_else(|| {
        TransferError(format!(
            "{}: no meta record and the name is not <enc(session_id)>.jsonl",
            file.display()
        ))
    })?;
    let session_id = imported.session_id;
    fs::create_dir_all(data_dir).map_err(|e| io_err("create", data_dir, &e))?;
    let target = data_dir.join(transfer::file_name(&session_id));
    if target.exists() && !replace {
        return Err(TransferError(format!(
            "session {session_id:?} already exists in {} (pass --replace to overwrite)",
            data_dir.display()
        )));
    }
    let tmp = target.with_extension("jsonl.tmp");
    fs::write(&tmp, &bytes).map_err(|e| io_err("write", &tmp, &e))?;
    fs::rename(&tmp, &target).map_err(|e| io_err("rename", &tmp, &e))?;
    let source_dir = file.parent().unwrap_or(Path::new("."));
    let dir = attachment_dir_name(&session_id);
    let (from, to) =
        (source_dir.join("attachments").join(&dir), data_dir.join("attachments").join(&dir));
    if replace && from.is_dir() && to.is_dir() {
        fs::remove_dir_all(&to).map_err(|e| io_err("remove", &to, &e))?;
    }
    let attachment_files = copy_attachments(source_dir, data_dir, &session_id)?;
    Ok(Moved {
        session_id,
        file: target,
        lines: imported.lines,
        skipped: imported.skipped,
        attachment_files,
    })
}

/// Imports several files; stops at the first failure.
pub fn import_files(data_dir: &Path, files: &[PathBuf], replace: bool) -> Result<Vec<Moved>> {
    files.iter().map(|file| import_file(data_dir, file, replace)).collect()
}

/// The log without a torn last fragment, newline-terminated.
fn repaired(mut bytes: Vec<u8>) -> Vec<u8> {
    match jsonl::tail_repair(&bytes) {
        TailRepair::None => {}
        TailRepair::Newline => bytes.push(b'\n'),
        TailRepair::Truncate(len) => bytes.truncate(len),
    }
    bytes
}

/// Copies `<from>/attachments/<dir(id)>/*.{bin,json}` to the same place under `to`.
fn copy_attachments(from: &Path, to: &Path, session_id: &str) -> Result<usize> {
    let name = attachment_dir_name(session_id);
    let source = from.join("attachments").join(&name);
    let read = match fs::read_dir(&source) {
        Ok(read) => read,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io_err("list", &source, &e)),
    };
    let target = to.join("attachments").join(&name);
    fs::create_dir_all(&target).map_err(|e| io_err("create", &target, &e))?;
    let mut copied = 0;
    for item in read {
        let item = item.map_err(|e| io_err("list", &source, &e))?;
        let path = item.path();
        let keep = matches!(path.extension().and_then(|x| x.to_str()), Some("bin" | "json"));
        if keep && path.is_file() {
            let dest = target.join(item.file_name());
            fs::copy(&path, &dest).map_err(|e| io_err("copy", &path, &e))?;
            copied += 1;
        }
    }
    Ok(copied)
}
