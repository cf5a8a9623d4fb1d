//! The fs store's search index (issue 39) holds every backend's hits: the conformance check
//! `search_hits` with the index settled after every write, with the store restarted, with the
//! index deleted and with it damaged before each reopen; and the core's seeded search model test
//! against the scan (the memory store) on generated corpora and queries.

mod common;

use std::path::Path;
use std::sync::RwLock;

use session_core::conformance::check_search_hits;
use session_core::search::index::{Found, SearchIndex, Wanted};
use session_core::search::Query;
use session_core::store::{Applied, ChangeSet};
use session_core::wire::SessionMeta;
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

common::store_reads_through!(Indexed, {
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let applied = self.read(|s| s.apply(changes));
        self.after_write();
        applied
    }
    fn listed_meta(&self, sid: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.read(|s| s.listed_meta(sid))
    }
    fn search_index(&self) -> Option<&dyn SearchIndex> {
        Some(self)
    }
});

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

mod against_the_scan {
    //! The fs store with its index (settled at random points, so some sessions are searched
    //! through it and some as unindexed) answers every query page by page exactly as the memory
    //! store's scan does, after appends, edits, retitles, trash and deletes: the core's seeded
    //! search model test (`search_agrees_with_scan`) over `SEARCH_SEEDS` seeds (default 24).

    use serde_json::json;
    use session_core::conformance::{search_agrees_with_scan, search_pages};
    use session_core::mem_store::MemStore;
    use session_core::{catalog, Env, Limits, ManualClock, SeqIds, Store};
    use session_store_fs::{FsConfig, FsStore, SyncMode};

    /// Found by CI: three hits with one timestamp, pages of one; the cursor's ties are kept.
    #[test]
    fn ties_with_the_cursor_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fs = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("open");
        let mem = MemStore::new();
        let (c0, c1, i0, i1) =
            (ManualClock::new(), ManualClock::new(), SeqIds::new(), SeqIds::new());
        let envs = [
            Env { clock: &c0, ids: &i0, limits: Limits::default() },
            Env { clock: &c1, ids: &i1, limits: Limits::default() },
        ];
        let stores: [&dyn Store; 2] = [&mem, &fs];
        for (step, text) in ["café café", "café café", "café"].iter().enumerate() {
            for (store, env) in stores.iter().zip(&envs) {
                let ensure = json!({"session_id": "s0", "title": "t0"});
                let _ = catalog::dispatch(*store, env, "session::ensure", ensure);
                let mut req = json!({"session_id": "s0", "entry_id": format!("e{step}"), "message": {"role": "user", "timestamp": step, "content": [{"type": "text", "text": text}]}});
                if step > 0 {
                    req["parent_id"] = json!(format!("e{}", step - 1));
                }
                let appended = catalog::dispatch(*store, env, "session::append", req);
                assert!(matches!(appended, Some(Ok(_))), "append: {appended:?}");
            }
        }
        fs.index_pending().expect("index");
        assert_eq!(
            search_pages(&fs, &envs[1], "caf*", 1, false),
            search_pages(&mem, &envs[0], "caf*", 1, false)
        );
    }

    #[test]
    fn the_index_answers_as_the_scan() {
        let seeds = std::env::var("SEARCH_SEEDS").ok().and_then(|n| n.parse().ok()).unwrap_or(24);
        for seed in 0..seeds {
            let dir = tempfile::tempdir().expect("tempdir");
            let fs = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("open");
            let settle = || fs.index_pending().map(|_| ()).map_err(|e| e.to_string());
            if let Err(e) = search_agrees_with_scan(&fs, &settle, seed) {
                panic!("{e}");
            }
        }
    }
}
