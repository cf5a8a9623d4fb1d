//! `session-manager erase --metadata owner=u_1 --data-dir …` (issue 37): killed (SIGKILL) midway,
//! it leaves each session erased or untouched; the rerun finishes, and then no file of the
//! data_dir holds the erased sessions' text while the other tenant's sessions are intact.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use session_core::{catalog, Env, Limits, ManualClock, SeqIds};
use session_manager::fs::{FsConfig, FsStore, SyncMode};

const MARKER: &str = "my SSN is 123-45-6789";
const ERASED: usize = 1500;
const KEPT: usize = 20;

fn session_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "jsonl")))
        .count()
}

fn holds_marker(dir: &Path) -> Vec<String> {
    common::files_holding(dir, MARKER)
}

#[test]
fn an_erase_killed_midway_finishes_on_rerun() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Group)).expect("open");
        let (clock, ids) = (ManualClock::new(), SeqIds::new());
        let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
        let call = |id: &str, payload: serde_json::Value| {
            catalog::dispatch(&store, &env, id, payload).expect("in catalog").expect(id);
        };
        let message =
            json!({"role": "user", "content": [{"type": "text", "text": MARKER}], "timestamp": 1});
        for i in 0..ERASED + KEPT {
            let (sid, owner) = match i < ERASED {
                true => (format!("u1_{i}"), "u_1"),
                false => (format!("u2_{i}"), "u_2"),
            };
            call("session::ensure", json!({"session_id": sid, "metadata": {"owner": owner}}));
            let text = if owner == "u_1" {
                message.clone()
            } else {
                json!({"role": "user", "content": [{"type": "text", "text": "fine"}], "timestamp": 1})
            };
            call("session::append", json!({"session_id": sid, "message": text}));
        }
    }
    assert_eq!(session_files(dir.path()), ERASED + KEPT);
    let erase = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_session-manager"));
        command.args(["erase", "--metadata", "owner=u_1", "--data-dir"]).arg(dir.path());
        command
    };
    // Killed once it erased some but not all.
    let mut child = erase().spawn().expect("erase starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = session_files(dir.path());
        if left < ERASED + KEPT - 10 {
            break;
        }
        assert!(Instant::now() < deadline, "the erase made no progress in 60 s");
        assert!(child.try_wait().expect("wait").is_none(), "the erase ended before it was killed");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let midway = session_files(dir.path());
    assert!(midway > KEPT, "killed midway ({midway} files left), not after the end");
    let rerun = erase().output().expect("the rerun runs");
    let said = String::from_utf8_lossy(&rerun.stdout);
    assert!(rerun.status.success(), "{said} {}", String::from_utf8_lossy(&rerun.stderr));
    assert!(said.contains(&format!("erased {} sessions", midway - KEPT)), "{said}");
    assert_eq!(session_files(dir.path()), KEPT, "only the other tenant's sessions are left");
    assert_eq!(holds_marker(dir.path()), Vec::<String>::new());
    let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Group)).expect("reopen");
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let listed = catalog::dispatch(&store, &env, "session::list", json!({"limit": 500}))
        .expect("in catalog")
        .expect("list")
        .response;
    let listed = listed["sessions"].as_array().cloned().unwrap_or_default();
    assert_eq!(listed.len(), KEPT);
    assert!(listed.iter().all(|m| m["metadata"]["owner"] == "u_2"));
}
