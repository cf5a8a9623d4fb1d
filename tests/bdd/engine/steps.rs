//! Steps of the `@engine` scenarios (vocabulary in `tests/features/STEPS.md`, "Engine steps").
//! JSON in steps may use `${name}` for values kept from earlier responses.

use std::time::{Duration, Instant};

use cucumber::{given, then, when};
use serde_json::{json, Value};
use session_core::catalog::{operation, OpKind};

use super::EngineState;
use crate::json;
use crate::world::SessionWorld;

fn st(w: &mut SessionWorld) -> &mut EngineState {
    w.engine.as_mut().expect("no engine: start with `Given a running engine with session-manager`")
}

pub(super) fn subst(state: &EngineState, text: &str) -> Value {
    let mut text = text.to_string();
    for (name, value) in &state.vars {
        text = text.replace(&format!("${{{name}}}"), value);
    }
    json::parse(&text)
}

fn idempotent(function_id: &str, payload: &Value) -> bool {
    match operation(function_id).map(|op| op.kind) {
        Some(OpKind::Read | OpKind::Operator) => true,
        Some(OpKind::Mutation) => {
            payload.get("entry_id").is_some()
                || matches!(
                    function_id,
                    "session::ensure"
                        | "session::set-meta"
                        | "session::set-status"
                        | "session::set-draft"
                        | "session::set-active-leaf"
                        | "session::delete"
                        | "session::set-expiry"
                )
        }
        _ => {
            function_id.starts_with("session::store::get")
                || function_id.starts_with("session::store::list")
        }
    }
}

async fn call(state: &mut EngineState, function_id: &str, payload: Value) {
    let retry = idempotent(function_id, &payload);
    let namespace = state.namespace.clone();
    let result = state.harness.call_in(namespace.as_deref(), function_id, payload, retry).await;
    record(state, result);
}

/// Keeps a call's outcome as the last one; an error as `(code, message)` (`transport` when the
/// engine gave no code).
pub(super) fn record(state: &mut EngineState, result: Result<Value, iii_sdk::Error>) {
    state.last = Some(result.map_err(|e| match e {
        iii_sdk::Error::Remote { code, message, .. } => (code, message),
        other => ("transport".to_string(), other.to_string()),
    }));
}

/// For a worker that something else starts or restarts: calls `function_id` on `instance` (`None`:
/// the main) every 200 ms until one succeeds; fails after `secs`.
pub(super) async fn until_ok(
    state: &mut EngineState,
    instance: Option<&str>,
    function_id: &str,
    payload: &Value,
    secs: u64,
) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        match instance {
            Some(name) => super::bridge::call_on(state, name, function_id, payload.clone()).await,
            None => call(state, function_id, payload.clone()).await,
        }
        if matches!(state.last, Some(Ok(_))) {
            return;
        }
        assert!(Instant::now() < deadline, "still failing: {:?}", state.last);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn response(state: &EngineState) -> &Value {
    match &state.last {
        Some(Ok(v)) => v,
        Some(Err(e)) => panic!("the engine call failed: {e:?}"),
        None => panic!("no engine call was made"),
    }
}

#[when(regex = r#"^the client calls "([^"]+)" with (\{.*\})$"#)]
async fn client_calls(w: &mut SessionWorld, function_id: String, payload: String) {
    let state = st(w);
    let payload = subst(state, &payload);
    call(state, &function_id, payload).await;
}

#[when(regex = r#"^the client calls "([^"]+)" with (\{.*\}) and keeps "([^"]+)" as "(\w+)"$"#)]
async fn client_calls_keeps(
    w: &mut SessionWorld,
    function_id: String,
    payload: String,
    path: String,
    var: String,
) {
    let state = st(w);
    let payload = subst(state, &payload);
    call(state, &function_id, payload).await;
    keep(state, &path, var);
}

/// Keeps the last response's field at `path` as `${var}` (strings unquoted).
pub(super) fn keep(state: &mut EngineState, path: &str, var: String) {
    let value = json::at(response(state), path)
        .unwrap_or_else(|| panic!("no {path} in {:?}", state.last))
        .clone();
    let text = match value {
        Value::String(s) => s,
        other => other.to_string(),
    };
    state.vars.insert(var, text);
}

/// For a worker that something else starts: calls every 200 ms until one succeeds.
#[then(
    regex = r#"^the client call "([^"]+)" with (\{.*\}) succeeds within (\d+) seconds and keeps "([^"]+)" as "(\w+)"$"#
)]
async fn succeeds_within_keeps(
    w: &mut SessionWorld,
    function_id: String,
    payload: String,
    secs: u64,
    path: String,
    var: String,
) {
    let state = st(w);
    let payload = subst(state, &payload);
    until_ok(state, None, &function_id, &payload, secs).await;
    keep(state, &path, var);
}

#[then(regex = r#"^the engine call succeeds$"#)]
fn call_succeeds(w: &mut SessionWorld) {
    response(st(w));
}

#[then(regex = r#"^the engine call fails with code "([^"]+)"$"#)]
fn call_fails(w: &mut SessionWorld, code: String) {
    match &st(w).last {
        Some(Err((got, message))) => {
            assert_eq!(got, &code, "message: {message}");
            assert!(message.starts_with(&format!("{code}: ")), "{message}");
        }
        other => panic!("expected {code}, got {other:?}"),
    }
}

#[then(regex = r#"^the engine call fails mentioning "([^"]+)"$"#)]
fn call_fails_mentioning(w: &mut SessionWorld, text: String) {
    match &st(w).last {
        Some(Err((_, message))) => assert!(message.contains(&text), "{message}"),
        other => panic!("expected a failure mentioning {text}, got {other:?}"),
    }
}

#[then(regex = r#"^the engine response contains (\{.*\})$"#)]
fn response_contains(w: &mut SessionWorld, expected: String) {
    let state = st(w);
    let expected = subst(state, &expected);
    let mut diffs = Vec::new();
    json::subset_diff(&expected, response(state), "", &mut diffs);
    assert!(diffs.is_empty(), "{diffs:?} in {}", response(state));
}

#[then(regex = r#"^the engine response field "([^"]+)" is (.+)$"#)]
fn response_field(w: &mut SessionWorld, path: String, expected: String) {
    let state = st(w);
    let expected = subst(state, &expected);
    assert_eq!(json::at(response(state), &path), Some(&expected), "in {}", response(state));
}

#[then(regex = r#"^the engine response field "([^"]+)" has (\d+) items?$"#)]
fn response_len(w: &mut SessionWorld, path: String, n: usize) {
    let state = st(w);
    let items = json::at(response(state), &path).and_then(Value::as_array).map(Vec::len);
    assert_eq!(items, Some(n), "in {}", response(state));
}

async fn bind(
    state: &mut EngineState,
    handler: &str,
    trigger_type: &str,
    config: Value,
) -> Result<(), String> {
    let function_id = state.harness.handler(handler);
    let payload =
        json!({ "trigger_type": trigger_type, "function_id": function_id, "config": config });
    match state.harness.call("engine::register_trigger", payload, false).await {
        Ok(reply) => {
            let id = reply["id"].as_str().expect("trigger id").to_string();
            state.bindings.insert(handler.to_string(), id);
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    }
}

#[given(regex = r#"^handler "([^"]+)" is bound to "([^"]+)" with config (\{.*\})$"#)]
async fn bound(w: &mut SessionWorld, handler: String, trigger_type: String, config: String) {
    let state = st(w);
    let config = subst(state, &config);
    bind(state, &handler, &trigger_type, config).await.expect("binding accepted");
}

#[when(regex = r#"^the client binds handler "([^"]+)" to "([^"]+)" with config (\{.*\})$"#)]
async fn binds(w: &mut SessionWorld, handler: String, trigger_type: String, config: String) {
    let state = st(w);
    let config = subst(state, &config);
    let result = bind(state, &handler, &trigger_type, config).await;
    state.last = Some(result.map(|()| json!({})).map_err(|e| ("binding".into(), e)));
}

#[when(regex = r#"^the client unbinds handler "([^"]+)"$"#)]
async fn unbinds(w: &mut SessionWorld, handler: String) {
    let state = st(w);
    let id = state.bindings.remove(&handler).expect("handler is bound");
    state
        .harness
        .call("engine::unregister_trigger", json!({ "id": id }), true)
        .await
        .expect("unbind");
}

async fn wait_for(state: &EngineState, handler: &str, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(5);
    while state.harness.received(handler).len() < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Anything beyond `n` would arrive right behind.
    tokio::time::sleep(Duration::from_millis(200)).await;
    state.harness.received(handler)
}

#[then(regex = r#"^handler "([^"]+)" receives (\d+) events?$"#)]
async fn receives(w: &mut SessionWorld, handler: String, n: usize) {
    let got = wait_for(st(w), &handler, n).await;
    assert_eq!(got.len(), n, "{handler} received {got:#?}");
}

#[then(regex = r#"^handler "([^"]+)" receives nothing$"#)]
async fn receives_nothing(w: &mut SessionWorld, handler: String) {
    tokio::time::sleep(Duration::from_millis(400)).await;
    let got = st(w).harness.received(&handler);
    assert!(got.is_empty(), "{handler} received {got:#?}");
}

#[then(regex = r#"^handler "([^"]+)" event (\d+) contains (\{.*\})$"#)]
fn event_contains(w: &mut SessionWorld, handler: String, n: usize, expected: String) {
    let state = st(w);
    let expected = subst(state, &expected);
    let got = state.harness.received(&handler);
    let actual = got.get(n - 1).unwrap_or_else(|| panic!("{handler} has {} events", got.len()));
    let mut diffs = Vec::new();
    json::subset_diff(&expected, actual, "", &mut diffs);
    assert!(diffs.is_empty(), "{diffs:?} in {actual}");
}

#[then(
    regex = r#"^a second worker with the same name exits within (\d+) seconds mentioning "([^"]+)"$"#
)]
async fn duplicate_worker_exits(w: &mut SessionWorld, secs: u64, needle: String) {
    let (code, output) = st(w).harness.run_duplicate_worker(Duration::from_secs(secs));
    assert!(code.is_some(), "the second worker was still running after {secs} s:\n{output}");
    assert_ne!(code, Some(0), "the second worker exited 0:\n{output}");
    assert!(output.contains(&needle), "no {needle:?} in the second worker's output:\n{output}");
}

/// `${var}` = the wall clock in milliseconds since the epoch plus `ms` (the worker's clock is
/// the same machine's).
#[when(regex = r#"^the client keeps the time (\d+) ms from now as "(\w+)"$"#)]
fn time_from_now(w: &mut SessionWorld, ms: u64, var: String) {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock");
    let at = now.as_millis() as u64 + ms;
    st(w).vars.insert(var, at.to_string());
}

/// Polls the call every 100 ms until it answers exactly `expected`; fails once `ms` have passed
/// since the step began.
#[then(regex = r#"^within (\d+) ms the client call "([^"]+)" with (\{.*\}) answers (.+)$"#)]
async fn answers_within(
    w: &mut SessionWorld,
    ms: u64,
    function_id: String,
    payload: String,
    expected: String,
) {
    poll_until_answer(st(w), None, ms, &function_id, &payload, &expected).await;
}

/// [`answers_within`] on one instance of a topology.
#[then(
    regex = r#"^within (\d+) ms on "([^"]+)" the client call "([^"]+)" with (\{.*\}) answers (.+)$"#
)]
async fn answers_within_on(
    w: &mut SessionWorld,
    ms: u64,
    instance: String,
    function_id: String,
    payload: String,
    expected: String,
) {
    poll_until_answer(st(w), Some(&instance), ms, &function_id, &payload, &expected).await;
}

async fn poll_until_answer(
    state: &mut EngineState,
    instance: Option<&str>,
    ms: u64,
    function_id: &str,
    payload: &str,
    expected: &str,
) {
    let started = Instant::now();
    let (payload, expected) = (subst(state, payload), subst(state, expected));
    loop {
        match instance {
            Some(name) => super::bridge::call_on(state, name, function_id, payload.clone()).await,
            None => call(state, function_id, payload.clone()).await,
        }
        if matches!(&state.last, Some(Ok(got)) if *got == expected) {
            println!("      answered {expected} after {} ms", started.elapsed().as_millis());
            return;
        }
        assert!(
            started.elapsed() < Duration::from_millis(ms),
            "not {expected} within {ms} ms: {:?}",
            state.last
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[when(regex = r#"^the worker is killed with SIGKILL, stays down (\d+) ms and is restarted$"#)]
async fn kill_wait_restart(w: &mut SessionWorld, ms: u64) {
    let state = st(w);
    state.harness.kill_worker().await;
    tokio::time::sleep(Duration::from_millis(ms)).await;
    state.harness.start_worker().await;
}

#[when(regex = r#"^the worker is killed with SIGKILL and restarted$"#)]
async fn kill_restart(w: &mut SessionWorld) {
    let state = st(w);
    state.harness.kill_worker().await;
    state.harness.start_worker().await;
}

#[when(
    regex = r#"^the client appends (\d+) messages to "\$\{(\w+)\}" keeping the acknowledged ids$"#
)]
async fn append_many_times(w: &mut SessionWorld, n: usize, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let mut acked = Vec::new();
    for i in 0..n {
        let message = json!({"role": "user", "content": [{"type": "text", "text": format!("m{i}")}], "timestamp": i});
        let payload =
            json!({"session_id": sid, "entry_id": format!("e_{i:04}"), "message": message});
        if let Ok(reply) = state.harness.call("session::append", payload, true).await {
            acked.push(reply["entry_id"].as_str().expect("entry_id").to_string());
        }
    }
    assert_eq!(acked.len(), n, "every append is acknowledged");
    state.vars.insert("acked".into(), serde_json::to_string(&acked).expect("json"));
}

#[then(regex = r#"^the transcript of "\$\{(\w+)\}" holds every acknowledged id in order$"#)]
async fn transcript_has_acked(w: &mut SessionWorld, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let acked: Vec<String> = serde_json::from_str(&state.vars["acked"]).expect("acked ids");
    let reply = state
        .harness
        .call("session::messages", json!({"session_id": sid, "limit": 500}), true)
        .await
        .expect("messages");
    let ids: Vec<&str> = reply["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["entry_id"].as_str())
        .collect();
    assert_eq!(ids, acked);
}

#[when(regex = r#"^the stored configuration is set to (\{.*\})$"#)]
async fn set_config(w: &mut SessionWorld, value: String) {
    let state = st(w);
    let value = subst(state, &value);
    let payload = json!({ "id": "session-manager", "value": value });
    state.harness.call("configuration::set", payload, true).await.expect("configuration::set");
}

/// The configuration trigger reloads asynchronously, and the status of an earlier reload
/// already reads "applied": a reload of our own, serialized behind any in flight, returns only
/// once the stored value it fetched is in force.
#[when("the worker has reloaded the stored configuration")]
async fn reloaded(w: &mut SessionWorld) {
    let state = st(w);
    let reply = state.harness.call("session::on-config-change", json!({}), true).await;
    assert_eq!(reply.expect("session::on-config-change"), json!({ "ok": true }));
}

#[then(regex = r#"^the config status becomes (\{.*\})$"#)]
async fn config_status(w: &mut SessionWorld, expected: String) {
    let state = st(w);
    let expected = subst(state, &expected);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let status = state
            .harness
            .call("session::config-status", json!({}), true)
            .await
            .expect("config-status");
        let mut diffs = Vec::new();
        json::subset_diff(&expected, &status, "", &mut diffs);
        if diffs.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{diffs:?} in {status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[then(regex = r#"^the worker data dir "([^"]+)" holds (\d+) session files?$"#)]
fn data_files(w: &mut SessionWorld, dir: String, n: usize) {
    assert_session_files(&st(w).harness.dir.join(dir), n);
}

/// Asserts that `path` holds exactly `n` `*.jsonl` session files (none when it is missing).
pub(super) fn assert_session_files(path: &std::path::Path, n: usize) {
    let count = std::fs::read_dir(path)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(count, n, "in {}", path.display());
}
