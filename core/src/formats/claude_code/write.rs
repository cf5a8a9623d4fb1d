//! Writing a transcript: every entry as its line (the line this module renders, with the
//! stashed patch applied), in the file's order or parents first with the active branch last, and
//! a `summary` line for the title.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use super::patch::apply;
use super::{str_at, Line, BOUNDARY, ESCAPE, FORMAT, RESERVED};
use crate::compaction::COMPACTION;
use crate::formats::message::texts;
use crate::formats::time::to_rfc3339;
use crate::formats::tree::{branch, oldest_first};
use crate::formats::{stashed, Conversation};
use crate::wire::{AgentMessage, ContentBlock, SessionEntry, StopReason, Usage};

/// Writes a transcript: every entry (parents before children, the active branch last), the
/// stashed lines restored, a `summary` line for the title.
pub fn write(conversation: &Conversation) -> Vec<u8> {
    let session_id = &conversation.meta.session_id;
    let order = write_order(conversation);
    let mut lines: Vec<Value> = order.iter().map(|e| line_of(e, session_id)).collect();
    let leaf = effective_leaf(&order, &lines);
    let title = conversation.meta.title.as_str();
    match stashed_summaries(conversation) {
        Some(summaries) => {
            let last = summaries.last().and_then(|(_, s)| s.get("summary")?.as_str());
            for (at, line) in summaries.iter() {
                lines.insert((*at).min(lines.len()), line.clone());
            }
            if !title.is_empty() && last != Some(title) {
                lines.push(summary_line(title, leaf));
            }
        }
        None if !title.is_empty() => lines.insert(0, summary_line(title, leaf)),
        None => {}
    }
    let mut out = Vec::new();
    for line in &lines {
        out.extend_from_slice(serde_json::to_string(line).unwrap_or_default().as_bytes());
        out.push(b'\n');
    }
    out
}

/// The `summary` line the writer gives a title.
pub(super) fn summary_line(title: &str, leaf: Option<&str>) -> Value {
    let mut line = Map::new();
    line.insert("type".into(), "summary".into());
    line.insert("summary".into(), title.into());
    line.insert("leafUuid".into(), leaf.map_or(Value::Null, Value::from));
    Value::Object(line)
}

/// The session-level stash of `conversation`, if any.
pub(super) fn meta_stashed(conversation: &Conversation) -> Option<&Line> {
    conversation.meta.metadata.as_ref()?.get(FORMAT.origin_key())?.as_object()
}

fn stashed_summaries(conversation: &Conversation) -> Option<Vec<(usize, Value)>> {
    let list = meta_stashed(conversation)?.get("summaries")?.as_array()?;
    let mut summaries: Vec<(usize, Value)> = list
        .iter()
        .filter_map(|s| Some((s.get("at")?.as_u64()? as usize, s.get("line")?.clone())))
        .collect();
    summaries.sort_by_key(|(at, _)| *at);
    Some(summaries)
}

/// The order entries are written in: the stashed file order when there is one (entries it does
/// not name after it), else the default order.
pub(super) fn write_order(conversation: &Conversation) -> Vec<&SessionEntry> {
    let tree = default_order(&conversation.entries, conversation.leaf.as_deref());
    let Some(order) = meta_stashed(conversation).and_then(|m| m.get("order")?.as_array()) else {
        return tree;
    };
    let by_id: BTreeMap<&str, &SessionEntry> = tree.iter().map(|e| (e.id(), *e)).collect();
    let mut placed = BTreeSet::new();
    let mut out: Vec<&SessionEntry> = order
        .iter()
        .filter_map(|id| by_id.get(id.as_str()?).copied())
        .filter(|e| placed.insert(e.id()))
        .collect();
    out.extend(tree.into_iter().filter(|e| !placed.contains(e.id())));
    out
}

/// The order a transcript is written in without a stashed one: oldest first with parents before
/// children, the order Claude Code appends in, when that ends with the active leaf (a reader takes
/// the last line as the leaf); else [`tree_order`].
pub(super) fn default_order<'a>(
    entries: &'a [SessionEntry],
    leaf: Option<&str>,
) -> Vec<&'a SessionEntry> {
    let oldest = oldest_first(entries);
    match oldest.last().map(|e| e.id()) == leaf {
        true => oldest,
        false => tree_order(entries, leaf),
    }
}

/// Parents before children, in the given order except that at every fork (and among the roots)
/// the branch toward `leaf` comes last; entries no root reaches at the end.
fn tree_order<'a>(entries: &'a [SessionEntry], leaf: Option<&str>) -> Vec<&'a SessionEntry> {
    let on_path: BTreeSet<&str> = branch(entries, leaf).iter().map(|e| e.id()).collect();
    let ids: BTreeSet<&str> = entries.iter().map(SessionEntry::id).collect();
    let mut children: BTreeMap<Option<&str>, Vec<&SessionEntry>> = BTreeMap::new();
    for entry in entries {
        let parent = entry.parent_id().filter(|p| ids.contains(p));
        children.entry(parent).or_default().push(entry);
    }
    for kids in children.values_mut() {
        kids.sort_by_key(|e| on_path.contains(e.id()));
    }
    let mut out = Vec::with_capacity(entries.len());
    let mut stack: Vec<&SessionEntry> =
        children.get(&None).map(|r| r.iter().rev().copied().collect()).unwrap_or_default();
    while let Some(entry) = stack.pop() {
        if out.len() > entries.len() {
            break;
        }
        out.push(entry);
        if let Some(kids) = children.get(&Some(entry.id())) {
            stack.extend(kids.iter().rev());
        }
    }
    let placed: BTreeSet<&str> = out.iter().map(|e| e.id()).collect();
    out.extend(entries.iter().filter(|e| !placed.contains(e.id())));
    out
}

/// The leaf a reader of `lines` finds: the last line with its own `uuid` that is not a
/// sidechain (else the last with its own `uuid`, else the last entry).
pub(super) fn effective_leaf<'a>(order: &[&'a SessionEntry], lines: &[Value]) -> Option<&'a str> {
    let own =
        |(entry, line): &(&&'a SessionEntry, &Value)| str_at(line, "uuid") == Some(entry.id());
    let pairs: Vec<(&&SessionEntry, &Value)> = order.iter().zip(lines).filter(own).collect();
    let main =
        pairs.iter().rev().find(|(_, line)| line.get("isSidechain") != Some(&Value::Bool(true)));
    main.or(pairs.last()).map(|(e, _)| e.id()).or(order.last().map(|e| e.id()))
}

/// The line an entry is written as: its default line with its stashed patch applied.
pub(super) fn line_of(entry: &SessionEntry, session_id: &str) -> Value {
    let line = render(entry, session_id);
    match stashed(FORMAT, entry) {
        Some(patch) => apply(line, patch),
        None => line,
    }
}

/// The line this module writes for an entry that came from nowhere else.
pub(super) fn render(entry: &SessionEntry, session_id: &str) -> Value {
    match entry {
        SessionEntry::Message { message, .. } => render_message(entry, message, session_id),
        SessionEntry::Custom { custom_type, data, .. } => {
            match compaction_summary(custom_type, data) {
                Some(summary) => {
                    let mut line = envelope("user", entry, session_id);
                    line.insert("isCompactSummary".into(), Value::Bool(true));
                    line.insert("isVisibleInTranscriptOnly".into(), Value::Bool(true));
                    line.insert("message".into(), user_message(Value::String(summary.into())));
                    Value::Object(line)
                }
                None => Value::Object(custom_line(entry, custom_type, data, session_id)),
            }
        }
    }
}

/// The summary of a compaction record this module writes as Claude Code's summary line.
pub(super) fn compaction_summary<'a>(custom_type: &str, data: &'a Value) -> Option<&'a str> {
    (custom_type == COMPACTION).then(|| str_at(data, "summary")).flatten()
}

/// A custom entry as a line of its own type: its data's fields (or `data`) beside the envelope.
fn custom_line(entry: &SessionEntry, custom_type: &str, data: &Value, session_id: &str) -> Line {
    let mut line = match data {
        Value::Object(fields) => fields.clone(),
        Value::Null => Map::new(),
        other => Map::from_iter([("data".to_string(), other.clone())]),
    };
    line.insert("type".into(), Value::String(escaped(custom_type)));
    line.insert("uuid".into(), entry.id().into());
    line.insert("parentUuid".into(), entry.parent_id().map_or(Value::Null, Value::from));
    line.insert("sessionId".into(), session_id.into());
    line.insert("timestamp".into(), to_rfc3339(entry.timestamp()).into());
    line
}

pub(super) fn escaped(custom_type: &str) -> String {
    match RESERVED.contains(&custom_type) {
        true => format!("{ESCAPE}{custom_type}"),
        false => custom_type.to_string(),
    }
}

/// The keys every user, assistant and system line starts with.
fn envelope(kind: &str, entry: &SessionEntry, session_id: &str) -> Line {
    let mut line = Map::new();
    line.insert("type".into(), kind.into());
    line.insert("uuid".into(), entry.id().into());
    line.insert("parentUuid".into(), entry.parent_id().map_or(Value::Null, Value::from));
    line.insert("sessionId".into(), session_id.into());
    line.insert("timestamp".into(), to_rfc3339(entry.timestamp()).into());
    line.insert("isSidechain".into(), Value::Bool(false));
    line.insert("userType".into(), "external".into());
    line
}

fn user_message(content: Value) -> Value {
    let mut message = Map::new();
    message.insert("role".into(), "user".into());
    message.insert("content".into(), content);
    Value::Object(message)
}

fn render_message(entry: &SessionEntry, message: &AgentMessage, session_id: &str) -> Value {
    let line = match message {
        AgentMessage::User { content, .. } => {
            let mut line = envelope("user", entry, session_id);
            line.insert("message".into(), user_message(content_value(content)));
            line
        }
        AgentMessage::FunctionResult { function_call_id, content, details, is_error, .. } => {
            let mut line = envelope("user", entry, session_id);
            let mut block = Map::new();
            block.insert("type".into(), "tool_result".into());
            block.insert("tool_use_id".into(), function_call_id.as_str().into());
            block.insert("content".into(), content_value(content));
            if *is_error {
                block.insert("is_error".into(), Value::Bool(true));
            }
            let blocks = Value::Array(alloc::vec![Value::Object(block)]);
            line.insert("message".into(), user_message(blocks));
            if !details.is_null() {
                line.insert("toolUseResult".into(), details.clone());
            }
            line
        }
        AgentMessage::Assistant { .. } => {
            let mut line = envelope("assistant", entry, session_id);
            line.insert("message".into(), assistant_value(message));
            line
        }
        AgentMessage::Custom { custom_type, content, details, .. } => {
            system_line(entry, custom_type, content, details.as_ref(), session_id)
        }
    };
    Value::Object(line)
}

fn system_line(
    entry: &SessionEntry,
    custom_type: &str,
    content: &[ContentBlock],
    details: Option<&Value>,
    session_id: &str,
) -> Line {
    let mut line = envelope("system", entry, session_id);
    line.insert("subtype".into(), custom_type.into());
    if let Some(text) = joined_text(content) {
        line.insert("content".into(), text.into());
    }
    line.insert("isMeta".into(), Value::Bool(false));
    line.insert("level".into(), "info".into());
    if custom_type == BOUNDARY {
        let parent = line.insert("parentUuid".into(), Value::Null).unwrap_or(Value::Null);
        line.insert("logicalParentUuid".into(), parent);
        if let Some(details) = details {
            line.insert("compactMetadata".into(), details.clone());
        }
    }
    line
}

/// The text blocks of `content` as one string (`None` without any).
pub(super) fn joined_text(content: &[ContentBlock]) -> Option<String> {
    let texts = texts(content);
    (!texts.is_empty()).then(|| texts.concat())
}

fn assistant_value(message: &AgentMessage) -> Value {
    let AgentMessage::Assistant { content, stop_reason, model, native_stop_reason, usage, .. } =
        message
    else {
        return Value::Null;
    };
    let mut out = Map::new();
    out.insert("type".into(), "message".into());
    out.insert("role".into(), "assistant".into());
    out.insert("model".into(), model.as_str().into());
    out.insert("content".into(), Value::Array(content.iter().filter_map(block_value).collect()));
    out.insert("stop_reason".into(), stop_value(*stop_reason, native_stop_reason.as_deref()));
    out.insert("stop_sequence".into(), Value::Null);
    if let Some(usage) = usage {
        out.insert("usage".into(), usage_value(usage));
    }
    Value::Object(out)
}

fn stop_value(stop: StopReason, native: Option<&str>) -> Value {
    match (native, stop) {
        (Some(native), _) => native.into(),
        (None, StopReason::End) => "end_turn".into(),
        (None, StopReason::Length) => "max_tokens".into(),
        (None, StopReason::FunctionCall) => "tool_use".into(),
        (None, StopReason::Aborted | StopReason::Error) => Value::Null,
    }
}

fn usage_value(usage: &Usage) -> Value {
    let mut out = Map::new();
    let fields = [
        ("input_tokens", usage.input),
        ("output_tokens", usage.output),
        ("cache_read_input_tokens", usage.cache_read),
        ("cache_creation_input_tokens", usage.cache_write),
    ];
    for (key, count) in fields {
        if let Some(count) = count {
            out.insert(key.into(), Value::from(count));
        }
    }
    Value::Object(out)
}

/// Content as Claude Code writes it: one text block as a string, else blocks.
fn content_value(content: &[ContentBlock]) -> Value {
    match content {
        [ContentBlock::Text { text }] => Value::String(text.clone()),
        _ => Value::Array(content.iter().filter_map(block_value).collect()),
    }
}

/// One block as Claude Code writes it (`None` for a file block: its bytes are not here).
fn block_value(block: &ContentBlock) -> Option<Value> {
    let mut out = Map::new();
    match block {
        ContentBlock::Text { text } => {
            out.insert("type".into(), "text".into());
            out.insert("text".into(), text.as_str().into());
        }
        ContentBlock::Image { mime, data, .. } => {
            let mut source = Map::new();
            source.insert("type".into(), "base64".into());
            source.insert("media_type".into(), mime.as_str().into());
            source.insert("data".into(), data.as_str().into());
            out.insert("type".into(), "image".into());
            out.insert("source".into(), Value::Object(source));
        }
        ContentBlock::File { .. } => return None,
        ContentBlock::Thinking { text, signature } => {
            out.insert("type".into(), "thinking".into());
            out.insert("thinking".into(), text.as_str().into());
            if let Some(signature) = signature {
                out.insert("signature".into(), signature.as_str().into());
            }
        }
        ContentBlock::FunctionCall { id, function_id, arguments } => {
            out.insert("type".into(), "tool_use".into());
            out.insert("id".into(), id.as_str().into());
            out.insert("name".into(), function_id.as_str().into());
            out.insert("input".into(), arguments.clone());
        }
        ContentBlock::FunctionResult { function_call_id, content, is_error } => {
            out.insert("type".into(), "tool_result".into());
            out.insert("tool_use_id".into(), function_call_id.as_str().into());
            out.insert("content".into(), content_value(content));
            if let Some(is_error) = is_error {
                out.insert("is_error".into(), Value::Bool(*is_error));
            }
        }
    }
    Some(Value::Object(out))
}
