//! Compaction records (issue 38): a plain `custom` entry of type `compaction` (so v1.0.32 replays
//! it) whose data is `{summary, first_kept_entry_id, tokens_before?, details?}`; the rules that
//! make one valid on a path, and the token estimate of what a model is given.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
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
        return Err(off_path(first_kept));
    };
    let results = results_without_call(before[at..].iter());
    check_separated(first_kept, &results, before[..at].iter()).map(|()| at)
}

/// Why a compaction whose first kept entry is not on its path is not valid.
pub fn off_path(first_kept: &str) -> String {
    format!("first_kept_entry_id {first_kept} is not on the path before the compaction")
}

/// The call ids of the function results among `kept` (path order) whose call is not made in
/// `kept` before them: the results a cut before `kept` may have separated from their call.
pub fn results_without_call<'a>(kept: impl Iterator<Item = &'a SessionEntry>) -> Vec<String> {
    let mut called = BTreeSet::new();
    let mut without = Vec::new();
    for entry in kept {
        called.extend(call_ids(entry));
        if let Some(AgentMessage::FunctionResult { function_call_id, .. }) = entry.message() {
            if !called.contains(function_call_id.as_str()) {
                without.push(function_call_id.clone());
            }
        }
    }
    without
}

/// `Err` naming the first of `results` (call ids, path order) whose call an entry of `before`
/// (what the cut at `first_kept` leaves out) makes: the cut separates them. A result whose call
/// is made nowhere separates nothing.
pub fn check_separated<'a>(
    first_kept: &str,
    results: &[String],
    before: impl Iterator<Item = &'a SessionEntry>,
) -> Result<(), String> {
    if results.is_empty() {
        return Ok(());
    }
    let called_before: BTreeSet<&str> = before.flat_map(call_ids).collect();
    match results.iter().find(|id| called_before.contains(id.as_str())) {
        Some(id) => {
            Err(format!("the cut at {first_kept} separates function call {id} from its result"))
        }
        None => Ok(()),
    }
}

/// For each position `i` of `messages` (path order), whether a cut there (keeping `i..`) keeps
/// every function call made in `messages` with its result — the cuts [`cut_at`] accepts, all
/// in one pass.
pub fn clean_cuts(messages: &[&SessionEntry]) -> Vec<bool> {
    // A result at j whose latest call before it is at c forbids the cuts c+1..=j.
    let mut last_call: BTreeMap<&str, usize> = BTreeMap::new();
    let mut opened = alloc::vec![0i64; messages.len() + 1];
    for (j, entry) in messages.iter().enumerate() {
        if let Some(AgentMessage::FunctionResult { function_call_id, .. }) = entry.message() {
            if let Some(&c) = last_call.get(function_call_id.as_str()) {
                opened[c + 1] += 1;
                opened[j + 1] -= 1;
            }
        }
        for id in call_ids(entry) {
            last_call.insert(id, j);
        }
    }
    let mut open = 0;
    opened[..messages.len()]
        .iter()
        .map(|delta| {
            open += delta;
            open == 0
        })
        .collect()
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
