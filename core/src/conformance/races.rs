//! The races two instances of one backend make possible (features `conformance` + `std`): calls
//! through the catalog on two handles of the same data at once, each a thread, and what must
//! hold afterwards — one winner of one `expected_revision`, one entry of one `entry_id`, a
//! consistent tree under forks and branch switches, one revision per content change. A backend
//! that decides outside its transaction fails them ([`crate::transaction`]).
//!
//! [`race_tests!`](crate::race_tests) makes each a `#[test]`; [`RACES`] lists them by name.

extern crate std;

use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use serde_json::{json, Value};
use std::sync::Barrier;
use std::thread;

use crate::catalog::dispatch;
use crate::env::{Env, Limits, ManualClock, SeqIds};
use crate::store::Store;

/// Two handles on one backend's data (two instances; the same one twice where there is one).
pub type Pair = [Arc<dyn Store + Send + Sync>; 2];

/// Builds a fresh pair over empty data.
pub type MakePair<'a> = &'a dyn Fn() -> Pair;

type Race = fn(MakePair<'_>) -> Result<(), String>;

/// Every race, by name.
pub const RACES: &[(&str, Race)] = &[
    ("update_message_has_one_winner", race_update_message_has_one_winner),
    ("one_entry_id_appends_once", race_one_entry_id_appends_once),
    ("forks_and_branch_switches_keep_the_tree", race_forks_and_branch_switches_keep_the_tree),
    ("deltas_and_updates_take_one_revision_each", race_deltas_and_updates_take_one_revision_each),
];

/// One `#[test]` per race against the pairs `make` builds, e.g.
/// `mod races { session_core::race_tests!(pair()); }`.
#[macro_export]
macro_rules! race_tests {
    ($make:expr) => {
        $crate::race_tests!(@each $make;
            update_message_has_one_winner => race_update_message_has_one_winner,
            one_entry_id_appends_once => race_one_entry_id_appends_once,
            forks_and_branch_switches_keep_the_tree => race_forks_and_branch_switches_keep_the_tree,
            deltas_and_updates_take_one_revision_each => race_deltas_and_updates_take_one_revision_each,
        );
    };
    (@each $make:expr; $($name:ident => $race:ident,)*) => {
        $(
            #[test]
            fn $name() {
                let make = $make;
                if let Err(e) = $crate::conformance::races::$race(&make) {
                    panic!("race {} failed: {e}", stringify!($name));
                }
            }
        )*
    };
}

/// The clock and ids every thread of one race shares (one id space, as one deployment has).
struct Shared {
    clock: ManualClock,
    ids: SeqIds,
}

impl Shared {
    fn new() -> Self {
        Shared { clock: ManualClock::new(), ids: SeqIds::new() }
    }

    /// Calls `id` with `payload` on `store`: the response, or the error's wire code.
    fn call(&self, store: &dyn Store, id: &str, payload: Value) -> Result<Value, String> {
        let env = Env { clock: &self.clock, ids: &self.ids, limits: Limits::default() };
        match dispatch(store, &env, id, payload) {
            Some(Ok(outcome)) => Ok(outcome.response),
            Some(Err(e)) => Err(e.message()),
            None => Err(format!("{id} is not in the catalog")),
        }
    }

    /// Like [`Shared::call`], also counting the events the call fired.
    fn call_counting(
        &self,
        store: &dyn Store,
        id: &str,
        payload: Value,
    ) -> Result<(Value, usize), String> {
        let env = Env { clock: &self.clock, ids: &self.ids, limits: Limits::default() };
        match dispatch(store, &env, id, payload) {
            Some(Ok(outcome)) => Ok((outcome.response, outcome.events.len())),
            Some(Err(e)) => Err(e.message()),
            None => Err(format!("{id} is not in the catalog")),
        }
    }
}

fn text(t: &str) -> Value {
    json!([{ "type": "text", "text": t }])
}

fn user(t: &str) -> Value {
    json!({ "role": "user", "content": text(t), "timestamp": 1 })
}

/// Runs `work(thread, store)` on `threads` threads at once, alternating the pair's handles; the
/// answers in thread order.
fn at_once<T: Send>(
    pair: &Pair,
    threads: usize,
    work: &(dyn Fn(usize, &dyn Store) -> T + Sync),
) -> Vec<T> {
    let start = Barrier::new(threads);
    thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (store, start) = (pair[t % 2].clone(), &start);
                scope.spawn(move || {
                    start.wait();
                    work(t, &*store)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a racing thread panicked")).collect()
    })
}

fn setup(shared: &Shared, store: &dyn Store, sid: &str) -> Result<(), String> {
    shared.call(store, "session::ensure", json!({ "session_id": sid }))?;
    Ok(())
}

/// Appends `message` to `sid`; the new entry's id.
fn append(shared: &Shared, store: &dyn Store, sid: &str, message: Value) -> Result<String, String> {
    let added =
        shared.call(store, "session::append", json!({ "session_id": sid, "message": message }))?;
    Ok(added["entry_id"].as_str().unwrap_or_default().to_string())
}

fn meta_of(shared: &Shared, store: &dyn Store, sid: &str) -> Result<Value, String> {
    let got = shared.call(store, "session::get", json!({ "session_id": sid }))?;
    Ok(got["meta"].clone())
}

/// 8 concurrent `update-message` calls with one `expected_revision`, split over both handles,
/// 30 rounds: exactly one answers `updated: true` each round, and the revision moves by one.
pub fn race_update_message_has_one_winner(make: MakePair<'_>) -> Result<(), String> {
    let pair = make();
    let shared = Shared::new();
    let sid = "race-update";
    setup(&shared, &*pair[0], sid)?;
    let eid = append(&shared, &*pair[0], sid, user("v0"))?;
    for round in 0..30u64 {
        let answers = at_once(&pair, 8, &|t, store| {
            let payload = json!({ "session_id": sid, "entry_id": eid,
                "content": text(&format!("r{round} t{t}")), "expected_revision": round });
            shared.call(store, "session::update-message", payload)
        });
        let mut winners = 0;
        for answer in answers {
            if answer?["updated"] == json!(true) {
                winners += 1;
            }
        }
        if winners != 1 {
            return Err(format!("round {round}: {winners} calls answered updated: true"));
        }
        for store in &pair {
            let got = shared.call(
                &**store,
                "session::get-message",
                json!({ "session_id": sid, "entry_id": eid }),
            )?;
            if got["entry"]["revision"] != json!(round + 1) {
                return Err(format!(
                    "round {round}: revision {} after one winner",
                    got["entry"]["revision"]
                ));
            }
        }
    }
    Ok(())
}

/// One `entry_id` appended 8× at once through both handles: one entry, `message_count` + 1,
/// every answer names it, and exactly one call fired `message-added`.
pub fn race_one_entry_id_appends_once(make: MakePair<'_>) -> Result<(), String> {
    let pair = make();
    let shared = Shared::new();
    let sid = "race-entry-id";
    setup(&shared, &*pair[0], sid)?;
    let answers = at_once(&pair, 8, &|_, store| {
        let payload = json!({ "session_id": sid, "entry_id": "once", "message": user("hi") });
        shared.call_counting(store, "session::append", payload)
    });
    let mut fired = 0;
    for answer in answers {
        let (response, events) = answer?;
        if response["entry_id"] != json!("once") {
            return Err(format!("an answer names another entry: {response}"));
        }
        fired += events;
    }
    if fired != 1 {
        return Err(format!("{fired} calls fired session::message-added, want 1"));
    }
    for store in &pair {
        let meta = meta_of(&shared, &**store, sid)?;
        if meta["message_count"] != json!(1) {
            return Err(format!("message_count {} after one entry", meta["message_count"]));
        }
        let entries = store.list_entries(sid).map_err(|e| e.to_string())?;
        if entries.len() != 1 {
            return Err(format!("{} entries stored, want 1", entries.len()));
        }
    }
    Ok(())
}

/// Appends on both handles while other threads switch branches and fork: afterwards every
/// session's parent chains are whole, its active path walks to the root and `message_count`
/// counts its message entries.
pub fn race_forks_and_branch_switches_keep_the_tree(make: MakePair<'_>) -> Result<(), String> {
    let pair = make();
    let shared = Shared::new();
    let sid = "race-tree";
    setup(&shared, &*pair[0], sid)?;
    let root = append(&shared, &*pair[0], sid, user("root"))?;
    let forks = at_once(&pair, 6, &|t, store| {
        let mut forked = Vec::new();
        for i in 0..8 {
            let answer = match t % 3 {
                0 | 1 => shared.call(
                    store,
                    "session::append",
                    json!({ "session_id": sid, "message": user(&format!("t{t} {i}")) }),
                ),
                _ if i % 2 == 0 => shared.call(
                    store,
                    "session::set-active-leaf",
                    json!({ "session_id": sid, "entry_id": root }),
                ),
                _ => shared.call(
                    store,
                    "session::fork",
                    json!({ "session_id": sid, "entry_id": root }),
                ),
            };
            match answer {
                Ok(response) => {
                    if let Some(new) = response.get("session_id").and_then(Value::as_str) {
                        forked.push(new.to_string());
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(forked)
    });
    let mut sessions = alloc::vec![sid.to_string()];
    for forked in forks {
        sessions.extend(forked?);
    }
    for store in &pair {
        for session in &sessions {
            check_tree(&shared, &**store, session)?;
        }
    }
    Ok(())
}

fn check_tree(shared: &Shared, store: &dyn Store, sid: &str) -> Result<(), String> {
    let entries = store.list_entries(sid).map_err(|e| e.to_string())?;
    let ids: Vec<&str> = entries.iter().map(|e| e.id()).collect();
    for entry in &entries {
        if let Some(parent) = entry.parent_id() {
            if !ids.contains(&parent) {
                return Err(format!("{sid}: entry {} has a missing parent {parent}", entry.id()));
            }
        }
    }
    let messages = entries.iter().filter(|e| e.message().is_some()).count();
    let meta = meta_of(shared, store, sid)?;
    if meta["message_count"] != json!(messages) {
        return Err(format!(
            "{sid}: message_count {} for {messages} messages",
            meta["message_count"]
        ));
    }
    if let Some(leaf) = store.get_active_leaf(sid).map_err(|e| e.to_string())? {
        store.path_locate(sid, &leaf, None).map_err(|e| format!("{sid}: active path: {e}"))?;
    }
    Ok(())
}

/// `append-delta` and `update-message` (no `expected_revision`) on one message from both handles
/// at once: every call succeeds with a revision of its own, and the message ends at the number
/// of calls.
pub fn race_deltas_and_updates_take_one_revision_each(make: MakePair<'_>) -> Result<(), String> {
    let pair = make();
    let shared = Shared::new();
    let sid = "race-delta";
    setup(&shared, &*pair[0], sid)?;
    let reply = json!({ "role": "assistant", "content": text(""), "timestamp": 1,
        "stop_reason": "end", "model": "m", "provider": "p" });
    let eid = append(&shared, &*pair[0], sid, reply)?;
    let calls_per_thread = 6u64;
    let answers = at_once(&pair, 6, &|t, store| {
        let mut revisions = Vec::new();
        for i in 0..calls_per_thread {
            let answer = if t % 2 == 0 {
                shared.call(
                    store,
                    "session::append-delta",
                    json!({ "session_id": sid, "entry_id": eid, "text": "x" }),
                )
            } else {
                shared.call(
                    store,
                    "session::update-message",
                    json!({ "session_id": sid,
                    "entry_id": eid, "content": text(&format!("t{t} {i}")) }),
                )
            };
            revisions.push(answer?["revision"].as_u64().unwrap_or(0));
        }
        Ok::<_, String>(revisions)
    });
    let mut seen = Vec::new();
    for answer in answers {
        seen.extend(answer?);
    }
    seen.sort_unstable();
    let want: Vec<u64> = (1..=6 * calls_per_thread).collect();
    if seen != want {
        return Err(format!("revisions answered {seen:?}, want each of 1..={}", want.len()));
    }
    let got = shared.call(
        &*pair[1],
        "session::get-message",
        json!({ "session_id": sid, "entry_id": eid }),
    )?;
    if got["entry"]["revision"] != json!(want.len()) {
        return Err(format!("final revision {}, want {}", got["entry"]["revision"], want.len()));
    }
    Ok(())
}
