//! Steps of the bridge topology scenarios (`engine_bridge.feature`): a main engine with its
//! session-manager in fs mode and N engines whose session-managers bridge to it. Instances are
//! named `main`, `bridge 1`, `bridge 2`, …; the plain engine steps act on the main.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cucumber::codegen::{LocalBoxFuture, Regex};
use cucumber::step::Context;
use cucumber::{given, then, when};
use serde_json::{json, Value};
use session_manager::functions::READY_PROBE;

use super::harness::Harness;
use super::steps::{keep, record, subst, until_ok};
use super::{engine_state, EngineState, III_BIN};
use crate::json;
use crate::world::SessionWorld;

/// Per-call timeout of the bridges' store calls in these scenarios.
const BRIDGE_TIMEOUT_MS: u64 = 2000;

/// `Given a main engine with session-manager and 2 bridged engines` (`a seed-only main …`: the
/// main registers only the seed's functions, as v1.0.32 does).
pub fn topology_regex() -> Regex {
    Regex::new(r"^a (seed-only )?main engine with session-manager and (\d+) bridged engines?$")
        .expect("regex")
}

/// Starts the main, then each bridge (seeded with a bridge config to the main), and waits until
/// every bridge reads through the main.
pub fn topology_step<'a>(world: &'a mut SessionWorld, ctx: Context) -> LocalBoxFuture<'a, ()> {
    Box::pin(async move {
        let seed_only = !ctx.matches[1].1.is_empty();
        let n: usize = ctx.matches[2].1.parse().expect("bridge count");
        let bin = std::env::var(III_BIN).expect("III_BIN");
        let mut main = Harness::engine_only(&bin);
        if seed_only {
            main.worker_args.push("--seed-only".into());
        }
        main.start_worker().await;
        let seed = format!(
            "adapter:\n  name: bridge\n  config:\n    url: {}\n    timeout_ms: {BRIDGE_TIMEOUT_MS}\n",
            main.url()
        );
        let mut state = engine_state(main);
        state.vars.insert("main_url".into(), state.harness.url());
        for _ in 0..n {
            let bridge = Harness::start_with(&bin, Some(&seed)).await;
            let deadline = Instant::now() + Duration::from_secs(20);
            while bridge.call("session::list", json!({}), false).await.is_err() {
                assert!(Instant::now() < deadline, "bridge never reached the main");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if state.peers.is_empty() {
                state.vars.insert("bridge_url".into(), bridge.url());
            }
            state.peers.push(bridge);
        }
        // The relay binding travels right behind the first store call; let it settle.
        tokio::time::sleep(Duration::from_millis(300)).await;
        world.engine = Some(state);
    })
}

pub(super) fn st(w: &mut SessionWorld) -> &mut EngineState {
    w.engine.as_mut().expect("no topology: start with `Given a main engine with …`")
}

/// `main` / `bridge N` in bridge topologies, `instance N` (1 = the first) in postgres ones.
pub(super) fn instance<'a>(state: &'a EngineState, name: &str) -> &'a Harness {
    if name == "main" || name == "instance 1" {
        return &state.harness;
    }
    if let Some(n) = name.strip_prefix("instance ").and_then(|n| n.parse::<usize>().ok()) {
        return &state.peers[n - 2];
    }
    let n: usize = name.strip_prefix("bridge ").and_then(|n| n.parse().ok()).expect("instance");
    &state.peers[n - 1]
}

/// One call on the named instance; the outcome becomes the last one.
pub(super) async fn call_on(
    state: &mut EngineState,
    name: &str,
    function_id: &str,
    payload: Value,
) {
    let retry = function_id.starts_with("session::get") || function_id == "session::list";
    let result = instance(state, name).call(function_id, payload, retry).await;
    record(state, result);
}

#[when(regex = r#"^on "([^"]+)" the client calls "([^"]+)" with (\{.*\})$"#)]
async fn calls_on(w: &mut SessionWorld, name: String, function_id: String, payload: String) {
    let state = st(w);
    let payload = subst(state, &payload);
    call_on(state, &name, &function_id, payload).await;
}

#[when(
    regex = r#"^on "([^"]+)" the client calls "([^"]+)" with (\{.*\}) and keeps "([^"]+)" as "(\w+)"$"#
)]
async fn calls_on_keeps(
    w: &mut SessionWorld,
    name: String,
    function_id: String,
    payload: String,
    path: String,
    var: String,
) {
    let state = st(w);
    let payload = subst(state, &payload);
    call_on(state, &name, &function_id, payload).await;
    keep(state, &path, var);
}

#[then(
    regex = r#"^on "([^"]+)" the client call "([^"]+)" with (\{.*\}) succeeds within (\d+) seconds$"#
)]
async fn succeeds_within(
    w: &mut SessionWorld,
    name: String,
    function_id: String,
    payload: String,
    secs: u64,
) {
    let state = st(w);
    let payload = subst(state, &payload);
    until_ok(state, Some(&name), &function_id, &payload, secs).await;
}

#[given(regex = r#"^on "([^"]+)" handler "([^"]+)" is bound to "([^"]+)" with config (\{.*\})$"#)]
async fn bound_on(w: &mut SessionWorld, name: String, handler: String, tt: String, config: String) {
    let state = st(w);
    let config = subst(state, &config);
    let h = instance(state, &name);
    let function_id = h.handler(&handler);
    let payload = json!({ "trigger_type": tt, "function_id": function_id, "config": config });
    h.call("engine::register_trigger", payload, false).await.expect("binding accepted");
}

#[then(regex = r#"^on "([^"]+)" handler "([^"]+)" receives (\d+) events?$"#)]
async fn receives_on(w: &mut SessionWorld, name: String, handler: String, n: usize) {
    let h = instance(st(w), &name);
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.received(&handler).len() < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A duplicate would arrive right behind.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got = h.received(&handler);
    assert_eq!(got.len(), n, "{name}: {handler} received {got:#?}");
}

/// `Then on "bridge 1" handler "h" received "seq" values in any order "1, 2"`: that key of every
/// delivery, as a multiset (deliveries through the engine are unordered; run after a `receives N
/// events` step waited for them).
#[then(
    regex = r#"^on "([^"]+)" handler "([^"]+)" received "([^"]+)" values in any order "([^"]*)"$"#
)]
async fn received_values_on(
    w: &mut SessionWorld,
    name: String,
    handler: String,
    key: String,
    values: String,
) {
    let got = instance(st(w), &name).received(&handler);
    let actual: Vec<String> = got
        .iter()
        .map(|p| match p.get(&key) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => panic!("{name}: {handler}: a delivery without {key}: {p}"),
        })
        .collect();
    let mut want: Vec<String> =
        values.split(',').map(str::trim).filter(|v| !v.is_empty()).map(String::from).collect();
    let mut actual = actual;
    actual.sort();
    want.sort();
    assert_eq!(actual, want, "{name}: {handler} received {got:#?}");
}

#[then(regex = r#"^on "([^"]+)" the worker data dir "([^"]+)" holds (\d+) session files?$"#)]
fn data_files_on(w: &mut SessionWorld, name: String, dir: String, n: usize) {
    super::steps::assert_session_files(&instance(st(w), &name).dir.join(dir), n);
}

#[when(regex = r#"^on "([^"]+)" the stored configuration is set to (\{.*\})$"#)]
async fn set_config_on(w: &mut SessionWorld, name: String, value: String) {
    let state = st(w);
    let value = subst(state, &value);
    let payload = json!({ "id": "session-manager", "value": value });
    let h = instance(state, &name);
    h.call("configuration::set", payload, true).await.expect("configuration::set");
}

#[then(regex = r#"^on "([^"]+)" the config status becomes (\{.*\})$"#)]
async fn config_status_on(w: &mut SessionWorld, name: String, expected: String) {
    let state = st(w);
    let expected = subst(state, &expected);
    let h = instance(state, &name);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = h.call("session::config-status", json!({}), true).await.expect("status");
        let mut diffs = Vec::new();
        json::subset_diff(&expected, &status, "", &mut diffs);
        if diffs.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{diffs:?} in {status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[when(regex = r#"^the main worker is killed with SIGKILL$"#)]
async fn kill_main_worker(w: &mut SessionWorld) {
    st(w).harness.kill_worker().await;
}

#[when(regex = r#"^the main worker is started again$"#)]
async fn start_main_worker(w: &mut SessionWorld) {
    st(w).harness.start_worker().await;
}

#[when(regex = r#"^the main engine is killed$"#)]
fn kill_main_engine(w: &mut SessionWorld) {
    st(w).harness.kill_engine();
}

#[when(regex = r#"^the main engine is started again$"#)]
async fn restart_main_engine(w: &mut SessionWorld) {
    let bin = std::env::var(III_BIN).expect("III_BIN");
    let state = st(w);
    state.harness.restart_engine(&bin);
    // The main worker reconnects by itself; wait until it serves again.
    let deadline = Instant::now() + Duration::from_secs(30);
    while state.harness.call(READY_PROBE, json!({}), false).await.is_err() {
        assert!(Instant::now() < deadline, "the main worker did not come back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Appends `n` messages with ids `e_<tag>_<i>` through `h`, retrying each until acknowledged
/// (the id makes a retry an idempotent replay). Returns the acknowledged ids and how many
/// attempts answered `session/storage`.
pub(super) async fn append_load(
    h: &Harness,
    tag: String,
    sid: &str,
    n: usize,
    acked_total: &AtomicUsize,
) -> (Vec<String>, usize) {
    let (mut acked, mut storage) = (Vec::new(), 0);
    for i in 0..n {
        let entry_id = format!("e_{tag}_{i:04}");
        let message = json!({"role": "user", "content": [{"type": "text", "text": entry_id}], "timestamp": i});
        let payload = json!({"session_id": sid, "entry_id": entry_id, "message": message});
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match h.call("session::append", payload.clone(), false).await {
                Ok(reply) => {
                    assert_eq!(reply["entry_id"], entry_id.as_str());
                    acked.push(entry_id);
                    acked_total.fetch_add(1, Ordering::SeqCst);
                    break;
                }
                Err(iii_sdk::Error::Remote { code, .. }) if code == "session/storage" => {
                    storage += 1;
                }
                Err(_) => {}
            }
            assert!(Instant::now() < deadline, "{entry_id} never acknowledged");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    (acked, storage)
}

/// Appends `n` messages through every peer at once; with `chaos`, the main's worker is killed
/// (SIGKILL) once a third is acknowledged and started again a second later.
pub(super) async fn load(state: &mut EngineState, n: usize, var: &str, chaos: bool) {
    let sid = state.vars[var].clone();
    let acked_total = AtomicUsize::new(0);
    let (main, peers) = (&mut state.harness, &state.peers);
    let appenders = futures::future::join_all(
        peers
            .iter()
            .enumerate()
            .map(|(i, h)| append_load(h, format!("b{}", i + 1), &sid, n, &acked_total)),
    );
    let outage = async {
        if !chaos {
            return;
        }
        while acked_total.load(Ordering::SeqCst) < n * peers.len() / 3 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        main.kill_worker().await;
        tokio::time::sleep(Duration::from_millis(1000)).await;
        main.start_worker().await;
    };
    let (results, ()) = futures::join!(appenders, outage);
    let acked: Vec<String> = results.iter().flat_map(|(a, _)| a.clone()).collect();
    let storage: usize = results.iter().map(|(_, s)| s).sum();
    state.vars.insert("acked".into(), serde_json::to_string(&acked).expect("json"));
    state.vars.insert("storage_errors".into(), storage.to_string());
}

#[when(regex = r#"^every bridge appends (\d+) messages to "\$\{(\w+)\}" concurrently$"#)]
async fn every_bridge_appends(w: &mut SessionWorld, n: usize, var: String) {
    load(st(w), n, &var, false).await;
}

#[when(
    regex = r#"^every bridge appends (\d+) messages to "\$\{(\w+)\}" concurrently while the main worker is killed and restarted$"#
)]
async fn every_bridge_appends_chaos(w: &mut SessionWorld, n: usize, var: String) {
    load(st(w), n, &var, true).await;
}

#[then(regex = r#"^some bridge appends answered "session/storage" meanwhile$"#)]
fn storage_seen(w: &mut SessionWorld) {
    let n: usize = st(w).vars["storage_errors"].parse().expect("count");
    assert!(n > 0, "no append answered session/storage during the outage");
}

/// Every acknowledged id once, on one chain: the active path holds exactly the acknowledged ids,
/// the store holds no other entry, and the count agrees.
#[then(
    regex = r#"^the main holds every acknowledged id of "\$\{(\w+)\}" exactly once in one chain$"#
)]
async fn one_chain(w: &mut SessionWorld, var: String) {
    assert_one_chain(st(w), &var, "main").await;
}

/// [`one_chain`] read through the named instance.
pub(super) async fn assert_one_chain(state: &EngineState, var: &str, through: &str) {
    let sid = state.vars[var].clone();
    let mut acked: Vec<String> = serde_json::from_str(&state.vars["acked"]).expect("acked");
    let h = instance(state, through);
    let reply = h
        .call("session::messages", json!({"session_id": sid, "limit": 500}), true)
        .await
        .expect("messages");
    let mut path: Vec<String> = reply["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["entry_id"].as_str().expect("entry_id").to_string())
        .collect();
    let stored = h
        .call("session::store::list-entries", json!({"session_id": sid}), true)
        .await
        .expect("list-entries");
    let stored = stored["entries"].as_array().map(Vec::len);
    let meta = h.call("session::get", json!({"session_id": sid}), true).await.expect("get");
    assert_eq!(stored, Some(path.len()), "entries off the active path");
    assert_eq!(meta["meta"]["message_count"], json!(path.len()));
    path.sort();
    acked.sort();
    assert_eq!(path, acked);
}
