//! Runs session-core's storage conformance suite against `FsStore` in every sync mode, plus the
//! same suite across a restart (each store is dropped and reopened on the same data_dir).

use std::sync::Mutex;

use session_core::conformance::{run_all, CHECKS};
use session_core::Store;
use session_manager::{FsConfig, FsStore, SyncMode};

fn fs_store(sync: SyncMode) -> (tempfile::TempDir, Box<dyn Store>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FsStore::open(FsConfig::new(dir.path()).sync(sync)).expect("open");
    (dir, Box::new(store))
}

fn run(sync: SyncMode) {
    let dirs = Mutex::new(Vec::new());
    let failures = run_all(&|| {
        let (dir, store) = fs_store(sync);
        dirs.lock().expect("lock").push(dir);
        store
    });
    assert!(failures.is_empty(), "{sync:?}: conformance failures:\n{}", failures.join("\n"));
}

#[test]
fn fs_store_is_conformant_sync_always() {
    run(SyncMode::Always);
}

#[test]
fn fs_store_is_conformant_sync_group() {
    run(SyncMode::Group);
}

#[test]
fn fs_store_is_conformant_sync_never() {
    run(SyncMode::Never);
}

#[test]
fn tiny_cache_budget_is_conformant() {
    let dirs = Mutex::new(Vec::new());
    let failures = run_all(&|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cfg = FsConfig::new(dir.path()).sync(SyncMode::Never);
        cfg.cache_bytes = 1;
        cfg.max_cached_sessions = 1;
        let store = FsStore::open(cfg).expect("open");
        dirs.lock().expect("lock").push(dir);
        Box::new(store) as Box<dyn Store>
    });
    assert!(failures.is_empty(), "conformance failures:\n{}", failures.join("\n"));
}

#[test]
fn every_check_is_named_once() {
    let mut names: Vec<&str> = CHECKS.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CHECKS.len());
}
