//! Full-size fs store measurements (issue 3 acceptance), a plain bench binary: open + first list of
//! 10k sessions (~1 GB), newest `messages-tail` page of a 100k-entry session (cold and warm), and
//! the process's VmRSS / VmHWM after touching every one of the 10k sessions (measured in a child
//! process of this binary so generation and the other phases do not count).
//!
//! `cargo bench -p session-store-fs --bench fs_full`. The data is generated once into
//! `FS_FULL_DIR` (reused and kept when it already holds data) or else a temp dir under `/tmp`,
//! outside the repository, deleted at the end unless `FS_FULL_KEEP=1`. `FS_FULL_SESSIONS` / `FS_FULL_SESSION_KB` / `FS_FULL_TAIL_ENTRIES`
//! change the sizes (defaults 10 000, 100, 100 000).

// The bench tools' /proc readings, shared by path (the bench crate depends on the worker).
#[path = "../../../tools/bench/src/procfs.rs"]
#[allow(dead_code, unused_imports)]
mod procfs;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;
use session_core::conformance::{message_entry, sample_meta};
use session_core::env::{ManualClock, SeqIds};
use session_core::jsonl::{self, enc};
use session_core::record::Record;
use session_core::{catalog, Env, Limits, Store};
use session_store_fs::{FsConfig, FsStore, SyncMode};

const TEXT: &str =
    "The quick brown fox jumps over the lazy dog, streaming tokens into a durable log. ";

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn loadavg() -> String {
    procfs::loadavg(" ")
}

fn status_kb(key: &str) -> u64 {
    procfs::status_kb(None, key).unwrap_or(0)
}

/// One session log: a meta line and `records` chained `append` lines (v1.0.32 format).
fn session_log(sid: &str, records: usize) -> Vec<u8> {
    let mut out = jsonl::encode_record(&Record::Meta { meta: sample_meta(sid, 1) });
    let mut parent: Option<String> = None;
    for n in 0..records {
        let id = format!("e{n}");
        let entry = message_entry(&id, parent.as_deref(), n as i64 + 2, TEXT);
        let mut meta = sample_meta(sid, 1);
        meta.message_count = n as u64 + 1;
        meta.updated_at = n as i64 + 2;
        out.extend_from_slice(&jsonl::encode_record(&Record::Append { entry, meta }));
        parent = Some(id);
    }
    out
}

fn generate(dir: &Path, sessions: usize, session_kb: usize, tail_entries: usize) -> u64 {
    let per_record = session_log("x", 1).len() - session_log("x", 0).len();
    let records = (session_kb * 1024 / per_record).max(1);
    let started = Instant::now();
    let mut total = 0u64;
    for i in 0..sessions {
        let sid = format!("s{i:05}");
        let bytes = session_log(&sid, records);
        total += bytes.len() as u64;
        std::fs::write(dir.join(format!("{}.jsonl", enc(&sid))), &bytes).expect("write");
    }
    let big = session_log("big", tail_entries);
    total += big.len() as u64;
    std::fs::write(dir.join(format!("{}.jsonl", enc("big"))), &big).expect("write");
    eprintln!(
        "generated {sessions} sessions × {records} records + big ({tail_entries} entries, {} MB): \
         {} MB in {:.1} s",
        big.len() >> 20,
        total >> 20,
        started.elapsed().as_secs_f64()
    );
    total
}

fn open(dir: &Path) -> FsStore {
    FsStore::open(FsConfig::new(dir).sync(SyncMode::Never)).expect("open")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn open_and_list(dir: &Path, sessions: usize) {
    let _ = std::fs::remove_file(dir.join(session_store_fs::CATALOG_FILE));
    let t = Instant::now();
    let store = open(dir);
    let n = store.list_metas().expect("list").len();
    let cold = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(n, sessions + 1);
    drop(store); // saves the catalog
    println!("open + first list, {n} sessions, no catalog (tail scan of every file): {cold:.1} ms  [load {}]", loadavg());
    let runs: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let store = open(dir);
            assert_eq!(store.list_metas().expect("list").len(), n);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            std::mem::forget(store); // do not rewrite the catalog between runs
            ms
        })
        .collect();
    println!(
        "open + first list, {n} sessions, catalog present: median {:.1} ms of 5 (min {:.1}, max {:.1})  [load {}]",
        median(runs.clone()),
        runs.iter().copied().fold(f64::MAX, f64::min),
        runs.iter().copied().fold(0.0, f64::max),
        loadavg()
    );
}

fn tail_page(store: &FsStore) -> usize {
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let payload = json!({"session_id": "big", "limit": 50});
    let out = catalog::dispatch(store, &env, "session::messages-tail", payload)
        .expect("known op")
        .expect("tail");
    out.response["messages"].as_array().map_or(0, Vec::len)
}

fn tail(dir: &Path, entries: usize) {
    let cold: Vec<f64> = (0..3)
        .map(|_| {
            let store = open(dir);
            let t = Instant::now();
            assert!(tail_page(&store) > 0);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let store = open(dir);
    let got = tail_page(&store);
    let warm: Vec<f64> = (0..200)
        .map(|_| {
            let t = Instant::now();
            tail_page(&store);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    println!(
        "newest messages-tail page (50, got {got}) of a {entries}-entry session: warm median {:.3} ms (p95 {:.3}) of 200; cold (fresh store: load + replay + page, OS page cache warm) median {:.0} ms of 3  [load {}]",
        median(warm.clone()),
        { let mut w = warm; w.sort_by(|a, b| a.total_cmp(b)); w[w.len() * 95 / 100] },
        median(cold),
        loadavg()
    );
}

/// Child process: touch every session, report VmRSS / VmHWM.
fn rss(dir: &Path) {
    let base = (status_kb("VmRSS:"), status_kb("VmHWM:"));
    let store = open(dir);
    let metas = store.list_metas().expect("list");
    let t = Instant::now();
    for meta in &metas {
        if meta.session_id != "big" {
            let _ = store.list_entries(&meta.session_id).expect("touch");
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "touched {} sessions in {secs:.1} s, {} still cached: VmRSS {} MB, VmHWM {} MB (process start: RSS {} MB, HWM {} MB)  [load {}]",
        metas.len() - 1,
        store.cached_sessions(),
        status_kb("VmRSS:") / 1024,
        status_kb("VmHWM:") / 1024,
        base.0 / 1024,
        base.1 / 1024,
        loadavg()
    );
}

fn main() {
    if let Ok(dir) = std::env::var("FS_FULL_RSS_CHILD") {
        rss(Path::new(&dir));
        return;
    }
    let sessions = env_num("FS_FULL_SESSIONS", 10_000);
    let session_kb = env_num("FS_FULL_SESSION_KB", 100);
    let tail_entries = env_num("FS_FULL_TAIL_ENTRIES", 100_000);
    let (dir, owned): (PathBuf, Option<tempfile::TempDir>) = match std::env::var("FS_FULL_DIR") {
        Ok(d) => (PathBuf::from(d), None),
        Err(_) => {
            let t = tempfile::Builder::new().prefix("fs-full-").tempdir_in("/tmp").expect("tmp");
            (t.path().to_path_buf(), Some(t))
        }
    };
    std::fs::create_dir_all(&dir).expect("dir");
    let has_data = std::fs::read_dir(&dir).expect("dir").count() > 1;
    if !has_data {
        generate(&dir, sessions, session_kb, tail_entries);
    }
    println!("data_dir {} [load {}]", dir.display(), loadavg());
    open_and_list(&dir, sessions);
    tail(&dir, tail_entries);
    let out = std::process::Command::new(std::env::current_exe().expect("exe"))
        .env("FS_FULL_RSS_CHILD", &dir)
        .output()
        .expect("child");
    std::io::stdout().write_all(&out.stdout).expect("stdout");
    std::io::stderr().write_all(&out.stderr).expect("stderr");
    if std::env::var("FS_FULL_KEEP").is_ok_and(|v| v == "1") {
        if let Some(t) = owned {
            let _ = t.keep();
        }
        println!("kept {}", dir.display());
    } else if owned.is_none() {
        println!("FS_FULL_DIR {} kept (delete it yourself)", dir.display());
    }
}
