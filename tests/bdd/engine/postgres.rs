//! `@engine @postgres` scenarios: engines each with a session-manager of its own, all on one
//! PostgreSQL database (a fresh schema per scenario; the server named by
//! `SESSION_MANAGER_TEST_PG_URL`). Instances are "instance 1", "instance 2", …; the bridge steps
//! that name an instance take these names too. Without `III_BIN` or the server, the topology step
//! is not defined and every scenario here is reported skipped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cucumber::codegen::{LocalBoxFuture, Regex};
use cucumber::step::Context;
use cucumber::{then, when};
use serde_json::json;

use super::bridge::{append_load, assert_one_chain, instance, load, st};
use super::harness::Harness;
use super::{engine_state, EngineState, III_BIN};
use crate::world::SessionWorld;

/// The topology step's regex (registered only with `III_BIN` and a test server).
pub fn postgres_topology_regex() -> Regex {
    Regex::new(r"^(\d+) engines with session-manager on one postgres database$").expect("regex")
}

/// Starts each engine with a worker seeded with the postgres adapter on one fresh schema, and
/// waits until each serves.
pub fn postgres_topology_step<'a>(
    world: &'a mut SessionWorld,
    ctx: Context,
) -> LocalBoxFuture<'a, ()> {
    Box::pin(async move {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n: usize = ctx.matches[1].1.parse().expect("instance count");
        let bin = std::env::var(III_BIN).expect("III_BIN");
        let url = crate::host::pg_url().expect("a test server");
        let schema =
            format!("bdd_engine_{}_{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst));
        crate::host::PG_SCHEMAS.lock().unwrap_or_else(|p| p.into_inner()).push(schema.clone());
        // Named connections, so that a scenario can terminate exactly its instances' backends.
        let seed = format!(
            "adapter:\n  name: postgres\n  config:\n    url: \"{url}?application_name={schema}\"\n    schema: {schema}\n"
        );
        let mut instances = Vec::new();
        for _ in 0..n {
            let h = Harness::start_with(&bin, Some(&seed)).await;
            let deadline = Instant::now() + Duration::from_secs(20);
            while h.call("session::list", json!({}), false).await.is_err() {
                assert!(Instant::now() < deadline, "an instance never served");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            instances.push(h);
        }
        let mut instances = instances.into_iter();
        let mut state = engine_state(instances.next().expect("at least one instance"));
        state.peers = instances.collect();
        state.vars.insert("schema".into(), schema);
        // Each follower starts from the outbox's head once connected.
        tokio::time::sleep(Duration::from_millis(300)).await;
        world.engine = Some(state);
    })
}

/// Appends `n` messages through every instance at once; with `terminate`, the database ends
/// every backend of the instances once a third is acknowledged.
async fn load_all(state: &mut EngineState, n: usize, var: &str, terminate: bool) {
    let sid = state.vars[var].clone();
    let schema = state.vars["schema"].clone();
    let acked_total = AtomicUsize::new(0);
    let all: Vec<&Harness> = std::iter::once(&state.harness).chain(&state.peers).collect();
    let count = all.len();
    let appenders = futures::future::join_all(
        all.iter()
            .enumerate()
            .map(|(i, h)| append_load(h, format!("i{}", i + 1), &sid, n, &acked_total)),
    );
    let outage = async {
        if !terminate {
            return;
        }
        while acked_total.load(Ordering::SeqCst) < n * count / 3 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let killed = terminate_backends(&schema).await;
        assert!(killed > 0, "no backend of the instances was terminated");
    };
    let (results, ()) = futures::join!(appenders, outage);
    let acked: Vec<String> = results.iter().flat_map(|(a, _)| a.clone()).collect();
    state.vars.insert("acked".into(), serde_json::to_string(&acked).expect("json"));
}

/// `pg_terminate_backend` on every connection named `application_name`; how many.
async fn terminate_backends(application_name: &str) -> i64 {
    let url = crate::host::pg_url().expect("a test server");
    let (client, connection) =
        tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("admin connection");
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = $1",
            &[&application_name],
        )
        .await
        .expect("terminate");
    row.get(0)
}

#[when(regex = r#"^every instance appends (\d+) messages to "\$\{(\w+)\}" concurrently$"#)]
async fn every_instance_appends(w: &mut SessionWorld, n: usize, var: String) {
    load_all(st(w), n, &var, false).await;
}

#[when(
    regex = r#"^every instance appends (\d+) messages to "\$\{(\w+)\}" concurrently while the database terminates their connections$"#
)]
async fn every_instance_appends_terminated(w: &mut SessionWorld, n: usize, var: String) {
    load_all(st(w), n, &var, true).await;
}

#[when(
    regex = r#"^"instance 2" appends (\d+) messages to "\$\{(\w+)\}" while "instance 1"'s worker is killed and restarted$"#
)]
async fn appends_while_killed(w: &mut SessionWorld, n: usize, var: String) {
    load(st(w), n, &var, true).await;
}

#[then(
    regex = r#"^"([^"]+)" holds every acknowledged id of "\$\{(\w+)\}" exactly once in one chain$"#
)]
async fn holds_one_chain(w: &mut SessionWorld, through: String, var: String) {
    assert_one_chain(st(w), &var, &through).await;
}

/// At least once: a restarted instance delivers what was committed while it was down, and may
/// deliver again what it had delivered just before it was killed.
#[then(regex = r#"^on "([^"]+)" handler "([^"]+)" received every acknowledged id at least once$"#)]
async fn received_every_acked(w: &mut SessionWorld, name: String, handler: String) {
    let state = st(w);
    let acked: Vec<String> = serde_json::from_str(&state.vars["acked"]).expect("acked");
    let h = instance(state, &name);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got: std::collections::HashSet<String> = h
            .received(&handler)
            .iter()
            .filter_map(|v| v["entry_id"].as_str().map(String::from))
            .collect();
        let missing: Vec<&String> = acked.iter().filter(|id| !got.contains(*id)).collect();
        if missing.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{name}: {handler} never received {missing:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The instances in turn: call `i` goes to instance `i % count`.
fn all_instances(state: &EngineState) -> Vec<&Harness> {
    std::iter::once(&state.harness).chain(&state.peers).collect()
}

/// `rounds` rounds of `calls` concurrent `session::update-message` calls with one
/// `expected_revision`, spread over every instance; after each round the message's revision must
/// have moved by exactly one and at most one call may have answered `updated: true` (a call the
/// engine never answered cannot be counted, the revision still can).
#[when(
    regex = r#"^every instance races (\d+) "session::update-message" calls with one expected revision on "\$\{(\w+)\}" for (\d+) rounds$"#
)]
async fn race_update_message(w: &mut SessionWorld, calls: usize, var: String, rounds: u64) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let all = all_instances(state);
    let message =
        json!({"role": "user", "content": [{"type": "text", "text": "v0"}], "timestamp": 1});
    let added = all[0]
        .call("session::append", json!({"session_id": sid, "message": message}), true)
        .await
        .expect("append the raced message");
    let eid = added["entry_id"].as_str().expect("entry_id").to_string();
    let mut report = Vec::new();
    for round in 0..rounds {
        let answers = futures::future::join_all((0..calls).map(|i| {
            let payload = json!({"session_id": sid, "entry_id": eid, "expected_revision": round,
                "content": [{"type": "text", "text": format!("round {round} call {i}")}]});
            all[i % all.len()].call("session::update-message", payload, false)
        }))
        .await;
        let winners = answers.iter().filter(|a| matches!(a, Ok(v) if v["updated"] == true)).count();
        let unanswered = answers.iter().filter(|a| a.is_err()).count();
        let got = all[(round as usize) % all.len()]
            .call("session::get-message", json!({"session_id": sid, "entry_id": eid}), true)
            .await
            .expect("read the raced message");
        let revision = got["entry"]["revision"].as_u64().unwrap_or(0);
        if revision != round + 1 || winners > 1 || (winners == 0 && unanswered == 0) {
            report.push(format!(
                "round {round}: {winners} answered updated: true ({unanswered} unanswered), revision {revision}"
            ));
        }
    }
    assert!(report.is_empty(), "lost updates across instances:\n{}", report.join("\n"));
}

/// One `entry_id` appended `calls` times at once, spread over every instance.
#[when(regex = r#"^every instance appends entry "([^"]+)" to "\$\{(\w+)\}" (\d+) times at once$"#)]
async fn race_one_entry_id(w: &mut SessionWorld, entry_id: String, var: String, calls: usize) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let all = all_instances(state);
    let answers = futures::future::join_all((0..calls).map(|i| {
        let payload = json!({"session_id": sid, "entry_id": entry_id, "message":
            {"role": "user", "content": [{"type": "text", "text": format!("call {i}")}], "timestamp": 1}});
        // Idempotent by entry_id: a retry after a lost answer is safe.
        all[i % all.len()].call("session::append", payload, true)
    }))
    .await;
    for answer in answers {
        let answer = answer.expect("an append of the raced entry");
        assert_eq!(answer["entry_id"], json!(entry_id), "{answer}");
    }
}
