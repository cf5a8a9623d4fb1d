//! What of a conversation survives being written to pi and read back ([`kept`]).

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{json, Map, Value};

use super::kind::written_kind;
use super::kind::Kind;
use super::read::{custom_type_of_role, is_zero_usage, other_role_content};
use super::title_of;
use super::write::{held, joined_text, meta_pi, written_order, Allowed};
use super::BRANCH_SUMMARY;
use crate::compaction::COMPACTION;
use crate::formats::{stash, stashed, tree, Conversation, Format};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, Usage};

/// What of `conversation` survives being written to pi and read back: the entries in the order
/// written, then put parents first, the leaf the last one written, each entry as pi holds it
/// (`kept_entry`), a `session_info` entry when the title needed one, and the meta pi holds
/// (id, title, creation time, `metadata.pi`; status `done`, no description, draft or fork).
pub fn kept(conversation: &Conversation) -> Conversation {
    let written = written_order(conversation);
    let title = title_of(&written);
    let leaf = written.last().map(|entry| entry.id().to_string());
    let entries: Vec<SessionEntry> = written.iter().map(kept_entry).collect();
    let entries = tree::parents_first(entries.clone()).unwrap_or(entries);
    let created_at = conversation.meta.created_at;
    let mut kept =
        Conversation::new(conversation.meta.session_id.clone(), entries, leaf, created_at);
    kept.meta.created_at = created_at;
    kept.meta.title = title;
    kept.meta.metadata = kept_metadata(&conversation.meta.metadata);
    kept.meta.message_count = kept.entries.iter().filter(|e| e.is_message()).count() as u64;
    kept
}

/// `metadata.pi` alone, with a non-empty string `cwd`, a string `parent_session` and the header
/// patch; nothing when none is left.
fn kept_metadata(metadata: &Option<Object>) -> Option<Object> {
    let pi = meta_pi(metadata);
    let mut kept = Map::new();
    if let Some(cwd) = pi.get("cwd").and_then(Value::as_str).filter(|cwd| !cwd.is_empty()) {
        kept.insert("cwd".into(), json!(cwd));
    }
    if let Some(parent) = pi.get("parent_session").and_then(Value::as_str) {
        kept.insert("parent_session".into(), json!(parent));
    }
    if let Some(header) = pi.get("header").filter(|h| h.is_object()) {
        kept.insert("header".into(), header.clone());
    }
    (!kept.is_empty()).then(|| {
        let mut metadata = Object::new();
        metadata.insert(Format::Pi.origin_key().into(), Value::Object(kept));
        metadata
    })
}

/// One entry as pi holds it: revision 0, origin only its pi stash, and what its kind of line
/// cannot hold dropped or put into the form pi has ([`kept_message`], [`kept_custom`]).
fn kept_entry(entry: &SessionEntry) -> SessionEntry {
    let kind = written_kind(entry);
    let origin = stashed(Format::Pi, entry).and_then(|pi| stash(Format::Pi, pi.clone()));
    match entry {
        SessionEntry::Message { id, parent_id, timestamp, message, .. } => SessionEntry::Message {
            id: id.clone(),
            parent_id: parent_id.clone(),
            timestamp: *timestamp,
            revision: 0,
            origin,
            message: kept_message(&kind, message, *timestamp),
        },
        SessionEntry::Custom { id, parent_id, timestamp, custom_type, data, .. } => {
            let (custom_type, data) = kept_custom(&kind, custom_type, data);
            SessionEntry::Custom {
                id: id.clone(),
                parent_id: parent_id.clone(),
                timestamp: *timestamp,
                revision: 0,
                origin,
                custom_type,
                data,
            }
        }
    }
}

/// A message as its pi line holds it: content blocks pi has no form for become text; an
/// assistant loses `native_stop_reason`, `error_kind`, `warnings`, `agent` and `reasoning`
/// tokens (its usage reads back with zeros for missing counts, none when all are zero); a
/// custom message loses `display`, and, as a `custom_message` line, its own time (the entry's).
fn kept_message(kind: &Kind, message: &AgentMessage, entry_time: i64) -> AgentMessage {
    let media = |content: &[ContentBlock]| -> Vec<ContentBlock> {
        content.iter().map(|block| held(block, Allowed::Media)).collect()
    };
    match message {
        AgentMessage::User { content, timestamp } => {
            AgentMessage::User { content: media(content), timestamp: *timestamp }
        }
        AgentMessage::Assistant {
            content,
            stop_reason,
            model,
            provider,
            timestamp,
            error_message,
            usage,
            ..
        } => AgentMessage::Assistant {
            content: content.iter().map(|block| held(block, Allowed::Turn)).collect(),
            stop_reason: *stop_reason,
            model: model.clone(),
            provider: provider.clone(),
            timestamp: *timestamp,
            native_stop_reason: None,
            error_message: error_message.clone(),
            error_kind: None,
            warnings: None,
            usage: usage.as_ref().and_then(kept_usage),
            agent: None,
        },
        AgentMessage::FunctionResult {
            function_call_id,
            function_id,
            content,
            details,
            is_error,
            timestamp,
        } => AgentMessage::FunctionResult {
            function_call_id: function_call_id.clone(),
            function_id: function_id.clone(),
            content: media(content),
            details: details.clone(),
            is_error: *is_error,
            timestamp: *timestamp,
        },
        AgentMessage::Custom { custom_type, content, details, timestamp, .. } => {
            let (custom_type, content, details, timestamp) = match kind {
                Kind::RoleOther(role) => {
                    let fields =
                        details.as_ref().and_then(Value::as_object).cloned().unwrap_or_default();
                    let content = other_role_content(role, &fields);
                    (custom_type_of_role(role), content, Some(Value::Object(fields)), *timestamp)
                }
                Kind::RoleCustom => {
                    (custom_type.clone(), media(content), details.clone(), *timestamp)
                }
                Kind::BranchSummary => {
                    let summary = ContentBlock::Text { text: joined_text(content) };
                    (BRANCH_SUMMARY.into(), vec![summary], details.clone(), entry_time)
                }
                _ => (custom_type.clone(), media(content), details.clone(), entry_time),
            };
            AgentMessage::Custom { custom_type, content, display: None, details, timestamp }
        }
    }
}

fn kept_usage(usage: &Usage) -> Option<Usage> {
    let usage = Usage {
        input: Some(usage.input.unwrap_or(0)),
        output: Some(usage.output.unwrap_or(0)),
        cache_read: Some(usage.cache_read.unwrap_or(0)),
        cache_write: Some(usage.cache_write.unwrap_or(0)),
        reasoning: None,
        cost_usd: Some(usage.cost_usd.unwrap_or(0.0)),
    };
    (!is_zero_usage(&usage)).then_some(usage)
}

/// A custom entry's type and data as its pi line holds them: a compaction record's data is
/// `{summary, first_kept_entry_id, tokens_before, details?}` (0 tokens when it had none, other
/// keys dropped); a spread entry's data is an object (a non-object one is lost).
fn kept_custom(kind: &Kind, custom_type: &str, data: &Value) -> (String, Value) {
    match kind {
        Kind::Compaction => {
            let mut kept = Map::new();
            for key in ["summary", "first_kept_entry_id"] {
                kept.insert(key.into(), data.get(key).cloned().unwrap_or(json!("")));
            }
            let tokens = data.get("tokens_before").and_then(Value::as_u64).unwrap_or(0);
            kept.insert("tokens_before".into(), json!(tokens));
            if let Some(details) = data.get("details").filter(|d| !d.is_null()) {
                kept.insert("details".into(), details.clone());
            }
            (COMPACTION.into(), Value::Object(kept))
        }
        Kind::Spread(kind) => {
            let fields = data.as_object().cloned().unwrap_or_default();
            (kind.clone(), Value::Object(fields))
        }
        _ => (custom_type.into(), data.clone()),
    }
}
