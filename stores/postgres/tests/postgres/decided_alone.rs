//! Writes an instance decides over the state it holds (issue 35): when another instance wrote the
//! session since, no answer comes from the stale state — a refusal, an idempotent repeat and an
//! update are each decided again under the row lock and answer what the session holds.

use serde_json::{json, Value};
use session_core::{Env, Limits, ManualClock, SeqIds, Store};
use session_store_postgres::PgStore;

use super::{call, fresh_config};

fn message(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
}

fn message_count(store: &dyn Store, env: &Env<'_>, sid: &str) -> Result<Value, String> {
    let meta = call(store, env, "session::get", json!({"session_id": sid}))?;
    Ok(meta["meta"]["message_count"].clone())
}

pub fn stale_decisions_are_taken_again(url: &str) -> Result<(), String> {
    let config = fresh_config(url);
    let (a, b) = (PgStore::open(&config)?, PgStore::open(&config)?);
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    for sid in ["s", "t", "u"] {
        call(&a, &env, "session::ensure", json!({"session_id": sid}))?;
        call(&a, &env, "session::append", json!({"session_id": sid, "message": message("a0")}))?;
    }
    // b writes entry x to s: a's state of s lacks it, a's update of x must find it.
    let x = json!({"session_id": "s", "entry_id": "x", "message": message("from b")});
    call(&b, &env, "session::append", x)?;
    let update = json!({"session_id": "s", "entry_id": "x", "content": [{"type": "text", "text": "edited by a"}]});
    let updated = call(&a, &env, "session::update-message", update)?;
    if updated["updated"] != true {
        return Err(format!("a's update of the entry b wrote: {updated}"));
    }
    // b appends y to t; a appends y too (idempotent by entry id): one entry, not two.
    let y = json!({"session_id": "t", "entry_id": "y", "message": message("y")});
    call(&b, &env, "session::append", y.clone())?;
    call(&a, &env, "session::append", y)?;
    if message_count(&a, &env, "t")? != 2 {
        return Err(format!("t after y twice: message_count {}", message_count(&a, &env, "t")?));
    }
    // u only a writes: a refusal decided over a's state stands (its position checked).
    let missing = json!({"session_id": "u", "entry_id": "nope", "content": []});
    match call(&a, &env, "session::update-message", missing) {
        Err(e) if e.contains("EntryNotFound") => {}
        other => return Err(format!("an update of a missing entry: {other:?}")),
    }
    // And every write landed where a fresh instance reads it.
    let fresh = PgStore::open(&config)?;
    let got =
        call(&fresh, &env, "session::get-message", json!({"session_id": "s", "entry_id": "x"}))?;
    if got.to_string().contains("edited by a") {
        Ok(())
    } else {
        Err(format!("x as a fresh instance reads it: {got}"))
    }
}
