//! Steps of the live-sync engine scenarios (`engine_live_sync.feature`): subscribers that follow one
//! session through `session::changed` into a `session_core::replica::Replica` (deliveries in seq
//! order, duplicates dropped, gaps filled from `session::changes`), a writer that streams
//! conversation turns (each write retried until acknowledged, also through a SIGKILLed worker),
//! and the example client `host-native/examples/replica.rs` run against the engine.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cucumber::{then, when};
use iii_sdk::protocol::TriggerRequest;
use iii_sdk::{Error, IIIClient, RegisterFunction};
use serde_json::{json, Value};
use session_core::feed::{COMPACTED, MESSAGE_DELTA};
use session_core::record::SessionState;
use session_core::replica::{Replica, Step};
use session_core::wire::api_store::ListEntriesResponse;
use session_core::wire::{
    AgentMessage, Change, ChangedEvent, ChangesResponse, ContentBlock, GetResponse, SessionEntry,
    SessionMeta,
};
use tokio::sync::mpsc;

use super::harness::{read, repo_root, Harness};
use super::EngineState;
use crate::world::SessionWorld;

fn st(w: &mut SessionWorld) -> &mut EngineState {
    w.engine.as_mut().expect("no engine: start with `Given a running engine with session-manager`")
}

/// The live-sync state of one scenario: its subscribers, the example client it runs, the turns
/// streamed per session and what the SIGKILL step saw.
#[derive(Default)]
pub struct Live {
    subscribers: HashMap<String, Subscriber>,
    example: Option<Example>,
    /// Turns streamed so far, per session id.
    turns: HashMap<String, u32>,
    /// The latest seq of the session right after the restarted worker answered.
    restart_seq: Option<u64>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").field("subscribers", &self.subscribers.len()).finish()
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        for sub in self.subscribers.values() {
            sub.task.abort();
        }
        if let Some(mut example) = self.example.take() {
            let _ = example.child.kill();
            let _ = example.child.wait();
        }
    }
}

/// How a change reached a subscriber's replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Delivered,
    Read,
}

/// What a subscriber's task did, shared with the steps.
#[derive(Debug)]
struct Follow {
    replica: Replica,
    /// Every change applied, in the order applied.
    applied: Vec<(u64, Source)>,
    /// The seq of every delivery, in arrival order.
    delivered: Vec<u64>,
    duplicates: usize,
    gaps: usize,
    /// Catch-ups asked for by a step (a lost last delivery), not by a gap.
    polls: usize,
    failed_reads: usize,
    errors: Vec<String>,
}

enum Msg {
    Delivery(Value),
    Poll,
}

/// A client function bound to `session::changed` for one session, and the task that applies what
/// it receives.
struct Subscriber {
    session_id: String,
    function_id: String,
    /// The engine's id of the current binding (`None` while unbound).
    trigger: Option<String>,
    state: Arc<Mutex<Follow>>,
    tx: mpsc::UnboundedSender<Msg>,
    task: tokio::task::JoinHandle<()>,
    /// The latest seq when it was unbound and when it was bound again.
    unbound_window: (u64, u64),
}

/// Page size of a subscriber's catch-up reads (small, so catching up takes several pages).
const PAGE: usize = 5;

async fn call(client: &IIIClient, function_id: &str, payload: Value) -> Result<Value, Error> {
    let request = TriggerRequest {
        function_id: function_id.into(),
        payload,
        action: None,
        timeout_ms: Some(5000),
    };
    client.trigger(request).await
}

/// A read, retried on a timeout (about one call in 10^4–10^5 goes unanswered).
async fn read_call(client: &IIIClient, function_id: &str, payload: Value) -> Result<Value, Error> {
    let mut last = Err(Error::Timeout);
    for _ in 0..3 {
        last = call(client, function_id, payload.clone()).await;
        if !matches!(last, Err(Error::Timeout)) {
            break;
        }
    }
    last
}

/// Reads `session::changes` after the replica's `applied_seq` until the last page.
async fn catch_up(client: &IIIClient, sid: &str, shared: &Mutex<Follow>) -> Result<(), Error> {
    loop {
        let after_seq = shared.lock().unwrap().replica.applied_seq;
        let payload = json!({"session_id": sid, "after_seq": after_seq, "limit": PAGE});
        let reply = match read_call(client, "session::changes", payload).await {
            Ok(reply) => reply,
            Err(e) => {
                shared.lock().unwrap().failed_reads += 1;
                return Err(e);
            }
        };
        let page: ChangesResponse = serde_json::from_value(reply).expect("a changes page");
        let mut f = shared.lock().unwrap();
        if page.truncated {
            f.errors.push(format!("changes after {after_seq} are no longer kept"));
            return Ok(());
        }
        for change in &page.changes {
            let before = f.replica.applied_seq;
            match f.replica.apply(change) {
                // A compacted run (`session::compacted`) brings every seq it covers past what
                // was applied (it may start inside it).
                Step::Applied => {
                    for seq in before + 1..=change.seq {
                        f.applied.push((seq, Source::Read));
                    }
                }
                other => f.errors.push(format!("read seq {}: {other:?}", change.seq)),
            }
        }
        if page.next_after_seq.is_none() || page.changes.is_empty() {
            return Ok(());
        }
    }
}

/// Applies one delivery; a gap is filled first. `Err`: the catch-up failed (retried later).
async fn offer(
    client: &IIIClient,
    sid: &str,
    shared: &Mutex<Follow>,
    payload: Value,
) -> Result<(), Error> {
    let event: ChangedEvent = match serde_json::from_value(payload.clone()) {
        Ok(event) => event,
        Err(e) => {
            shared.lock().unwrap().errors.push(format!("not a change: {e}: {payload}"));
            return Ok(());
        }
    };
    let (seq, session) = (event.seq, event.session_id.clone());
    let change = event.into_change();
    {
        let mut f = shared.lock().unwrap();
        f.delivered.push(seq);
        if session != sid {
            f.errors.push(format!("delivery of another session {session}"));
            return Ok(());
        }
        match f.replica.apply(&change) {
            Step::Applied => {
                f.applied.push((seq, Source::Delivered));
                return Ok(());
            }
            Step::Duplicate => {
                f.duplicates += 1;
                return Ok(());
            }
            Step::Gap { .. } => f.gaps += 1,
            other => {
                f.errors.push(format!("delivered seq {seq}: {other:?}"));
                return Ok(());
            }
        }
    }
    catch_up(client, sid, shared).await?;
    let mut f = shared.lock().unwrap();
    match f.replica.apply(&change) {
        Step::Applied => f.applied.push((seq, Source::Delivered)),
        Step::Duplicate => f.duplicates += 1,
        other => f.errors.push(format!("delivered seq {seq} after a catch-up: {other:?}")),
    }
    Ok(())
}

/// The subscriber's task: catches up from seq 0, then applies deliveries as they come; a failed
/// catch-up (the worker is down) is tried again every 200 ms.
async fn follow(
    client: IIIClient,
    sid: String,
    shared: Arc<Mutex<Follow>>,
    mut rx: mpsc::UnboundedReceiver<Msg>,
) {
    let mut behind = true;
    loop {
        if behind {
            behind = catch_up(&client, &sid, &shared).await.is_err();
        }
        let wait = if behind { Duration::from_millis(200) } else { Duration::from_secs(3600) };
        match tokio::time::timeout(wait, rx.recv()).await {
            Err(_) => {}
            Ok(None) => return,
            Ok(Some(Msg::Poll)) => {
                shared.lock().unwrap().polls += 1;
                behind = true;
            }
            Ok(Some(Msg::Delivery(payload))) => {
                behind |= offer(&client, &sid, &shared, payload).await.is_err();
            }
        }
    }
}

/// Binds `function_id` to `session::changed` for `sid` through `engine::register_trigger`.
async fn bind(h: &Harness, function_id: &str, sid: &str) -> String {
    let payload = json!({
        "trigger_type": "session::changed",
        "function_id": function_id,
        "config": {"session_id": sid},
    });
    let reply = h.call("engine::register_trigger", payload, false).await.expect("binding accepted");
    reply["id"].as_str().expect("trigger id").to_string()
}

/// The session's newest seq.
async fn latest_seq(h: &Harness, sid: &str) -> u64 {
    let payload = json!({"session_id": sid, "after_seq": 0, "limit": 1});
    let reply = h.call("session::changes", payload, true).await.expect("session::changes");
    reply["latest_seq"].as_u64().expect("latest_seq")
}

#[when(regex = r#"^subscriber "([^"]+)" follows "\$\{(\w+)\}"$"#)]
async fn subscriber_follows(w: &mut SessionWorld, name: String, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let function_id = format!("bdd::live::{name}");
    let (tx, rx) = mpsc::unbounded_channel();
    let sink = tx.clone();
    state.harness.client.register_function(
        function_id.clone(),
        RegisterFunction::new_async(move |payload: Value| {
            let sink = sink.clone();
            async move {
                let _ = sink.send(Msg::Delivery(payload));
                Ok::<Value, Error>(json!({"ok": true}))
            }
        }),
    );
    // Bound first, then caught up (the task's first step): every change is delivered, read, or
    // both.
    let trigger = bind(&state.harness, &function_id, &sid).await;
    let shared = Arc::new(Mutex::new(Follow {
        replica: Replica::new(&sid),
        applied: Vec::new(),
        delivered: Vec::new(),
        duplicates: 0,
        gaps: 0,
        polls: 0,
        failed_reads: 0,
        errors: Vec::new(),
    }));
    let task = tokio::spawn(follow(state.harness.client.clone(), sid.clone(), shared.clone(), rx));
    let sub = Subscriber {
        session_id: sid,
        function_id,
        trigger: Some(trigger),
        state: shared,
        tx,
        task,
        unbound_window: (0, 0),
    };
    state.live.subscribers.insert(name, sub);
}

fn subscriber<'a>(state: &'a mut EngineState, name: &str) -> &'a mut Subscriber {
    state.live.subscribers.get_mut(name).unwrap_or_else(|| panic!("no subscriber {name}"))
}

#[when(regex = r#"^subscriber "([^"]+)" is unbound$"#)]
async fn subscriber_unbound(w: &mut SessionWorld, name: String) {
    let state = st(w);
    let id = subscriber(state, &name).trigger.take().expect("bound");
    let payload = json!({ "id": id });
    state.harness.call("engine::unregister_trigger", payload, true).await.expect("unbind");
    // The engine tells the worker asynchronously: let that land before the session changes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sid = subscriber(state, &name).session_id.clone();
    let seq = latest_seq(&state.harness, &sid).await;
    subscriber(state, &name).unbound_window = (seq, seq);
}

#[when(regex = r#"^subscriber "([^"]+)" is bound again$"#)]
async fn subscriber_rebound(w: &mut SessionWorld, name: String) {
    let state = st(w);
    let (sid, function_id) = {
        let sub = subscriber(state, &name);
        assert!(sub.trigger.is_none(), "{name} is still bound");
        (sub.session_id.clone(), sub.function_id.clone())
    };
    let seq = latest_seq(&state.harness, &sid).await;
    let trigger = bind(&state.harness, &function_id, &sid).await;
    let sub = subscriber(state, &name);
    sub.trigger = Some(trigger);
    sub.unbound_window.1 = seq;
}

/// Waits until the subscriber applied the session's latest seq: through deliveries and the gaps
/// they reveal; after 10 s (the last delivery went unanswered) it asks for one catch-up.
#[then(regex = r#"^subscriber "([^"]+)" reaches the latest seq of "\$\{(\w+)\}"$"#)]
async fn reaches_latest(w: &mut SessionWorld, name: String, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let latest = latest_seq(&state.harness, &sid).await;
    let sub = subscriber(state, &name);
    let started = Instant::now();
    let mut polled = false;
    loop {
        let applied = sub.state.lock().unwrap().replica.applied_seq;
        if applied >= latest {
            return;
        }
        if !polled && started.elapsed() > Duration::from_secs(10) {
            println!(
                "note: subscriber {name} at seq {applied} of {latest} after 10 s: catching up"
            );
            let _ = sub.tx.send(Msg::Poll);
            polled = true;
        }
        assert!(
            started.elapsed() < Duration::from_secs(25),
            "subscriber {name} stuck at seq {applied} of {latest}: {:?}",
            sub.state.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[then(regex = r#"^subscriber "([^"]+)" received none of the changes made while it was unbound$"#)]
async fn none_while_unbound(w: &mut SessionWorld, name: String) {
    // Anything still on its way would arrive by now.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sub = subscriber(st(w), &name);
    let (from, to) = sub.unbound_window;
    assert!(to > from, "the session did not change while {name} was unbound");
    let f = sub.state.lock().unwrap();
    let leaked: Vec<u64> = f.delivered.iter().copied().filter(|s| *s > from && *s <= to).collect();
    assert!(leaked.is_empty(), "{name} was delivered {leaked:?} while unbound ({from}, {to}]");
}

#[then(
    regex = r#"^subscriber "([^"]+)" read every change made while it was unbound from session::changes after a gap$"#
)]
fn read_after_gap(w: &mut SessionWorld, name: String) {
    let sub = subscriber(st(w), &name);
    let (from, to) = sub.unbound_window;
    let f = sub.state.lock().unwrap();
    assert!(f.gaps >= 1, "{name} never saw a gap: {f:?}");
    for seq in from + 1..=to {
        let source = f.applied.iter().find(|(s, _)| *s == seq).map(|(_, source)| *source);
        assert_eq!(source, Some(Source::Read), "seq {seq} of ({from}, {to}]: {f:?}");
    }
}

/// The kill cost this subscriber a delivery: a gap, and a change after the first that only a
/// `session::changes` read brought.
#[then(regex = r#"^subscriber "([^"]+)" missed a delivery and read it from session::changes$"#)]
fn missed_and_read(w: &mut SessionWorld, name: String) {
    let f = subscriber(st(w), &name).state.lock().unwrap();
    let read: Vec<u64> = f
        .applied
        .iter()
        .filter(|(s, src)| *s > 1 && *src == Source::Read)
        .map(|(s, _)| *s)
        .collect();
    assert!(f.gaps >= 1 && !read.is_empty(), "{name} missed nothing: {f:?}");
    println!("subscriber {name}: seqs {read:?} came from session::changes after {} gap(s)", f.gaps);
}

#[then(regex = r#"^subscriber "([^"]+)" received deliveries after the restart$"#)]
fn delivered_after_restart(w: &mut SessionWorld, name: String) {
    let state = st(w);
    let restart = state.live.restart_seq.expect("the worker was restarted");
    let f = subscriber(state, &name).state.lock().unwrap();
    let after = f.applied.iter().filter(|(s, src)| *s > restart && *src == Source::Delivered);
    assert!(after.count() > 0, "no delivery applied after seq {restart} (the restart): {f:?}");
}

/// What a plain handler bound to `session::changed` got is exactly the changes of `type` of the
/// session (by seq, each once), as `session::changes` lists them — or, where the feed compacted
/// them (an entry's superseded deltas and updates), as the runs and the entry's current message
/// that cover their seqs.
#[then(regex = r#"^handler "([^"]+)" received exactly the "([^"]+)" changes of "\$\{(\w+)\}"$"#)]
async fn handler_received_changes(w: &mut SessionWorld, handler: String, ty: String, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let payload = json!({"session_id": sid, "after_seq": 0, "limit": 100});
    let page = state.harness.call("session::changes", payload, true).await.expect("changes");
    let page: ChangesResponse = serde_json::from_value(page).expect("a changes page");
    assert!(page.next_after_seq.is_none(), "one page holds the session's changes");
    let keyed = [MESSAGE_DELTA, "session::message-updated"];
    let compacted =
        |c: &Change| c.change_type == COMPACTED || keyed.contains(&c.change_type.as_str());
    let covered = |c: &Change| {
        let first = c.payload.get("first_seq").and_then(|s| s.as_u64()).unwrap_or(c.seq);
        first..=c.seq
    };
    let mut got: Vec<ChangedEvent> = state
        .harness
        .received(&handler)
        .into_iter()
        .map(|v| serde_json::from_value(v).expect("a session::changed delivery"))
        .collect();
    got.sort_by_key(|e| e.seq);
    let got: Vec<Change> = got
        .into_iter()
        .inspect(|e| assert_eq!(e.session_id, sid, "a change of another session"))
        .map(ChangedEvent::into_change)
        .collect();
    assert!(!got.is_empty(), "no {ty} change was delivered");
    let mut seqs: Vec<u64> = got.iter().map(|c| c.seq).collect();
    seqs.dedup();
    assert_eq!(seqs.len(), got.len(), "a change delivered twice: {got:?}");
    for change in &got {
        assert_eq!(change.change_type, ty, "a change of another type: {change:?}");
        let listed = page.changes.iter().find(|c| covered(c).contains(&change.seq));
        match listed {
            Some(listed) if listed.change_type == ty => assert_eq!(listed, change),
            Some(listed) if ty == MESSAGE_DELTA || ty == "session::message-updated" => {
                assert!(compacted(listed), "seq {} is listed as {listed:?}", change.seq)
            }
            other => panic!("seq {} delivered as {change:?}, listed as {other:?}", change.seq),
        }
    }
}

/// The full state a fresh read serves: the meta and every entry (every branch).
async fn fresh_read(h: &Harness, sid: &str) -> SessionState {
    let id = json!({"session_id": sid});
    let meta = h.call("session::store::get-meta", id.clone(), true).await.expect("get-meta");
    let entries = h.call("session::store::list-entries", id.clone(), true).await.expect("entries");
    let meta: Option<SessionMeta> = serde_json::from_value(meta).expect("a meta");
    let entries: ListEntriesResponse = serde_json::from_value(entries).expect("entries");
    let get = h.call("session::get", id, true).await.expect("session::get");
    let get: Option<GetResponse> = serde_json::from_value(get).expect("a get response");
    assert_eq!(get.map(|g| g.meta), meta, "session::get and the store disagree on the meta");
    #[allow(clippy::field_reassign_with_default)] // private fields: no struct update syntax
    let mut state = SessionState::default();
    state.meta = meta;
    state.entries = entries.entries.into_iter().map(|e| (e.id().to_string(), e)).collect();
    state
}

#[then(
    regex = r#"^subscriber "([^"]+)" applied every seq of "\$\{(\w+)\}" exactly once and agrees with a fresh read$"#
)]
async fn exactly_once_and_agrees(w: &mut SessionWorld, name: String, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let latest = latest_seq(&state.harness, &sid).await;
    let served = fresh_read(&state.harness, &sid).await;
    assert_eq!(latest_seq(&state.harness, &sid).await, latest, "the session changed meanwhile");
    let sub = subscriber(state, &name);
    let f = sub.state.lock().unwrap();
    assert!(f.errors.is_empty(), "{name}: {:?}", f.errors);
    let seqs: Vec<u64> = f.applied.iter().map(|(s, _)| *s).collect();
    assert_eq!(seqs, (1..=latest).collect::<Vec<_>>(), "{name} applied these seqs");
    assert_eq!(f.replica.applied_seq, latest);
    assert_eq!(f.replica.differs_from(&served), None, "{name}'s replica vs a fresh read");
    // The comparison can fail: one delta less, or one entry less, is seen.
    let mut short = f.replica.clone();
    let streamed = short.entries.values_mut().rev().find_map(|e| match e {
        SessionEntry::Message { message: AgentMessage::Assistant { content, .. }, .. } => {
            content.last_mut()
        }
        _ => None,
    });
    match streamed {
        Some(ContentBlock::Text { text }) => {
            text.pop();
        }
        other => panic!("no streamed text block to truncate: {other:?}"),
    }
    assert!(short.differs_from(&served).is_some(), "a replica one character short agrees");
    let mut fewer = f.replica.clone();
    fewer.entries.pop_last();
    assert!(fewer.differs_from(&served).is_some(), "a replica one entry short agrees");
    let delivered = f.applied.iter().filter(|(_, s)| *s == Source::Delivered).count();
    println!(
        "subscriber {name}: seqs 1..={latest} applied once each ({delivered} delivered, {} read); \
         {} deliveries, {} duplicates dropped, {} gaps filled, {} tail catch-ups, {} failed reads",
        latest as usize - delivered,
        f.delivered.len(),
        f.duplicates,
        f.gaps,
        f.polls,
        f.failed_reads
    );
}

// ----- the writer: conversation turns, each write retried until acknowledged -----

const CHUNKS: [&str; 7] = ["Answer ", "to ", "question ", "#", ": ", "forty-", "two."];

fn question(k: u32) -> String {
    format!("question {k}")
}

fn edited(k: u32) -> String {
    format!("question {k} (edited)")
}

fn thinking(k: u32) -> String {
    format!("pondering {k}")
}

fn answer(k: u32) -> String {
    CHUNKS.iter().map(|c| if *c == "#" { k.to_string() } else { c.to_string() }).collect()
}

/// A write retried until acknowledged (the worker may be down meanwhile); a session error other
/// than `session/storage` fails at once.
async fn acked(client: &IIIClient, function_id: &str, payload: Value) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        match call(client, function_id, payload.clone()).await {
            Ok(reply) => return reply,
            Err(Error::Remote { code, message, .. })
                if code.starts_with("session/") && code != "session/storage" =>
            {
                panic!("{function_id} {payload}: {code}: {message}")
            }
            Err(e) => {
                assert!(Instant::now() < deadline, "{function_id} never acknowledged: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// A write with `expected_revision`: acknowledged when it updated, or when an earlier attempt whose
/// answer was lost did (the revision is then one past the expected one).
async fn acked_at(client: &IIIClient, function_id: &str, mut payload: Value, expected: u64) {
    payload["expected_revision"] = json!(expected);
    let reply = acked(client, function_id, payload.clone()).await;
    let landed = reply["updated"] == json!(true) || reply["revision"] == json!(expected + 1);
    assert!(landed, "{function_id} {payload}: {reply}");
}

/// Turn `k`: a question, `working`, an answer streamed with append-delta (thinking, then seven text
/// chunks), the question edited, the meta renamed, `idle`. Counts each acknowledged write.
async fn stream_turn(client: &IIIClient, sid: &str, k: u32, acks: &AtomicUsize) {
    let (user, assistant) = (format!("u_{k}"), format!("a_{k}"));
    let ack = || acks.fetch_add(1, Ordering::SeqCst);
    let message =
        json!({"role": "user", "content": [{"type": "text", "text": question(k)}], "timestamp": k});
    acked(
        client,
        "session::append",
        json!({"session_id": sid, "entry_id": user, "message": message}),
    )
    .await;
    ack();
    let working = json!({"session_id": sid, "status": "working", "reason": format!("turn {k}")});
    acked(client, "session::set-status", working).await;
    ack();
    let message = json!({"role": "assistant", "content": [], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": k});
    let payload = json!({"session_id": sid, "entry_id": assistant, "message": message});
    acked(client, "session::append", payload).await;
    ack();
    let delta = json!({"session_id": sid, "entry_id": assistant, "thinking": thinking(k)});
    acked_at(client, "session::append-delta", delta, 0).await;
    ack();
    for (i, chunk) in CHUNKS.iter().enumerate() {
        let text = if *chunk == "#" { k.to_string() } else { chunk.to_string() };
        let delta = json!({"session_id": sid, "entry_id": assistant, "text": text});
        acked_at(client, "session::append-delta", delta, i as u64 + 1).await;
        ack();
    }
    let edit = json!({"session_id": sid, "entry_id": user, "content": [{"type": "text", "text": edited(k)}]});
    acked_at(client, "session::update-message", edit, 0).await;
    ack();
    let meta = json!({"session_id": sid, "title": format!("after turn {k}"), "description": format!("{k} turns"), "metadata": {"owner": "u1", "turns": k}});
    acked(client, "session::set-meta", meta).await;
    ack();
    acked(client, "session::set-status", json!({"session_id": sid, "status": "idle"})).await;
    ack();
}

/// The next `n` turn numbers of `sid`.
fn next_turns(live: &mut Live, sid: &str, n: u32) -> std::ops::Range<u32> {
    let done = live.turns.entry(sid.to_string()).or_default();
    let first = *done + 1;
    *done += n;
    first..first + n
}

#[when(regex = r#"^the client streams (\d+) turns? into "\$\{(\w+)\}"$"#)]
async fn streams_turns(w: &mut SessionWorld, n: u32, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let acks = AtomicUsize::new(0);
    for k in next_turns(&mut state.live, &sid, n) {
        stream_turn(&state.harness.client, &sid, k, &acks).await;
    }
}

/// Waits until a thread of process `pid` is inside `fdatasync` / `fsync` / `syncfs` (x86_64
/// syscalls 75, 74, 306; Linux): a write has reached its session file (it survives a SIGKILL: the
/// page cache outlives the process) but is neither answered nor published, since the worker
/// publishes after the flush. Killed now, its change is in the feed and never delivered. `false`
/// when no flush was seen within `within`.
fn in_flush(pid: u32, within: Duration) -> bool {
    const FLUSHES: [&str; 3] = ["75", "74", "306"];
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten();
        for task in tasks.flatten() {
            let syscall = std::fs::read_to_string(task.path().join("syscall")).unwrap_or_default();
            if syscall.split_whitespace().next().is_some_and(|nr| FLUSHES.contains(&nr)) {
                return true;
            }
        }
        // A flush takes milliseconds: polling every 100 µs sees it without taking a core.
        std::thread::sleep(Duration::from_micros(100));
    }
    false
}

#[when(
    regex = r#"^the client streams (\d+) turns into "\$\{(\w+)\}" while the worker is killed with SIGKILL mid-flush after (\d+) acknowledged writes and restarted$"#
)]
async fn streams_through_kill(w: &mut SessionWorld, n: u32, var: String, after: usize) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let turns = next_turns(&mut state.live, &sid, n);
    let acks = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (client, sid, acks) = (state.harness.client.clone(), sid.clone(), acks.clone());
        tokio::spawn(async move {
            for k in turns {
                stream_turn(&client, &sid, k, &acks).await;
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while acks.load(Ordering::SeqCst) < after {
        assert!(!writer.is_finished(), "the writer ended before {after} acknowledged writes");
        assert!(Instant::now() < deadline, "fewer than {after} writes acknowledged in 60 s");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let pid = state.harness.worker_pid().expect("the worker runs");
    let flushing = in_flush(pid, Duration::from_secs(10));
    let at_kill = acks.load(Ordering::SeqCst);
    state.harness.kill_worker().await;
    assert!(
        flushing,
        "the worker was never seen flushing a write (reading /proc/{pid}/task/*/syscall)"
    );
    state.harness.start_worker().await;
    state.live.restart_seq = Some(latest_seq(&state.harness, &sid).await);
    tokio::time::timeout(Duration::from_secs(300), writer)
        .await
        .expect("the writer finished within 300 s")
        .expect("the writer did not fail");
    let total = acks.load(Ordering::SeqCst);
    assert!(at_kill < total, "the kill came after the last write");
    println!("writer: {at_kill} of {total} writes acknowledged before the SIGKILL");
}

/// Every turn streamed into `sid`, read back: the edited question, the whole streamed answer and
/// thinking at revision 8, the last turn's title, `idle`, two messages per turn.
#[then(regex = r#"^every write acknowledged to "\$\{(\w+)\}" reads back$"#)]
async fn acknowledged_read_back(w: &mut SessionWorld, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let turns = state.live.turns.get(&sid).copied().unwrap_or(0);
    let served = fresh_read(&state.harness, &sid).await;
    let meta = served.meta.as_ref().expect("the session exists");
    assert_eq!(meta.title, format!("after turn {turns}"));
    assert_eq!(meta.message_count, 2 * u64::from(turns));
    assert_eq!(serde_json::to_value(meta.status).expect("status"), json!("idle"));
    for k in 1..=turns {
        let (text, revision) = texts(served.entries.get(&format!("u_{k}")));
        assert_eq!((text.0.as_str(), revision), (edited(k).as_str(), 1), "u_{k}");
        let (text, revision) = texts(served.entries.get(&format!("a_{k}")));
        assert_eq!(text, (answer(k), thinking(k)), "a_{k}");
        assert_eq!(revision, 1 + CHUNKS.len() as u64, "a_{k}");
    }
}

/// A message's (text, thinking) and revision.
fn texts(entry: Option<&SessionEntry>) -> ((String, String), u64) {
    let Some(SessionEntry::Message { message, revision, .. }) = entry else {
        panic!("not a message: {entry:?}")
    };
    let (mut text, mut thinking) = (String::new(), String::new());
    for block in message.content() {
        match block {
            ContentBlock::Text { text: t } => text.push_str(t),
            ContentBlock::Thinking { text: t, .. } => thinking.push_str(t),
            _ => {}
        }
    }
    ((text, thinking), *revision)
}

// ----- the example client -----

/// A run of `host-native/examples/replica.rs`.
struct Example {
    child: Child,
    out: PathBuf,
    err: PathBuf,
}

/// The example binary: `REPLICA_EXAMPLE_BIN`, else `cargo build`s it once into this workspace's
/// target directory.
fn example_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("REPLICA_EXAMPLE_BIN") {
            return PathBuf::from(bin);
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "session-manager", "--example", "replica"])
            .current_dir(repo_root())
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building the replica example failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target"));
        target.join("debug").join("examples").join("replica")
    })
    .clone()
}

#[when(regex = r#"^the example replica follows "\$\{(\w+)\}"$"#)]
async fn example_follows(w: &mut SessionWorld, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let (out, err) = (state.harness.dir.join("replica.out"), state.harness.dir.join("replica.err"));
    let child = Command::new(example_bin())
        .args([
            "--url",
            &state.harness.url(),
            "--session",
            &sid,
            "--poll-ms",
            "1000",
            "--page",
            "7",
        ])
        .current_dir(&state.harness.dir)
        .env_remove("III_WORKER_NAME")
        .env_remove("III_NAMESPACE")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("replica.out"))
        .stderr(std::fs::File::create(&err).expect("replica.err"))
        .spawn()
        .expect("spawn the replica example");
    state.live.example = Some(Example { child, out, err });
    let example = state.live.example.as_mut().expect("just set");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !read(&example.err).contains("caught up at seq") {
        let exited = example.child.try_wait().ok().flatten();
        assert!(exited.is_none(), "the example exited: {exited:?}\n{}", read(&example.err));
        assert!(Instant::now() < deadline, "the example did not catch up:\n{}", read(&example.err));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One line of the example: seq, change type, and for a message change (entry id, text,
/// thinking).
type ExampleLine = (u64, String, Option<(String, String, String)>);

/// The example's lines: `<seq> <type>[ <entry_id> text="…"[ thinking="…"]]`.
fn example_lines(text: &str) -> Vec<ExampleLine> {
    text.lines()
        .map(|line| {
            let mut words = line.splitn(3, ' ');
            let seq = words.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{line}"));
            let change_type = words.next().unwrap_or_else(|| panic!("{line}")).to_string();
            let rest = words.next().filter(|_| change_type != "snapshot");
            let message = rest.map(|rest| {
                let (entry, rest) = rest.split_once(" text=").unwrap_or_else(|| panic!("{line}"));
                let mut de = serde_json::Deserializer::from_str(rest).into_iter::<String>();
                let text = de.next().and_then(Result::ok).unwrap_or_else(|| panic!("{line}"));
                let tail = rest[de.byte_offset()..].trim_start();
                let thinking = match tail.strip_prefix("thinking=") {
                    Some(t) => serde_json::from_str(t).unwrap_or_else(|_| panic!("{line}")),
                    None => String::new(),
                };
                (entry.to_string(), text, thinking)
            });
            (seq, change_type, message)
        })
        .collect()
}

/// Waits (30 s) until the example printed the session's latest seq; checks its lines: each seq
/// once, in order, one past the one before except where it printed a snapshot or a compacted
/// run (a jump forward);
/// the last text printed for the question and the answer of each of `turns` is the edited
/// question and the whole streamed answer and thinking. Then stops it.
async fn example_printed(
    state: &mut EngineState,
    sid: &str,
    turns: std::ops::RangeInclusive<u32>,
    snapshot_first: bool,
) {
    let latest = latest_seq(&state.harness, sid).await;
    let example = state.live.example.as_mut().expect("the example runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    let lines = loop {
        let lines = example_lines(&read(&example.out));
        if lines.last().is_some_and(|(seq, _, _)| *seq >= latest) {
            break lines;
        }
        assert!(
            Instant::now() < deadline,
            "the example is at {:?} of {latest}:\n{}",
            lines.last().map(|l| l.0),
            read(&example.err)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let notes = read(&example.err);
    let snapshots: Vec<u64> =
        lines.iter().filter(|(_, t, _)| t == "snapshot").map(|(s, _, _)| *s).collect();
    let mut previous = 0;
    for (seq, change_type, _) in &lines {
        if change_type == "snapshot" {
            assert!(*seq > previous, "snapshot at {seq} after {previous}\n{notes}");
        } else if change_type == COMPACTED {
            // A run of superseded changes covers the seqs up to its own (the example's replica
            // refuses one that starts past what it applied: a gap note instead).
            assert!(*seq > previous, "a compacted run to {seq} after {previous}\n{notes}");
        } else {
            assert_eq!(*seq, previous + 1, "{change_type} after seq {previous}\n{notes}");
        }
        previous = *seq;
    }
    assert_eq!(previous, latest);
    match snapshot_first {
        true => assert_eq!(lines.first().map(|l| l.1.as_str()), Some("snapshot"), "{notes}"),
        false => assert!(snapshots.is_empty(), "snapshots at {snapshots:?}\n{notes}"),
    }
    // The last text printed for each message is what the fresh read serves.
    let mut last: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (_, _, message) in lines {
        if let Some((entry, text, thinking)) = message {
            last.insert(entry, (text, thinking));
        }
    }
    for k in turns {
        assert_eq!(last.get(&format!("a_{k}")), Some(&(answer(k), thinking(k))), "a_{k}");
        assert_eq!(last.get(&format!("u_{k}")), Some(&(edited(k), String::new())), "u_{k}");
    }
    println!(
        "example replica: every seq to {latest} printed once (snapshots at {snapshots:?}); {} gap \
         notes",
        notes.matches("gap:").count()
    );
    let _ = example.child.kill();
    let _ = example.child.wait();
}

#[then(
    regex = r#"^the example replica printed every seq of "\$\{(\w+)\}" once and the streamed text of every turn$"#
)]
async fn example_printed_all(w: &mut SessionWorld, var: String) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    let turns = state.live.turns.get(&sid).copied().unwrap_or(0);
    example_printed(state, &sid, 1..=turns, false).await;
}

#[then(
    regex = r#"^the example replica printed a snapshot of "\$\{(\w+)\}", then every later seq once and the streamed text of turn (\d+)$"#
)]
async fn example_printed_snapshot(w: &mut SessionWorld, var: String, turn: u32) {
    let state = st(w);
    let sid = state.vars[&var].clone();
    example_printed(state, &sid, turn..=turn, true).await;
}
