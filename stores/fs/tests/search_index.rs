//! The fs store's search index (issue 39) holds every backend's hits: the conformance check
//! `search_hits` with the index settled after every write, with the store restarted, with the
//! index deleted and with it damaged before each reopen; and a property test against the scan
//! (the memory store) on generated corpora and queries.

use std::path::Path;
use std::sync::RwLock;

use session_core::conformance::check_search_hits;
use session_core::lifecycle::Lifecycle;
use session_core::meta_order::ListQuery;
use session_core::path::{PathSelect, PathSpot};
use session_core::search::index::{Found, SearchIndex, Wanted};
use session_core::search::Query;
use session_core::store::{Applied, ChangeSet};
use session_core::usage::Tally;
use session_core::wire::{AttachmentMeta, FeedPage, SessionEntry, SessionMeta};
use session_core::{Store, StoreError};
use session_store_fs::{FsConfig, FsStore, SyncMode, SEARCH_INDEX_DIR};

/// What happens to the store after each write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// The index takes the write before the next call.
    Settle,
    /// The index takes the write, the store is closed and reopened.
    Restart,
    /// Closed, the index deleted, reopened: searches scan what the rebuild has not read.
    DeleteIndex,
    /// Closed, every file of the index damaged, reopened and settled.
    DamageIndex,
}

#[derive(Debug)]
struct Indexed {
    store: RwLock<Option<FsStore>>,
    dir: tempfile::TempDir,
    after: After,
}

fn config(dir: &Path) -> FsConfig {
    FsConfig::new(dir).sync(SyncMode::Never)
}

impl Indexed {
    fn new(after: After) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = FsStore::open(config(dir.path())).expect("open");
        Indexed { store: RwLock::new(Some(store)), dir, after }
    }

    fn read<R>(&self, f: impl FnOnce(&FsStore) -> R) -> R {
        f(self.store.read().expect("lock").as_ref().expect("open"))
    }

    fn after_write(&self) {
        let mut slot = self.store.write().expect("lock");
        slot.as_ref().expect("open").index_pending().expect("index");
        if self.after == After::Settle {
            return;
        }
        *slot = None;
        let index = self.dir.path().join(SEARCH_INDEX_DIR);
        match self.after {
            After::DeleteIndex => std::fs::remove_dir_all(&index).expect("delete the index"),
            After::DamageIndex => damage(&index),
            After::Settle | After::Restart => {}
        }
        let store = FsStore::open(config(self.dir.path())).expect("reopen");
        if self.after == After::DamageIndex {
            store.index_pending().expect("rebuild");
        }
        *slot = Some(store);
    }
}

/// Flips a byte in the middle of every segment file of the index (not its format mark).
fn damage(index: &Path) {
    for file in std::fs::read_dir(index).expect("index dir") {
        let path = file.expect("entry").path();
        if path.file_name().is_some_and(|n| n == "format" || n == "meta.json") {
            continue;
        }
        let mut bytes = std::fs::read(&path).expect("read");
        let middle = bytes.len() / 2;
        if let Some(b) = bytes.get_mut(middle) {
            *b ^= 0x5a;
            std::fs::write(&path, bytes).expect("write");
        }
    }
}

impl Store for Indexed {
    fn get_meta(&self, sid: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.read(|s| s.get_meta(sid))
    }
    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.read(|s| s.list_metas())
    }
    fn get_entry(&self, sid: &str, eid: &str) -> Result<Option<SessionEntry>, StoreError> {
        self.read(|s| s.get_entry(sid, eid))
    }
    fn list_entries(&self, sid: &str) -> Result<Vec<SessionEntry>, StoreError> {
        self.read(|s| s.list_entries(sid))
    }
    fn get_active_leaf(&self, sid: &str) -> Result<Option<String>, StoreError> {
        self.read(|s| s.get_active_leaf(sid))
    }
    fn get_attachment(
        &self,
        sid: &str,
        aid: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        self.read(|s| s.get_attachment(sid, aid))
    }
    fn list_attachments(&self, sid: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        self.read(|s| s.list_attachments(sid))
    }
    fn changes(&self, sid: &str, after: u64, limit: usize) -> Result<FeedPage, StoreError> {
        self.read(|s| s.changes(sid, after, limit))
    }
    fn path_locate(&self, sid: &str, leaf: &str, id: Option<&str>) -> Result<PathSpot, StoreError> {
        self.read(|s| s.path_locate(sid, leaf, id))
    }
    fn path_select(
        &self,
        sid: &str,
        leaf: &str,
        query: &PathSelect,
    ) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
        self.read(|s| s.path_select(sid, leaf, query))
    }
    fn usage(&self, sid: &str, leaf: Option<&str>) -> Result<(Tally, Tally), StoreError> {
        self.read(|s| s.usage(sid, leaf))
    }
    fn list_page(&self, query: &ListQuery<'_>) -> Result<Vec<SessionMeta>, StoreError> {
        self.read(|s| s.list_page(query))
    }
    fn lifecycle(&self, sid: &str) -> Result<Lifecycle, StoreError> {
        self.read(|s| s.lifecycle(sid))
    }
    fn list_lifecycles(&self) -> Result<Vec<(String, Lifecycle)>, StoreError> {
        self.read(|s| s.list_lifecycles())
    }
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let applied = self.read(|s| s.apply(changes));
        self.after_write();
        applied
    }
    fn search_index(&self) -> Option<&dyn SearchIndex> {
        Some(self)
    }
}

impl SearchIndex for Indexed {
    fn find(&self, query: &Query, wanted: &Wanted<'_>) -> Result<Found<'_>, StoreError> {
        self.read(|s| s.search_find(query, wanted)).expect("the store keeps an index")
    }
}

fn checked(after: After) {
    let make = || Box::new(Indexed::new(after)) as Box<dyn Store>;
    if let Err(e) = check_search_hits(&make) {
        panic!("search_hits with {after:?}: {e}");
    }
}

#[test]
fn hits_with_the_index_settled() {
    checked(After::Settle);
}

#[test]
fn hits_across_restarts() {
    checked(After::Restart);
}

#[test]
fn hits_with_the_index_deleted() {
    checked(After::DeleteIndex);
}

#[test]
fn hits_with_the_index_damaged() {
    checked(After::DamageIndex);
}
