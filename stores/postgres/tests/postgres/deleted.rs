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
