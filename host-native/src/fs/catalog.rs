//! The meta catalog of the fs store: what `list_metas` answers from, so listing never replays
//! sessions.
//!
//! In memory it is a map session id → meta, built on the first `list_metas` and kept
//! write-through by every write. On disk it is `<data_dir>/.session-catalog`, one JSON line per
//! session: `{"file":"<enc(id)>.jsonl","stamp":{len,mtime_ns,ino},"meta":{…}}`, written (tmp +
//! rename) when the store is dropped or [`super::FsStore::flush_catalog`] is called. The name does
//! not end in `.jsonl`, so no reader mistakes it for a session (contract §5.2).
//!
//! Building trusts a catalog line only while the session file still has the recorded stamp
//! (length, mtime, inode); any other file — new, grown, rewritten, or every file when the catalog
//! is missing or unreadable — is read from its end backwards until the last meta-bearing line
//! that replay applies ([`session_core::jsonl::last_meta`]), which is all replay would keep of the
//! meta anyway: the last 64 KiB first, the whole file when they do not decide it (no meta in them,
//! or their last meta lies before their first `begin` marker, so only earlier lines tell whether a
//! torn group drops it; a file without groups is therefore read whole). A file with no meta is not
//! listed (contract D14). Opening a cleanly closed data_dir therefore costs one directory listing,
//! one `stat` per session and one catalog parse.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use session_core::jsonl::{dec, enc, last_meta, last_meta_in_tail};
use session_core::wire::SessionMeta;
use session_core::StoreError;

use super::io::{io_err, write_atomic, Stamp};
use super::vfs::FsIo;

/// Name of the catalog file inside `data_dir`.
pub const CATALOG_FILE: &str = ".session-catalog";
const TAIL_CHUNK: u64 = 64 * 1024;

#[derive(Serialize, Deserialize)]
struct Line {
    file: String,
    stamp: Stamp,
    meta: SessionMeta,
}

#[derive(Debug, Default)]
pub(crate) struct Catalog {
    metas: Mutex<Option<HashMap<String, SessionMeta>>>,
}

impl Catalog {
    fn lock(&self) -> MutexGuard<'_, Option<HashMap<String, SessionMeta>>> {
        self.metas.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the meta a landed write left (`None`: not listed). Call after the disk write.
    pub(crate) fn on_write(&self, sid: &str, meta: Option<&SessionMeta>) {
        if let Some(map) = self.lock().as_mut() {
            match meta {
                Some(meta) => {
                    map.insert(sid.to_string(), meta.clone());
                }
                None => {
                    map.remove(sid);
                }
            }
        }
    }

    /// Re-reads one session's meta from its file (after a failed write, whose effect on the disk
    /// is unknown: the write may have landed before a later step failed).
    pub(crate) fn refresh(&self, data_dir: &Path, sid: &str) {
        let mut guard = self.lock();
        let Some(map) = guard.as_mut() else { return };
        match scan_meta(&data_dir.join(format!("{}.jsonl", enc(sid)))) {
            Ok(Some(meta)) => {
                map.insert(sid.to_string(), meta);
            }
            Ok(None) => {
                map.remove(sid);
            }
            Err(e) => {
                eprintln!("session-manager: fs store: catalog refresh of {sid:?}: {e}");
                *guard = None; // rebuilt from the files on the next list
            }
        }
    }

    /// Every listed meta; builds the catalog on first use.
    pub(crate) fn list(&self, data_dir: &Path) -> Result<Vec<SessionMeta>, StoreError> {
        let mut guard = self.lock();
        if guard.is_none() {
            *guard = Some(build(data_dir)?);
        }
        Ok(guard.as_ref().map(|m| m.values().cloned().collect()).unwrap_or_default())
    }

    /// Writes the on-disk catalog (only if it was built). Needs no concurrent writers to be exact;
    /// a stale line is harmless because its stamp will not match.
    pub(crate) fn save(&self, io: &dyn FsIo, data_dir: &Path) -> Result<(), StoreError> {
        let guard = self.lock();
        let Some(map) = guard.as_ref() else { return Ok(()) };
        let mut out = Vec::new();
        for (sid, meta) in map {
            let file = format!("{}.jsonl", enc(sid));
            let Ok(stat) = fs::metadata(data_dir.join(&file)) else { continue };
            let line = Line { file, stamp: Stamp::of(&stat), meta: meta.clone() };
            if let Ok(bytes) = serde_json::to_vec(&line) {
                out.extend_from_slice(&bytes);
                out.push(b'\n');
            }
        }
        let path = data_dir.join(CATALOG_FILE);
        let tmp = data_dir.join(format!("{CATALOG_FILE}.tmp"));
        write_atomic(io, &path, &tmp, &out, true)
    }
}

fn read_saved(data_dir: &Path) -> HashMap<String, (Stamp, SessionMeta)> {
    let Ok(bytes) = fs::read(data_dir.join(CATALOG_FILE)) else { return HashMap::new() };
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Line>(line).ok())
        .map(|l| (l.file, (l.stamp, l.meta)))
        .collect()
}

fn build(data_dir: &Path) -> Result<HashMap<String, SessionMeta>, StoreError> {
    let saved = read_saved(data_dir);
    let entries = fs::read_dir(data_dir).map_err(|e| io_err("list", data_dir, &e))?;
    let mut metas = HashMap::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_err("list", data_dir, &e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(stem) = name.strip_suffix(".jsonl") else { continue };
        let Some(sid) = dec(stem) else {
            eprintln!("session-manager: fs store: skipping undecodable session file {name:?}");
            continue;
        };
        let stat = match entry.metadata() {
            Ok(stat) if stat.is_file() => stat,
            Ok(_) => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_err("stat", &entry.path(), &e)),
        };
        let meta = match saved.get(name) {
            Some((stamp, meta)) if *stamp == Stamp::of(&stat) => Some(meta.clone()),
            _ => scan_meta(&entry.path())?,
        };
        if let Some(meta) = meta {
            metas.insert(sid, meta);
        }
    }
    Ok(metas)
}

/// The meta a replay of the file would end with, reading the last 64 KiB first.
fn scan_meta(path: &PathBuf) -> Result<Option<SessionMeta>, StoreError> {
    let read = || -> io::Result<Option<SessionMeta>> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        if len > TAIL_CHUNK {
            file.seek(SeekFrom::Start(len - TAIL_CHUNK))?;
            let mut tail = Vec::with_capacity(TAIL_CHUNK as usize);
            file.by_ref().take(TAIL_CHUNK).read_to_end(&mut tail)?;
            // The first (probably partial) line of the chunk is not trusted, nor a meta the
            // chunk cannot place inside or outside a group (`last_meta_in_tail`).
            if let Some(cut) = tail.iter().position(|b| *b == b'\n') {
                if let Some(meta) = last_meta_in_tail(&tail[cut + 1..]) {
                    return Ok(Some(meta));
                }
            }
            file.seek(SeekFrom::Start(0))?;
        }
        let mut all = Vec::new();
        file.read_to_end(&mut all)?;
        Ok(last_meta(&all))
    };
    match read() {
        Ok(meta) => Ok(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err("read", path, &e)),
    }
}
