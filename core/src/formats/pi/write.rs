//! Writing a pi v3 session: the header, then every entry as its pi line, in the order pi
//! appended them with the active leaf last.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{json, Map, Value};

use super::kind::{written_kind, Kind};
use super::patch::Patch;
use super::{title_of, Stash, SESSION_INFO, VERSION};
use crate::formats::time::to_rfc3339;
use crate::formats::{stash, tree, Conversation, Format};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason, Usage};

/// Writes a pi v3 session: the header, then every entry (the whole tree), parents before
/// children except that the active leaf is the last line (pi takes the last line as its leaf).
pub fn write(conversation: &Conversation) -> Vec<u8> {
    let mut out = Vec::new();
    let pi = meta_pi(&conversation.meta.metadata);
    let mut header = header_line(&conversation.meta.session_id, conversation.meta.created_at, &pi);
    if let Some(Value::Object(kept)) = pi.get("header") {
        Patch::of(kept).apply(&mut header);
    }
    push_line(&mut out, &header);
    for entry in written_order(conversation) {
        push_line(&mut out, &entry_line(&entry));
    }
    out
}

fn push_line(out: &mut Vec<u8>, line: &Value) {
    if let Ok(bytes) = serde_json::to_vec(line) {
        out.extend_from_slice(&bytes);
        out.push(b'\n');
    }
}

/// `metadata.pi` of a meta (empty when there is none).
pub(super) fn meta_pi(metadata: &Option<Object>) -> Map<String, Value> {
    metadata
        .as_ref()
        .and_then(|m| m.get(Format::Pi.origin_key()))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The header pi would have for this session (before the stashed header patch).
pub(super) fn header_line(session_id: &str, created_at: i64, pi: &Map<String, Value>) -> Value {
    let mut header = json!({
        "type": "session",
        "version": VERSION,
        "id": session_id,
        "timestamp": to_rfc3339(created_at),
        "cwd": pi.get("cwd").and_then(Value::as_str).unwrap_or(""),
    });
    if let (Some(parent), Value::Object(map)) =
        (pi.get("parent_session").and_then(Value::as_str), &mut header)
    {
        map.insert("parentSession".into(), json!(parent));
    }
    header
}

/// The entries in the order they are written: oldest first with parents before children (the
/// order pi appended them in), the active leaf moved to the end (its descendants, if any, then
/// come before it), and before it, when the title is not the name the entries already give, a
/// `session_info` entry child of the leaf.
pub(super) fn written_order(conversation: &Conversation) -> Vec<SessionEntry> {
    let entries = &conversation.entries;
    let leaf_id = conversation
        .leaf
        .as_deref()
        .filter(|leaf| entries.iter().any(|e| e.id() == *leaf))
        .or_else(|| entries.last().map(SessionEntry::id));
    let leaf = entries.iter().find(|e| Some(e.id()) == leaf_id);
    let mut order: Vec<SessionEntry> = tree::oldest_first(entries)
        .into_iter()
        .filter(|e| Some(e.id()) != leaf_id)
        .cloned()
        .collect();
    order.extend(leaf.cloned());
    let title = &conversation.meta.title;
    if !title.is_empty() && title_of(&order) != *title {
        let info = title_entry(title, leaf, conversation);
        let at = order.len().saturating_sub(usize::from(leaf.is_some()));
        order.insert(at, info);
    }
    order
}

/// A `session_info` entry naming the session `title`, child of the leaf (a root without one),
/// a millisecond after the newest entry (so it is written after every entry but the leaf
/// again when what was read is written back), with an id no entry has.
fn title_entry(
    title: &str,
    leaf: Option<&SessionEntry>,
    conversation: &Conversation,
) -> SessionEntry {
    let taken = |id: &str| conversation.entries.iter().any(|e| e.id() == id);
    let newest = conversation.entries.iter().map(SessionEntry::timestamp).max();
    let mut id = String::from("session-info");
    let mut n = 1;
    while taken(&id) {
        n += 1;
        id = format!("session-info-{n}");
    }
    let kind = Stash { kind: Some(Kind::Spread(SESSION_INFO.into())), ..Stash::default() };
    SessionEntry::Custom {
        id,
        parent_id: leaf.map(|e| e.id().to_string()),
        timestamp: newest.map_or(conversation.meta.created_at, |newest| newest.saturating_add(1)),
        revision: 0,
        origin: stash(Format::Pi, kind.to_value()),
        custom_type: SESSION_INFO.into(),
        data: json!({ "name": title }),
    }
}

/// The pi line of one entry: the line its fields make, patched back to what pi had.
fn entry_line(entry: &SessionEntry) -> Value {
    let stash = Stash::of(entry);
    let kind_fits = stash.kind.as_ref().is_none_or(|kind| kind.fits(entry));
    let kind = written_kind(entry);
    let mut line = line_of(entry, &kind, stash.string_content);
    if kind_fits {
        stash.patch.apply(&mut line);
    }
    line
}

/// The line an entry's fields make as a `kind` line (`string_content`: a single text block is
/// written as a plain string).
pub(super) fn line_of(entry: &SessionEntry, kind: &Kind, string_content: bool) -> Value {
    let mut line = Map::new();
    match entry {
        SessionEntry::Message { message, .. } => match kind {
            Kind::CustomMessage | Kind::BranchSummary => {
                custom_message_fields(kind, message, string_content, &mut line)
            }
            _ => {
                line.insert("type".into(), json!("message"));
                line.insert("message".into(), message_of(kind, message, string_content));
            }
        },
        SessionEntry::Custom { custom_type, data, .. } => {
            custom_fields(kind, custom_type, data, &mut line)
        }
    }
    line.insert("id".into(), json!(entry.id()));
    line.insert("parentId".into(), entry.parent_id().map_or(Value::Null, |p| json!(p)));
    line.insert("timestamp".into(), json!(to_rfc3339(entry.timestamp())));
    Value::Object(line)
}

/// The pi message of a `message` line.
fn message_of(kind: &Kind, message: &AgentMessage, string_content: bool) -> Value {
    let mut out = Map::new();
    match message {
        AgentMessage::User { content, timestamp } => {
            out.insert("role".into(), json!("user"));
            out.insert("content".into(), content_of(content, Allowed::Media, string_content));
            out.insert("timestamp".into(), json!(timestamp));
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
        } => {
            out.insert("role".into(), json!("assistant"));
            out.insert("content".into(), content_of(content, Allowed::Turn, string_content));
            out.insert("provider".into(), json!(provider));
            out.insert("model".into(), json!(model));
            out.insert("usage".into(), usage_value(usage.as_ref()));
            out.insert("stopReason".into(), json!(stop_reason_name(*stop_reason)));
            if let Some(error) = error_message {
                out.insert("errorMessage".into(), json!(error));
            }
            out.insert("timestamp".into(), json!(timestamp));
        }
        AgentMessage::FunctionResult {
            function_call_id,
            function_id,
            content,
            details,
            is_error,
            timestamp,
        } => {
            out.insert("role".into(), json!("toolResult"));
            out.insert("toolCallId".into(), json!(function_call_id));
            out.insert("toolName".into(), json!(function_id));
            out.insert("content".into(), content_of(content, Allowed::Media, string_content));
            if !details.is_null() {
                out.insert("details".into(), details.clone());
            }
            out.insert("isError".into(), json!(is_error));
            out.insert("timestamp".into(), json!(timestamp));
        }
        AgentMessage::Custom { custom_type, content, details, timestamp, .. } => match kind {
            Kind::RoleOther(role) => {
                if let Some(Value::Object(fields)) = details {
                    out.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                out.insert("role".into(), json!(role));
                out.insert("timestamp".into(), json!(timestamp));
            }
            _ => {
                out.insert("role".into(), json!("custom"));
                out.insert("customType".into(), json!(custom_type));
                out.insert("content".into(), content_of(content, Allowed::Media, string_content));
                out.insert("display".into(), json!(true));
                if let Some(details) = details {
                    out.insert("details".into(), details.clone());
                }
                out.insert("timestamp".into(), json!(timestamp));
            }
        },
    }
    Value::Object(out)
}

/// The fields of a `custom_message` or `branch_summary` line made from a custom message.
fn custom_message_fields(
    kind: &Kind,
    message: &AgentMessage,
    string_content: bool,
    line: &mut Map<String, Value>,
) {
    let AgentMessage::Custom { custom_type, content, details, .. } = message else { return };
    if *kind == Kind::BranchSummary {
        line.insert("type".into(), json!("branch_summary"));
        line.insert("summary".into(), json!(joined_text(content)));
    } else {
        line.insert("type".into(), json!("custom_message"));
        line.insert("customType".into(), json!(custom_type));
        line.insert("content".into(), content_of(content, Allowed::Media, string_content));
        line.insert("display".into(), json!(true));
    }
    if let Some(details) = details {
        line.insert("details".into(), details.clone());
    }
}

/// The fields of the line a custom entry makes: a compaction, a `custom` entry, or (spread) an
/// entry of another type whose fields are the data's.
fn custom_fields(kind: &Kind, custom_type: &str, data: &Value, line: &mut Map<String, Value>) {
    match kind {
        Kind::Compaction => {
            let field = |key: &str| data.get(key).cloned();
            line.insert("type".into(), json!("compaction"));
            line.insert("summary".into(), field("summary").unwrap_or(json!("")));
            line.insert(
                "firstKeptEntryId".into(),
                field("first_kept_entry_id").unwrap_or(json!("")),
            );
            let tokens = data.get("tokens_before").and_then(Value::as_u64).unwrap_or(0);
            line.insert("tokensBefore".into(), json!(tokens));
            if let Some(details) = field("details").filter(|d| !d.is_null()) {
                line.insert("details".into(), details);
            }
        }
        Kind::Spread(kind) => {
            if let Value::Object(fields) = data {
                line.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            line.insert("type".into(), json!(kind));
        }
        _ => {
            line.insert("type".into(), json!("custom"));
            line.insert("customType".into(), json!(custom_type));
            if !data.is_null() {
                line.insert("data".into(), data.clone());
            }
        }
    }
}

/// Which blocks a pi content holds: user, tool result and custom content hold text and images;
/// an assistant's holds text, thinking and tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Allowed {
    Media,
    Turn,
}

/// pi content of `blocks`: each as pi holds it ([`held`]), a single text block as a string when
/// the line had one.
fn content_of(blocks: &[ContentBlock], allowed: Allowed, string_content: bool) -> Value {
    if let ([ContentBlock::Text { text }], true) = (blocks, string_content) {
        return json!(text);
    }
    Value::Array(blocks.iter().map(|block| pi_block(&held(block, allowed))).collect())
}

/// A block as a pi content of `allowed` holds it: the blocks it has no form for become a text
/// block describing them; an image's attachment id is dropped.
pub(super) fn held(block: &ContentBlock, allowed: Allowed) -> ContentBlock {
    match (block, allowed) {
        (ContentBlock::Text { .. }, _)
        | (ContentBlock::Thinking { .. } | ContentBlock::FunctionCall { .. }, Allowed::Turn) => {
            block.clone()
        }
        (ContentBlock::Image { mime, data, .. }, Allowed::Media) => {
            ContentBlock::Image { mime: mime.clone(), data: data.clone(), attachment_id: None }
        }
        _ => ContentBlock::Text { text: described(block) },
    }
}

/// The text that stands for a block pi has no form for.
fn described(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text { text } | ContentBlock::Thinking { text, .. } => text.clone(),
        ContentBlock::Image { mime, .. } => format!("[image {mime}]"),
        ContentBlock::File { attachment_id, name, mime, size } => {
            format!("[file {name} ({mime}, {size} bytes), attachment {attachment_id}]")
        }
        ContentBlock::FunctionCall { id, function_id, arguments } => {
            format!("[call {id} of {function_id}] {arguments}")
        }
        ContentBlock::FunctionResult { function_call_id, content, is_error } => {
            let error = if *is_error == Some(true) { ", an error" } else { "" };
            let inner: Vec<String> = content.iter().map(described).collect();
            format!("[result of call {function_call_id}{error}]\n{}", inner.join("\n"))
        }
    }
}

fn pi_block(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Image { mime, data, .. } => {
            json!({ "type": "image", "data": data, "mimeType": mime })
        }
        ContentBlock::Thinking { text, signature } => {
            let mut thinking = json!({ "type": "thinking", "thinking": text });
            if let (Some(signature), Value::Object(map)) = (signature, &mut thinking) {
                map.insert("thinkingSignature".into(), json!(signature));
            }
            thinking
        }
        ContentBlock::FunctionCall { id, function_id, arguments } => {
            json!({ "type": "toolCall", "id": id, "name": function_id, "arguments": arguments })
        }
        ContentBlock::Text { text } => json!({ "type": "text", "text": text }),
        other => json!({ "type": "text", "text": described(other) }),
    }
}

pub(super) fn joined_text(blocks: &[ContentBlock]) -> String {
    let texts: Vec<String> = blocks.iter().map(described).collect();
    texts.join("\n")
}

fn stop_reason_name(reason: StopReason) -> &'static str {
    match reason {
        StopReason::End => "stop",
        StopReason::Length => "length",
        StopReason::FunctionCall => "toolUse",
        StopReason::Error => "error",
        StopReason::Aborted => "aborted",
    }
}

/// pi's usage of ours (zeros without one): the total tokens the sum of the four counts, the cost
/// all in `total`.
fn usage_value(usage: Option<&Usage>) -> Value {
    let usage = usage.cloned().unwrap_or_default();
    let (input, output) = (usage.input.unwrap_or(0), usage.output.unwrap_or(0));
    let (cache_read, cache_write) = (usage.cache_read.unwrap_or(0), usage.cache_write.unwrap_or(0));
    let total = input.saturating_add(output).saturating_add(cache_read).saturating_add(cache_write);
    json!({
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": total,
        "cost": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": js_number(usage.cost_usd.unwrap_or(0.0)),
        },
    })
}

/// A number as JavaScript writes it: a whole one without a fraction (no `f64::fract` in
/// `no_std`: a whole number within 2^53 survives the round trip through `i64`).
fn js_number(n: f64) -> Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    let whole = n as i64;
    if (-SAFE..=SAFE).contains(&n) && whole as f64 == n {
        json!(whole)
    } else {
        json!(n)
    }
}
