//! What is searched of an entry and of a session: text and thinking blocks, function calls' id,
//! function id and arguments (keys and values), function results' content, file names, custom
//! entries' type and data; a session's title and description. Not image data, not thinking
//! signatures.

use alloc::string::{String, ToString};
use serde_json::Value;

use crate::wire::{ContentBlock, SessionEntry, SessionMeta};

/// The searched text of `entry`, its parts on lines of their own.
pub fn entry_text(entry: &SessionEntry) -> String {
    let mut out = String::new();
    match entry {
        SessionEntry::Message { message, .. } => {
            for block in message.content() {
                block_text(block, &mut out);
            }
        }
        SessionEntry::Custom { custom_type, data, .. } => {
            line(&mut out, custom_type);
            value_text(data, &mut out);
        }
    }
    out
}

/// The searched text of a session: its title and description.
pub fn session_text(meta: &SessionMeta) -> String {
    let mut out = String::new();
    line(&mut out, &meta.title);
    line(&mut out, &meta.description);
    out
}

fn line(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(text);
}

fn block_text(block: &ContentBlock, out: &mut String) {
    match block {
        ContentBlock::Text { text } | ContentBlock::Thinking { text, .. } => line(out, text),
        ContentBlock::FunctionCall { id, function_id, arguments } => {
            line(out, id);
            line(out, function_id);
            value_text(arguments, out);
        }
        ContentBlock::FunctionResult { content, .. } => {
            for inner in content {
                block_text(inner, out);
            }
        }
        ContentBlock::File { name, .. } => line(out, name),
        ContentBlock::Image { .. } => {}
    }
}

/// Keys, strings, numbers and booleans of a JSON value, one per line.
fn value_text(value: &Value, out: &mut String) {
    match value {
        Value::Null => {}
        Value::String(s) => line(out, s),
        Value::Bool(b) => line(out, if *b { "true" } else { "false" }),
        Value::Number(n) => line(out, &n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| value_text(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                line(out, key);
                value_text(v, out);
            }
        }
    }
}
