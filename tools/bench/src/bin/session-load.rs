//! session-load: drives a running session-manager through the engine and reports
//! `session::append` latency percentiles (sequential) and throughput (concurrent writers, one
//! session each, calling for `--window-secs`) next to a no-op function this tool registers itself,
//! measured in the same run.
//!
//! `--engine-pid` / `--worker-pid` add the CPU time per call of each process in the writers
//! phases; `--listeners N` binds N no-op functions to `session::message-added` first.
//!
//! A second writers phase runs the same number of writers all on ONE shared session (created once
//! per phase), for `session::append` and for both no-ops with the same payload shape: what the
//! session's lock and single write order cost next to the one-session-each rows.
//!
//! `--rounds N` repeats everything and prints medians; a second table puts append next to a no-op
//! carrying append's schemas (iii-sdk and the engine both copy a function's registration, schemas
//! included, on every invocation) and, with `--fsync-probe <dir>` (a directory on the worker's
//! disk), next to a bare write + fdatasync there (what durability must wait), including the ratio
//! of append's p50 to the schema no-op's p50 plus the same round's fdatasync p50.
//!
//! With `--bridge-url` (the engine of a session-manager bridged to the one on `--url`) it also
//! reports `session::append` through the bridge next to the same run's append on the main. With
//! `--peer-url` (the engine of another instance on the same PostgreSQL database) it reports the
//! writers' append throughput on one instance, then on both at once.
//!
//! `cargo run --release -p session-bench --bin session-load -- --url ws://127.0.0.1:49134`

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;

use iii_sdk::protocol::TriggerRequest;
use iii_sdk::{Error, IIIClient, RegisterFunction};
use serde_json::{json, Value};
use session_bench::procfs;

impl Args {
    /// The writers phases' shape.
    fn writers(&self) -> Writers {
        Writers {
            count: self.writers,
            window: Duration::from_secs_f64(self.window_secs.max(0.1)),
            give_up_ms: self.give_up_ms.max(1),
        }
    }
}

/// How a writers phase runs: `count` writers call back to back for `window`, each call given up
/// after `give_up_ms`.
#[derive(Debug, Clone, Copy)]
struct Writers {
    count: usize,
    window: Duration,
    give_up_ms: u64,
}

#[derive(Debug, Parser)]
#[command(name = "session-load", about = "Load-test a running session-manager through the engine")]
struct Args {
    /// WebSocket URL of the engine the worker is connected to.
    #[arg(long, env = "III_URL", default_value = iii_sdk::DEFAULT_ENGINE_URL)]
    url: String,
    /// Sequential calls per function.
    #[arg(long, default_value_t = 3000)]
    sequential: usize,
    /// Concurrent writers.
    #[arg(long, default_value_t = 32)]
    writers: usize,
    /// How long the concurrent writers call back to back, per measured function (seconds).
    #[arg(long, default_value_t = 3.0)]
    window_secs: f64,
    /// Engine of a session-manager bridged to the one on `--url`: also measure append through it.
    #[arg(long)]
    bridge_url: Option<String>,
    /// Engine of another instance on the same database (postgres adapter): also measure append
    /// throughput of `--writers` on `--url` alone, then on both engines at once (aggregate).
    #[arg(long)]
    peer_url: Option<String>,
    /// Writers phases: a call still unanswered after this many milliseconds is given up, counted
    /// as lost, and its writer goes on. Through engine 0.23 about one answer in 10³ of a fast
    /// worker never arrives (the engine stores a worker-routed invocation only after sending it,
    /// `engine/src/invocation/mod.rs`, and drops an answer that comes back first); without this
    /// each such call idled one writer for the rest of the window.
    #[arg(long, default_value_t = 250)]
    give_up_ms: u64,
    /// Repeat the whole measurement this many times; the table shows medians.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// A directory on the worker's disk (e.g. its data_dir): also time sequential
    /// write + fdatasync of a record-sized line there, the least a durable append must wait.
    #[arg(long)]
    fsync_probe: Option<std::path::PathBuf>,
    /// PID of the engine process: also report its CPU time per call in the writers phases.
    #[arg(long)]
    engine_pid: Option<u32>,
    /// PID of the session-manager process: also report its CPU time per call there.
    #[arg(long)]
    worker_pid: Option<u32>,
    /// Bind this many no-op functions (on a connection of their own) to
    /// `session::message-added` first, so every append also delivers that many events, as it does
    /// for a chat UI that renders live.
    #[arg(long, default_value_t = 0)]
    listeners: usize,
}

const NOOP: &str = "session-load::noop";
/// A no-op registered with `session::append`'s request and response schemas: iii-sdk 0.24 and the
/// engine both deep-copy a function's registration (schemas included) on every invocation, so
/// this floor includes what registering the seed's schemas costs per call.
const NOOP_SCHEMA: &str = "session-load::noop-with-append-schemas";
/// With `--fsync-probe`: [`NOOP_SCHEMA`] whose handler first appends a record-sized line to a file
/// in the probe directory and `fdatasync`s it, on the thread that answers (as the worker's lone
/// durable append does). The least a durable worker pays through the engine, including what the
/// sum of the two floors leaves out: the engine and this tool idle while the flush runs, and on
/// this VM an idle vCPU takes longer to wake than a busy one.
const NOOP_DURABLE: &str = "session-load::durable-noop-with-append-schemas";

async fn call(iii: &IIIClient, function_id: &str, payload: Value) -> Result<Value, Error> {
    call_within(iii, function_id, payload, 5000).await
}

/// A call that fails with [`Error::Timeout`] when unanswered after `timeout_ms`.
async fn call_within(
    iii: &IIIClient,
    function_id: &str,
    payload: Value,
    timeout_ms: u64,
) -> Result<Value, Error> {
    let request = TriggerRequest {
        function_id: function_id.into(),
        payload,
        action: None,
        timeout_ms: Some(timeout_ms),
    };
    iii.trigger(request).await
}

fn message(i: usize) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": format!("load message {i}")}], "timestamp": i})
}

async fn new_session(iii: &IIIClient) -> String {
    let created =
        call(iii, "session::create", json!({"title": "load"})).await.expect("session::create");
    created["session_id"].as_str().expect("session_id").to_string()
}

/// The same payload for both functions, so the floor moves the same bytes.
fn payload_for(_function_id: &str, sid: &str, i: usize) -> Value {
    json!({"session_id": sid, "message": message(i)})
}

/// Reports a failed call on stderr (the tables only count them).
fn note_failure(function_id: &str, e: &Error) {
    eprintln!("session-load: {function_id} failed: {e}");
}

/// Latencies of `n` sequential calls, sorted, in microseconds; and the failure count.
async fn sequential(iii: &IIIClient, function_id: &str, n: usize) -> (Vec<u64>, usize) {
    let sid = new_session(iii).await;
    let (mut lat, mut failed) = (Vec::with_capacity(n), 0);
    for i in 0..n {
        let start = Instant::now();
        match call(iii, function_id, payload_for(function_id, &sid, i)).await {
            Ok(_) => lat.push(start.elapsed().as_micros() as u64),
            Err(e) => {
                note_failure(function_id, &e);
                failed += 1
            }
        }
    }
    lat.sort_unstable();
    (lat, failed)
}

/// Which sessions the writers of a [`concurrent`] phase call with.
#[derive(Debug, Clone, Copy)]
enum Sessions {
    /// One session per writer.
    OwnEach,
    /// All writers on one session, created for the phase.
    Shared,
}

/// Calls/s of `load.count` concurrent writers (one session each, or all on one: `sessions`),
/// each calling back to back for `load.window`: completions inside the window over its length.
/// A call unanswered after `load.give_up_ms` is given up and counted lost (the engine drops
/// some answers, [`Args::give_up_ms`]), so a lost answer costs one writer that long, not the rest
/// of the window. Returns the rate, the failed calls (errors inside the window) and the lost
/// ones (given up, or in flight for longer than that at the window's end).
async fn concurrent(
    iii: &IIIClient,
    function_id: &'static str,
    load: &Writers,
    cpu: &CpuProbe,
    sessions: Sessions,
) -> Phase {
    let Writers { count: writers, window, give_up_ms } = *load;
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    const IDLE: u64 = u64::MAX;
    let sids = match sessions {
        Sessions::OwnEach => {
            let mut sids = Vec::new();
            for _ in 0..writers {
                sids.push(new_session(iii).await);
            }
            sids
        }
        Sessions::Shared => vec![new_session(iii).await; writers],
    };
    let completed = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let lost = Arc::new(AtomicUsize::new(0));
    // Per writer: when its in-flight call started (µs since `start`), or IDLE.
    let in_flight: Arc<Vec<AtomicU64>> =
        Arc::new((0..writers).map(|_| AtomicU64::new(IDLE)).collect());
    let cpu_before = cpu.sample();
    let start = Instant::now();
    let tasks: Vec<_> = sids
        .into_iter()
        .enumerate()
        .map(|(w, sid)| {
            let (iii, completed, errors, lost, in_flight) =
                (iii.clone(), completed.clone(), errors.clone(), lost.clone(), in_flight.clone());
            tokio::spawn(async move {
                for i in 0.. {
                    if start.elapsed() >= window {
                        break;
                    }
                    in_flight[w].store(start.elapsed().as_micros() as u64, Ordering::Relaxed);
                    let payload = payload_for(function_id, &sid, i);
                    let result = call_within(&iii, function_id, payload, give_up_ms).await;
                    in_flight[w].store(IDLE, Ordering::Relaxed);
                    if start.elapsed() > window {
                        break;
                    }
                    match result {
                        Ok(_) => completed.fetch_add(1, Ordering::Relaxed),
                        Err(Error::Timeout) => lost.fetch_add(1, Ordering::Relaxed),
                        Err(e) => {
                            note_failure(function_id, &e);
                            errors.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            })
        })
        .collect();
    tokio::time::sleep_until((start + window).into()).await;
    let done = completed.load(Ordering::Relaxed);
    let cpu_after = cpu.sample();
    let end = window.as_micros() as u64;
    let stalled = in_flight
        .iter()
        .map(|t| t.load(Ordering::Relaxed))
        .filter(|&t| t != IDLE && end.saturating_sub(t) > give_up_ms * 1000)
        .count();
    for task in tasks {
        task.abort();
    }
    Phase {
        rate: done as f64 / window.as_secs_f64(),
        failed: errors.load(Ordering::Relaxed),
        lost: lost.load(Ordering::Relaxed) + stalled,
        cpu_us: CpuProbe::per_call(cpu_before, cpu_after, done),
    }
}

/// One writers phase: completed calls/s, failed and lost calls, CPU µs per completed call of the
/// engine, the worker and this tool (when their pids are known).
#[derive(Debug, Default, Clone, Copy)]
struct Phase {
    rate: f64,
    failed: usize,
    /// Calls given up unanswered ([`Args::give_up_ms`]).
    lost: usize,
    cpu_us: [Option<f64>; 3],
}

/// CPU time (user + system) of the engine, the worker and this process, from `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy)]
struct CpuProbe {
    pids: [Option<u32>; 3],
}

impl CpuProbe {
    fn new(engine: Option<u32>, worker: Option<u32>) -> Self {
        CpuProbe { pids: [engine, worker, Some(std::process::id())] }
    }

    /// CPU seconds of each process so far.
    fn sample(&self) -> [Option<f64>; 3] {
        self.pids.map(|pid| pid.and_then(procfs::cpu_seconds))
    }

    fn per_call(
        before: [Option<f64>; 3],
        after: [Option<f64>; 3],
        calls: usize,
    ) -> [Option<f64>; 3] {
        std::array::from_fn(|i| match (before[i], after[i]) {
            (Some(a), Some(b)) if calls > 0 => Some((b - a) * 1e6 / calls as f64),
            _ => None,
        })
    }
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx] as f64 / 1000.0
}

/// A connection with the worker's telemetry setting.
fn connect(url: &str, name: &str) -> IIIClient {
    session_manager::telemetry::client_connection(url, name)
}

/// The line the fsync probe and [`NOOP_DURABLE`] write: about one `append` record of this tool.
const PROBE_LINE: [u8; 420] = [b'x'; 420];

/// A file of this process in the probe directory `dir`, opened to append (`kind` names it).
fn probe_file(dir: &std::path::Path, kind: &str) -> (std::path::PathBuf, std::fs::File) {
    let path = dir.join(format!(".session-load-{kind}-{}", std::process::id()));
    let file = std::fs::OpenOptions::new().create(true).append(true).open(&path);
    let file = file.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path, file)
}

/// Sorted latencies (µs) of `n` sequential write + fdatasync of a record-sized line in `dir`.
fn fsync_probe(dir: &std::path::Path, n: usize) -> Vec<u64> {
    use std::io::Write as _;
    let (path, mut file) = probe_file(dir, "probe");
    let mut lat: Vec<u64> = (0..n)
        .map(|_| {
            let start = Instant::now();
            file.write_all(&PROBE_LINE).expect("probe write");
            file.sync_data().expect("probe fdatasync");
            start.elapsed().as_micros() as u64
        })
        .collect();
    let _ = std::fs::remove_file(&path);
    lat.sort_unstable();
    lat
}

/// The measured phases of a round, in the order of [`Round::failed`].
const PHASES: [&str; 12] = [
    "no-op sequential",
    "append sequential",
    "get sequential",
    "schema no-op sequential",
    "durable no-op sequential",
    "no-op writers",
    "schema no-op writers",
    "append writers",
    "get writers",
    "no-op writers on one session",
    "schema no-op writers on one session",
    "append writers on one session",
];

/// The functions of the writers phases (one session each, then on one session), in the order of
/// [`Round::writer_phases`].
const WRITER_PHASES: [&str; 7] = [
    "no-op",
    "no-op with append's schemas",
    "session::append",
    "session::get",
    "no-op, on one session",
    "no-op with append's schemas, on one session",
    "session::append, on one session",
];

/// The functions of the writers phases on one session, in the order of [`Round::shared`].
const SHARED_FUNCTIONS: [&str; 3] = [NOOP, NOOP_SCHEMA, "session::append"];

/// One round's figures (ms, calls/s).
#[derive(Debug, Default, Clone)]
struct Round {
    noop: [f64; 3],
    append: [f64; 3],
    get: f64,
    noop_schema: f64,
    fsync: Option<f64>,
    /// The writers phases, one session each, in the order of the first four [`WRITER_PHASES`].
    writers: [Phase; 4],
    /// The writers phases on one shared session, in the order of [`SHARED_FUNCTIONS`].
    shared: [Phase; 3],
    /// [`NOOP_DURABLE`]'s sequential p50, with `--fsync-probe`.
    durable_noop: Option<f64>,
    /// Failed calls of the sequential phases (the first five of [`PHASES`]).
    sequential_failed: [usize; 5],
}

impl Round {
    /// Failed calls per phase, in the order of [`PHASES`].
    fn failed(&self) -> impl Iterator<Item = usize> + '_ {
        self.sequential_failed.iter().copied().chain(self.writer_phases().map(|w| w.failed))
    }

    /// Every writers phase, in the order of [`WRITER_PHASES`].
    fn writer_phases(&self) -> impl Iterator<Item = &Phase> + '_ {
        self.writers.iter().chain(&self.shared)
    }
}

async fn round(iii: &IIIClient, args: &Args) -> Round {
    let ps = [0.50, 0.95, 0.99];
    let (noop, noop_failed) = sequential(iii, NOOP, args.sequential).await;
    let (append, append_failed) = sequential(iii, "session::append", args.sequential).await;
    let fsync = match &args.fsync_probe {
        Some(dir) => {
            let (dir, n) = (dir.clone(), args.sequential.min(1000));
            let lat = tokio::task::spawn_blocking(move || fsync_probe(&dir, n)).await;
            Some(pct(&lat.expect("fsync probe"), 0.5))
        }
        None => None,
    };
    let (get, get_failed) = sequential(iii, "session::get", args.sequential).await;
    let (noop_schema, schema_failed) = sequential(iii, NOOP_SCHEMA, args.sequential).await;
    let (durable_noop, durable_failed) = match &args.fsync_probe {
        Some(_) => {
            let (lat, failed) = sequential(iii, NOOP_DURABLE, args.sequential).await;
            (Some(pct(&lat, 0.5)), failed)
        }
        None => (None, 0),
    };
    let cpu = CpuProbe::new(args.engine_pid, args.worker_pid);
    let (w, own) = (args.writers(), Sessions::OwnEach);
    let noop_w = concurrent(iii, NOOP, &w, &cpu, own).await;
    let schema_w = concurrent(iii, NOOP_SCHEMA, &w, &cpu, own).await;
    let append_w = concurrent(iii, "session::append", &w, &cpu, own).await;
    let get_w = concurrent(iii, "session::get", &w, &cpu, own).await;
    let mut shared = [Phase::default(); 3];
    for (phase, function_id) in shared.iter_mut().zip(SHARED_FUNCTIONS) {
        *phase = concurrent(iii, function_id, &w, &cpu, Sessions::Shared).await;
    }
    Round {
        noop: ps.map(|p| pct(&noop, p)),
        append: ps.map(|p| pct(&append, p)),
        get: pct(&get, 0.5),
        noop_schema: pct(&noop_schema, 0.5),
        fsync,
        writers: [noop_w, schema_w, append_w, get_w],
        shared,
        durable_noop,
        sequential_failed: [noop_failed, append_failed, get_failed, schema_failed, durable_failed],
    }
}

/// Sums `counts` (one per phase, in the order of `phases`) over the rounds: the total, and
/// `"<phase> <count>"` for every phase with a count above zero.
fn per_phase(
    phases: &[&str],
    rounds: &[Round],
    counts: impl Fn(&Round) -> Vec<usize>,
) -> (usize, Vec<String>) {
    let mut totals = vec![0usize; phases.len()];
    for round in rounds {
        totals.iter_mut().zip(counts(round)).for_each(|(total, c)| *total += c);
    }
    let named = phases
        .iter()
        .zip(&totals)
        .filter(|(_, count)| **count > 0)
        .map(|(phase, count)| format!("{phase} {count}"))
        .collect();
    (totals.iter().sum(), named)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// Prints one row: the medians of both columns and the median of the per-round ratios.
fn row(name: &str, rounds: &[Round], floor: impl Fn(&Round) -> f64, f: impl Fn(&Round) -> f64) {
    let a = median(rounds.iter().map(&floor).collect());
    let b = median(rounds.iter().map(&f).collect());
    let ratios: Vec<f64> = rounds.iter().map(|r| f(r) / floor(r)).collect();
    let each = if rounds.len() > 1 {
        let list: Vec<String> = ratios.iter().map(|x| format!("{x:.2}")).collect();
        format!(" ({})", list.join(", "))
    } else {
        String::new()
    };
    let (a, b) = if a > 100.0 {
        (format!("{a:.0}"), format!("{b:.0}"))
    } else {
        (format!("{a:.3}"), format!("{b:.3}"))
    };
    println!("| {name} | {a} | {b} | {:.2}×{each} |", median(ratios));
}

/// CPU µs per completed call in the writers phases (medians over rounds), for each process whose
/// pid is known: where the work of a call lands.
fn cpu_table(rounds: &[Round], args: &Args) {
    if args.engine_pid.is_none() && args.worker_pid.is_none() {
        return;
    }
    println!(
        "\n| {} writers: CPU µs per call | engine | session-manager | session-load |",
        args.writers
    );
    println!("|---|---|---|---|");
    for (i, name) in WRITER_PHASES.iter().enumerate() {
        let cell = |p: usize| {
            let xs: Vec<f64> =
                rounds.iter().filter_map(|r| r.writer_phases().nth(i)?.cpu_us[p]).collect();
            if xs.is_empty() {
                "–".to_string()
            } else {
                format!("{:.0}", median(xs))
            }
        };
        println!("| {name} | {} | {} | {} |", cell(0), cell(1), cell(2));
    }
}

/// `session::append` on the main (`iii`) and through the bridge, same run, same shapes.
async fn bridged(iii: &IIIClient, bridge_url: &str, args: &Args) {
    let bridge = connect(bridge_url, "session-load-bridge");
    bridge.wait_until_registered(Duration::from_secs(10)).await.expect("bridge engine");
    let _ = sequential(&bridge, "session::append", 300).await;
    let (main_seq, main_failed) = sequential(iii, "session::append", args.sequential).await;
    let (br_seq, br_failed) = sequential(&bridge, "session::append", args.sequential).await;
    println!("\n| session::append | on the main | through the bridge | ratio |");
    println!("|---|---|---|---|");
    for (name, p) in [("p50", 0.50), ("p95", 0.95), ("p99", 0.99)] {
        let (a, b) = (pct(&main_seq, p), pct(&br_seq, p));
        println!(
            "| sequential {name} (ms, n={}) | {a:.3} | {b:.3} | {:.2}× |",
            args.sequential,
            b / a
        );
    }
    let cpu = CpuProbe::new(None, None);
    let (w, own) = (args.writers(), Sessions::OwnEach);
    let main_w = concurrent(iii, "session::append", &w, &cpu, own).await;
    let bridge_w = concurrent(&bridge, "session::append", &w, &cpu, own).await;
    println!(
        "| {} concurrent writers, {} s each (calls/s) | {:.0} | {:.0} | {:.2}× |",
        args.writers,
        args.window_secs,
        main_w.rate,
        bridge_w.rate,
        bridge_w.rate / main_w.rate
    );
    println!(
        "\nfailed calls (timeouts/errors): sequential main {main_failed}, bridge {br_failed}; \
         concurrent main {}, bridge {}; answers given up after {} ms: main {}, bridge {}",
        main_w.failed, bridge_w.failed, w.give_up_ms, main_w.lost, bridge_w.lost
    );
    bridge.shutdown_async().await;
}

/// `--peer-url`: append throughput of the writers on `--url` alone, then of as many writers on
/// each of the two engines at once (two instances on one database), per round; medians.
async fn scaled_out(iii: &IIIClient, peer_url: &str, args: &Args) {
    let peer = connect(peer_url, "session-load-peer");
    peer.wait_until_registered(Duration::from_secs(10)).await.expect("peer engine");
    let _ = sequential(&peer, "session::append", 300).await;
    let cpu = CpuProbe::new(None, None);
    let (w, own) = (args.writers(), Sessions::OwnEach);
    let (mut alone, mut both, mut failed, mut lost) = (Vec::new(), Vec::new(), 0, 0);
    for _ in 0..args.rounds.max(1) {
        let one = concurrent(iii, "session::append", &w, &cpu, own).await;
        let (a, b) = tokio::join!(
            concurrent(iii, "session::append", &w, &cpu, own),
            concurrent(&peer, "session::append", &w, &cpu, own)
        );
        failed += one.failed + a.failed + b.failed;
        lost += one.lost + a.lost + b.lost;
        alone.push(one.rate);
        both.push(a.rate + b.rate);
    }
    let (one, two) = (median(alone), median(both));
    println!(
        "\n| session::append, {} writers per instance, {} s | calls/s | × one instance |",
        w.count, args.window_secs
    );
    println!("|---|---|---|");
    println!("| 1 instance | {one:.0} | 1.00× |");
    println!("| 2 instances at once (sum) | {two:.0} | {:.2}× |", two / one);
    println!(
        "\nrounds: {}, medians; failed calls: {failed}; answers given up after {} ms: {lost}",
        args.rounds.max(1),
        w.give_up_ms
    );
    peer.shutdown_async().await;
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let iii = connect(&args.url, "session-load");
    iii.register_function(
        NOOP,
        RegisterFunction::new_async(|_: Value| async { Ok::<Value, Error>(json!({})) }),
    );
    let append_op = session_core::catalog::operation("session::append").expect("catalog");
    iii.register_function(
        NOOP_SCHEMA,
        with_schemas_of(
            append_op,
            RegisterFunction::new_async(|_: Value| async { Ok::<Value, Error>(json!({})) }),
        ),
    );
    let durable_file = args.fsync_probe.as_ref().map(|dir| {
        let (path, file) = probe_file(dir, "durable");
        register_durable_noop(&iii, file, append_op);
        path
    });
    iii.wait_until_registered(Duration::from_secs(10)).await.expect("engine registration");
    // The no-op must be routable before measuring.
    let deadline = Instant::now() + Duration::from_secs(10);
    while call(&iii, NOOP, json!({})).await.is_err() {
        assert!(Instant::now() < deadline, "{NOOP} never became callable");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let listeners = match args.listeners {
        0 => None,
        n => Some(bind_listeners(&args.url, n).await),
    };
    let iii = Arc::new(iii);
    // Warm-up of both paths.
    let _ = sequential(&iii, NOOP, 300).await;
    let _ = sequential(&iii, NOOP_SCHEMA, 300).await;
    if durable_file.is_some() {
        let _ = sequential(&iii, NOOP_DURABLE, 300).await;
    }
    let _ = sequential(&iii, "session::append", 300).await;

    let mut rounds = Vec::new();
    let total = args.rounds.max(1);
    for i in 1..=total {
        let started = Instant::now();
        rounds.push(round(&iii, &args).await);
        eprintln!(
            "session-load: round {i}/{total} done in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    let n = args.sequential;
    println!("| measurement | no-op floor | session::append | ratio |");
    println!("|---|---|---|---|");
    for (i, name) in ["p50", "p95", "p99"].into_iter().enumerate() {
        row(&format!("sequential {name} (ms, n={n})"), &rounds, |r| r.noop[i], |r| r.append[i]);
    }
    row("session::get (a read) sequential p50 (ms)", &rounds, |r| r.noop[0], |r| r.get);
    let writers = format!("{} concurrent writers, {} s (calls/s)", args.writers, args.window_secs);
    row(&writers, &rounds, |r| r.writers[0].rate, |r| r.writers[2].rate);
    row(
        &format!("{writers}, session::get (a read)"),
        &rounds,
        |r| r.writers[0].rate,
        |r| r.writers[3].rate,
    );
    let shared =
        format!("{} writers on one session, {} s (calls/s)", args.writers, args.window_secs);
    row(&shared, &rounds, |r| r.shared[0].rate, |r| r.shared[2].rate);
    println!("\n| same rounds, other floors | floor | session::append | ratio |");
    println!("|---|---|---|---|");
    row(
        "no-op registered with session::append's schemas, sequential p50 (ms)",
        &rounds,
        |r| r.noop_schema,
        |r| r.append[0],
    );
    row(
        &format!("{writers}, no-op registered with session::append's schemas"),
        &rounds,
        |r| r.writers[1].rate,
        |r| r.writers[2].rate,
    );
    row(
        &format!("{shared}, no-op registered with session::append's schemas"),
        &rounds,
        |r| r.shared[1].rate,
        |r| r.shared[2].rate,
    );
    if rounds.iter().all(|r| r.fsync.is_some()) {
        let fsync = |r: &Round| r.fsync.unwrap_or(f64::NAN);
        row("write + fdatasync alone, sequential p50 (ms)", &rounds, fsync, |r| r.append[0]);
        row(
            "durable floor: no-op p50 + fdatasync p50 (ms)",
            &rounds,
            |r| r.noop[0] + fsync(r),
            |r| r.append[0],
        );
        row(
            "no-op with append's schemas p50 + fdatasync p50 (ms)",
            &rounds,
            |r| r.noop_schema + fsync(r),
            |r| r.append[0],
        );
        row(
            "no-op with append's schemas that writes + fdatasyncs before answering, p50 (ms)",
            &rounds,
            |r| r.durable_noop.unwrap_or(f64::NAN),
            |r| r.append[0],
        );
    }
    cpu_table(&rounds, &args);
    let (failed, failed_by_phase) = per_phase(&PHASES, &rounds, |r| r.failed().collect());
    let completed: f64 = rounds
        .iter()
        .map(|r| r.writer_phases().map(|w| w.rate).sum::<f64>() * args.window_secs)
        .sum();
    let sequential_phases = if durable_file.is_some() { 5 } else { 4 };
    let calls = rounds.len() * sequential_phases * n + completed as usize;
    println!(
        "\nrounds: {}; medians per column, ratio = median of the per-round ratios (each round in \
         parentheses); failed calls (timeouts/errors): {failed} of {calls}{}",
        rounds.len(),
        if failed_by_phase.is_empty() {
            String::new()
        } else {
            format!(" ({})", failed_by_phase.join(", "))
        }
    );
    let (_, lost) =
        per_phase(&WRITER_PHASES, &rounds, |r: &Round| r.writer_phases().map(|w| w.lost).collect());
    println!(
        "answers given up after {} ms in the writers phases (lost by the engine, see --help): {}",
        args.writers().give_up_ms,
        if lost.is_empty() { "none".to_string() } else { lost.join(", ") }
    );
    if let Some(bridge_url) = &args.bridge_url {
        bridged(&iii, bridge_url, &args).await;
    }
    if let Some(peer_url) = &args.peer_url {
        scaled_out(&iii, peer_url, &args).await;
    }
    if let Some(listener) = listeners {
        listener.shutdown_async().await;
    }
    iii.shutdown_async().await;
    if let Some(path) = durable_file {
        let _ = std::fs::remove_file(path);
    }
}

/// `function` registered with `op`'s request and response schemas (what the engine and iii-sdk
/// copy on every call).
fn with_schemas_of(
    op: &session_core::catalog::Operation,
    function: RegisterFunction,
) -> RegisterFunction {
    function.request_format((op.request_schema)()).response_format((op.response_schema)())
}

/// Registers [`NOOP_DURABLE`], appending to `file`.
fn register_durable_noop(
    iii: &IIIClient,
    file: std::fs::File,
    append_op: &session_core::catalog::Operation,
) {
    use std::io::Write as _;
    let file = Arc::new(std::sync::Mutex::new(file));
    let durable_noop = RegisterFunction::new_async(move |_: Value| {
        let file = Arc::clone(&file);
        async move {
            let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
            let written = file.write_all(&PROBE_LINE).and_then(|()| file.sync_data());
            written.map_err(|e| Error::Handler(format!("durable no-op: {e}")))?;
            Ok::<Value, Error>(json!({}))
        }
    });
    iii.register_function(NOOP_DURABLE, with_schemas_of(append_op, durable_noop));
}

/// A connection with `n` no-op functions, each bound to `session::message-added` (no filter).
async fn bind_listeners(url: &str, n: usize) -> IIIClient {
    let listener = connect(url, "session-load-listener");
    for i in 0..n {
        let id = format!("session-load::listener-{i}");
        listener.register_function(
            id.as_str(),
            RegisterFunction::new_async(|_: Value| async { Ok::<Value, Error>(json!({})) }),
        );
        listener
            .register_trigger(iii_sdk::protocol::RegisterTriggerInput {
                trigger_type: "session::message-added".into(),
                function_id: id,
                config: json!({}),
                metadata: None,
                namespace: None,
                trigger_namespace: None,
            })
            .expect("bind listener");
    }
    listener.wait_until_registered(Duration::from_secs(10)).await.expect("listener registration");
    println!("{n} listener(s) bound to session::message-added\n");
    listener
}
