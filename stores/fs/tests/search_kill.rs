//! `kill -9` while the search index is being fed (issue 39, acceptance 5): a child process
//! appends and deletes with the indexer thread running and reports every acknowledged call; it
//! is killed mid-stream. After a restart every acknowledged entry is found, before the index
//! caught up (scanned as unindexed) and after, and no deleted session is.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;

use serde_json::{json, Value};
use session_core::{catalog, Env, Limits, ManualClock, SeqIds};
use session_store_fs::{FsConfig, FsStore};

const CHILD: &str = "SEARCH_KILL_CHILD_DIR";
const ACKS: usize = 4000;

fn dispatch(store: &FsStore, env: &Env<'_>, id: &str, payload: Value) -> Value {
    catalog::dispatch(store, env, id, payload).expect("in catalog").expect(id).response
}

/// The child: writes until it is killed, one line per acknowledged call.
fn child(dir: &str) {
    let store = Arc::new(FsStore::open(FsConfig::new(dir)).expect("open"));
    store.start_search_indexer();
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    for i in 0.. {
        let sid = format!("s{}", i % 40);
        if i < 40 {
            dispatch(&store, &env, "session::ensure", json!({"session_id": sid}));
        }
        let message = json!({"role": "user", "timestamp": 1,
            "content": [{"type": "text", "text": format!("note killword{i}x here")}]});
        dispatch(&store, &env, "session::append", json!({"session_id": sid, "message": message}));
        println!("ack {sid} killword{i}x");
        if i % 25 == 0 {
            let gone = format!("d{i}");
            dispatch(&store, &env, "session::ensure", json!({"session_id": gone}));
            let message = json!({"role": "user", "timestamp": 1,
                "content": [{"type": "text", "text": format!("gone deadword{i}x")}]});
            dispatch(
                &store,
                &env,
                "session::append",
                json!({"session_id": gone, "message": message}),
            );
            dispatch(&store, &env, "session::delete", json!({"session_id": gone}));
            println!("deleted {gone} deadword{i}x");
        }
    }
}

/// Every `(session, word)` the hits of `prefix*` hold, all pages read (the words are found in
/// the snippets).
fn found(store: &FsStore, env: &Env<'_>, prefix: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let query = json!({"query": format!("{prefix}*"), "limit": 500, "cursor": cursor});
        let answer = dispatch(store, env, "session::search", query);
        for hit in answer["hits"].as_array().expect("hits") {
            let sid = hit["session_id"].as_str().unwrap_or("?").to_string();
            let snippet = hit["snippet"].as_str().unwrap_or("");
            for word in snippet.split(' ').filter(|w| w.starts_with(prefix)) {
                out.push((sid.clone(), word.to_string()));
            }
        }
        cursor = answer["next_cursor"].clone();
        if cursor.is_null() {
            out.sort();
            return out;
        }
    }
}

#[test]
fn every_acknowledged_entry_is_found_after_a_kill_during_indexing() {
    if let Ok(dir) = std::env::var(CHILD) {
        child(&dir);
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("test binary");
    let mut child = Command::new(exe)
        .args(["--exact", "every_acknowledged_entry_is_found_after_a_kill_during_indexing"])
        .args(["--nocapture", "--test-threads", "1"])
        .env(CHILD, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the child");
    let mut acked = Vec::new();
    let mut deleted = 0;
    let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    for line in lines {
        let line = line.expect("line");
        let parts: Vec<&str> = line.split(' ').collect();
        match parts.as_slice() {
            ["ack", sid, word] => acked.push((sid.to_string(), word.to_string())),
            ["deleted", _, _] => deleted += 1,
            _ => continue,
        }
        if acked.len() >= ACKS {
            break;
        }
    }
    child.kill().expect("kill -9"); // SIGKILL on unix
    child.wait().expect("reap");
    assert!(acked.len() >= ACKS && deleted > 0, "the child stopped after {} acks", acked.len());

    let store = FsStore::open(FsConfig::new(dir.path())).expect("reopen");
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    acked.sort();
    // The child may have written more than this test read before the kill: those may be found.
    let check = |when: &str| {
        let live = found(&store, &env, "killword");
        let missing: Vec<_> = acked.iter().filter(|a| live.binary_search(a).is_err()).collect();
        assert!(
            missing.is_empty(),
            "{} acknowledged entries not found {when}: {:?}…",
            missing.len(),
            &missing[..missing.len().min(5)]
        );
        let dead = found(&store, &env, "deadword");
        assert!(dead.is_empty(), "deleted sessions found {when}: {:?}", &dead[..dead.len().min(5)]);
    };
    let progress = store.search_progress().expect("an index");
    assert!(progress.stale > 0, "the kill left nothing stale: {progress:?}");
    check("before the index caught up");
    store.index_pending().expect("index");
    check("after the index caught up");
}
