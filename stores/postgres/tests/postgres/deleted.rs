//! A delete through postgres leaves no row of the session behind (issue 37): not its session
//! row, log chunks, entry rows or attachments; its outbox rows name it with seqs and the
//! deletion's own change only, never its text. A re-created id starts a new feed epoch at seq 1.

use serde_json::json;
use session_core::{Env, Limits, ManualClock, SeqIds};
use session_store_postgres::PgStore;

use super::{admin, call, fresh_config};

const MARKER: &str = "my SSN is 123-45-6789";

pub fn a_delete_leaves_no_row(url: &str) -> Result<(), String> {
    let config = fresh_config(url);
    let store = PgStore::open(&config)?;
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let message =
        json!({"role": "user", "content": [{"type": "text", "text": MARKER}], "timestamp": 1});
    call(&store, &env, "session::ensure", json!({"session_id": "s", "title": MARKER}))?;
    call(&store, &env, "session::ensure", json!({"session_id": "kept"}))?;
    call(&store, &env, "session::append", json!({"session_id": "s", "message": message}))?;
    // The marker, base64.
    let data = "bXkgU1NOIGlzIDEyMy00NS02Nzg5";
    let put = json!({"session_id": "s", "name": "note.txt", "mime": "text/plain", "data": data});
    call(&store, &env, "session::put-attachment", put)?;
    let s = &config.schema;
    let rows = |table: &str| -> Result<usize, String> {
        let sql = format!(
            "SELECT count(*)::text FROM {s}.{table} WHERE session_id = convert_to('s', 'UTF8')"
        );
        admin(url, &sql)?.first().and_then(|n| n.parse().ok()).ok_or("no count".into())
    };
    let tables = ["sessions", "log", "entries", "attachments"];
    for table in tables {
        if rows(table)? == 0 {
            return Err(format!("the test wrote no {table} row"));
        }
    }
    call(&store, &env, "session::delete", json!({"session_id": "s"}))?;
    for table in tables {
        let left = rows(table)?;
        if left != 0 {
            return Err(format!("{left} {table} row(s) of the deleted session are left"));
        }
    }
    let dump = admin(url, &format!("SELECT string_agg(t::text, ' ') FROM {s}.outbox t"))?;
    if dump.concat().contains(MARKER) {
        return Err(format!("the outbox holds the deleted text: {dump:?}"));
    }
    let kept = call(&store, &env, "session::get", json!({"session_id": "kept"}))?;
    if kept["meta"]["session_id"] != "kept" {
        return Err(format!("the other session is gone: {kept}"));
    }
    let gone = call(&store, &env, "session::changes", json!({"session_id": "s"}))?;
    if gone
        != json!({"session_id": "s", "changes": [], "latest_seq": 0, "next_after_seq": null, "truncated": false})
    {
        return Err(format!("a deleted session's feed: {gone}"));
    }
    call(&store, &env, "session::ensure", json!({"session_id": "s"}))?;
    let again = call(&store, &env, "session::changes", json!({"session_id": "s"}))?;
    if again["latest_seq"] != 1 || again["epoch"].as_str().is_none() {
        return Err(format!("a re-created id's feed: {again}"));
    }
    Ok(())
}

/// Issue 37's byte scan on postgres: sessions holding the marker in their title, metadata,
/// messages, deltas, updates, draft and an attachment, erased by a metadata filter, leave no row
/// of any table of the schema holding it (as text or as bytes), while the session that was not
/// erased is intact.
pub fn an_erased_tenant_leaves_no_row_behind(url: &str) -> Result<(), String> {
    let config = fresh_config(url);
    let store = PgStore::open(&config)?;
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let message = |text: &str| json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1});
    for sid in ["t1", "t2", "t3"] {
        let metadata = json!({"owner": "u_1", "note": MARKER});
        call(
            &store,
            &env,
            "session::ensure",
            json!({"session_id": sid, "title": MARKER, "metadata": metadata}),
        )?;
        call(
            &store,
            &env,
            "session::append",
            json!({"session_id": sid, "entry_id": "m", "message": message(MARKER)}),
        )?;
        for _ in 0..3 {
            call(
                &store,
                &env,
                "session::append-delta",
                json!({"session_id": sid, "entry_id": "m", "text": MARKER}),
            )?;
        }
        let content = json!([{"type": "text", "text": MARKER}]);
        call(
            &store,
            &env,
            "session::update-message",
            json!({"session_id": sid, "entry_id": "m", "content": content}),
        )?;
        call(&store, &env, "session::set-draft", json!({"session_id": sid, "draft": MARKER}))?;
        let data = "bXkgU1NOIGlzIDEyMy00NS02Nzg5";
        let put = json!({"session_id": sid, "name": "n.txt", "mime": "text/plain", "data": data});
        call(&store, &env, "session::put-attachment", put)?;
    }
    // One of them in the trash: its parked meta is in the `lifecycles` table.
    call(&store, &env, "session::trash", json!({"session_id": "t3"}))?;
    call(
        &store,
        &env,
        "session::ensure",
        json!({"session_id": "kept", "metadata": {"owner": "u_2"}}),
    )?;
    call(
        &store,
        &env,
        "session::append",
        json!({"session_id": "kept", "message": message("fine")}),
    )?;
    let kept = call(&store, &env, "session::messages", json!({"session_id": "kept"}))?;
    let s = &config.schema;
    let hex: String = MARKER.bytes().map(|b| format!("{b:02x}")).collect();
    let holding = || -> Result<Vec<String>, String> {
        let mut found = Vec::new();
        let tables =
            ["sessions", "log", "entries", "attachments", "outbox", "followers", "lifecycles"];
        for table in tables {
            let rows = admin(
                url,
                &format!("SELECT coalesce(string_agg(t::text, ' '), '') FROM {s}.{table} t"),
            )?;
            let text = rows.concat();
            if text.contains(MARKER) || text.contains(&hex) {
                found.push(table.to_string());
            }
        }
        Ok(found)
    };
    if !holding()?.contains(&"lifecycles".to_string()) || holding()?.len() < 3 {
        return Err(format!("the test wrote the marker into too few tables: {:?}", holding()?));
    }
    let erased = call(&store, &env, "session::erase", json!({"metadata": {"owner": "u_1"}}))?;
    if erased["erased"] != 3 {
        return Err(format!("erase answered {erased}"));
    }
    let left = holding()?;
    if !left.is_empty() {
        return Err(format!("tables still holding the marker: {left:?}"));
    }
    let after = call(&store, &env, "session::messages", json!({"session_id": "kept"}))?;
    if after != kept {
        return Err(format!("the kept session changed: {kept} → {after}"));
    }
    Ok(())
}
