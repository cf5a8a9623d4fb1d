//! OpenAI Responses / Conversations items (a JSON array or JSONL, one branch) ↔ this store's
//! entries: one entry per item; what an item has beyond our fields stays in the entry's origin
//! under `"openai"` (`architecture/formats/openai.md`). This file holds the names every
//! operation uses and [`looks_like`]; content parts, [`read`], [`write()`] and [`kept`] have a file
//! each.

mod kept;
mod parts;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use kept::kept;
pub use read::read;
pub use write::write;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

use crate::formats::items::first_object;
use crate::formats::message::bare_assistant;
use crate::wire::{AgentMessage, ContentBlock, StopReason};

/// The item types this module maps to messages; any other type becomes a custom entry.
const KNOWN_TYPES: [&str; 4] = ["message", "function_call", "function_call_output", "reasoning"];

/// The prefix of the id of an entry whose item has none (`openai_<index>`).
const ID_PREFIX: &str = "openai";

/// The custom type of an entry holding an item of a type we do not map.
fn custom_type_of(item_type: &str) -> String {
    format!("openai.{item_type}")
}

// ---------------------------------------------------------------------------------------------
// looks_like

/// Whether `bytes` are OpenAI items: the first object is a message / function_call /
/// function_call_output / reasoning item (and no UIMessage, which has `parts`), or a typeless
/// `role` + `content` message whose parts are `input_*` / `output_text`.
pub fn looks_like(bytes: &[u8]) -> bool {
    let Some(first) = first_object(bytes) else { return false };
    if first.contains_key("parts") {
        return false;
    }
    match first.get("type").and_then(Value::as_str) {
        Some("message") => first.contains_key("role"),
        Some(kind) => KNOWN_TYPES.contains(&kind),
        None => first.contains_key("role") && has_openai_parts(first.get("content")),
    }
}

fn has_openai_parts(content: Option<&Value>) -> bool {
    let Some(Value::Array(parts)) = content else { return false };
    parts.iter().any(|part| {
        matches!(
            part.get("type").and_then(Value::as_str),
            Some("input_text" | "output_text" | "input_image" | "refusal")
        )
    })
}

fn assistant(content: Vec<ContentBlock>, stop_reason: StopReason, timestamp: i64) -> AgentMessage {
    bare_assistant(content, stop_reason, "openai", timestamp)
}
