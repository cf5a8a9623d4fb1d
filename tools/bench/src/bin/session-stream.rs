//! session-stream: what streaming one assistant reply costs through a real engine, as N
//! `session::append-delta` calls (path A) against N growing `session::update-message` calls
//! (path B), same run: bytes the client sends, bytes the worker writes to its data_dir, bytes
//! delivered to one `session::changed` subscriber, and latency per call.
//!
//! The tool starts its own engine (`--iii`, config as in the README: worker manager on 127.0.0.1,
//! configuration worker with the fs adapter, observability off, `III_TELEMETRY_ENABLED=false`) and
//! its own release worker (`--worker`, `--fs-sync group` unless told otherwise) in a fresh
//! directory, so it knows the worker's pid and data_dir. Per round and path: `session::create`,
//! bind this tool's subscriber function to `session::changed` with `{session_id}`, append an empty
//! assistant message, then stream the reply chunk by chunk, one call at a time. Rounds alternate
//! which path goes first; the table shows medians over rounds (each round in parentheses).
//!
//! ```sh
//! cargo build --release -p session-manager -p session-bench --bins
//! target/release/session-stream --iii /path/to/iii [--rounds 3 --chunks 2000 --reply-bytes 16384]
//! ```

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use iii_sdk::protocol::TriggerRequest;
use iii_sdk::{Error, IIIClient, RegisterFunction};
use serde_json::{json, Value};
use session_bench::procfs;
use session_manager::functions::READY_PROBE;

#[derive(Debug, Parser)]
#[command(
    name = "session-stream",
    about = "Stream one reply as append-delta vs growing update-message calls through a real engine"
)]
struct Args {
    /// The iii engine binary.
    #[arg(long, env = "III_BIN", default_value = "iii")]
    iii: PathBuf,
    /// The session-manager binary (default: the one next to this tool).
    #[arg(long)]
    worker: Option<PathBuf>,
    /// The worker's `--fs-sync` (group | always | never).
    #[arg(long, default_value = "group")]
    fs_sync: String,
    /// Size of the streamed reply in bytes (ASCII).
    #[arg(long, default_value_t = 16384)]
    reply_bytes: usize,
    /// Number of calls the reply is streamed in.
    #[arg(long, default_value_t = 2000)]
    chunks: usize,
    /// Rounds (each streams the reply once per path); the table shows medians.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Per-call timeout (ms); a call without an answer is read back, then resent or not.
    #[arg(long, default_value_t = 2000)]
    call_timeout_ms: u64,
    /// Where the run's directory is made (engine and worker cwd, the worker's data_dir).
    #[arg(long, default_value_os_t = std::env::temp_dir())]
    base_dir: PathBuf,
    /// Keep the run's directory (logs, data_dir) instead of deleting it.
    #[arg(long)]
    keep: bool,
    /// Bind the subscriber with `coalesce_ms` (1..=10000): streaming deltas arrive merged, one
    /// delivery covering `first_seq..=seq` at most this often.
    #[arg(long)]
    coalesce_ms: Option<u64>,
}

/// The subscriber's `coalesce_ms` (set once from the arguments).
static COALESCE_MS: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();

const SUBSCRIBER: &str = "session-stream::subscriber";
const NOOP: &str = "session-stream::noop";

/// The engine and worker this run started; both killed on drop.
struct Procs {
    dir: PathBuf,
    engine: Child,
    worker: Child,
    url: String,
    keep: bool,
}

impl Drop for Procs {
    fn drop(&mut self) {
        for child in [&mut self.worker, &mut self.engine] {
            let _ = child.kill();
            let _ = child.wait();
        }
        if self.keep {
            eprintln!("session-stream: kept {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Procs {
    fn data_dir(&self) -> PathBuf {
        self.dir.join("worker/data/session-manager")
    }
    fn worker_log(&self) -> PathBuf {
        self.dir.join("worker/worker.log")
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn log_file(path: &Path) -> (std::fs::File, std::fs::File) {
    let f = std::fs::File::create(path).expect("log file");
    (f.try_clone().expect("log"), f)
}

/// Engine (waits for "Engine listening") and worker, in a fresh directory.
fn start(args: &Args) -> Procs {
    let dir = args.base_dir.join(format!("session-stream-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["engine", "worker"] {
        std::fs::create_dir_all(dir.join(sub)).expect("run dir");
    }
    let port = free_port();
    let config = format!(
        "workers:\n  - name: iii-worker-manager\n    config: {{ host: 127.0.0.1, port: {port} }}\n  - name: configuration\n    config: {{ adapter: {{ name: fs, config: {{ directory: ./config }} }} }}\n  - name: iii-observability\n    config: {{ enabled: false }}\n"
    );
    std::fs::write(dir.join("engine/config.yaml"), config).expect("engine config");
    let (out, err) = log_file(&dir.join("engine/engine.log"));
    let mut engine = Command::new(&args.iii)
        .args(["--config", "config.yaml", "--no-update-check"])
        .current_dir(dir.join("engine"))
        .env("III_TELEMETRY_ENABLED", "false")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", args.iii.display()));
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let log = std::fs::read_to_string(dir.join("engine/engine.log")).unwrap_or_default();
        if log.contains("Engine listening on address") {
            break;
        }
        if Instant::now() > deadline || engine.try_wait().ok().flatten().is_some() {
            let _ = engine.kill();
            panic!("the engine did not start; see {}/engine/engine.log", dir.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let url = format!("ws://127.0.0.1:{port}");
    let worker_bin = args.worker.clone().unwrap_or_else(|| {
        std::env::current_exe().expect("current exe").with_file_name("session-manager")
    });
    let (out, err) = log_file(&dir.join("worker/worker.log"));
    let worker = Command::new(&worker_bin)
        .args(["--url", &url, "--fs-sync", &args.fs_sync])
        .current_dir(dir.join("worker"))
        .env_remove("III_COMPOSE_DIR")
        .env_remove("III_WORKER_NAME")
        .env_remove("III_NAMESPACE")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", worker_bin.display()));
    Procs { dir, engine, worker, url, keep: args.keep }
}

/// A connection with the worker's telemetry setting.
fn connect(url: &str, name: &str) -> IIIClient {
    session_manager::telemetry::client_connection(url, name)
}

/// One call, bounded twice: the engine's `timeout_ms` and a local timer a second later.
async fn call(
    iii: &IIIClient,
    function_id: &str,
    payload: Value,
    ms: u64,
) -> Result<Value, String> {
    let request = TriggerRequest {
        function_id: function_id.into(),
        payload,
        action: None,
        timeout_ms: Some(ms),
    };
    match tokio::time::timeout(Duration::from_millis(ms + 1000), iii.trigger(request)).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no answer (local timeout)".into()),
    }
}

/// A call that must succeed: retried a few times (setup and read-back calls are idempotent).
async fn must(iii: &IIIClient, function_id: &str, payload: Value) -> Value {
    let mut last = String::new();
    for _ in 0..3 {
        match call(iii, function_id, payload.clone(), 5000).await {
            Ok(v) => return v,
            Err(e) => last = e,
        }
    }
    panic!("{function_id} failed 3 times: {last}");
}

/// What the subscriber received for the current session.
#[derive(Debug, Default)]
struct Inbox {
    session_id: String,
    count: usize,
    bytes: u64,
    /// `bytes` less the `_caller_worker_id` field the engine adds to every invocation.
    bytes_without_engine_field: u64,
    /// Bytes of the change's own `payload` field.
    payload_bytes: u64,
    /// (first seq, seq, type, delta text) of every delivery (first = seq unless coalesced).
    changes: Vec<(u64, u64, String, Option<String>)>,
    /// Seqs the deliveries cover (a coalesced one covers `first_seq..=seq`).
    covered: usize,
    /// The delivery with the highest seq (a full message for path B).
    last: Option<(u64, Value)>,
    /// The first delivery of the stream, whole, as the subscriber got it.
    first: Option<Value>,
    other_sessions: usize,
}

type Shared = Arc<Mutex<Inbox>>;

fn lock(inbox: &Shared) -> std::sync::MutexGuard<'_, Inbox> {
    inbox.lock().unwrap_or_else(|p| p.into_inner())
}

/// The reply: ASCII words, exactly `len` bytes, the same every run.
fn reply(len: usize) -> String {
    const WORDS: [&str; 16] = [
        "the", "session", "stream", "delta", "engine", "worker", "reply", "token", "of", "and",
        "a", "message", "text", "block", "is", "written",
    ];
    let (mut out, mut x) = (String::with_capacity(len + 16), 0x2545_f491_u64);
    while out.len() < len {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        out.push_str(WORDS[(x >> 60) as usize]);
        out.push(if (x >> 20) % 11 == 0 { '\n' } else { ' ' });
    }
    out.truncate(len);
    out
}

/// The chunk boundaries: chunk i is `text[i*len/n .. (i+1)*len/n]`.
fn chunks(text: &str, n: usize) -> Vec<&str> {
    let len = text.len();
    (0..n).map(|i| &text[i * len / n..(i + 1) * len / n]).collect()
}

fn stat(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.len(), m.ino()))
}

/// Bytes of all regular files under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// `wchar` of `/proc/<pid>/io`: bytes the process passed to write(2)-family calls on files and
/// pipes (sockets write through send(2) and do not count).
fn wchar(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    io.lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// utime + stime of `pid` in seconds (0 when unreadable).
fn cpu_seconds(pid: u32) -> f64 {
    procfs::cpu_seconds(pid).unwrap_or(0.0)
}

fn loadavg() -> String {
    procfs::loadavg(" / ")
}

/// Path A (`Delta`) or B (`Update`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Delta,
    Update,
}

/// The two ways of streaming: A sends each chunk, B the whole text so far.
impl Mode {
    fn function(self) -> &'static str {
        match self {
            Mode::Delta => "session::append-delta",
            Mode::Update => "session::update-message",
        }
    }
    fn name(self) -> &'static str {
        match self {
            Mode::Delta => "A append-delta",
            Mode::Update => "B update-message",
        }
    }
    fn change_type(self) -> &'static str {
        match self {
            Mode::Delta => "session::message-delta",
            Mode::Update => "session::message-updated",
        }
    }
}

/// One path's figures in one round.
#[derive(Debug, Default, Clone)]
struct Figures {
    sent: u64,
    delivered: usize,
    delivered_bytes: u64,
    delivered_bytes_no_engine: u64,
    delivered_payload_bytes: u64,
    /// Bytes appended to the session's log over the stream, as if it had never been compacted:
    /// growth measured around each call, interpolated for the calls a compaction overlapped.
    log_appended: f64,
    /// Calls whose log growth was measured exactly (no compaction rename around them).
    log_measured: usize,
    /// Renames of the log seen (background compactions that finished).
    compactions: usize,
    log_final: u64,
    /// The session's live size: its log's state as a snapshot without the feed (what
    /// `export --snapshot` of it would hold, less the feed's lines).
    live: u64,
    /// The data_dir's journal file after the stream (`fsync: group`; one per data_dir, bounded).
    journal: u64,
    /// The worker's file writes over the stream (log appends, compaction rewrites, anything else),
    /// its own log output excluded.
    worker_wrote: u64,
    dir_growth: i64,
    lat: Vec<u64>,
    worker_cpu_us: f64,
    engine_cpu_us: f64,
    /// Calls without an answer, read back and resent (or found applied).
    lost: usize,
    read_back_ok: bool,
    subscriber_ok: bool,
    problems: Vec<String>,
    /// The stream's first delivery.
    sample: Option<Value>,
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize] as f64 / 1000.0
}

/// Revision of the reply entry, read back after a call went unanswered.
async fn revision(iii: &IIIClient, sid: &str, entry: &str) -> u64 {
    let got =
        must(iii, "session::get-message", json!({"session_id": sid, "entry_id": entry})).await;
    got["entry"]["revision"].as_u64().unwrap_or(0)
}

/// `{session_id}`, plus `coalesce_ms` when asked for.
fn binding_config(sid: &str) -> Value {
    match COALESCE_MS.get().copied().flatten() {
        Some(ms) => json!({"session_id": sid, "coalesce_ms": ms}),
        None => json!({"session_id": sid}),
    }
}

/// Binds the subscriber to `sid` and waits until a probe change arrives through it.
async fn bind(iii: &IIIClient, inbox: &Shared, sid: &str) -> String {
    *lock(inbox) = Inbox { session_id: sid.to_string(), ..Inbox::default() };
    let reply = must(
        iii,
        "engine::register_trigger",
        json!({"trigger_type": "session::changed", "function_id": SUBSCRIBER,
               "config": binding_config(sid)}),
    )
    .await;
    let id = reply["id"].as_str().expect("trigger id").to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    for i in 0.. {
        let title = format!("stream probe {i}");
        must(iii, "session::set-meta", json!({"session_id": sid, "title": title})).await;
        let wait = Instant::now() + Duration::from_millis(500);
        while Instant::now() < wait {
            if lock(inbox).count > 0 {
                return id;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(Instant::now() < deadline, "the session::changed binding never delivered");
    }
    unreachable!()
}

async fn stream(
    iii: &IIIClient,
    inbox: &Shared,
    procs: &Procs,
    (n, timeout_ms): (usize, u64),
    path: Mode,
    text: &str,
) -> Figures {
    let created = must(iii, "session::create", json!({"title": "stream"})).await;
    let sid = created["session_id"].as_str().expect("session_id").to_string();
    let binding = bind(iii, inbox, &sid).await;
    let message = json!({"role": "assistant", "content": [{"type": "text", "text": ""}],
        "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 0});
    // The worker picks the entry id, as for a real client's reply (its length is in every call).
    let appended =
        must(iii, "session::append", json!({"session_id": sid, "message": message})).await;
    let entry = appended["entry_id"].as_str().expect("entry_id").to_string();
    // The append's delivery, then a clean slate.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !lock(inbox).changes.iter().any(|c| c.2 == "session::message-added") {
        assert!(Instant::now() < deadline, "the append's change never arrived");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    {
        let mut inbox = lock(inbox);
        let session_id = std::mem::take(&mut inbox.session_id);
        *inbox = Inbox { session_id, ..Inbox::default() };
    }
    let log = procs.data_dir().join(format!("{}.jsonl", session_core::jsonl::enc(&sid)));
    let pids = (procs.worker.id(), procs.engine.id());
    let (wrote0, log0, dir0) =
        (wchar(pids.0), stat(&procs.worker_log()), dir_bytes(&procs.data_dir()));
    let (wcpu0, ecpu0) = (cpu_seconds(pids.0), cpu_seconds(pids.1));
    let parts = chunks(text, n);
    let mut f = Figures { lat: Vec::with_capacity(parts.len()), ..Default::default() };
    let mut growth: Vec<Option<u64>> = Vec::with_capacity(parts.len());
    let mut inode = stat(&log).map(|s| s.1);
    let mut so_far = String::with_capacity(text.len());
    for (i, part) in parts.iter().enumerate() {
        so_far.push_str(part);
        let payload = match path {
            Mode::Delta => json!({"session_id": sid, "entry_id": entry, "text": part}),
            Mode::Update => json!({"session_id": sid, "entry_id": entry,
                "content": [{"type": "text", "text": so_far}]}),
        };
        let size = serde_json::to_vec(&payload).map(|v| v.len() as u64).unwrap_or(0);
        let before = stat(&log);
        let mut attempt = 0;
        loop {
            f.sent += size;
            let start = Instant::now();
            match call(iii, path.function(), payload.clone(), timeout_ms).await {
                Ok(_) if attempt == 0 => {
                    f.lat.push(start.elapsed().as_micros() as u64);
                    break;
                }
                Ok(_) => break,
                Err(e) => {
                    f.lost += 1;
                    attempt += 1;
                    let rev = revision(iii, &sid, &entry).await;
                    eprintln!(
                        "session-stream: {} call {i}: {e}; revision read back {rev} (before {i})",
                        path.function()
                    );
                    if rev == i as u64 + 1 {
                        break; // it was applied; only the answer was lost
                    }
                    assert_eq!(rev, i as u64, "unexpected revision after a lost call");
                    assert!(attempt < 5, "call {i} lost 5 times");
                }
            }
        }
        let after = stat(&log);
        for s in [before, after].iter().flatten() {
            if inode != Some(s.1) {
                f.compactions += usize::from(inode.is_some());
                inode = Some(s.1);
            }
        }
        growth.push(match (before, after) {
            (Some(b), Some(a)) if a.1 == b.1 && a.0 >= b.0 && attempt == 0 => Some(a.0 - b.0),
            _ => None,
        });
    }
    f.lat.sort_unstable();
    // All deliveries (bounded), then a moment for late compactions and anything extra.
    let deadline = Instant::now() + Duration::from_secs(10);
    while lock(inbox).covered < parts.len() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let worker_log_growth =
        stat(&procs.worker_log()).map_or(0, |s| s.0).saturating_sub(log0.map_or(0, |s| s.0));
    f.worker_wrote = wchar(pids.0).saturating_sub(wrote0).saturating_sub(worker_log_growth);
    f.dir_growth = dir_bytes(&procs.data_dir()) as i64 - dir0 as i64;
    f.worker_cpu_us = (cpu_seconds(pids.0) - wcpu0) * 1e6 / parts.len() as f64;
    f.engine_cpu_us = (cpu_seconds(pids.1) - ecpu0) * 1e6 / parts.len() as f64;
    if let Some((len, ino)) = stat(&log) {
        if inode != Some(ino) {
            f.compactions += 1;
        }
        f.log_final = len;
    }
    if let Ok(bytes) = std::fs::read(&log) {
        let (mut state, _) = session_core::jsonl::replay(&bytes);
        state.feed = Default::default();
        f.live = session_core::jsonl::encode_snapshot(&state).len() as u64;
    }
    f.journal = stat(&procs.data_dir().join(".session-journal")).map_or(0, |s| s.0);
    f.log_measured = growth.iter().flatten().count();
    f.log_appended = interpolate(&growth);
    must(iii, "engine::unregister_trigger", json!({"id": binding})).await;

    // Checks: the message reads back as the whole reply; the subscriber saw every change in order.
    let got =
        must(iii, "session::get-message", json!({"session_id": sid, "entry_id": entry})).await;
    let content = &got["entry"]["message"]["content"];
    f.read_back_ok = content.as_array().map(Vec::len) == Some(1)
        && content[0]["type"] == "text"
        && content[0]["text"].as_str() == Some(text);
    if !f.read_back_ok {
        let len = content[0]["text"].as_str().map(str::len);
        f.problems.push(format!(
            "read back: {} block(s), text of {len:?} bytes",
            content.as_array().map_or(0, Vec::len)
        ));
    }
    let mut inbox = lock(inbox);
    f.delivered = inbox.count;
    f.delivered_bytes = inbox.bytes;
    f.delivered_bytes_no_engine = inbox.bytes_without_engine_field;
    f.delivered_payload_bytes = inbox.payload_bytes;
    f.sample = inbox.first.take();
    inbox.changes.sort_by_key(|c| c.0);
    let changes = std::mem::take(&mut inbox.changes);
    // Contiguous: each delivery starts right after the one before it ends.
    let in_order = changes.windows(2).all(|w| w[1].0 == w[0].1 + 1);
    let covered: u64 = changes.iter().map(|c| c.1 + 1 - c.0).sum();
    let typed = changes.iter().all(|c| c.2 == path.change_type());
    let rebuilt = match path {
        Mode::Delta => changes.iter().filter_map(|c| c.3.as_deref()).collect::<String>(),
        Mode::Update => inbox
            .last
            .as_ref()
            .and_then(|l| l.1["payload"]["message"]["content"][0]["text"].as_str())
            .unwrap_or_default()
            .to_string(),
    };
    f.subscriber_ok = covered == parts.len() as u64 && in_order && typed && rebuilt == text;
    if !f.subscriber_ok {
        f.problems.push(format!(
            "subscriber: {} change(s), seqs contiguous {in_order}, all {} {typed}, rebuilt text {} bytes",
            changes.len(),
            path.change_type(),
            rebuilt.len()
        ));
    }
    if inbox.other_sessions > 0 {
        f.problems.push(format!("{} deliveries of other sessions", inbox.other_sessions));
    }
    f
}

/// Sum of per-call growth, a missing call taking the mean of its nearest measured neighbours.
fn interpolate(growth: &[Option<u64>]) -> f64 {
    let known: Vec<(usize, u64)> =
        growth.iter().enumerate().filter_map(|(i, g)| g.map(|g| (i, g))).collect();
    if known.is_empty() {
        return f64::NAN;
    }
    growth
        .iter()
        .enumerate()
        .map(|(i, g)| match g {
            Some(g) => *g as f64,
            None => {
                let next = known.partition_point(|k| k.0 < i);
                let prev = next.checked_sub(1).map(|p| known[p]);
                match (prev, known.get(next)) {
                    (Some((pi, pg)), Some(&(ni, ng))) => {
                        let t = (i - pi) as f64 / (ni - pi) as f64;
                        pg as f64 + t * (ng as f64 - pg as f64)
                    }
                    (Some((_, g)), None) | (None, Some(&(_, g))) => g as f64,
                    (None, None) => f64::NAN,
                }
            }
        })
        .sum()
}

/// Sorted latencies (µs) of `n` no-op calls carrying a delta-sized payload (a failed call is
/// reported and left out).
async fn noop_floor(iii: &IIIClient, n: usize, ms: u64) -> Vec<u64> {
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        let payload = json!({"session_id": "s_00000000000000000000000000000000",
            "entry_id": "e_00000000000000000000000000000000", "text": format!("{:08}", i)});
        let start = Instant::now();
        match call(iii, NOOP, payload, ms).await {
            Ok(_) => lat.push(start.elapsed().as_micros() as u64),
            Err(e) => eprintln!("session-stream: no-op call {i}: {e}"),
        }
    }
    lat.sort_unstable();
    lat
}

/// No-op calls that failed: the calls made less the latencies recorded.
fn noop_failed(calls: usize, lat: &[u64]) -> usize {
    calls - lat.len()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

fn fmt(x: f64, decimals: usize) -> String {
    if decimals > 0 {
        return format!("{x:.decimals$}");
    }
    // Thin groups of three digits, as the rest of BENCHMARKS.md.
    let s = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    if x < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// One table row: medians of A and B over rounds, median B/A ratio (each round's in parentheses).
fn row(name: &str, rounds: &[(Figures, Figures)], decimals: usize, f: impl Fn(&Figures) -> f64) {
    let a = median(rounds.iter().map(|r| f(&r.0)).collect());
    let b = median(rounds.iter().map(|r| f(&r.1)).collect());
    let ratios: Vec<f64> = rounds.iter().map(|r| f(&r.1) / f(&r.0)).collect();
    let each: Vec<String> = ratios.iter().map(|x| format!("{x:.1}")).collect();
    let ratio = if ratios.iter().all(|x| x.is_finite()) {
        format!("{:.1}× ({})", median(ratios), each.join(", "))
    } else {
        "–".to_string() // A was 0 in some round
    };
    println!("| {name} | {} | {} | {ratio} |", fmt(a, decimals), fmt(b, decimals));
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    COALESCE_MS.set(args.coalesce_ms).expect("set once");
    let command: Vec<String> = std::env::args().collect();
    let load_before = loadavg();
    let procs = start(&args);
    let iii = connect(&procs.url, "session-stream");
    let inbox: Shared = Arc::default();
    let sink = inbox.clone();
    iii.register_function(
        SUBSCRIBER,
        RegisterFunction::new_async(move |delivery: Value| {
            let inbox = sink.clone();
            async move {
                let len = |v: &Value| serde_json::to_vec(v).map_or(0, |v| v.len() as u64);
                let bytes = len(&delivery);
                // `"_caller_worker_id":"…",` — the key, its value and one comma.
                let engine_field = delivery.get("_caller_worker_id").map_or(0, |v| 21 + len(v) + 1);
                let payload_bytes = len(&delivery["payload"]);
                let mut inbox = lock(&inbox);
                if delivery["session_id"].as_str() != Some(inbox.session_id.as_str()) {
                    inbox.other_sessions += 1;
                } else {
                    inbox.count += 1;
                    inbox.bytes += bytes;
                    inbox.bytes_without_engine_field += bytes - engine_field;
                    inbox.payload_bytes += payload_bytes;
                    let seq = delivery["seq"].as_u64().unwrap_or(0);
                    let first = delivery["first_seq"].as_u64().unwrap_or(seq);
                    let kind = delivery["type"].as_str().unwrap_or_default().to_string();
                    let text = delivery["payload"]["text"].as_str().map(str::to_string);
                    inbox.covered += (seq + 1).saturating_sub(first) as usize;
                    inbox.changes.push((first, seq, kind, text));
                    if inbox.first.is_none() {
                        inbox.first = Some(delivery.clone());
                    }
                    if inbox.last.as_ref().is_none_or(|l| l.0 < seq) {
                        inbox.last = Some((seq, delivery));
                    }
                }
                Ok::<Value, Error>(json!({}))
            }
        }),
    );
    iii.register_function(
        NOOP,
        RegisterFunction::new_async(|_: Value| async { Ok::<Value, Error>(json!({})) }),
    );
    iii.wait_until_registered(Duration::from_secs(10)).await.expect("engine registration");
    // Nagle off on this tool's own sockets too, as the worker does (`nodelay.rs`): otherwise the
    // subscriber's small answers could hold the next request for the engine's delayed ACK.
    session_manager::nodelay::spawn_keeper();
    let deadline = Instant::now() + Duration::from_secs(30);
    while call(&iii, READY_PROBE, json!({}), 1000).await.is_err()
        || call(&iii, NOOP, json!({}), 1000).await.is_err()
    {
        assert!(
            Instant::now() < deadline,
            "worker or no-op never became callable; see {}",
            procs.worker_log().display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let text = reply(args.reply_bytes);
    let mut noop_lost = 0;
    // Warm-up: a short stream per path (not counted).
    {
        let small = &text[..text.len().min(2000)];
        for path in [Mode::Delta, Mode::Update] {
            let _ = stream(&iii, &inbox, &procs, (200, args.call_timeout_ms), path, small).await;
        }
        let lat = noop_floor(&iii, 300, args.call_timeout_ms).await;
        noop_lost += noop_failed(300, &lat);
    }
    let mut rounds = Vec::new();
    let mut floors = Vec::new();
    for r in 0..args.rounds.max(1) {
        let started = Instant::now();
        let order =
            if r % 2 == 0 { [Mode::Delta, Mode::Update] } else { [Mode::Update, Mode::Delta] };
        let mut got = [Figures::default(), Figures::default()];
        for path in order {
            let f = stream(&iii, &inbox, &procs, (args.chunks, args.call_timeout_ms), path, &text)
                .await;
            got[usize::from(path == Mode::Update)] = f;
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let lat = noop_floor(&iii, args.chunks, args.call_timeout_ms).await;
        noop_lost += noop_failed(args.chunks, &lat);
        floors.push(pct(&lat, 0.5));
        let [a, b] = got;
        eprintln!(
            "session-stream: round {}/{} ({} first) in {:.1} s",
            r + 1,
            args.rounds.max(1),
            order[0].name(),
            started.elapsed().as_secs_f64()
        );
        rounds.push((a, b));
    }
    let load_after = loadavg();

    println!("command: {}", command.join(" "));
    println!(
        "reply {} B in {} chunks (~{:.1} B each), worker --fs-sync {}, rounds {}; load average {} → {}\n",
        args.reply_bytes,
        args.chunks,
        args.reply_bytes as f64 / args.chunks as f64,
        args.fs_sync,
        rounds.len(),
        load_before,
        load_after
    );
    println!(
        "| per stream of {} calls | A: append-delta | B: update-message | B/A (each round) |",
        args.chunks
    );
    println!("|---|---|---|---|");
    row("bytes the client sends (request payloads)", &rounds, 0, |f| f.sent as f64);
    row("bytes delivered to the `session::changed` subscriber", &rounds, 0, |f| {
        f.delivered_bytes as f64
    });
    row("same, without the engine's `_caller_worker_id` field", &rounds, 0, |f| {
        f.delivered_bytes_no_engine as f64
    });
    row("same, the change's `payload` field alone", &rounds, 0, |f| {
        f.delivered_payload_bytes as f64
    });
    row("deliveries received", &rounds, 0, |f| f.delivered as f64);
    row("log bytes appended (as if never compacted)", &rounds, 0, |f| f.log_appended);
    row("worker's file writes (log + compaction rewrites)", &rounds, 0, |f| f.worker_wrote as f64);
    row("log file after the stream", &rounds, 0, |f| f.log_final as f64);
    row("the session's live size (its snapshot without the feed)", &rounds, 0, |f| f.live as f64);
    row("log file after the stream / live size", &rounds, 2, |f| {
        f.log_final as f64 / f.live.max(1) as f64
    });
    row("the data_dir's journal file (apart: one per data_dir)", &rounds, 0, |f| f.journal as f64);
    row("data_dir growth", &rounds, 0, |f| f.dir_growth as f64);
    row("background compactions seen (log renamed)", &rounds, 0, |f| f.compactions as f64);
    row("p50 per call (ms)", &rounds, 3, |f| pct(&f.lat, 0.5));
    row("p95 per call (ms)", &rounds, 3, |f| pct(&f.lat, 0.95));
    row("worker CPU per call (µs)", &rounds, 0, |f| f.worker_cpu_us);
    row("engine CPU per call (µs)", &rounds, 0, |f| f.engine_cpu_us);
    let per_call: Vec<String> =
        rounds.iter().map(|(a, _)| format!("{:.1}", a.log_appended / args.chunks as f64)).collect();
    println!(
        "\nno-op floor p50, delta-sized payload, same rounds: {:.3} ms; log bytes per append-delta: {} (each round)",
        median(floors.clone()),
        per_call.join(", ")
    );
    if let Some(sample) = rounds.first().and_then(|r| r.0.sample.as_ref()) {
        println!("one A delivery, as the subscriber got it: {sample}");
    }
    let per = |f: fn(&Figures) -> u64| {
        let (a, b): (Vec<f64>, Vec<f64>) =
            rounds.iter().map(|r| (f(&r.0) as f64, f(&r.1) as f64)).unzip();
        let n = args.chunks as f64;
        format!("A {:.1} / B {:.0}", median(a) / n, median(b) / n)
    };
    println!("bytes per call: sent {}, delivered {}", per(|f| f.sent), per(|f| f.delivered_bytes));
    let measured: Vec<String> =
        rounds.iter().map(|(a, b)| format!("{}/{}", a.log_measured, b.log_measured)).collect();
    println!(
        "log growth measured exactly for A/B calls: {} of {} (rest interpolated)",
        measured.join(", "),
        args.chunks
    );
    let lost: usize = rounds.iter().map(|(a, b)| a.lost + b.lost).sum();
    let mut ok = true;
    for (i, (a, b)) in rounds.iter().enumerate() {
        for (name, f) in [("A", a), ("B", b)] {
            ok &= f.read_back_ok && f.subscriber_ok;
            for p in &f.problems {
                println!("round {} {name}: {p}", i + 1);
            }
        }
    }
    println!(
        "checks: message read back == the {} B reply and subscriber rebuilt it from contiguous seqs, both paths, every round: {}; streaming calls without an answer: {lost}; no-op calls without an answer \
         (warm-up included): {noop_lost}",
        args.reply_bytes,
        if ok { "ok" } else { "FAILED" }
    );
    iii.shutdown_async().await;
    drop(procs);
    if !ok {
        std::process::exit(1);
    }
}
