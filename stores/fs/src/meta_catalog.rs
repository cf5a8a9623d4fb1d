//! The meta catalog of the fs store: what `list_metas` answers from, so listing never replays
//! sessions.
//!
//! In memory it is a map session id → meta and the metas in list order
//! ([`session_core::meta_order::MetaOrder`], what a `session::list` page is read from), built on the
//! first list and kept write-through by every write. On disk it is `<data_dir>/.session-catalog`, one JSON line per
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
use session_core::jsonl::{
    enc, last_meta, last_meta_in_tail, may_hold_lifecycle, replay, LIFECYCLE_TAGS,
};
use session_core::lifecycle::Lifecycle;
use session_core::meta_order::{ListQuery, MetaOrder};
use session_core::record::SessionState;
use session_core::wire::SessionMeta;
use session_core::StoreError;

use super::io::{io_err, session_files, write_atomic, Stamp};
use super::lifecycle_ids;
use super::vfs::FsIo;

/// Name of the catalog file inside `data_dir`.
pub const CATALOG_FILE: &str = ".session-catalog";
const TAIL_CHUNK: u64 = 64 * 1024;

#[derive(Serialize, Deserialize)]
struct Line {
    file: String,
    stamp: Stamp,
    /// The listed meta; absent for a session in the trash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    meta: Option<SessionMeta>,
    #[serde(default, skip_serializing_if = "Lifecycle::is_empty")]
    lifecycle: Lifecycle,
}

/// What the catalog knows of one session file: the meta it lists and the session's lifecycle.
#[derive(Debug, Clone, Default)]
pub(crate) struct Listing {
    meta: Option<SessionMeta>,
    lifecycle: Lifecycle,
}

impl Listing {
    pub(crate) fn of(state: &SessionState) -> Listing {
        Listing { meta: state.meta.clone(), lifecycle: state.lifecycle.clone() }
    }
}

/// The built catalog: every listed meta, and the same in list order. Metas are held as their
/// JSON (about a third of a decoded `SessionMeta`'s memory, which matters at 100k sessions); a
/// page decodes the metas it visits.
#[derive(Debug, Default)]
struct Metas {
    by_id: HashMap<String, Box<[u8]>>,
    order: MetaOrder,
    /// The sessions whose lifecycle is not empty (trashed or expiring).
    lifecycles: HashMap<String, Lifecycle>,
}

fn decode(json: &[u8]) -> Option<SessionMeta> {
    serde_json::from_slice(json).ok()
}

impl Metas {
    fn set(&mut self, sid: &str, listing: Listing) {
        match listing.lifecycle.is_empty() {
            true => self.lifecycles.remove(sid),
            false => self.lifecycles.insert(sid.to_string(), listing.lifecycle),
        };
        self.set_meta(sid, listing.meta);
    }

    fn set_meta(&mut self, sid: &str, meta: Option<SessionMeta>) {
        let old = match &meta {
            Some(meta) => match serde_json::to_vec(meta) {
                Ok(json) => self.by_id.insert(sid.to_string(), json.into()),
                Err(_) => self.by_id.remove(sid),
            },
            None => self.by_id.remove(sid),
        };
        self.order.update(sid, old.as_deref().and_then(decode).as_ref(), meta.as_ref());
    }

    fn get(&self, sid: &str) -> Option<SessionMeta> {
        decode(self.by_id.get(sid)?)
    }

    fn all(&self) -> Vec<SessionMeta> {
        self.by_id.values().filter_map(|json| decode(json)).collect()
    }

    fn page(&self, query: &ListQuery<'_>) -> Vec<SessionMeta> {
        self.order.page(query, |sid| self.get(sid).map(std::borrow::Cow::Owned))
    }
}

#[derive(Debug, Default)]
pub(crate) struct Catalog {
    metas: Mutex<Option<Metas>>,
}

impl Catalog {
    fn lock(&self) -> MutexGuard<'_, Option<Metas>> {
        self.metas.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records what a landed write left of the session. Call after the disk write.
    pub(crate) fn on_write(&self, sid: &str, state: &SessionState) {
        if let Some(metas) = self.lock().as_mut() {
            metas.set(sid, Listing::of(state));
        }
    }

    /// Re-reads one session's meta from its file (after a failed write, whose effect on the disk
    /// is unknown: the write may have landed before a later step failed).
    pub(crate) fn refresh(&self, data_dir: &Path, sid: &str) {
        let mut guard = self.lock();
        let Some(metas) = guard.as_mut() else { return };
        match scan(&data_dir.join(format!("{}.jsonl", enc(sid))), true) {
            Ok(listing) => metas.set(sid, listing),
            Err(e) => {
                eprintln!("session-manager: fs store: catalog refresh of {sid:?}: {e}");
                *guard = None; // rebuilt from the files on the next list
            }
        }
    }

    /// Runs `f` on the catalog, building it on first use.
    fn with_built<R>(&self, data_dir: &Path, f: impl FnOnce(&Metas) -> R) -> Result<R, StoreError> {
        let mut guard = self.lock();
        let metas = match guard.take() {
            Some(metas) => metas,
            None => build(data_dir)?,
        };
        Ok(f(guard.insert(metas)))
    }

    /// One listed meta; builds the catalog on first use.
    pub(crate) fn get(
        &self,
        data_dir: &Path,
        sid: &str,
    ) -> Result<Option<SessionMeta>, StoreError> {
        self.with_built(data_dir, |m| m.get(sid))
    }

    /// Every listed meta; builds the catalog on first use.
    pub(crate) fn list(&self, data_dir: &Path) -> Result<Vec<SessionMeta>, StoreError> {
        self.with_built(data_dir, Metas::all)
    }

    /// Every session whose lifecycle is not empty; builds the catalog on first use.
    pub(crate) fn lifecycles(
        &self,
        data_dir: &Path,
    ) -> Result<Vec<(String, Lifecycle)>, StoreError> {
        self.with_built(data_dir, |m| {
            m.lifecycles.iter().map(|(sid, l)| (sid.clone(), l.clone())).collect()
        })
    }

    /// One ordered, filtered page; builds the catalog on first use.
    pub(crate) fn page(
        &self,
        data_dir: &Path,
        query: &ListQuery<'_>,
    ) -> Result<Vec<SessionMeta>, StoreError> {
        self.with_built(data_dir, |m| m.page(query))
    }

    /// [`Catalog::page`] only when that cannot wait: the catalog is built and not locked.
    pub(crate) fn try_page(&self, query: &ListQuery<'_>) -> Option<Vec<SessionMeta>> {
        let guard = match self.metas.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        guard.as_ref().map(|m| m.page(query))
    }

    /// Writes the on-disk catalog (only if it was built). Needs no concurrent writers to be exact;
    /// a stale line is harmless because its stamp will not match.
    pub(crate) fn save(&self, io: &dyn FsIo, data_dir: &Path) -> Result<(), StoreError> {
        let guard = self.lock();
        let Some(metas) = guard.as_ref() else { return Ok(()) };
        let mut out = Vec::new();
        let trashed = metas.lifecycles.keys().filter(|sid| !metas.by_id.contains_key(*sid));
        for sid in metas.by_id.keys().chain(trashed) {
            let meta = metas.by_id.get(sid).and_then(|json| decode(json));
            let lifecycle = metas.lifecycles.get(sid).cloned().unwrap_or_default();
            let file = format!("{}.jsonl", enc(sid));
            let Ok(stat) = fs::metadata(data_dir.join(&file)) else { continue };
            let line = Line { file, stamp: Stamp::of(&stat), meta, lifecycle };
            if let Ok(bytes) = serde_json::to_vec(&line) {
                out.extend_from_slice(&bytes);
                out.push(b'\n');
            }
        }
        let path = data_dir.join(CATALOG_FILE);
        let tmp = data_dir.join(format!("{CATALOG_FILE}.tmp"));
        write_atomic(io, &path, &tmp, &out, true)?;
        lifecycle_ids::rewrite(io, data_dir, metas.lifecycles.keys())
    }
}

fn read_saved(data_dir: &Path) -> HashMap<String, (Stamp, Listing)> {
    let Ok(bytes) = fs::read(data_dir.join(CATALOG_FILE)) else { return HashMap::new() };
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Line>(line).ok())
        .map(|l| (l.file, (l.stamp, Listing { meta: l.meta, lifecycle: l.lifecycle })))
        .collect()
}

fn build(data_dir: &Path) -> Result<Metas, StoreError> {
    let saved = read_saved(data_dir);
    let with_lifecycle = lifecycle_ids::read(data_dir);
    let mut metas = Metas::default();
    for file in session_files(data_dir)? {
        let listing = match saved.get(&file.name) {
            Some((stamp, listing)) if *stamp == file.stamp => listing.clone(),
            _ => scan(&file.path, with_lifecycle.contains(&file.sid))?,
        };
        let sid = file.sid;
        if listing.meta.is_some() || !listing.lifecycle.is_empty() {
            metas.set(&sid, listing);
        }
    }
    Ok(metas)
}

/// The meta and lifecycle a replay of the file would end with. A file that `may_have_lifecycle`
/// (its id is in [`lifecycle_ids`]) is read through once for the lifecycle tags
/// ([`may_hold_lifecycle`]) and replayed when one is there; of any other, the meta is found
/// reading the last 64 KiB first.
fn scan(path: &PathBuf, may_have_lifecycle: bool) -> Result<Listing, StoreError> {
    let read = || -> io::Result<Listing> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        if may_have_lifecycle && file_may_hold_lifecycle(&mut file)? {
            file.seek(SeekFrom::Start(0))?;
            let mut all = Vec::new();
            file.read_to_end(&mut all)?;
            return Ok(Listing::of(&replay(&all).0));
        }
        let meta = |meta| Listing { meta, lifecycle: Lifecycle::default() };
        if len > TAIL_CHUNK {
            file.seek(SeekFrom::Start(len - TAIL_CHUNK))?;
            let mut tail = Vec::with_capacity(TAIL_CHUNK as usize);
            file.by_ref().take(TAIL_CHUNK).read_to_end(&mut tail)?;
            // The first (probably partial) line of the chunk is not trusted, nor a meta the
            // chunk cannot place inside or outside a group (`last_meta_in_tail`).
            if let Some(cut) = tail.iter().position(|b| *b == b'\n') {
                if let Some(found) = last_meta_in_tail(&tail[cut + 1..]) {
                    return Ok(meta(Some(found)));
                }
            }
        }
        file.seek(SeekFrom::Start(0))?;
        let mut all = Vec::new();
        file.read_to_end(&mut all)?;
        Ok(meta(last_meta(&all)))
    };
    match read() {
        Ok(listing) => Ok(listing),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Listing::default()),
        Err(e) => Err(io_err("read", path, &e)),
    }
}

/// [`may_hold_lifecycle`] of a whole file, read in 1 MiB pieces (each with the end of the one
/// before it, so a tag across two pieces is found).
fn file_may_hold_lifecycle(file: &mut File) -> io::Result<bool> {
    const PIECE: usize = 1 << 20;
    let overlap = LIFECYCLE_TAGS.iter().map(|t| t.len()).max().unwrap_or(0);
    let mut buf = vec![0u8; PIECE + overlap];
    let mut kept = 0;
    loop {
        let n = file.read(&mut buf[kept..])?;
        if n == 0 {
            return Ok(false);
        }
        let end = kept + n;
        if may_hold_lifecycle(&buf[..end]) {
            return Ok(true);
        }
        kept = overlap.min(end);
        buf.copy_within(end - kept..end, 0);
    }
}
