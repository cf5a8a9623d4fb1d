//! The worker's own cost of reading a whole active path (issue 12), without the engine: one
//! session of N entries on an fs store, walked with `session::messages` at limit 500 through the
//! catalog, each reply serialized to JSON text as the SDK sends it. Cold (fresh store) and warm
//! walks per size, µs per entry, so how the cost grows with N shows apart from the engine's.
//!
//! `cargo bench -p session-store-fs --bench fs_walk`. `FS_WALK_SIZES` (default
//! `1000,10000,100000`) and `FS_WALK_TEXT_BYTES` (default 2300) change the sessions;
//! `FS_WALK_BUILD=live` builds each session in the same store with `session::append-many`
//! (batches of 500, as `session-reads` does through the engine) instead of writing its log and
//! opening it. The later walks wait until the store's background jobs (compaction, checkpoints)
//! are done, so they time the reads alone. The data lives in a temp dir under `/tmp`, removed at
//! the end.

// The bench tools' /proc readings, shared by path (the bench crate depends on the worker).
#[path = "../../../tools/bench/src/procfs.rs"]
#[allow(dead_code, unused_imports)]
mod procfs;

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use session_core::conformance::{message_entry, sample_meta};
use session_core::env::{ManualClock, SeqIds};
use session_core::jsonl::{self, enc};
use session_core::record::Record;
use session_core::{catalog, Env, Limits};
use session_store_fs::{FsConfig, FsStore, SyncMode};

/// `VmRSS / VmHWM` of this process, MB.
fn memory() -> String {
    let (rss, hwm) = procfs::memory_mb(None).unwrap_or((f64::NAN, f64::NAN));
    format!("{rss:.0} / {hwm:.0} MB")
}

fn loadavg() -> String {
    procfs::loadavg(" ")
}

/// One v1.0.32 session log of `entries` chained appends of `text_bytes` of text each.
fn write_log(dir: &Path, sid: &str, entries: usize, text_bytes: usize) -> u64 {
    let text: String = "lorem ipsum dolor sit amet, ".chars().cycle().take(text_bytes).collect();
    let mut out = jsonl::encode_record(&Record::Meta { meta: sample_meta(sid, 1) });
    let mut parent: Option<String> = None;
    for n in 0..entries {
        let id = format!("e{n}");
        let entry = message_entry(&id, parent.as_deref(), n as i64 + 2, &text);
        let mut meta = sample_meta(sid, 1);
        meta.message_count = n as u64 + 1;
        meta.updated_at = n as i64 + 2;
        out.extend_from_slice(&jsonl::encode_record(&Record::Append { entry, meta }));
        parent = Some(id);
    }
    std::fs::write(dir.join(format!("{}.jsonl", enc(sid))), &out).expect("write");
    out.len() as u64
}

/// Builds a session in `store` with `session::create` and `session::append-many` (batches
/// of 500 user messages of `text_bytes`), as a client does through the engine; returns its id.
/// `ids` is shared by every build, so sessions and entries of one store never share an id.
fn build_live(store: &FsStore, ids: &SeqIds, entries: usize, text_bytes: usize) -> String {
    let clock = ManualClock::new();
    let env = Env { clock: &clock, ids, limits: Limits::default() };
    let text: String = "lorem ipsum dolor sit amet, ".chars().cycle().take(text_bytes).collect();
    let call = |function_id: &str, payload: serde_json::Value| {
        let out = catalog::dispatch(store, &env, function_id, payload).expect("known op");
        out.expect(function_id).response
    };
    let created = call("session::create", json!({}));
    let sid = created["session_id"].as_str().expect("session_id").to_string();
    for from in (0..entries).step_by(500) {
        let batch: Vec<_> = (from..entries.min(from + 500))
            .map(|i| json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": i}))
            .collect();
        call("session::append-many", json!({"session_id": sid, "messages": batch}));
    }
    sid
}

/// Reads the whole active path at limit 500; returns (entries read, reply bytes).
fn walk(store: &FsStore, sid: &str) -> (usize, usize) {
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let (mut entries, mut bytes, mut cursor) = (0, 0, None::<String>);
    loop {
        let payload = json!({"session_id": sid, "limit": 500, "cursor": cursor});
        let out = catalog::dispatch(store, &env, "session::messages", payload)
            .expect("known op")
            .expect("messages");
        bytes += serde_json::to_vec(&out.response).expect("encode").len();
        entries += out.response["messages"].as_array().map_or(0, Vec::len);
        match out.response["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return (entries, bytes),
        }
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::var("FS_WALK_SIZES")
        .unwrap_or_else(|_| "1000,10000,100000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("FS_WALK_SIZES: numbers"))
        .collect();
    let text_bytes: usize =
        std::env::var("FS_WALK_TEXT_BYTES").ok().and_then(|s| s.parse().ok()).unwrap_or(2300);
    let live = std::env::var("FS_WALK_BUILD").is_ok_and(|b| b == "live");
    let ids = SeqIds::new();
    let dir = tempfile::Builder::new().prefix("fs-walk-").tempdir_in("/tmp").expect("tmp");
    for &n in &sizes {
        let mut sid = format!("walk{n}");
        let open = || FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("open");
        let (log, store) = match live {
            false => (write_log(dir.path(), &sid, n, text_bytes), open()),
            true => {
                let store = open();
                sid = build_live(&store, &ids, n, text_bytes);
                let log = std::fs::metadata(dir.path().join(format!("{}.jsonl", enc(&sid))));
                (log.map_or(0, |m| m.len()), store)
            }
        };
        let t = Instant::now();
        let (entries, bytes) = walk(&store, &sid);
        let cold = t.elapsed().as_secs_f64();
        assert_eq!(entries, n, "the walk read every entry");
        let t = Instant::now();
        store.wait_for_compactions();
        std::thread::sleep(std::time::Duration::from_millis(1500)); // a checkpoint's delay is 1 s
        store.wait_for_compactions();
        let settled = t.elapsed().as_secs_f64() - 1.5;
        let walks = std::env::var("FS_WALK_WALKS").ok().and_then(|w| w.parse().ok()).unwrap_or(3);
        let warm: Vec<f64> = (0..walks.max(3))
            .map(|_| {
                let t = Instant::now();
                walk(&store, &sid);
                t.elapsed().as_secs_f64()
            })
            .collect();
        let best = warm.iter().copied().fold(f64::MAX, f64::min);
        println!(
            "{n} entries{} ({} MB log, {} MB of replies): first walk {:.0} ms; background jobs done {:.0} ms later; then {:.0} / {:.0} / {:.0} ms = {:.1} µs per entry; RSS / HWM {}  [load {}]",
            if live { " built live" } else { "" },
            log >> 20,
            bytes >> 20,
            cold * 1e3,
            settled * 1e3,
            warm[0] * 1e3,
            warm[1] * 1e3,
            warm[2] * 1e3,
            best * 1e6 / n as f64,
            memory(),
            loadavg()
        );
    }
}
