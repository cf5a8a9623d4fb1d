//! The fs store under a low open-file limit: every cached session holds its file open, so the
//! cache must stay below what the process may open (a systemd service gets a soft limit of 1024).
//! Its own test binary, because it lowers the limit of the whole process.

#![cfg(target_os = "linux")]

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use serde_json::json;
use session_core::{catalog, Env, Limits, ManualClock, SeqIds, Store};
use session_store_fs::{FsConfig, FsStore, SyncMode};

/// Soft limit for this test: far below the 1024 sessions the cache holds by default.
const SOFT_LIMIT: u64 = 128;

fn call(store: &dyn Store, env: &Env, op: &str, payload: serde_json::Value) {
    catalog::dispatch(store, env, op, payload)
        .expect("known op")
        .unwrap_or_else(|e| panic!("{op} failed: {}", e.message()));
}

/// Writing to three times as many sessions as the limit allows open files succeeds, and every
/// session reads back after a restart.
#[test]
fn many_sessions_under_a_low_open_file_limit() {
    let hard = getrlimit(Resource::Nofile).maximum;
    setrlimit(Resource::Nofile, Rlimit { current: Some(SOFT_LIMIT), maximum: hard })
        .expect("lower the soft open-file limit");
    let dir = tempfile::tempdir().expect("tempdir");
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let sessions = 3 * SOFT_LIMIT as usize;
    {
        let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("open");
        for i in 0..sessions {
            let sid = format!("s{i}");
            call(&store, &env, "session::ensure", json!({ "session_id": sid }));
            let message = json!({"role": "user", "content": [], "timestamp": i});
            call(&store, &env, "session::append", json!({ "session_id": sid, "message": message }));
        }
        let cached = store.cached_sessions();
        assert!(cached <= SOFT_LIMIT as usize / 2, "{cached} sessions (and files) held");
    }
    let store = FsStore::open(FsConfig::new(dir.path())).expect("reopen");
    for i in 0..sessions {
        let meta = store.get_meta(&format!("s{i}")).expect("read").expect("session exists");
        assert_eq!(meta.message_count, 1, "s{i}");
    }
}
