//! Runs session-core's storage conformance suite against `FsStore`, one test per check: in every
//! sync mode (`sync_always::<check>`, …), with a one-byte cache budget (`tiny_cache::<check>`),
//! and across restarts (`restarted::<check>`: the store is closed and reopened on its data_dir
//! after every write, so every later read and write meets a store that knows only its files);
//! and the two-instance races (`races_*::<race>`) on one store shared by concurrent callers.

mod common;

use std::sync::{Mutex, RwLock};

use session_core::conformance::CHECKS;
use session_core::store::{Applied, ChangeSet};
use session_core::{Store, StoreError};
use session_store_fs::{FsConfig, FsStore, SyncMode};

/// Fresh stores, each `FsStore::open(config(dir))` on a temp dir of its own; the dirs live as
/// long as the factory.
fn factory(config: fn(&std::path::Path) -> FsConfig) -> impl Fn() -> Box<dyn Store> {
    let dirs = Mutex::new(Vec::new());
    move || {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = FsStore::open(config(dir.path())).expect("open");
        dirs.lock().expect("lock").push(dir);
        Box::new(store) as Box<dyn Store>
    }
}

/// Fresh pairs for the two-instance races: one `FsStore` on a temp dir, shared by both handles
/// (one process owns a data_dir; its calls meet on the session's slot lock).
fn pair_factory(
    config: fn(&std::path::Path) -> FsConfig,
) -> impl Fn() -> session_core::conformance::races::Pair {
    let dirs = Mutex::new(Vec::new());
    move || {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = std::sync::Arc::new(FsStore::open(config(dir.path())).expect("open"));
        dirs.lock().expect("lock").push(dir);
        [store.clone(), store]
    }
}

mod races_sync_group {
    session_core::race_tests!(super::pair_factory(
        |d| super::FsConfig::new(d).sync(super::SyncMode::Group)
    ));
}

mod races_sync_always {
    session_core::race_tests!(super::pair_factory(
        |d| super::FsConfig::new(d).sync(super::SyncMode::Always)
    ));
}

mod races_spilled {
    session_core::race_tests!(super::pair_factory(super::spilled));
}

mod sync_always {
    session_core::conformance_tests!(super::factory(
        |d| super::FsConfig::new(d).sync(super::SyncMode::Always)
    ));
}

mod sync_group {
    session_core::conformance_tests!(super::factory(
        |d| super::FsConfig::new(d).sync(super::SyncMode::Group)
    ));
}

mod sync_never {
    session_core::conformance_tests!(super::factory(
        |d| super::FsConfig::new(d).sync(super::SyncMode::Never)
    ));
}

/// Every session is evicted as soon as another is touched.
fn tiny_cache(dir: &std::path::Path) -> FsConfig {
    let mut cfg = FsConfig::new(dir).sync(SyncMode::Never);
    cfg.cache_bytes = 1;
    cfg.max_cached_sessions = 1;
    cfg
}

mod tiny_cache {
    session_core::conformance_tests!(super::factory(super::tiny_cache));
}

/// Every session keeps its entries' bodies on disk, only stubs in memory (`spill.rs`).
fn spilled(dir: &std::path::Path) -> FsConfig {
    let mut cfg = FsConfig::new(dir).sync(SyncMode::Never);
    cfg.spill_above = 0;
    cfg
}

mod spilled {
    session_core::conformance_tests!(super::factory(super::spilled));
}

/// An `FsStore` closed and reopened on its data_dir after every `apply`, failed ones included (a
/// refused change set must leave nothing in the files either). No fsync: a clean close leaves
/// every write in the files whatever the sync mode.
#[derive(Debug)]
struct Restarting {
    store: RwLock<Option<FsStore>>,
    dir: tempfile::TempDir,
}

impl Restarting {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        Restarting { store: RwLock::new(Some(Self::open(&dir))), dir }
    }

    /// Spilling, so every read after a restart is served from stubs a replay left.
    fn open(dir: &tempfile::TempDir) -> FsStore {
        FsStore::open(spilled(dir.path())).expect("reopen")
    }

    fn read<R>(&self, f: impl FnOnce(&FsStore) -> R) -> R {
        f(self.store.read().expect("lock").as_ref().expect("open"))
    }
}

common::store_reads_through!(Restarting, {
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let mut slot = self.store.write().expect("lock");
        let applied = slot.as_ref().expect("open").apply(changes);
        // Close (the old store drops before the new one opens), then reopen.
        *slot = None;
        *slot = Some(Self::open(&self.dir));
        applied
    }
});

mod restarted {
    session_core::conformance_tests!(
        || Box::new(super::Restarting::new()) as Box<dyn session_core::Store>
    );
}

#[test]
fn every_check_is_named_once() {
    let mut names: Vec<&str> = CHECKS.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CHECKS.len());
}
