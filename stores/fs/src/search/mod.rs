//! The fs store's search index (issue 39): a tantivy index in `<data_dir>/.search-index/` over
//! the core's tokens, a cache of the logs. It is checked before it is trusted — its files'
//! checksums, its format, and for every session the stamp of the log it was read from against
//! the log now — and what fails is read again ([`indexer`]); a session written since its
//! documents were committed is searched from the store meanwhile ([`pending`]). The core ranks
//! what it names ([`session_core::search::index`]), so a stale or missing index costs time, never
//! a hit.

mod find;
mod indexer;
mod pending;
mod schema;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use session_core::search::index::{Found, SearchIndex, Wanted};
use session_core::search::touched::Touched;
use session_core::search::Query;
use session_core::{ChangeSet, StoreError};
use tantivy::index::SegmentId;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument};

use crate::io::{session_files, Stamp};
use crate::lock;
use pending::Pending;
use schema::{stamp_in, Fields, FORMAT, SESSION};

pub use indexer::Progress;

/// Name of the index's directory inside `data_dir` (not a session: no `.jsonl`).
pub const INDEX_DIR: &str = ".search-index";

/// Memory of the index writer's buffer (tantivy's least is 15 MB).
const WRITER_BYTES: usize = 24 << 20;

pub(crate) fn index_err(e: tantivy::TantivyError) -> StoreError {
    StoreError::Io(format!("fs store: search index: {e}"))
}

/// An open, checked search index.
pub(crate) struct FsSearch {
    fields: Fields,
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    pending: Arc<Pending>,
    /// Held while open: one store per data_dir writes the index (another one scans).
    _lock: std::fs::File,
    progress: Mutex<Progress>,
    /// The columns of the segments searched lately ([`find::Columns`]).
    columns: Mutex<HashMap<SegmentId, find::Columns>>,
}

impl std::fmt::Debug for FsSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FsSearch").field("pending", &self.pending.len()).finish_non_exhaustive()
    }
}

impl FsSearch {
    /// Opens the index of `data_dir` (a new one when it is missing, of another format or
    /// damaged) and checks it against the logs: every session whose log changed since it was
    /// indexed, or that is not indexed, is to be read again. `Err` when it cannot be used at all
    /// (another store holds it): that store then scans.
    pub(crate) fn open(data_dir: &Path) -> Result<FsSearch, StoreError> {
        let dir = data_dir.join(INDEX_DIR);
        let lock = take_lock(data_dir)?;
        let fields = Fields::new();
        let index = match open_checked(&dir, &fields) {
            Ok(index) => index,
            Err(why) => {
                if dir.exists() {
                    eprintln!("session-manager: fs store: search index rebuilt ({why})");
                }
                fresh(&dir, &fields)?
            }
        };
        schema::register_tokenizer(&index);
        let writer = index.writer_with_num_threads(1, WRITER_BYTES).map_err(index_err)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(index_err)?;
        let search = FsSearch {
            fields,
            reader,
            writer: Mutex::new(writer),
            pending: Arc::default(),
            _lock: lock,
            progress: Mutex::new(Progress::default()),
            columns: Mutex::default(),
        };
        search.check_stamps(data_dir)?;
        Ok(search)
    }

    /// Marks every session whose log is not as it was indexed (or is gone) to be read again.
    fn check_stamps(&self, data_dir: &Path) -> Result<(), StoreError> {
        let mut indexed: HashMap<String, Option<Stamp>> = HashMap::new();
        let searcher = self.reader.searcher();
        for (ord, seg) in searcher.segment_readers().iter().enumerate() {
            let class = seg.fast_fields().u64("class").map_err(index_err)?;
            for doc in 0..seg.max_doc() {
                if seg.alive_bitset().is_some_and(|a| !a.is_alive(doc))
                    || class.first(doc) != Some(SESSION)
                {
                    continue;
                }
                let address = tantivy::DocAddress::new(ord as u32, doc);
                let stored: TantivyDocument = searcher.doc(address).map_err(index_err)?;
                if let Some((sid, stamp)) = stamp_in(&self.fields, &stored) {
                    indexed.insert(sid, stamp);
                }
            }
        }
        let mut stale = 0;
        for file in session_files(data_dir)? {
            if indexed.remove(&file.sid).flatten() != Some(file.stamp) {
                self.pending.touch(&file.sid, Touched::Session);
                stale += 1;
            }
        }
        for (gone, _) in indexed {
            self.pending.touch(&gone, Touched::Session);
        }
        lock(&self.progress).start(stale);
        Ok(())
    }

    /// Records what `changes` is about to change (before it touches the log).
    pub(crate) fn touch(&self, changes: &ChangeSet) {
        self.pending.touch(&changes.session_id, Touched::of(changes));
    }

    /// Removes every document of `session_ids` from the index files themselves, not only from
    /// searches: their segments are merged without them and the old files deleted (an erasure,
    /// issue 37: no term of an erased session stays on disk).
    pub(crate) fn erase(&self, session_ids: &[String]) -> Result<(), StoreError> {
        let mut writer = lock(&self.writer);
        for sid in session_ids {
            writer.delete_term(tantivy::Term::from_field_text(self.fields.sid, sid));
        }
        writer.commit().map_err(index_err)?;
        let segments = writer.index().searchable_segment_ids().map_err(index_err)?;
        if !segments.is_empty() {
            writer.merge(&segments).wait().map_err(index_err)?;
        }
        writer.garbage_collect_files().wait().map_err(index_err)?;
        drop(writer);
        self.reader.reload().map_err(index_err)
    }

    pub(crate) fn progress(&self) -> Progress {
        lock(&self.progress).clone()
    }
}

/// The data_dir's index lock (`<INDEX_DIR>.lock`), or why not.
fn take_lock(data_dir: &Path) -> Result<std::fs::File, StoreError> {
    use rustix::fs::{flock, FlockOperation};
    let path = data_dir.join(format!("{INDEX_DIR}.lock"));
    let io = |action: &str, e: &dyn std::fmt::Display| {
        StoreError::Io(format!("fs store: search index: {action} {}: {e}", path.display()))
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io("open", &e))?;
    flock(&file, FlockOperation::NonBlockingLockExclusive)
        .map_err(|e| io("lock (another store has this data_dir's index open)", &e))?;
    Ok(file)
}

/// The existing index, when it is of this format, opens and every file's checksum holds.
fn open_checked(dir: &Path, fields: &Fields) -> Result<Index, String> {
    match std::fs::read_to_string(dir.join("format")) {
        Ok(format) if format == FORMAT => {}
        Ok(_) => return Err("another format".into()),
        Err(e) => return Err(format!("no format file: {e}")),
    }
    let index = Index::open_in_dir(dir).map_err(|e| e.to_string())?;
    if index.schema() != fields.schema {
        return Err("another schema".into());
    }
    let damaged = index.validate_checksum().map_err(|e| e.to_string())?;
    if !damaged.is_empty() {
        return Err(format!("{} damaged file(s)", damaged.len()));
    }
    Ok(index)
}

/// An empty index in `dir`, whatever was there before.
fn fresh(dir: &Path, fields: &Fields) -> Result<Index, StoreError> {
    let io = |action: &str, e: std::io::Error| {
        StoreError::Io(format!("fs store: search index: {action} {}: {e}", dir.display()))
    };
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("remove", e)),
    }
    std::fs::create_dir_all(dir).map_err(|e| io("create", e))?;
    let index = Index::create_in_dir(dir, fields.schema.clone()).map_err(index_err)?;
    std::fs::write(dir.join("format"), FORMAT).map_err(|e| io("write", e))?;
    Ok(index)
}

/// The most postings a search may read to count as selective ([`FsSearch::is_selective`]): each
/// may become a candidate resolved from the stored text, about 10 µs apiece.
const SELECTIVE_POSTINGS: u64 = 256;

impl FsSearch {
    /// Whether `query` is answered from few postings ([`SELECTIVE_POSTINGS`]) and nothing is
    /// waiting to be indexed (which a search reads from the store): a search that costs less
    /// than the hand-off to a blocking thread and back.
    pub(crate) fn is_selective(&self, query: &Query) -> Result<bool, StoreError> {
        if self.pending.len() > 0 {
            return Ok(false);
        }
        let mut budget = SELECTIVE_POSTINGS;
        for seg in self.reader.searcher().segment_readers() {
            match find::postings_within(&self.fields, seg, query, budget)? {
                Some(read) => budget -= read,
                None => return Ok(false),
            }
        }
        Ok(true)
    }
}

impl SearchIndex for FsSearch {
    fn find(&self, query: &Query, wanted: &Wanted<'_>) -> Result<Found<'_>, StoreError> {
        self.find_owned(query, wanted)
    }
}

impl FsSearch {
    /// [`SearchIndex::find`]; the answer holds its own searcher, not a borrow of the index.
    pub(crate) fn find_owned(
        &self,
        query: &Query,
        wanted: &Wanted<'_>,
    ) -> Result<Found<'static>, StoreError> {
        // What is unindexed first, then the searcher: a commit made visible in between is
        // then searched twice over (its documents excluded), never not at all.
        let unindexed = self.pending.unindexed();
        let searcher = self.reader.searcher();
        // A word's or a prefix's bound is its count; a phrase's only bounds its occurrences.
        let exact = query.items.iter().all(|item| item.terms.len() == 1);
        let wanted = Wanted { keep: wanted.keep.filter(|_| exact), ..*wanted };
        let wanted = &wanted;
        let mut best = find::Best::new(wanted);
        let columns = self.columns_of(&searcher)?;
        for ((ord, seg), columns) in searcher.segment_readers().iter().enumerate().zip(&columns) {
            let at = (ord as u32, columns);
            find::segment(&self.fields, seg, at, query, wanted, &unindexed, &mut best)?;
        }
        let candidates = best.into_candidates();
        let resolver = find::Resolver::new(searcher, self.fields.clone(), columns);
        Ok(Found { candidates, exact, unindexed, resolver: Box::new(resolver) })
    }

    /// The columns of each of `searcher`'s segments, by ordinal: kept from earlier searches,
    /// opened for a segment new since; those of segments no longer searched are let go.
    fn columns_of(&self, searcher: &Searcher) -> Result<Vec<find::Columns>, StoreError> {
        let segments = searcher.segment_readers();
        let mut kept = lock(&self.columns);
        kept.retain(|id, _| segments.iter().any(|seg| seg.segment_id() == *id));
        let mut out = Vec::with_capacity(segments.len());
        for seg in segments {
            let columns = match kept.get(&seg.segment_id()) {
                Some(columns) => columns.clone(),
                None => {
                    let columns = find::Columns::open(seg)?;
                    kept.insert(seg.segment_id(), columns.clone());
                    columns
                }
            };
            out.push(columns);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
