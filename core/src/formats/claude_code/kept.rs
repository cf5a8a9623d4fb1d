//! What of a conversation a Claude Code transcript gives back (`read(write(c))`, [`kept`]).

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use super::patch::diff;
use super::read::{
    anthropic_assistant, compaction_data, custom_entry, message_entry, stop_of, Draft,
};
use super::write::{
    compaction_summary, default_order, effective_leaf, escaped, joined_text, line_of, meta_stashed,
    render, write_order,
};
use super::{BOUNDARY, ENVELOPE, FORMAT};
use crate::compaction::COMPACTION;
use crate::formats::{rest, set_origin, stash, Conversation};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason, Usage};

/// What of `conversation` a Claude Code transcript gives back (`read(write(c))`), by the losses
/// `architecture/formats/claude-code.md` lists.
pub fn kept(conversation: &Conversation) -> Conversation {
    let session_id = &conversation.meta.session_id;
    let order = write_order(conversation);
    let lines: Vec<Value> = order.iter().map(|e| line_of(e, session_id)).collect();
    let by_id: BTreeMap<&str, &SessionEntry> = order.iter().map(|e| (e.id(), *e)).collect();
    let tools = kept_tool_names(&order);
    let entries: Vec<SessionEntry> = order
        .iter()
        .zip(&lines)
        .map(|(entry, line)| {
            let parent = entry.parent_id().and_then(|p| by_id.get(p).copied());
            let mut kept = kept_entry(entry, parent, &tools);
            let patch = diff(line, &render(&kept, session_id));
            set_origin(&mut kept, patch.and_then(|p| stash(FORMAT, p)));
            kept
        })
        .collect();
    let leaf = effective_leaf(&order, &lines).map(String::from);
    let mut out =
        Conversation::new(session_id.clone(), entries, leaf, conversation.meta.created_at);
    out.meta.title = conversation.meta.title.clone();
    out.meta.metadata = kept_meta_stash(conversation, &out.entries, out.leaf.as_deref());
    match out.clone().checked() {
        Ok(checked) => checked,
        Err(_) => out,
    }
}

/// The session-level stash a reader of the written file finds: the one `conversation` had, with
/// the file's order of `entries` (as written) when the default order would not give it back.
fn kept_meta_stash(
    conversation: &Conversation,
    entries: &[SessionEntry],
    leaf: Option<&str>,
) -> Option<Object> {
    let mut claude_code = meta_stashed(conversation).cloned().unwrap_or_default();
    let written: Vec<&str> = entries.iter().map(SessionEntry::id).collect();
    let default: Vec<&str> =
        default_order(entries, leaf).into_iter().map(SessionEntry::id).collect();
    match written == default {
        true => claude_code.remove("order"),
        false => {
            claude_code.insert("order".into(), written.iter().map(|id| Value::from(*id)).collect())
        }
    };
    stash(FORMAT, Value::Object(claude_code))
}

/// The call names a reader of the written file finds: the top-level function calls of user and
/// assistant messages, the first of each id in write order.
fn kept_tool_names(order: &[&SessionEntry]) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for entry in order {
        let content = match entry.message() {
            Some(AgentMessage::User { content, .. } | AgentMessage::Assistant { content, .. }) => {
                content.as_slice()
            }
            _ => &[],
        };
        for block in content {
            if let ContentBlock::FunctionCall { id, function_id, .. } = block {
                names.entry(id.clone()).or_insert_with(|| function_id.clone());
            }
        }
    }
    names
}

fn kept_entry(
    entry: &SessionEntry,
    parent: Option<&SessionEntry>,
    tools: &BTreeMap<String, String>,
) -> SessionEntry {
    let draft = Draft {
        id: entry.id(),
        parent: entry.parent_id(),
        timestamp: entry.timestamp(),
        tokens_before: parent.and_then(entry_pre_tokens),
    };
    match entry {
        SessionEntry::Message { message, .. } => {
            message_entry(&draft, kept_message(message, draft.timestamp, tools))
        }
        SessionEntry::Custom { custom_type, data, .. } => {
            match compaction_summary(custom_type, data) {
                Some(summary) => {
                    let first_kept = draft.parent.unwrap_or(draft.id);
                    let data = compaction_data(summary.into(), first_kept, draft.tokens_before);
                    custom_entry(&draft, COMPACTION.into(), data)
                }
                None => custom_entry(&draft, escaped(custom_type), kept_data(data)),
            }
        }
    }
}

/// The `preTokens` of a compact boundary (a custom message of that type) read back.
fn entry_pre_tokens(entry: &SessionEntry) -> Option<u64> {
    match entry.message()? {
        AgentMessage::Custom { custom_type, details: Some(details), .. }
            if custom_type == BOUNDARY =>
        {
            details.get("preTokens")?.as_u64()
        }
        _ => None,
    }
}

fn kept_data(data: &Value) -> Value {
    match data {
        Value::Object(fields) => rest(fields, &ENVELOPE),
        Value::Null => Value::Object(Map::new()),
        other => Value::Object(Map::from_iter([("data".to_string(), other.clone())])),
    }
}

fn kept_message(
    message: &AgentMessage,
    timestamp: i64,
    tools: &BTreeMap<String, String>,
) -> AgentMessage {
    let lookup = |id: &str| tools.get(id).cloned().unwrap_or_default();
    match message {
        AgentMessage::User { content, .. } => match kept_blocks(content).as_slice() {
            [ContentBlock::FunctionResult { function_call_id, content, is_error }] => {
                AgentMessage::FunctionResult {
                    function_call_id: function_call_id.clone(),
                    function_id: lookup(function_call_id),
                    content: content.clone(),
                    details: Value::Null,
                    is_error: is_error.unwrap_or(false),
                    timestamp,
                }
            }
            content => AgentMessage::User { content: content.to_vec(), timestamp },
        },
        AgentMessage::FunctionResult { function_call_id, content, details, is_error, .. } => {
            AgentMessage::FunctionResult {
                function_call_id: function_call_id.clone(),
                function_id: lookup(function_call_id),
                content: kept_blocks(content),
                details: details.clone(),
                is_error: *is_error,
                timestamp,
            }
        }
        AgentMessage::Assistant {
            content, stop_reason, model, native_stop_reason, usage, ..
        } => {
            let stop = match native_stop_reason {
                Some(native) => stop_of(Some(native)),
                None => match stop_reason {
                    StopReason::Aborted | StopReason::Error => (StopReason::End, None),
                    other => (*other, None),
                },
            };
            let usage =
                usage.as_ref().map(|u| Usage { reasoning: None, cost_usd: None, ..u.clone() });
            anthropic_assistant(kept_blocks(content), stop, model.clone(), usage, timestamp)
        }
        AgentMessage::Custom { custom_type, content, details, .. } => AgentMessage::Custom {
            custom_type: custom_type.clone(),
            content: joined_text(content)
                .map(|text| ContentBlock::Text { text })
                .into_iter()
                .collect(),
            display: None,
            details: if custom_type == BOUNDARY { details.clone() } else { None },
            timestamp,
        },
    }
}

fn kept_blocks(blocks: &[ContentBlock]) -> Vec<ContentBlock> {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::File { .. } => None,
            ContentBlock::Image { mime, data, .. } => Some(ContentBlock::Image {
                mime: mime.clone(),
                data: data.clone(),
                attachment_id: None,
            }),
            ContentBlock::FunctionResult { function_call_id, content, is_error } => {
                Some(ContentBlock::FunctionResult {
                    function_call_id: function_call_id.clone(),
                    content: kept_blocks(content),
                    is_error: *is_error,
                })
            }
            other => Some(other.clone()),
        })
        .collect()
}
