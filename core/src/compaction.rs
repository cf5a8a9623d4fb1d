//! Compaction records (issue 38): a plain `custom` entry of type `compaction` (so v1.0.32 replays
//! it) whose data is `{summary, first_kept_entry_id, tokens_before?, details?}`; the rules that
//! make one valid on a path, and the token estimate of what a model is given.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use serde::Deserialize;
use serde_json::Value;

use crate::wire::{AgentMessage, ContentBlock, SessionEntry};

/// The `custom_type` of a compaction record.
pub const COMPACTION: &str = "compaction";

/// A compaction record's data.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CompactionData {
    pub summary: String,
    pub first_kept_entry_id: String,
    #[serde(default)]
    pub tokens_before: Option<u64>,
    #[serde(default)]
    pub details: Option<Value>,
}

/// The compaction data of `entry`, when it is a compaction record: `Err` with why its data does
/// not read as one.
pub fn record_of(entry: &SessionEntry) -> Option<Result<CompactionData, String>> {
    let SessionEntry::Custom { custom_type, data, .. } = entry else { return None };
    if custom_type != COMPACTION {
        return None;
    }
    Some(CompactionData::deserialize(data).map_err(|e| {
        format!("its data is not {{summary, first_kept_entry_id, tokens_before?, details?}}: {e}")
    }))
}

/// Where `first_kept` is in `before` (the path up to, not including, the compaction record), and
/// that the cut there keeps every function call with its result; else why not.
pub fn cut_at(before: &[SessionEntry], first_kept: &str) -> Result<usize, String> {
    let Some(at) = before.iter().position(|e| e.id() == first_kept) else {
        return Err(format!(
            "first_kept_entry_id {first_kept} is not on the path before the compaction"
        ));
    };
    let called_before: BTreeSet<&str> = before[..at].iter().flat_map(call_ids).collect();
    for entry in &before[at..] {
        if let Some(AgentMessage::FunctionResult { function_call_id, .. }) = entry.message() {
            if called_before.contains(function_call_id.as_str()) {
                return Err(format!(
                    "the cut at {first_kept} separates function call {function_call_id} from its \
                     result"
                ));
            }
        }
    }
    Ok(at)
}

/// The ids of the function calls an entry's message makes.
fn call_ids(entry: &SessionEntry) -> impl Iterator<Item = &str> {
    let content = match entry.message() {
        Some(AgentMessage::Assistant { content, .. }) => content.as_slice(),
        _ => &[],
    };
    content.iter().filter_map(|block| match block {
        ContentBlock::FunctionCall { id, .. } => Some(id.as_str()),
        _ => None,
    })
}

/// Tokens per message besides its content (role and framing), in the estimate.
pub const MESSAGE_OVERHEAD_TOKENS: u64 = 4;

/// The estimated tokens of one message: an assistant message's provider count
/// (`usage.output`) when it carries one, else a quarter of its JSON's bytes, rounded up, plus
/// [`MESSAGE_OVERHEAD_TOKENS`].
pub fn message_tokens(message: &AgentMessage) -> u64 {
    if let AgentMessage::Assistant { usage: Some(usage), .. } = message {
        if let Some(output) = usage.output {
            return output + MESSAGE_OVERHEAD_TOKENS;
        }
    }
    text_tokens(&serde_json::to_string(message).unwrap_or_default()) + MESSAGE_OVERHEAD_TOKENS
}

/// A quarter of `text`'s bytes, rounded up.
pub fn text_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}
