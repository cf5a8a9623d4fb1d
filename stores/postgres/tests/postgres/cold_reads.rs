//! A cold instance reads a page from the entry rows (issue 35, point 3): the same answers as the
//! instance that wrote the session, with nothing replayed; a session whose rows are not current
//! (as an older build leaves it) is answered by replaying its log, and its next write makes its
//! rows current again.

use serde_json::{json, Value};
use session_core::{Env, Limits, ManualClock, SeqIds, Store};
use session_store_postgres::PgStore;

use super::{admin, call, fresh_config};

/// The reads compared between the writer and a fresh instance.
fn reads(store: &dyn Store, env: &Env<'_>, ids: &[String]) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for (id, payload) in [
        ("session::messages-tail", json!({"session_id": "s", "limit": 7})),
        ("session::messages-tail", json!({"session_id": "s", "include_custom": false})),
        ("session::messages-tail", json!({"session_id": "s", "before_entry_id": ids[110]})),
        ("session::messages", json!({"session_id": "s", "limit": 5})),
        ("session::messages", json!({"session_id": "s", "after_entry_id": ids[40], "limit": 9})),
        ("session::get-message", json!({"session_id": "s", "entry_id": ids[3]})),
        ("session::get-message", json!({"session_id": "s", "entry_id": ids[ids.len() - 1]})),
        ("session::get-message", json!({"session_id": "s", "entry_id": "no-such-entry"})),
    ] {
        out.push(call(store, env, id, payload.clone()).unwrap_or_else(|e| json!({ "error": e })));
    }
    Ok(out)
}

pub fn cold_instance_reads_rows(url: &str) -> Result<(), String> {
    let config = fresh_config(url);
    let writer = PgStore::open(&config)?;
    let (clock, seq) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &seq, limits: Limits::default() };
    call(&writer, &env, "session::ensure", json!({"session_id": "s"}))?;
    let mut ids = Vec::new();
    for i in 0..240 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let mut message = json!({"role": role, "content": [{"type": "text", "text": format!("m{i}")}], "timestamp": i});
        if role == "assistant" {
            message["model"] = json!("m");
            message["provider"] = json!("p");
            message["stop_reason"] = json!("end");
        }
        let mut payload = json!({"session_id": "s", "message": message});
        if i % 17 == 5 {
            payload = json!({"session_id": "s", "custom": {"custom_type": "note", "data": i}});
        }
        let appended = call(&writer, &env, "session::append", payload)?;
        ids.push(appended["entry_id"].as_str().ok_or("an entry id")?.to_string());
        if i == 120 {
            // A branch: the path leaves the first one at entry 100.
            call(
                &writer,
                &env,
                "session::set-active-leaf",
                json!({"session_id": "s", "entry_id": ids[100]}),
            )?;
        }
    }
    let text = json!([{"type": "text", "text": "edited"}]);
    call(
        &writer,
        &env,
        "session::update-message",
        json!({"session_id": "s", "entry_id": ids[3], "content": text}),
    )?;
    // Back to the first branch's tip: its entries past the junction come back onto the path.
    call(
        &writer,
        &env,
        "session::set-active-leaf",
        json!({"session_id": "s", "entry_id": ids[120]}),
    )?;
    let want = reads(&writer, &env, &ids)?;
    if want.iter().any(|r| r.get("error").is_some()) {
        return Err(format!("the writer's reads failed: {want:?}"));
    }
    let cold = PgStore::open(&config)?;
    let got = reads(&cold, &env, &ids)?;
    if got != want {
        return Err(format!("cold reads differ:\n{got:?}\nwant\n{want:?}"));
    }
    if cold.replayed_sessions() != 0 {
        return Err(format!("a cold instance replayed {} sessions", cold.replayed_sessions()));
    }
    // Rows an older build never wrote: answered by a replay, made current by the next write.
    let schema = &config.schema;
    admin(
        url,
        &format!("UPDATE {schema}.sessions SET projected = -1; DELETE FROM {schema}.entries"),
    )?;
    let legacy = PgStore::open(&config)?;
    if reads(&legacy, &env, &ids)? != want || legacy.replayed_sessions() != 1 {
        return Err(format!(
            "stale rows: replayed {}, want 1 and the same reads",
            legacy.replayed_sessions()
        ));
    }
    let message =
        json!({"role": "user", "content": [{"type": "text", "text": "last"}], "timestamp": 9});
    let appended =
        call(&legacy, &env, "session::append", json!({"session_id": "s", "message": message}))?;
    ids.push(appended["entry_id"].as_str().ok_or("an entry id")?.to_string());
    let current =
        admin(url, &format!("SELECT (projected = version)::text FROM {schema}.sessions"))?;
    if current != ["true"] {
        return Err(format!("rows current after a write: {current:?}"));
    }
    let want = reads(&legacy, &env, &ids)?;
    let cold = PgStore::open(&config)?;
    if reads(&cold, &env, &ids)? != want || cold.replayed_sessions() != 0 {
        return Err(format!("after the rebuild: replayed {}", cold.replayed_sessions()));
    }
    Ok(())
}
