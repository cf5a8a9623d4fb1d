//! Steps of the bridged-atomicity scenarios (`engine_bridge.feature`): forks through a bridge
//! while the main's worker is SIGKILLed, and what the main's data_dir holds afterwards: every
//! session all of a fork or none of it.

use std::time::Duration;

use cucumber::{then, when};
use serde_json::{json, Value};
use session_core::jsonl;

use super::bridge::st;
use crate::world::SessionWorld;

/// The source's active path on the main: its entry ids, oldest first.
async fn source_path(h: &super::harness::Harness, sid: &str) -> Vec<String> {
    let reply = h
        .call("session::messages", json!({"session_id": sid, "limit": 500}), true)
        .await
        .expect("messages of the source");
    reply["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["entry_id"].as_str().expect("entry_id").to_string())
        .collect()
}

/// Forks `sid` at its newest entry through "bridge 1" `kills` times, each time killing the main
/// worker with SIGKILL a little later into the fork (3, 10, 17, … ms: during the bridge's reads,
/// then during the main's writes) and starting it again, with an undisturbed fork after each.
/// Keeps the acknowledged forks' ids in `${forks}` and the source's path length in `${fork_len}`.
#[when(
    regex = r#"^"bridge 1" forks "\$\{(\w+)\}" while the main worker is killed (\d+) times mid-fork$"#
)]
async fn forks_under_kills(w: &mut SessionWorld, var: String, kills: u64) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let path = source_path(&state.harness, &sid).await;
    let at = path.last().expect("the source has entries").clone();
    let request = json!({"session_id": sid, "entry_id": at});
    let (mut acked, mut failed) = (Vec::new(), 0usize);
    let (main, bridge) = (&mut state.harness, &state.peers[0]);
    for k in 0..kills {
        let fork = bridge.call("session::fork", request.clone(), false);
        let kill = async {
            tokio::time::sleep(Duration::from_millis(3 + 7 * k)).await;
            main.kill_worker().await;
        };
        let (killed, ()) = futures::join!(fork, kill);
        main.start_worker().await;
        let calm = bridge.call("session::fork", request.clone(), false).await;
        for result in [killed, calm] {
            match result {
                Ok(reply) => acked.push(reply["session_id"].as_str().expect("id").to_string()),
                Err(_) => failed += 1,
            }
        }
    }
    assert!(!acked.is_empty(), "no fork was acknowledged ({failed} failed)");
    state.vars.insert("forks".into(), serde_json::to_string(&acked).expect("json"));
    state.vars.insert("fork_len".into(), path.len().to_string());
}

/// Every session file in the main's data_dir, replayed with the store's own rules: a fork of
/// `${var}` has its meta and exactly the source's path; no file holds entries without a meta (half
/// a fork); every acknowledged fork reads back whole through the main.
#[then(
    regex = r#"^every fork of "\$\{(\w+)\}" on the main holds all of its history or none of it$"#
)]
async fn forks_all_or_nothing(w: &mut SessionWorld, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let len: usize = state.vars["fork_len"].parse().expect("fork_len");
    let acked: Vec<String> = serde_json::from_str(&state.vars["forks"]).expect("forks");
    let dir = state.harness.dir.join("data/session-manager");
    let mut forks = 0;
    for file in std::fs::read_dir(&dir).expect("main data_dir") {
        let path = file.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let (session, _) = jsonl::replay(&std::fs::read(&path).expect("session file"));
        let name = path.display();
        match &session.meta {
            None => assert!(session.entries.is_empty(), "{name}: entries without a meta"),
            Some(meta) if meta.forked_from.as_deref() == Some(sid.as_str()) => {
                forks += 1;
                assert_eq!(session.entries.len(), len, "{name}: part of a fork");
                assert_eq!(meta.message_count as usize, len, "{name}: message_count");
            }
            Some(_) => {}
        }
    }
    assert!(forks >= acked.len(), "{forks} forks on disk, {} acknowledged", acked.len());
    for fork in &acked {
        let reply = state
            .harness
            .call("session::messages", json!({"session_id": fork, "limit": 500}), true)
            .await
            .expect("messages of a fork");
        let messages = reply["messages"].as_array().map(Vec::len);
        assert_eq!(messages, Some(len), "acknowledged fork {fork} reads back whole");
    }
}

/// The main's registration of `session::store::apply` as the client sees it: callable on our main,
/// `function_not_found` on a seed-only one.
#[then(regex = r#"^the main (serves|does not serve) "session::store::apply"$"#)]
async fn main_serves_apply(w: &mut SessionWorld, serves: String) {
    let state = st(w);
    let probe = json!({"session_id": "s_probe", "writes": []});
    let result: Result<Value, _> = state.harness.call("session::store::apply", probe, true).await;
    match (serves.as_str(), result) {
        ("serves", Ok(reply)) => assert_eq!(reply["attachments_deleted"], json!([])),
        ("does not serve", Err(iii_sdk::Error::Remote { code, .. })) => {
            assert_eq!(code, "function_not_found")
        }
        (want, got) => panic!("expected the main {want} session::store::apply, got {got:?}"),
    }
}
