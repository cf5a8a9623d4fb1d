//! `<data_dir>/.session-lifecycle-ids`: the ids (file-name encoded, one per line) of the sessions
//! whose logs may hold a lifecycle record (`trash`, `restore`, `expiry`). A write that sets a
//! lifecycle appends its id here, durably, before its own record lands; a clean close rewrites
//! the file with the sessions that still have one. So after a crash the catalog reads whole only
//! the stale files this names (a lifecycle record may lie anywhere in a log), and every other
//! stale file from its last 64 KiB, as before lifecycles. A superset is harmless; a missing file
//! names none (no build before this one wrote a lifecycle record).

use std::collections::HashSet;
use std::path::Path;

use session_core::jsonl::{dec, enc};
use session_core::StoreError;

use super::io::{io_err, write_atomic};
use super::vfs::FsIo;

/// Name of the file inside `data_dir`.
pub const LIFECYCLE_IDS_FILE: &str = ".session-lifecycle-ids";

/// Adds `sid` (before its lifecycle record is written); synced when `durable`.
pub(crate) fn note(
    io: &dyn FsIo,
    data_dir: &Path,
    sid: &str,
    durable: bool,
) -> Result<(), StoreError> {
    let path = data_dir.join(LIFECYCLE_IDS_FILE);
    let existed = path.exists();
    let line = format!("{}\n", enc(sid));
    let written = (|| {
        let file = io.open_append(&path)?;
        io.write(&file, &path, line.as_bytes())?;
        if durable {
            io.sync_data(&file, &path)?;
            if !existed {
                io.sync_dir(data_dir)?;
            }
        }
        Ok(())
    })();
    written.map_err(|e| io_err("append to", &path, &e))
}

/// The ids the file names (none when it is missing or unreadable).
pub(crate) fn read(data_dir: &Path) -> HashSet<String> {
    let Ok(text) = std::fs::read_to_string(data_dir.join(LIFECYCLE_IDS_FILE)) else {
        return HashSet::new();
    };
    text.lines().filter_map(dec).collect()
}

/// Replaces the file with exactly `ids` (a clean close: the sessions that have a lifecycle).
pub(crate) fn rewrite<'a>(
    io: &dyn FsIo,
    data_dir: &Path,
    ids: impl Iterator<Item = &'a String>,
) -> Result<(), StoreError> {
    let text: String = ids.map(|sid| format!("{}\n", enc(sid))).collect();
    let path = data_dir.join(LIFECYCLE_IDS_FILE);
    let tmp = data_dir.join(format!("{LIFECYCLE_IDS_FILE}.tmp"));
    write_atomic(io, &path, &tmp, text.as_bytes(), true)
}
