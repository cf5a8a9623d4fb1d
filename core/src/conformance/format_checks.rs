//! Conformance of `session::import` / `session::export` (issue 40, `import_export`): a pi file
//! with a branch and a compaction imports as one session in one transaction on every backend; a
//! rerun writes nothing, other content under the same id is left alone unless `replace`, a bad
//! file leaves nothing behind, and the export gives back every line the file had. Without
//! feature `formats` (the npm package's main entry) the catalog has neither function and says so.

#[cfg(feature = "formats")]
use alloc::collections::BTreeMap;
use alloc::format;
#[cfg(feature = "formats")]
use alloc::string::{String, ToString};
#[cfg(feature = "formats")]
use alloc::vec::Vec;
use serde_json::json;
#[cfg(feature = "formats")]
use serde_json::Value;

use super::context_model::call;
use super::Make;
use crate::env::{Env, Limits, ManualClock, SeqIds};
use crate::error::ErrorCode;

/// A pi session (format version 3): a tool call and its result, a branch with a branch summary,
/// a compaction, a title.
#[cfg(feature = "formats")]
pub const PI_SESSION: &str = r#"{"type":"session","version":3,"id":"pi-1","timestamp":"2026-12-07T10:00:00.000Z","cwd":"/work"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-12-07T10:00:01.000Z","message":{"role":"user","content":"Where is the store?","timestamp":1796637601000}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-12-07T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"core/src/store.rs"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1796637602000}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-12-07T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"pub trait Store"}],"isError":false,"timestamp":1796637603000}}
{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-12-07T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"In core/src/store.rs."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1796637604000}}
{"type":"session_info","id":"a5","parentId":"a4","timestamp":"2026-12-07T10:00:05.000Z","name":"Find the store"}
{"type":"message","id":"b1","parentId":"a4","timestamp":"2026-12-07T10:00:06.000Z","message":{"role":"user","content":"And the fs one?","timestamp":1796637606000}}
{"type":"branch_summary","id":"c1","parentId":"a4","timestamp":"2026-12-07T10:00:07.000Z","fromId":"b1","summary":"Asked about the fs store."}
{"type":"compaction","id":"c2","parentId":"c1","timestamp":"2026-12-07T10:00:08.000Z","summary":"The store is core/src/store.rs.","firstKeptEntryId":"a2","tokensBefore":4200}
{"type":"message","id":"c3","parentId":"c2","timestamp":"2026-12-07T10:00:09.000Z","message":{"role":"user","content":"Thanks!","timestamp":1796637609000}}
"#;

#[cfg(feature = "formats")]
/// The lines of a JSONL text as JSON values, by entry id (the header under `session`).
fn lines_by_id(text: &str) -> Result<BTreeMap<String, Value>, String> {
    let mut lines = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let value: Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
        let id = match value.get("type").and_then(Value::as_str) {
            Some("session") => "session".to_string(),
            _ => value.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
        };
        lines.insert(id, value);
    }
    Ok(lines)
}

#[cfg(feature = "formats")]
pub fn check_import_export(make: Make<'_>) -> Result<(), String> {
    let store = make();
    let store = &*store;
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let import = |data: &str, replace: bool| {
        call(
            store,
            &env,
            "session::import",
            json!({"format": "pi", "data": data,
            "file_name": "pi-1.jsonl", "modified": 5, "replace": replace}),
        )
    };
    let outcome = |answer: Result<Value, _>| -> Result<String, String> {
        let answer = answer.map_err(|e| format!("import: {e}"))?;
        Ok(answer["outcome"].as_str().unwrap_or_default().to_string())
    };

    if outcome(import(PI_SESSION, false))? != "created" {
        return Err("a new file is not created".into());
    }
    let entries = store.list_entries("pi-1").map_err(|e| e.to_string())?;
    if entries.len() != 9 {
        return Err(format!("{} entries stored, the file has 9", entries.len()));
    }
    let leaf = store.get_active_leaf("pi-1").map_err(|e| e.to_string())?;
    if leaf.as_deref() != Some("c3") {
        return Err(format!("active leaf {leaf:?}, pi's is its last line c3"));
    }
    let meta = store.get_meta("pi-1").map_err(|e| e.to_string())?.ok_or("no meta")?;
    if meta.title != "Find the store" {
        return Err(format!("title {:?}", meta.title));
    }
    let context = call(store, &env, "session::context", json!({"session_id": "pi-1"}))
        .map_err(|e| format!("context: {e}"))?;
    if context["compaction"]["summary"] != "The store is core/src/store.rs." {
        return Err(format!("pi's compaction is not the context's: {context}"));
    }

    // A rerun writes nothing; other content under the id is left alone unless replace.
    if outcome(import(PI_SESSION, false))? != "unchanged" {
        return Err("importing the same file again is not unchanged".into());
    }
    let longer = format!(
        "{PI_SESSION}{}\n",
        r#"{"type":"message","id":"c4","parentId":"c3","timestamp":"2026-12-07T10:00:10.000Z","message":{"role":"user","content":"One more.","timestamp":1796637610000}}"#
    );
    if outcome(import(&longer, false))? != "exists" {
        return Err("a grown file under a stored id is not left alone".into());
    }
    if store.list_entries("pi-1").map_err(|e| e.to_string())?.len() != 9 {
        return Err("an import answered exists but wrote".into());
    }
    if outcome(import(&longer, true))? != "replaced" {
        return Err("replace: true does not replace".into());
    }
    let stored = store.list_entries("pi-1").map_err(|e| e.to_string())?;
    if stored.len() != 10 || store.get_active_leaf("pi-1").ok().flatten().as_deref() != Some("c4") {
        return Err(format!("after replace: {} entries", stored.len()));
    }

    // The export gives every line back as the file had it.
    let exported =
        call(store, &env, "session::export", json!({"session_id": "pi-1", "format": "pi"}))
            .map_err(|e| format!("export: {e}"))?;
    let data = exported["data"].as_str().unwrap_or_default();
    if lines_by_id(data)? != lines_by_id(&longer)? {
        return Err(format!("the export differs from the file:\n{data}"));
    }
    let last: Value = serde_json::from_str(data.trim_end().lines().last().unwrap_or_default())
        .map_err(|e| format!("the export's last line: {e}"))?;
    if last["id"] != "c4" {
        return Err("pi's active leaf (c4) is not the export's last line".into());
    }

    // A torn file is refused naming its line, and nothing of its session is stored.
    let torn = PI_SESSION.replace("\"id\":\"pi-1\"", "\"id\":\"pi-2\"");
    let torn = &torn[..torn.trim_end().len() - 20];
    match import(torn, false) {
        Err(e) if e.code == ErrorCode::InvalidRequest && e.text.contains("line 10") => {}
        other => return Err(format!("a torn file: {other:?}")),
    }
    let metas: Vec<String> =
        store.list_metas().map_err(|e| e.to_string())?.into_iter().map(|m| m.session_id).collect();
    if metas != ["pi-1"] {
        return Err(format!("a failed import left {metas:?}"));
    }
    // Another format than the one named is told apart.
    match call(store, &env, "session::import", json!({"format": "claude-code", "data": PI_SESSION}))
    {
        Err(e) if e.text.contains("looks like pi") => Ok(()),
        other => Err(format!("a pi file named claude-code: {other:?}")),
    }
}

#[cfg(not(feature = "formats"))]
pub fn check_import_export(make: Make<'_>) -> Result<(), String> {
    let store = make();
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    for id in ["session::import", "session::export"] {
        match call(&*store, &env, id, json!({"format": "pi", "data": "", "session_id": "s"})) {
            Err(e) if e.code == ErrorCode::InvalidRequest => {}
            other => return Err(format!("{id} without feature formats: {other:?}")),
        }
    }
    Ok(())
}
