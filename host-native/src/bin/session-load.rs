//! session-load: drives a running session-manager through the engine and reports
//! `session::append` latency percentiles (sequential) and throughput (concurrent writers, one
//! session each) next to a no-op function this tool registers itself, measured in the same run.
//!
//! `--rounds N` repeats everything and prints medians; a second table puts append next to a no-op
//! carrying append's schemas (iii-sdk and the engine both copy a function's registration, schemas
//! included, on every invocation) and, with `--fsync-probe
//! <dir on the worker's disk>`, next to a bare write + fdatasync there (what durability must wait).
//!
//! With `--bridge-url` (the engine of a session-manager bridged to the one on `--url`) it also
//! reports `session::append` through the bridge next to the same run's append on the main.
//!
//! `cargo run --release -p session-manager --bin session-load -- --url ws://127.0.0.1:49134`

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;

use iii_sdk::protocol::TriggerRequest;
use iii_sdk::{register_worker, Error, IIIClient, InitOptions, RegisterFunction};
use serde_json::{json, Value};

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
    /// Calls per concurrent writer.
    #[arg(long, default_value_t = 300)]
    per_writer: usize,
    /// Engine of a session-manager bridged to the one on `--url`: also measure append through it.
    #[arg(long)]
    bridge_url: Option<String>,
    /// Repeat the whole measurement this many times; the table shows medians.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// A directory on the worker's disk (e.g. its data_dir): also time sequential
    /// write + fdatasync of a record-sized line there, the least a durable append must wait.
    #[arg(long)]
    fsync_probe: Option<std::path::PathBuf>,
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

async fn call(iii: &IIIClient, function_id: &str, payload: Value) -> Result<Value, Error> {
    let request = TriggerRequest {
        function_id: function_id.into(),
        payload,
        action: None,
        timeout_ms: Some(5000),
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

/// Latencies of `n` sequential calls, sorted, in microseconds; and the failure count.
async fn sequential(iii: &IIIClient, function_id: &str, n: usize) -> (Vec<u64>, usize) {
    let sid = new_session(iii).await;
    let (mut lat, mut failed) = (Vec::with_capacity(n), 0);
    for i in 0..n {
        let start = Instant::now();
        match call(iii, function_id, payload_for(function_id, &sid, i)).await {
            Ok(_) => lat.push(start.elapsed().as_micros() as u64),
            Err(_) => failed += 1,
        }
    }
    lat.sort_unstable();
    (lat, failed)
}

/// Calls/s of `writers` concurrent writers doing `per` calls each (own session each).
async fn concurrent(
    iii: &IIIClient,
    function_id: &'static str,
    writers: usize,
    per: usize,
) -> (f64, usize) {
    let mut sids = Vec::new();
    for _ in 0..writers {
        sids.push(new_session(iii).await);
    }
    let start = Instant::now();
    let tasks: Vec<_> = sids
        .into_iter()
        .map(|sid| {
            let iii = iii.clone();
            tokio::spawn(async move {
                let mut failed = 0;
                for i in 0..per {
                    if call(&iii, function_id, payload_for(function_id, &sid, i)).await.is_err() {
                        failed += 1;
                    }
                }
                failed
            })
        })
        .collect();
    let mut failed = 0;
    for task in tasks {
        failed += task.await.unwrap_or(per);
    }
    let ok = writers * per - failed;
    (ok as f64 / start.elapsed().as_secs_f64(), failed)
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx] as f64 / 1000.0
}

/// A connection with the worker's telemetry setting (OpenTelemetry off unless `OTEL_ENABLED`), so
/// the floor pays what the worker pays.
fn connect(url: &str, name: &str) -> IIIClient {
    let meta = iii_sdk::runtime::WorkerMetadata { name: name.into(), ..Default::default() };
    let options = InitOptions {
        metadata: Some(meta),
        identity: iii_sdk::WorkerIdentityMode::Explicit,
        ..Default::default()
    };
    register_worker(url, session_manager::worker::with_telemetry(options))
}

/// Sorted latencies (µs) of `n` sequential write + fdatasync of a record-sized line in `dir`.
fn fsync_probe(dir: &std::path::Path, n: usize) -> Vec<u64> {
    use std::io::Write as _;
    let path = dir.join(format!(".session-load-probe-{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("fsync probe file");
    let line = [b'x'; 420];
    let mut lat: Vec<u64> = (0..n)
        .map(|_| {
            let start = Instant::now();
            file.write_all(&line).expect("probe write");
            file.sync_data().expect("probe fdatasync");
            start.elapsed().as_micros() as u64
        })
        .collect();
    let _ = std::fs::remove_file(&path);
    lat.sort_unstable();
    lat
}

/// One round's figures (ms, calls/s).
#[derive(Debug, Default, Clone)]
struct Round {
    noop: [f64; 3],
    append: [f64; 3],
    get: f64,
    noop_schema: f64,
    fsync: Option<f64>,
    noop_tp: f64,
    noop_schema_tp: f64,
    append_tp: f64,
    failed: [usize; 4],
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
    let (get, _) = sequential(iii, "session::get", args.sequential).await;
    let (noop_schema, _) = sequential(iii, NOOP_SCHEMA, args.sequential).await;
    let (noop_tp, noop_cf) = concurrent(iii, NOOP, args.writers, args.per_writer).await;
    let (noop_schema_tp, _) = concurrent(iii, NOOP_SCHEMA, args.writers, args.per_writer).await;
    let (append_tp, append_cf) =
        concurrent(iii, "session::append", args.writers, args.per_writer).await;
    Round {
        noop: ps.map(|p| pct(&noop, p)),
        append: ps.map(|p| pct(&append, p)),
        get: pct(&get, 0.5),
        noop_schema: pct(&noop_schema, 0.5),
        fsync,
        noop_tp,
        noop_schema_tp,
        append_tp,
        failed: [noop_failed, append_failed, noop_cf, append_cf],
    }
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
    let (main_tp, main_cf) =
        concurrent(iii, "session::append", args.writers, args.per_writer).await;
    let (br_tp, br_cf) =
        concurrent(&bridge, "session::append", args.writers, args.per_writer).await;
    println!(
        "| {} concurrent writers × {} calls (calls/s) | {main_tp:.0} | {br_tp:.0} | {:.2}× |",
        args.writers,
        args.per_writer,
        br_tp / main_tp
    );
    println!(
        "\nfailed calls (timeouts/errors): sequential main {main_failed}, bridge {br_failed}; \
         concurrent main {main_cf}, bridge {br_cf}"
    );
    bridge.shutdown_async().await;
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
        RegisterFunction::new_async(|_: Value| async { Ok::<Value, Error>(json!({})) })
            .request_format((append_op.request_schema)())
            .response_format((append_op.response_schema)()),
    );
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
    let _ = sequential(&iii, "session::append", 300).await;

    let mut rounds = Vec::new();
    for _ in 0..args.rounds.max(1) {
        rounds.push(round(&iii, &args).await);
    }
    let n = args.sequential;
    println!("| measurement | no-op floor | session::append | ratio |");
    println!("|---|---|---|---|");
    for (i, name) in ["p50", "p95", "p99"].into_iter().enumerate() {
        row(&format!("sequential {name} (ms, n={n})"), &rounds, |r| r.noop[i], |r| r.append[i]);
    }
    row("session::get (a read) sequential p50 (ms)", &rounds, |r| r.noop[0], |r| r.get);
    let writers =
        format!("{} concurrent writers × {} calls (calls/s)", args.writers, args.per_writer);
    row(&writers, &rounds, |r| r.noop_tp, |r| r.append_tp);
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
        |r| r.noop_schema_tp,
        |r| r.append_tp,
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
    }
    let failed: usize = rounds.iter().map(|r| r.failed.iter().sum::<usize>()).sum();
    let calls = rounds.len() * (4 * n + 3 * args.writers * args.per_writer);
    println!(
        "\nrounds: {}; medians per column, ratio = median of the per-round ratios (each round in \
         parentheses); failed calls (timeouts/errors): {failed} of {calls}",
        rounds.len()
    );
    if let Some(bridge_url) = &args.bridge_url {
        bridged(&iii, bridge_url, &args).await;
    }
    if let Some(listener) = listeners {
        listener.shutdown_async().await;
    }
    iii.shutdown_async().await;
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
