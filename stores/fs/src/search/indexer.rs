//! Feeding the index: a background thread takes the sessions with unindexed writes, reads what
//! they touched from the store (the stamp of the log first, so a stamp never claims more than
//! was read), replaces their documents, commits, and forgets the writes once searches see the
//! commit. A rebuild is this over every session, with its progress logged.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use session_core::{Store, StoreError};
use tantivy::{IndexWriter, Term};

use super::schema::{entry_doc, key, session_doc};
use super::{index_err, FsSearch};
use crate::io::Stamp;
use crate::lock;
use crate::FsStore;

/// Sessions read per commit.
const BATCH: usize = 256;
/// The least time between two commits of the indexer thread: a commit writes a segment, and
/// what is written meanwhile is searched from the store (see `pending.rs`).
const COMMIT_EVERY: Duration = Duration::from_millis(1000);
/// How often a rebuild says how far it got.
const REPORT_EVERY: Duration = Duration::from_secs(5);

/// How far the index got with the sessions it found stale when it opened.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// Sessions found stale (or new to it) when the index opened.
    pub stale: usize,
    /// Sessions read since.
    pub sessions: usize,
    pub entries: usize,
    /// Bytes of searched text indexed.
    pub bytes: u64,
    pub started: Option<Instant>,
    /// When no session found stale was left.
    pub finished: Option<Instant>,
    reported: Option<Instant>,
}

impl Progress {
    pub(super) fn start(&mut self, stale: usize) {
        *self = Progress { stale, started: Some(Instant::now()), ..Progress::default() };
    }

    /// Megabytes of text per second since the start (to the finish, once finished).
    pub fn mb_per_s(&self) -> f64 {
        let Some(started) = self.started else { return 0.0 };
        let secs = self.finished.unwrap_or_else(Instant::now).duration_since(started).as_secs_f64();
        self.bytes as f64 / 1e6 / secs.max(1e-9)
    }

    fn report(&mut self, left: usize) {
        if self.stale < BATCH || self.finished.is_some() {
            return;
        }
        let now = Instant::now();
        if left == 0 {
            self.finished = Some(now);
            eprintln!(
                "session-manager: fs store: search index rebuilt: {} sessions, {} entries, {:.1} MB \
                 in {:.1} s ({:.1} MB/s)",
                self.sessions,
                self.entries,
                self.bytes as f64 / 1e6,
                self.started.map_or(0.0, |s| now.duration_since(s).as_secs_f64()),
                self.mb_per_s()
            );
        } else if self.reported.is_none_or(|at| now.duration_since(at) >= REPORT_EVERY) {
            self.reported = Some(now);
            let done = self.stale.saturating_sub(left);
            eprintln!(
                "session-manager: fs store: search index: {done}/{} sessions ({}%), {:.1} MB/s; \
                 the rest is searched by scan meanwhile",
                self.stale,
                done * 100 / self.stale.max(1),
                self.mb_per_s()
            );
        }
    }
}

impl FsStore {
    /// Indexes what is unindexed, one commit per 256 sessions, until nothing is left.
    /// The background thread runs it; tests call it to see the index settled.
    pub fn index_pending(&self) -> Result<(), StoreError> {
        let Some(search) = &self.search else { return Ok(()) };
        while search.pending.len() > 0 {
            self.index_batch(search)?;
        }
        Ok(())
    }

    /// One commit of up to [`BATCH`] sessions; the sessions read.
    fn index_batch(&self, search: &FsSearch) -> Result<usize, StoreError> {
        let mut writer = lock(&search.writer);
        let mut read = Vec::new();
        let mut counted = (0, 0, 0u64);
        for sid in search.pending.sessions(BATCH) {
            let (entries, bytes, generation) = self.index_session(search, &mut writer, &sid)?;
            counted = (counted.0 + 1, counted.1 + entries, counted.2 + bytes);
            read.push((sid, generation));
        }
        writer.commit().map_err(index_err)?;
        drop(writer);
        search.reader.reload().map_err(index_err)?;
        for (sid, generation) in read {
            search.pending.done(&sid, generation);
        }
        let mut progress = lock(&search.progress);
        progress.sessions += counted.0;
        progress.entries += counted.1;
        progress.bytes += counted.2;
        progress.report(search.pending.len());
        Ok(counted.0)
    }

    /// Replaces the documents of what the session's unindexed writes touched: the entries read,
    /// the bytes of their text, and the generation read up to.
    fn index_session(
        &self,
        search: &FsSearch,
        writer: &mut IndexWriter,
        sid: &str,
    ) -> Result<(usize, u64, u64), StoreError> {
        let f = &search.fields;
        let stamp = match std::fs::metadata(self.ctx().log_path(sid)) {
            Ok(stat) => Some(Stamp::of(&stat)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(StoreError::Io(format!("fs store: search index: stat {sid}: {e}")))
            }
        };
        let Some((generation, work)) = search.pending.work(sid) else { return Ok((0, 0, 0)) };
        let meta = if stamp.is_some() { self.get_meta(sid)? } else { None };
        writer.delete_term(Term::from_field_text(f.key, &key(sid, None)));
        let mut entries = Vec::new();
        if work.whole.is_some() {
            writer.delete_term(Term::from_field_text(f.sid, sid));
            if meta.is_some() {
                entries = self.list_entries(sid)?;
            }
        } else {
            for id in work.entries.keys() {
                writer.delete_term(Term::from_field_text(f.key, &key(sid, Some(id))));
                if meta.is_some() {
                    entries.extend(self.get_entry(sid, id)?);
                }
            }
        }
        let mut bytes = 0;
        for entry in &entries {
            let (doc, len) = entry_doc(f, sid, entry);
            bytes += len as u64;
            writer.add_document(doc).map_err(index_err)?;
        }
        if stamp.is_some() {
            writer.add_document(session_doc(f, sid, meta.as_ref(), stamp)).map_err(index_err)?;
        }
        Ok((entries.len(), bytes, generation))
    }

    /// [`session_core::search::index::SearchIndex::find`] of the store's index, owning what it
    /// holds (for a wrapper that owns the store behind a lock); `None` without an index.
    pub fn search_find(
        &self,
        query: &session_core::search::Query,
        wanted: &session_core::search::index::Wanted<'_>,
    ) -> Option<Result<session_core::search::index::Found<'static>, StoreError>> {
        self.search.as_ref().map(|s| s.find_owned(query, wanted))
    }

    /// How far the search index got with what it found stale when it opened (`None`: no index).
    pub fn search_progress(&self) -> Option<Progress> {
        self.search.as_ref().map(|s| s.progress())
    }

    /// Starts the thread that keeps the search index fed; it ends with the store.
    pub fn start_search_indexer(self: &Arc<Self>) {
        let Some(search) = &self.search else { return };
        let pending = Arc::clone(&search.pending);
        let store: Weak<FsStore> = Arc::downgrade(self);
        let spawned = std::thread::Builder::new().name("search-index".into()).spawn(move || loop {
            pending.wait(Duration::from_millis(500));
            let Some(store) = store.upgrade() else { return };
            let Some(search) = &store.search else { return };
            if search.pending.len() == 0 {
                continue; // nothing written: no empty commit (each one syncs the index's files)
            }
            let started = Instant::now();
            // A full batch (a rebuild) goes on at once; a few sessions wait for more writes.
            let pause = match store.index_batch(search) {
                Ok(read) if read >= BATCH => Duration::ZERO,
                Ok(_) => COMMIT_EVERY.saturating_sub(started.elapsed()),
                Err(e) => {
                    eprintln!("session-manager: fs store: search index: {e} (retrying)");
                    COMMIT_EVERY
                }
            };
            drop(store);
            std::thread::sleep(pause);
        });
        if let Err(e) = spawned {
            eprintln!("session-manager: fs store: no search index thread: {e}");
        }
    }
}
