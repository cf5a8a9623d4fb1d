//! Parts ↔ blocks: the part a block is written as, the block (and a finished tool part's
//! outcome) a part reads as.

use alloc::format;
use alloc::string::{String, ToString};
use serde_json::{json, Value};

use super::diff::object;
use crate::formats::data_url::{data_url, parse_data_url};
use crate::wire::{ContentBlock, Object};

/// A tool call's outcome, as a function result entry holds it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Outcome {
    pub(super) text: String,
    pub(super) is_error: bool,
    /// The output was JSON other than a string (its text is that JSON).
    pub(super) json: bool,
}

/// The part a block is written as (`None`: a block a UIMessage has no part for).
pub(super) fn part_of(block: &ContentBlock, outcome: Option<&Outcome>) -> Option<Object> {
    let part = match block {
        ContentBlock::Text { text } => json!({ "type": "text", "text": text }),
        ContentBlock::Thinking { text, .. } => json!({ "type": "reasoning", "text": text }),
        ContentBlock::Image { mime, data, .. } if mime.starts_with("image/") => {
            json!({ "type": "file", "mediaType": mime, "url": data_url(mime, data) })
        }
        ContentBlock::FunctionCall { id, function_id, arguments } => {
            return Some(tool_part(id, function_id, arguments, outcome))
        }
        _ => return None,
    };
    Some(object(part))
}

fn tool_part(id: &str, name: &str, input: &Value, outcome: Option<&Outcome>) -> Object {
    let mut part = object(json!({
        "type": format!("tool-{name}"), "toolCallId": id, "input": input,
        "state": "input-available",
    }));
    match outcome {
        Some(Outcome { text, is_error: true, .. }) => {
            part.insert("state".into(), "output-error".into());
            part.insert("errorText".into(), Value::String(text.clone()));
        }
        Some(Outcome { text, json, .. }) => {
            part.insert("state".into(), "output-available".into());
            let output = match json {
                true => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
                false => Value::String(text.clone()),
            };
            part.insert("output".into(), output);
        }
        None => {}
    }
    part
}

/// The block (and, for a finished tool part, its outcome) of one part of a message of `role`;
/// `None` for a part no block holds.
pub(super) fn block_of(role: &str, part: &Object) -> Option<(ContentBlock, Option<Outcome>)> {
    let kind = part.get("type").and_then(Value::as_str)?;
    let text = |key: &str| part.get(key).and_then(Value::as_str).map(str::to_string);
    let block = match kind {
        "text" => ContentBlock::Text { text: text("text")? },
        "file" => {
            let mime = text("mediaType").filter(|m| m.starts_with("image/"))?;
            let (_, data) = parse_data_url(&text("url")?)?;
            ContentBlock::Image { mime, data, attachment_id: None }
        }
        _ if role != "assistant" => return None,
        "reasoning" => ContentBlock::Thinking { text: text("text")?, signature: None },
        "dynamic-tool" => return tool_block(&text("toolName")?, part),
        _ => return tool_block(kind.strip_prefix("tool-")?, part),
    };
    Some((block, None))
}

fn tool_block(name: &str, part: &Object) -> Option<(ContentBlock, Option<Outcome>)> {
    let id = part.get("toolCallId").and_then(Value::as_str)?.to_string();
    let arguments = part.get("input").cloned().unwrap_or(Value::Null);
    let outcome = match part.get("state").and_then(Value::as_str) {
        Some("output-available") => {
            let output = part.get("output").cloned().unwrap_or(Value::Null);
            let (text, json) = match output {
                Value::String(text) => (text, false),
                other => (serde_json::to_string(&other).unwrap_or_default(), true),
            };
            Some(Outcome { text, is_error: false, json })
        }
        Some("output-error") => {
            let text = part.get("errorText").and_then(Value::as_str).unwrap_or_default();
            Some(Outcome { text: text.to_string(), is_error: true, json: false })
        }
        _ => None,
    };
    let block = ContentBlock::FunctionCall { id, function_id: name.to_string(), arguments };
    Some((block, outcome))
}
