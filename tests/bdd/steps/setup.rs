//! `Given` steps that build state: sessions, entries from a table, the clock and the limits.

use cucumber::gherkin::Step;
use cucumber::given;
use serde_json::{json, Value};

use crate::json;
use crate::world::SessionWorld;

#[given(regex = r#"^a session "([^"]*)"$"#)]
fn a_session(w: &mut SessionWorld, id: String) {
    w.call_ok("session::ensure", json!({ "session_id": id }));
}

#[given(regex = r#"^a session "([^"]*)" with metadata (\{.*\})$"#)]
fn a_session_with_metadata(w: &mut SessionWorld, id: String, metadata: String) {
    w.call_ok("session::ensure", json!({ "session_id": id, "metadata": json::parse(&metadata) }));
}

#[given(regex = r#"^the clock is at (\d+)$"#)]
fn clock_at(w: &mut SessionWorld, ms: i64) {
    w.clock.set(ms);
}

#[given(regex = r#"^the clock advances by (\d+) ms$"#)]
fn clock_advances(w: &mut SessionWorld, ms: i64) {
    w.clock.advance(ms);
}

#[given(regex = r#"^the default list limit is (\d+)$"#)]
fn default_limit(w: &mut SessionWorld, n: usize) {
    w.limits.default_list_limit = n;
}

#[given(regex = r#"^the max list limit is (\d+)$"#)]
fn max_limit(w: &mut SessionWorld, n: usize) {
    w.limits.max_list_limit = n;
}

#[given(regex = r#"^the max attachment size is (\d+) bytes$"#)]
fn max_attachment(w: &mut SessionWorld, n: u64) {
    w.limits.max_attachment_bytes = n;
}

#[given(regex = r#"^the feed retention is (\d+) changes?$"#)]
fn feed_retention(w: &mut SessionWorld, n: usize) {
    w.limits.feed_retention = n;
}

#[given(regex = r#"^the trash retention is (\d+) seconds?$"#)]
fn trash_retention(w: &mut SessionWorld, secs: u64) {
    w.limits.trash_retention_secs = secs;
}

#[given(regex = r#"^I called "([^"]+)" with (\{.*\})$"#)]
fn called_inline(w: &mut SessionWorld, function: String, payload: String) {
    w.call_ok(&function, json::parse(&payload));
}

#[given(regex = r#"^I called "([^"]+)" with:$"#)]
fn called_doc(w: &mut SessionWorld, function: String, step: &Step) {
    let doc = step.docstring.as_deref().expect("docstring");
    w.call_ok(&function, json::parse(doc));
}

/// Builds the `message` of one table row.
fn message(role: &str, text: &str, calls: &str, answers: &str, custom_type: &str) -> Value {
    let text_blocks: Vec<Value> =
        if text.is_empty() { vec![] } else { vec![json!({ "type": "text", "text": text })] };
    match role {
        "user" => json!({ "role": "user", "content": text_blocks, "timestamp": 1 }),
        "assistant" => {
            let mut content = text_blocks;
            for call in calls.split(',').map(str::trim).filter(|c| !c.is_empty()) {
                content.push(json!({
                    "type": "function_call", "id": call, "function_id": "tool",
                    "arguments": { "q": call }
                }));
            }
            json!({ "role": "assistant", "content": content, "stop_reason": "end",
                    "model": "m", "provider": "p", "timestamp": 2 })
        }
        "function_result" => json!({
            "role": "function_result", "function_call_id": answers, "function_id": "tool",
            "content": text_blocks, "details": { "raw": text }, "timestamp": 3
        }),
        "custom" => json!({
            "role": "custom", "custom_type": custom_type, "content": text_blocks, "timestamp": 4
        }),
        other => panic!("unknown role {other}"),
    }
}

/// `Given "s" has entries:` with columns id, role (user / assistant / function_result / custom
/// for messages, `entry` for a custom entry), text, calls, answers, custom_type, parent, origin.
/// Each row is one `session::append` with `entry_id` = id.
#[given(regex = r#"^"([^"]*)" has entries:$"#)]
fn has_entries(w: &mut SessionWorld, sid: String, step: &Step) {
    let table = step.table.as_ref().expect("table");
    let header = &table.rows[0];
    for row in &table.rows[1..] {
        let col =
            |name: &str| header.iter().position(|h| h == name).map(|i| row[i].trim()).unwrap_or("");
        let mut payload = json!({ "session_id": sid });
        if !col("id").is_empty() {
            payload["entry_id"] = json!(col("id"));
        }
        if !col("parent").is_empty() {
            payload["parent_id"] = json!(col("parent"));
        }
        if !col("origin").is_empty() {
            payload["origin"] = json::parse(col("origin"));
        }
        if col("role") == "entry" {
            let data = if col("text").is_empty() { Value::Null } else { json::parse(col("text")) };
            payload["custom"] = json!({ "custom_type": col("custom_type"), "data": data });
        } else {
            payload["message"] =
                message(col("role"), col("text"), col("calls"), col("answers"), col("custom_type"));
        }
        w.call_ok("session::append", payload);
    }
}
