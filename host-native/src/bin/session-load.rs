//! session-load: drives a running session-manager through the engine and reports
//! `session::append` latency percentiles (sequential) and throughput (concurrent writers, one
//! session each) next to a no-op function this tool registers itself, measured in the same run.
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
}

const NOOP: &str = "session-load::noop";

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

fn connect(url: &str, name: &str) -> IIIClient {
    let meta = iii_sdk::runtime::WorkerMetadata { name: name.into(), ..Default::default() };
    register_worker(
        url,
        InitOptions {
            metadata: Some(meta),
            identity: iii_sdk::WorkerIdentityMode::Explicit,
            ..Default::default()
        },
    )
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
    iii.wait_until_registered(Duration::from_secs(10)).await.expect("engine registration");
    // The no-op must be routable before measuring.
    let deadline = Instant::now() + Duration::from_secs(10);
    while call(&iii, NOOP, json!({})).await.is_err() {
        assert!(Instant::now() < deadline, "{NOOP} never became callable");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let iii = Arc::new(iii);
    // Warm-up of both paths.
    let _ = sequential(&iii, NOOP, 300).await;
    let _ = sequential(&iii, "session::append", 300).await;

    println!("| measurement | no-op floor | session::append | ratio |");
    println!("|---|---|---|---|");
    let (noop, noop_failed) = sequential(&iii, NOOP, args.sequential).await;
    let (append, append_failed) = sequential(&iii, "session::append", args.sequential).await;
    let (get, _) = sequential(&iii, "session::get", args.sequential).await;
    for (name, p) in [("p50", 0.50), ("p95", 0.95), ("p99", 0.99)] {
        let (a, b) = (pct(&noop, p), pct(&append, p));
        println!(
            "| sequential {name} (ms, n={}) | {a:.3} | {b:.3} | {:.2}× |",
            args.sequential,
            b / a
        );
    }
    let (g, floor) = (pct(&get, 0.5), pct(&noop, 0.5));
    println!(
        "| session::get (a read) sequential p50 (ms) | {floor:.3} | {g:.3} | {:.2}× |",
        g / floor
    );
    let (noop_tp, noop_cf) = concurrent(&iii, NOOP, args.writers, args.per_writer).await;
    let (append_tp, append_cf) =
        concurrent(&iii, "session::append", args.writers, args.per_writer).await;
    println!(
        "| {} concurrent writers × {} calls (calls/s) | {noop_tp:.0} | {append_tp:.0} | {:.2}× |",
        args.writers,
        args.per_writer,
        append_tp / noop_tp
    );
    println!(
        "\nfailed calls (timeouts/errors): sequential no-op {noop_failed}, append {append_failed}; \
         concurrent no-op {noop_cf}, append {append_cf}"
    );
    if let Some(bridge_url) = &args.bridge_url {
        bridged(&iii, bridge_url, &args).await;
    }
    iii.shutdown_async().await;
}
