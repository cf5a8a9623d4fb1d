//! session-reads: what the READ calls of a running session-manager cost through the engine as a
//! session grows (entries) and as the worker holds more sessions (list), each call next to a no-op
//! this tool registers whose reply has the same size (the no-op answers `{"b": "xx…"}` of the
//! byte count its payload asks for), measured sample by sample in the same run.
//!
//! Phase 1, per `--entries` size: one session, filled with `session::append-many` (batches of 500
//! alternating user / assistant messages of ~200-400 bytes), then `session::messages` first page,
//! a middle page (a cursor from an untimed walk), the last page (`after_entry_id` = the entry 51
//! from the end), `session::messages-tail` newest page (all limit 50) and a whole cursor walk of
//! the active path at limit 500 (min(samples, 3) walks; its no-op makes one call per page, with the
//! page's reply size). Phase 2, per `--sessions` size (cumulative): `session::create` (32 in
//! flight, metadata `{"team": "t<i%2>"}`) until the worker holds that many, then `session::list`
//! first, middle and last page (limit 50; cursors from untimed walks, the last page's placed 50
//! items before the end so it is a full page) per order and once filtered on `{"team": "t1"}`
//! (every other session: at 100 sessions the filtered list is one page, as full as it can be).
//! `--worker-pid` adds the worker's VmRSS / VmHWM after every size, and waits after every fill
//! until the worker is idle (its background jobs done) before measuring.
//!
//! A read that gets no answer within `--call-timeout-ms` is sent once more (the engine drops about
//! one call in 10⁴); a sample keeps the answered attempt's latency. Set-up writes are checked or
//! retried the same way (a resent `session::create` may leave one extra session).
//!
//! `--fill-only` fills one session and prints its id; `--cold <id>`, started together with a
//! fresh worker process, times that session's first `messages-tail` and first `messages` page
//! from the worker's first answer (a cold open: BENCHMARKS.md).
//!
//! `--search` runs the search phase instead (`search.rs`: issue 39's corpus and queries).
//!
//! `--context` runs the model's-context phase instead of phases 1 and 2: per `--entries` size, a
//! session whose compaction record (`session::compact`, keeping the message before it) is 200
//! entries before the leaf; `session::context`, `session::messages-tail` (limit 50) and
//! `session::usage` of its active branch, each next to a no-op registered with that read's
//! schemas whose reply has the same size (issue 38's acceptance 3).
//!
//! ```sh
//! # engine and worker as in BENCHMARKS.md "Worker through the engine" (fresh data root)
//! cargo run --release -p session-bench --bin session-reads -- --url ws://127.0.0.1:49134 \
//!   [--entries 1000,10000,100000 --sessions 100,10000,100000 --samples 30 --worker-pid <pid>]
//! ```

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use iii_sdk::protocol::TriggerRequest;
use iii_sdk::{Error, IIIClient, RegisterFunction};
use serde_json::{json, Value};
use session_bench::procfs;
use session_manager::functions::READY_PROBE;

#[derive(Debug, Parser)]
#[command(
    name = "session-reads",
    about = "Read-call latency of a running session-manager vs a same-reply-size no-op"
)]
struct Args {
    /// WebSocket URL of the engine the worker is connected to.
    #[arg(long, env = "III_URL", default_value = iii_sdk::DEFAULT_ENGINE_URL)]
    url: String,
    /// Entries per session, one session per size.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    entries: Vec<usize>,
    /// Sessions the worker holds for the list phase (cumulative, ascending).
    #[arg(long, value_delimiter = ',', default_value = "100,10000,100000")]
    sessions: Vec<usize>,
    /// Samples per measured call (each with its no-op).
    #[arg(long, default_value_t = 30)]
    samples: usize,
    /// Per-call timeout (ms); a read without an answer is sent once more.
    #[arg(long, default_value_t = 10000)]
    call_timeout_ms: u64,
    /// PID of the session-manager process: report its VmRSS / VmHWM after each size.
    #[arg(long)]
    worker_pid: Option<u32>,
    /// Text bytes of every message instead of the default ~200-400 (e.g. 2300: a coding
    /// agent's ~2.3 KB entries).
    #[arg(long)]
    text_bytes: Option<usize>,
    /// Only fill one session of the first `--entries` size, print its id and stop (the set-up
    /// of a cold-open run).
    #[arg(long)]
    fill_only: bool,
    /// Cold open: wait for the worker's first answer, then time the first `messages-tail` and
    /// the first `messages` page of this session (run right after the worker starts).
    #[arg(long)]
    cold: Option<String>,
    /// Instead of phases 1 and 2, the model's-context phase: per `--entries` size, one session
    /// with a compaction [`KEPT`] entries before its leaf; `session::context`,
    /// `session::messages-tail` and `session::usage`, each next to a no-op registered with its
    /// schemas answering the same reply size.
    #[arg(long)]
    context: bool,
    /// Instead of phases 1 and 2, the search phase (`search.rs`): a corpus of 50-message sessions
    /// grown to each `--entries` total, then `session::search` against a no-op with its schemas.
    #[arg(long)]
    search: bool,
    /// With `--search`: entries the corpus already holds (a worker restarted on a filled
    /// data_dir, e.g. to time an index rebuild): filling starts there.
    #[arg(long, default_value_t = 0)]
    corpus_held: usize,
    /// With `--search`: only the searches whose name starts with this (`selective`, `common`,
    /// `phrase`, `prefix`), e.g. many samples of one under a profiler.
    #[arg(long)]
    search_only: Option<String>,
}

mod search;

const NOOP: &str = "session-reads::noop";
/// The same no-op registered with these reads' request and response schemas (iii-sdk and the
/// engine copy a registration, schemas included, on every call).
const SCHEMA_NOOPS: [(&str, &str); 4] = [
    ("session::context", "session-reads::noop-with-context-schemas"),
    ("session::search", "session-reads::noop-with-search-schemas"),
    ("session::messages-tail", "session-reads::noop-with-messages-tail-schemas"),
    ("session::usage", "session-reads::noop-with-usage-schemas"),
];
/// Entries of the context phase's sessions after their compaction record.
const KEPT: usize = 200;
/// Bytes of `{"b":""}`: the no-op's reply is this plus its blob.
const NOOP_OVERHEAD: usize = 8;
const PAGE: usize = 50;
/// The configured maximum page size (`max_list_limit`, default 500): walks use it.
const WALK_PAGE: usize = 500;
const BATCH: usize = 500;
const IN_FLIGHT: usize = 32;

/// The connection, the call timeout and the count of lost calls.
struct Bench {
    iii: IIIClient,
    ms: u64,
    text_bytes: Option<usize>,
    resent: AtomicUsize,
    failed: AtomicUsize,
}

impl Bench {
    /// One call, bounded twice: the engine's `timeout_ms` and a local timer a second later.
    async fn once(&self, function_id: &str, payload: Value) -> Result<Value, String> {
        let request = TriggerRequest {
            function_id: function_id.into(),
            payload,
            action: None,
            timeout_ms: Some(self.ms),
        };
        let answer = tokio::time::timeout(Duration::from_millis(self.ms + 1000), async {
            self.iii.trigger(request).await
        });
        match answer.await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("no answer (local timeout)".into()),
        }
    }

    /// An idempotent call, sent once more when the first gets no answer: the reply and the
    /// answered attempt's µs.
    async fn read(&self, function_id: &str, payload: &Value) -> Option<(Value, u64)> {
        for attempt in 0..2 {
            let start = Instant::now();
            match self.once(function_id, payload.clone()).await {
                Ok(v) => return Some((v, start.elapsed().as_micros() as u64)),
                Err(e) => eprintln!("session-reads: {function_id} (attempt {}): {e}", attempt + 1),
            }
            self.resent.fetch_add(usize::from(attempt == 0), Relaxed);
        }
        self.failed.fetch_add(1, Relaxed);
        None
    }

    async fn must(&self, function_id: &str, payload: Value) -> Value {
        match self.read(function_id, &payload).await {
            Some((v, _)) => v,
            None => panic!("{function_id} failed twice"),
        }
    }

    /// µs of one no-op call whose reply is `bytes` long.
    async fn noop(&self, bytes: usize) -> Option<u64> {
        self.noop_of(NOOP, bytes).await
    }

    /// µs of one call of no-op `id` whose reply is `bytes` long.
    async fn noop_of(&self, id: &str, bytes: usize) -> Option<u64> {
        self.read(id, &json!({ "bytes": bytes })).await.map(|r| r.1)
    }
}

fn json_len(v: &Value) -> usize {
    serde_json::to_vec(v).map_or(0, |v| v.len())
}

/// Words, `len` bytes, different for every `seed`.
fn text(seed: usize, len: usize) -> String {
    const WORDS: [&str; 16] = [
        "the", "session", "reads", "page", "engine", "worker", "reply", "cursor", "of", "and", "a",
        "message", "list", "block", "is", "newest",
    ];
    let (mut out, mut x) = (String::with_capacity(len + 8), seed as u64 ^ 0x2545_f491);
    while out.len() < len {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        out.push_str(WORDS[(x >> 60) as usize]);
        out.push(' ');
    }
    out.truncate(len);
    out
}

/// Message `i` of a session: user on even `i`, assistant on odd, ~200-400 bytes of JSON.
fn message(i: usize, text_bytes: Option<usize>) -> Value {
    let ts = 1_700_000_000_000_i64 + i as i64 * 1000;
    let len = |base: usize| text_bytes.unwrap_or(base + i * 37 % 200);
    let content = json!([{"type": "text", "text": text(i, len(120))}]);
    if i.is_multiple_of(2) {
        return json!({"role": "user", "content": content, "timestamp": ts});
    }
    let reply = json!([{"type": "text", "text": text(i, len(60))}]);
    json!({"role": "assistant", "content": reply, "stop_reason": "end", "model": "model-1",
        "provider": "provider-1", "timestamp": ts, "usage": {"input": 900 + i, "output": 120}})
}

/// `base` with `limit` and, when given, `cursor`.
fn page(base: &Value, limit: usize, cursor: Option<&str>) -> Value {
    let mut p = base.clone();
    p["limit"] = json!(limit);
    if let Some(c) = cursor {
        p["cursor"] = json!(c);
    }
    p
}

/// One page of a walk: the cursor it was fetched with, its item ids, its reply's bytes.
struct Page {
    cursor: Option<String>,
    ids: Vec<String>,
    bytes: usize,
}

/// The pages of `function_id` (items under `key`, ids in `id`) from `start` to the end; and the
/// sum of the answered calls' µs.
async fn walk(
    b: &Bench,
    (function_id, key, id): (&str, &str, &str),
    base: &Value,
    limit: usize,
    start: Option<String>,
) -> (Vec<Page>, u64) {
    let (mut pages, mut us, mut cursor) = (Vec::new(), 0, start);
    loop {
        let payload = page(base, limit, cursor.as_deref());
        let (reply, t) =
            b.read(function_id, &payload).await.unwrap_or_else(|| panic!("{function_id} walk"));
        us += t;
        let items = reply[key].as_array().map(Vec::as_slice).unwrap_or_default();
        let ids = items.iter().map(|m| m[id].as_str().unwrap_or_default().to_string()).collect();
        let next = reply["next_cursor"].as_str().map(str::to_string);
        pages.push(Page { cursor: cursor.take(), ids, bytes: json_len(&reply) });
        match next {
            Some(c) => cursor = Some(c),
            None => return (pages, us),
        }
    }
}

/// The cursor of the page starting nearest the middle of a walk at `WALK_PAGE` (`None` = the
/// first page); a walk of one page is walked again at `PAGE`.
async fn middle_cursor(
    b: &Bench,
    function: (&str, &str, &str),
    base: &Value,
    walked: &[Page],
) -> Option<String> {
    let again = match walked.len() {
        1 => walk(b, function, base, PAGE, None).await.0,
        _ => Vec::new(),
    };
    let pages = if again.is_empty() { walked } else { &again };
    let total: usize = pages.iter().map(|p| p.ids.len()).sum();
    let mut start: usize = 0;
    let mut best: (usize, Option<&String>) = (total / 2, None);
    for p in pages {
        if let Some(c) = &p.cursor {
            if start.abs_diff(total / 2) < best.0 {
                best = (start.abs_diff(total / 2), Some(c));
            }
        }
        start += p.ids.len();
    }
    best.1.cloned()
}

/// The cursor of the last full page (`PAGE` items before the end of `matched` items; `None`
/// when they fit in one page): pages of [`WALK_PAGE`], then one call whose limit ends there.
async fn last_cursor(
    b: &Bench,
    (function_id, _, _): (&str, &str, &str),
    base: &Value,
    matched: usize,
) -> Option<String> {
    let (mut cursor, mut remaining) = (None::<String>, matched);
    while remaining > PAGE {
        let limit = (remaining - PAGE).min(WALK_PAGE);
        let payload = page(base, limit, cursor.as_deref());
        let (reply, _) = b.read(function_id, &payload).await.expect("last-page cursor");
        cursor = Some(reply["next_cursor"].as_str().expect("a next page").to_string());
        remaining -= limit;
    }
    cursor
}

/// One whole-path walk of `session::messages` at [`WALK_PAGE`] into `stats`: its µs, the µs of
/// one same-size no-op per page, its replies' bytes. Returns its pages.
async fn timed_walk(b: &Bench, base: &Value, stats: &mut Stats) -> Vec<Page> {
    let (pages, us) = walk(b, MESSAGES, base, WALK_PAGE, None).await;
    let mut noop_us = 0;
    for p in &pages {
        noop_us += b.noop(p.bytes).await.unwrap_or(0);
    }
    stats.real.push(us);
    stats.noop.push(noop_us);
    stats.bytes.push(pages.iter().map(|p| p.bytes).sum());
    pages
}

/// Latencies of one measured call and of its no-ops (µs), and the replies' bytes.
#[derive(Default)]
struct Stats {
    real: Vec<u64>,
    noop: Vec<u64>,
    bytes: Vec<usize>,
}

/// `samples` calls of `function_id`, each followed by a no-op with the same reply size.
async fn measure(b: &Bench, function_id: &str, payload: Value, samples: usize) -> Stats {
    measure_against(b, function_id, payload, samples, NOOP).await
}

/// [`measure`] against no-op `noop`.
async fn measure_against(
    b: &Bench,
    function_id: &str,
    payload: Value,
    samples: usize,
    noop: &str,
) -> Stats {
    let mut s = Stats::default();
    for _ in 0..samples {
        let Some((reply, us)) = b.read(function_id, &payload).await else { continue };
        let bytes = json_len(&reply);
        s.noop.extend(b.noop_of(noop, bytes).await);
        s.real.push(us);
        s.bytes.push(bytes);
    }
    s
}

/// A row of a phase's table.
struct Row {
    call: String,
    size: usize,
    stats: Stats,
}

fn pct(xs: &[u64], p: f64) -> f64 {
    let mut sorted = xs.to_vec();
    sorted.sort_unstable();
    match sorted.len() {
        0 => f64::NAN,
        n => sorted[((n as f64 - 1.0) * p).round() as usize] as f64 / 1000.0,
    }
}

fn print_table(title: &str, rows: &[Row]) {
    println!("\n{title}\n");
    println!("| call | size | p50 ms | p95 ms | no-op p50 ms | × no-op |");
    println!("|---|---|---|---|---|---|");
    for r in rows {
        let s = &r.stats;
        let mut bytes = s.bytes.clone();
        bytes.sort_unstable();
        let kb = bytes.get(bytes.len() / 2).map_or(f64::NAN, |&b| b as f64 / 1024.0);
        let (p50, noop) = (pct(&s.real, 0.5), pct(&s.noop, 0.5));
        println!(
            "| {} ({kb:.1} KB, n={}) | {} | {p50:.3} | {:.3} | {noop:.3} | {:.2}× |",
            r.call,
            s.real.len(),
            r.size,
            pct(&s.real, 0.95),
            p50 / noop
        );
    }
}

/// The no-op: answers `{"b": "xx…"}` of the byte count its payload asks for.
fn blob_noop() -> RegisterFunction {
    RegisterFunction::new_async(|p: Value| async move {
        let n = p["bytes"].as_u64().unwrap_or(0) as usize;
        Ok::<Value, Error>(json!({ "b": "x".repeat(n.saturating_sub(NOOP_OVERHEAD)) }))
    })
}

/// VmRSS and VmHWM of `pid` (MB), from `/proc/<pid>/status`.
fn memory(pid: u32) -> Option<(f64, f64)> {
    procfs::memory_mb(Some(pid))
}

fn print_memory(pid: Option<u32>, rows: &[(String, Option<(f64, f64)>)]) {
    let Some(pid) = pid else { return };
    println!("\n| worker {pid} after | VmRSS MB | VmHWM MB |\n|---|---|---|");
    for (label, m) in rows {
        match m {
            Some((rss, hwm)) => println!("| {label} | {rss:.1} | {hwm:.1} |"),
            None => println!("| {label} | – | – |"),
        }
    }
}

/// Cold open of `sid`: the worker's first answer, then each first read, timed from it.
async fn cold_open(b: &Bench, sid: &str, command: &[String], worker_pid: Option<u32>) {
    let waiting = Instant::now();
    while b.once(READY_PROBE, json!({})).await.is_err() {
        assert!(waiting.elapsed() < Duration::from_secs(60), "the worker never answered");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let first_answer = Instant::now();
    let base = json!({ "session_id": sid });
    let calls = [
        ("session::messages-tail newest page", "session::messages-tail"),
        ("session::messages first page", "session::messages"),
    ];
    println!("command: {}\nload average before: {}", command.join(" "), loadavg());
    println!("\n| first call after the worker's first answer | ms | since first answer ms | reply KB | no-op ms |");
    println!("|---|---|---|---|---|");
    for (label, function_id) in calls {
        let (reply, us) = b.read(function_id, &page(&base, PAGE, None)).await.expect("cold read");
        let since = first_answer.elapsed().as_secs_f64() * 1000.0;
        let bytes = json_len(&reply);
        let noop = b.noop(bytes).await.map_or(f64::NAN, |us| us as f64 / 1000.0);
        let kb = bytes as f64 / 1024.0;
        println!("| {label} | {:.2} | {since:.2} | {kb:.1} | {noop:.3} |", us as f64 / 1000.0);
    }
    if let Some(pid) = worker_pid {
        print_memory(Some(pid), &[("the first reads".into(), memory(pid))]);
    }
    // Then the whole active path, as a harness reloads it: walks at the largest page.
    let mut rows = Vec::new();
    for walk_no in 1..=3 {
        let mut stats = Stats::default();
        let pages = timed_walk(b, &base, &mut stats).await;
        let entries: usize = pages.iter().map(|p| p.ids.len()).sum();
        let call = format!("walk {walk_no}, limit {WALK_PAGE}, {} pages", pages.len());
        rows.push(Row { call, size: entries, stats });
    }
    print_table("Whole active path after the cold open", &rows);
    if let Some(pid) = worker_pid {
        print_memory(Some(pid), &[("three walks".into(), memory(pid))]);
    }
}

/// Appends messages `0..n` to `sid` in batches; a batch without an answer is read back
/// (`message_count`) and resent only if it did not land (append-many is not idempotent).
async fn populate(b: &Bench, sid: &str, n: usize) {
    populate_from(b, sid, 0, n).await
}

/// [`populate`] of messages `done..n` onto a session holding `done`.
async fn populate_from(b: &Bench, sid: &str, mut done: usize, n: usize) {
    while done < n {
        // Batches of at most ~1 MB of text.
        let batch = b.text_bytes.map_or(BATCH, |t| (1 << 20) / t.max(1)).clamp(1, BATCH);
        let k = batch.min(n - done);
        let messages: Vec<Value> = (done..done + k).map(|i| message(i, b.text_bytes)).collect();
        let payload = json!({"session_id": sid, "messages": messages});
        for attempt in 0.. {
            let Err(e) = b.once("session::append-many", payload.clone()).await else { break };
            let meta = b.must("session::get", json!({ "session_id": sid })).await;
            let count = meta["meta"]["message_count"].as_u64().unwrap_or(u64::MAX) as usize;
            eprintln!("session-reads: append-many at {done}: {e}; message_count {count}");
            if count == done + k {
                break;
            }
            assert!(count == done && attempt < 3, "append-many at {done} failed");
        }
        done += k;
    }
}

const MESSAGES: (&str, &str, &str) = ("session::messages", "messages", "entry_id");
const LIST: (&str, &str, &str) = ("session::list", "sessions", "session_id");

async fn entries_phase(b: &Bench, n: usize, samples: usize, pid: Option<u32>) -> Vec<Row> {
    let created = b.must("session::create", json!({ "title": format!("reads {n}") })).await;
    let sid = created["session_id"].as_str().expect("session_id").to_string();
    let started = Instant::now();
    populate(b, &sid, n).await;
    eprintln!("session-reads: {n} entries in {:.1} s", started.elapsed().as_secs_f64());
    settle(pid).await;
    let base = json!({ "session_id": sid });
    let (pages, _) = walk(b, MESSAGES, &base, WALK_PAGE, None).await;
    let ids: Vec<&String> = pages.iter().flat_map(|p| &p.ids).collect();
    assert_eq!(ids.len(), n, "the active path of {sid}");
    let middle = middle_cursor(b, MESSAGES, &base, &pages).await;
    let mut last = base.clone();
    if n > PAGE {
        last["after_entry_id"] = json!(ids[n - PAGE - 1]);
    }
    last["limit"] = json!(PAGE);
    let calls = [
        ("session::messages first page", "session::messages", page(&base, PAGE, None)),
        (
            "session::messages middle page",
            "session::messages",
            page(&base, PAGE, middle.as_deref()),
        ),
        ("session::messages last page", "session::messages", last),
        ("session::messages-tail newest page", "session::messages-tail", page(&base, PAGE, None)),
    ];
    let mut rows = Vec::new();
    for (call, function_id, payload) in calls {
        let stats = measure(b, function_id, payload, samples).await;
        rows.push(Row { call: call.into(), size: n, stats });
    }
    let mut stats = Stats::default();
    for _ in 0..samples.min(3) {
        timed_walk(b, &base, &mut stats).await;
    }
    let call = format!("full walk, limit {WALK_PAGE}, {} page(s)", pages.len());
    rows.push(Row { call, size: n, stats });
    rows
}

/// The context phase at `n` entries: a session of `n - KEPT` messages, a compaction record
/// keeping its last message, `KEPT` more messages; then the three reads of its active branch,
/// each against its schema no-op.
async fn context_phase(b: &Bench, n: usize, samples: usize, pid: Option<u32>) -> Vec<Row> {
    let created = b.must("session::create", json!({ "title": format!("context {n}") })).await;
    let sid = created["session_id"].as_str().expect("session_id").to_string();
    let started = Instant::now();
    let before = n.saturating_sub(KEPT).max(1);
    populate(b, &sid, before).await;
    let base = json!({ "session_id": sid });
    let tail = b.must("session::messages-tail", page(&base, 1, None)).await;
    let first_kept = tail["oldest_entry_id"].as_str().expect("a newest entry").to_string();
    let compact = json!({"session_id": sid, "summary": text(n, 2000),
        "first_kept_entry_id": first_kept, "tokens_before": 50_000, "entry_id": "compaction"});
    b.must("session::compact", compact).await;
    populate_from(b, &sid, before, n).await;
    eprintln!("session-reads: {n} entries in {:.1} s", started.elapsed().as_secs_f64());
    settle(pid).await;
    let context = b.must("session::context", base.clone()).await;
    assert_eq!(context["compaction"]["entry_id"], "compaction", "the context applies it");
    let kept = context["messages"].as_array().map_or(0, Vec::len);
    assert_eq!(kept, n - before + 1, "the context keeps the messages after it");
    let calls = [
        (format!("session::context ({kept} messages kept)"), "session::context", base.clone()),
        (
            "session::messages-tail newest page".into(),
            "session::messages-tail",
            page(&base, PAGE, None),
        ),
        ("session::usage".into(), "session::usage", base.clone()),
    ];
    let mut rows = Vec::new();
    for (call, function_id, payload) in calls {
        let noop = SCHEMA_NOOPS.iter().find(|(id, _)| *id == function_id).expect("a no-op").1;
        let stats = measure_against(b, function_id, payload, samples, noop).await;
        rows.push(Row { call, size: n, stats });
    }
    rows
}

/// Runs `job(b, i)` for every `i` in `from..to`, `width` at a time.
async fn in_flight<F, Fut>(b: &Arc<Bench>, from: usize, to: usize, width: usize, job: F)
where
    F: Fn(Arc<Bench>, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let next = Arc::new(AtomicUsize::new(from));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..width {
        let (b, next, job) = (b.clone(), next.clone(), job.clone());
        tasks.spawn(async move {
            loop {
                let i = next.fetch_add(1, Relaxed);
                if i >= to {
                    break;
                }
                job(b.clone(), i).await;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("in-flight task");
    }
}

/// Creates sessions `from..to` (`IN_FLIGHT` at a time), metadata `{"team": "t<i%2>"}`.
async fn create_sessions(b: &Arc<Bench>, from: usize, to: usize) {
    in_flight(b, from, to, IN_FLIGHT, |b, i| async move {
        let team = format!("t{}", i % 2);
        let request = json!({"title": format!("list {i}"), "metadata": {"team": team}});
        b.must("session::create", request).await;
    })
    .await;
}

/// Sessions the worker holds (an untimed walk).
async fn session_count(b: &Bench) -> usize {
    let (pages, _) = walk(b, LIST, &json!({ "order": "created_asc" }), WALK_PAGE, None).await;
    pages.iter().map(|p| p.ids.len()).sum()
}

async fn list_phase(b: &Bench, n: usize, samples: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    let filtered = json!({"order": "updated_desc", "metadata": {"team": "t1"}});
    let bases = [
        ("created_asc", json!({ "order": "created_asc" })),
        ("created_desc", json!({ "order": "created_desc" })),
        ("updated_desc", json!({ "order": "updated_desc" })),
        ("updated_desc, metadata {team: t1}", filtered),
    ];
    for (label, base) in bases {
        let (pages, _) = walk(b, LIST, &base, WALK_PAGE, None).await;
        let matched: usize = pages.iter().map(|p| p.ids.len()).sum();
        let middle = middle_cursor(b, LIST, &base, &pages).await;
        let last = last_cursor(b, LIST, &base, matched).await;
        for (which, cursor) in [("first", None), ("middle", middle), ("last", last)] {
            let payload = page(&base, PAGE, cursor.as_deref());
            let stats = measure(b, "session::list", payload, samples).await;
            let call = format!("session::list {label}, {which} page of {matched}");
            rows.push(Row { call, size: n, stats });
        }
    }
    rows
}

/// Waits (up to 2 minutes) until the worker's background work after a fill is done: less than
/// 2 % of a core over a second. Without a pid, returns at once.
async fn settle(pid: Option<u32>) {
    let Some(pid) = pid else { return };
    let started = Instant::now();
    let mut last = procfs::cpu_seconds(pid);
    while started.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = procfs::cpu_seconds(pid);
        if let (Some(a), Some(b)) = (last, now) {
            if b - a <= 0.02 {
                break;
            }
        }
        last = now;
    }
    eprintln!("session-reads: worker idle after {:.1} s", started.elapsed().as_secs_f64());
}

fn loadavg() -> String {
    procfs::loadavg(" / ")
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let command: Vec<String> = std::env::args().collect();
    let iii = session_manager::telemetry::client_connection(&args.url, "session-reads");
    iii.register_function(NOOP, blob_noop());
    for (op_id, noop_id) in SCHEMA_NOOPS {
        let op = session_core::catalog::operation(op_id).expect("catalog");
        let noop = blob_noop();
        iii.register_function(
            noop_id,
            noop.request_format((op.request_schema)()).response_format((op.response_schema)()),
        );
    }
    iii.wait_until_registered(Duration::from_secs(10)).await.expect("engine registration");
    // Nagle off on this tool's sockets, as the worker does (`nodelay.rs`).
    session_manager::nodelay::spawn_keeper();
    let b = Arc::new(Bench {
        iii,
        ms: args.call_timeout_ms,
        text_bytes: args.text_bytes,
        resent: AtomicUsize::new(0),
        failed: AtomicUsize::new(0),
    });
    if let Some(sid) = &args.cold {
        cold_open(&b, sid, &command, args.worker_pid).await;
        b.iii.shutdown_async().await;
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while b.once(READY_PROBE, json!({})).await.is_err()
        || b.once(NOOP, json!({ "bytes": 8 })).await.is_err()
    {
        assert!(Instant::now() < deadline, "worker or no-op never became callable");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if args.fill_only {
        let n = args.entries[0];
        let created = b.must("session::create", json!({ "title": format!("cold {n}") })).await;
        let sid = created["session_id"].as_str().expect("session_id").to_string();
        let started = Instant::now();
        populate(&b, &sid, n).await;
        eprintln!("session-reads: {n} entries in {:.1} s", started.elapsed().as_secs_f64());
        println!("{sid}");
        b.iii.shutdown_async().await;
        return;
    }
    // Warm-up (not counted).
    for i in 0..200 {
        let _ = b.noop(i * 100).await;
        let _ = b.once("session::list", json!({ "limit": 5 })).await;
    }
    println!("command: {}\nload average before: {}", command.join(" "), loadavg());

    let mem = |label: String| (label, args.worker_pid.and_then(memory));
    if args.search {
        let rows = search::phase(
            &b,
            &args.entries,
            args.corpus_held,
            args.samples,
            args.worker_pid,
            args.search_only.as_deref(),
        )
        .await;
        let title = "session::search across a tenant's sessions: each against a no-op with its \
             schemas and reply size (size = entries held)";
        print_table(title, &rows);
        let mems = vec![mem(format!("{} entries", args.entries.last().unwrap_or(&0)))];
        print_memory(args.worker_pid, &mems);
        println!("\nload average after: {}; calls resent: {}", loadavg(), b.resent.load(Relaxed));
        b.iii.shutdown_async().await;
        return;
    }
    if args.context {
        let (mut rows, mut mems) = (Vec::new(), vec![mem("start".into())]);
        for &n in &args.entries {
            rows.extend(context_phase(&b, n, args.samples, args.worker_pid).await);
            mems.push(mem(format!("session of {n} entries")));
        }
        let title =
            "What the model sees: each read against a no-op with its schemas and reply size";
        print_table(title, &rows);
        print_memory(args.worker_pid, &mems);
        println!(
            "\nload average after: {}; calls resent after no answer: {}",
            loadavg(),
            b.resent.load(Relaxed)
        );
        b.iii.shutdown_async().await;
        return;
    }
    let (mut rows, mut mems) = (Vec::new(), vec![mem("start".into())]);
    for &n in &args.entries {
        rows.extend(entries_phase(&b, n, args.samples, args.worker_pid).await);
        mems.push(mem(format!("session of {n} entries")));
    }
    print_table("Phase 1: entries per session (one session per size, limit 50 pages)", &rows);
    print_memory(args.worker_pid, &mems);

    let (mut rows, mut mems) = (Vec::new(), Vec::new());
    let mut held = session_count(&b).await;
    for &n in &args.sessions {
        let started = Instant::now();
        create_sessions(&b, held, n.max(held)).await;
        held = session_count(&b).await;
        eprintln!("session-reads: {held} sessions held ({:.1} s)", started.elapsed().as_secs_f64());
        settle(args.worker_pid).await;
        rows.extend(list_phase(&b, held, args.samples).await);
        mems.push(mem(format!("{held} sessions")));
    }
    print_table("Phase 2: session::list (size = sessions held, limit 50 pages)", &rows);
    print_memory(args.worker_pid, &mems);
    println!(
        "\nload average after: {}; calls resent after no answer: {}; failed twice (sample \
         dropped): {}",
        loadavg(),
        b.resent.load(Relaxed),
        b.failed.load(Relaxed)
    );
    b.iii.shutdown_async().await;
}
