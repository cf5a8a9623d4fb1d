//! Reading a Claude Code transcript: every line but the `summary` ones as an entry (its origin
//! the patch back to the line), the summaries as the title, and the session-level stash.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use super::patch::diff;
use super::write::{default_order, render, summary_line};
use super::{is_claude_code_line, str_at, text_of, Line, BOUNDARY, ENVELOPE, FORMAT};
use crate::compaction::COMPACTION;
use crate::formats::time::from_rfc3339;
use crate::formats::{rest, set_origin, stash, Conversation, FormatError, Source};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason, Usage};

/// One non-blank line of the file with its 1-based number.
struct Record {
    line: usize,
    map: Line,
}

/// Reads one Claude Code transcript: every line but the `summary` ones is an entry (sidechains
/// and unknown line types included), the summaries give the title.
pub fn read(source: &Source<'_>) -> Result<Conversation, FormatError> {
    let records = parse_records(source)?;
    let Some(first) = records.first() else {
        return Err(FormatError::whole(format!("{} is empty: no Claude Code line", source.name)));
    };
    if !records.iter().any(|r| is_claude_code_line(&r.map)) {
        return Err(FormatError::at(
            first.line,
            "not a Claude Code transcript: no line has a `sessionId` with a `uuid` or \
             `parentUuid`, nor is a `summary` with a `leafUuid`",
        ));
    }
    let session_id = records
        .iter()
        .find_map(|r| text_of(&r.map, "sessionId"))
        .map_or_else(|| source.stem().to_string(), String::from);
    let ids = entry_ids(&records);
    let known: BTreeSet<&str> = ids.iter().flatten().map(String::as_str).collect();
    let by_id: BTreeMap<&str, &Line> =
        records.iter().zip(&ids).filter_map(|(r, id)| Some((id.as_deref()?, &r.map))).collect();
    let tools = tool_names(records.iter().map(|r| &r.map));
    let mut entries = Vec::new();
    let mut summaries = Vec::new();
    let mut previous: Option<(&str, i64)> = None;
    let (mut leaf, mut last_own) = (None, None);
    for (index, (record, id)) in records.iter().zip(&ids).enumerate() {
        let Some(id) = id.as_deref() else {
            summaries.push((index, Value::Object(record.map.clone())));
            continue;
        };
        let parent = parent_of(&record.map, previous.map(|p| p.0), &known);
        let timestamp = text_of(&record.map, "timestamp")
            .and_then(from_rfc3339)
            .or(previous.map(|p| p.1))
            .unwrap_or(source.modified);
        let tokens_before = parent.and_then(|p| by_id.get(p)).and_then(|p| line_pre_tokens(p));
        let draft = Draft { id, parent, timestamp, tokens_before };
        let mut entry = entry_of(&record.map, &draft, &tools);
        let patch = diff(&Value::Object(record.map.clone()), &render(&entry, &session_id));
        set_origin(&mut entry, patch.and_then(|p| stash(FORMAT, p)));
        if text_of(&record.map, "uuid") == Some(id) {
            last_own = Some(id);
            if !is_sidechain(&record.map) {
                leaf = Some(id);
            }
        }
        previous = Some((id, timestamp));
        entries.push(entry);
    }
    let leaf = leaf.or(last_own).or(entries.last().map(SessionEntry::id)).map(String::from);
    let title = summaries.iter().rev().find_map(|(_, s)| text_of(s.as_object()?, "summary"));
    let title = title.unwrap_or_default().to_string();
    let metadata = meta_stash(&entries, leaf.as_deref(), &title, &summaries);
    let mut conversation = Conversation::new(session_id, entries, leaf, source.modified);
    conversation.meta.title = title;
    conversation.meta.metadata = metadata;
    conversation.checked()
}

/// Every non-blank line as a JSON object with a string `type`; else an error naming the line.
fn parse_records(source: &Source<'_>) -> Result<Vec<Record>, FormatError> {
    let mut records = Vec::new();
    for (line, bytes) in source.lines() {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| FormatError::at(line, format!("not JSON (a truncated line?): {e}")))?;
        let Value::Object(map) = value else {
            return Err(FormatError::at(line, "not a JSON object"));
        };
        if text_of(&map, "type").is_none() {
            return Err(FormatError::at(line, "a Claude Code line has a string `type`"));
        }
        records.push(Record { line, map });
    }
    Ok(records)
}

/// Each line's entry id: its `uuid`; `cc_line_<n>` for a line without one (or a repeated one);
/// `None` for a `summary` line, which is no entry.
fn entry_ids(records: &[Record]) -> Vec<Option<String>> {
    let mut seen = BTreeSet::new();
    records
        .iter()
        .map(|r| {
            if text_of(&r.map, "type") == Some("summary") {
                return None;
            }
            match text_of(&r.map, "uuid") {
                Some(uuid) if !uuid.is_empty() && seen.insert(uuid) => Some(uuid.to_string()),
                _ => Some(format!("cc_line_{}", r.line)),
            }
        })
        .collect()
}

/// A line's parent: `parentUuid` (a compact boundary's `logicalParentUuid` first) when that
/// entry is in the file, else none; a line without `uuid` hangs off the entry before it.
fn parent_of<'a>(
    map: &'a Line,
    previous: Option<&'a str>,
    known: &BTreeSet<&str>,
) -> Option<&'a str> {
    if !map.contains_key("uuid") {
        return previous;
    }
    let keys: &[&str] =
        if is_boundary(map) { &["logicalParentUuid", "parentUuid"] } else { &["parentUuid"] };
    keys.iter().filter_map(|k| text_of(map, k)).find(|p| known.contains(p))
}

fn is_boundary(map: &Line) -> bool {
    text_of(map, "type") == Some("system") && text_of(map, "subtype") == Some(BOUNDARY)
}

fn is_sidechain(map: &Line) -> bool {
    map.get("isSidechain") == Some(&Value::Bool(true))
}

/// The tokens a compact boundary line says the conversation had before it.
fn line_pre_tokens(map: &Line) -> Option<u64> {
    if !is_boundary(map) {
        return None;
    }
    map.get("compactMetadata")?.get("preTokens")?.as_u64()
}

/// The tool name of each `tool_use` id in the file's user and assistant lines (the first one).
fn tool_names<'a>(lines: impl Iterator<Item = &'a Line>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for map in lines {
        if !matches!(text_of(map, "type"), Some("user" | "assistant")) {
            continue;
        }
        let blocks = map.get("message").and_then(|m| m.get("content")).and_then(Value::as_array);
        for block in blocks.into_iter().flatten() {
            if let (Some("tool_use"), Some(id), Some(name)) =
                (str_at(block, "type"), str_at(block, "id"), str_at(block, "name"))
            {
                names.entry(id.to_string()).or_insert_with(|| name.to_string());
            }
        }
    }
    names
}

/// What an entry is made of besides its line.
pub(super) struct Draft<'a> {
    pub(super) id: &'a str,
    pub(super) parent: Option<&'a str>,
    pub(super) timestamp: i64,
    /// The `preTokens` of the parent when it is a compact boundary.
    pub(super) tokens_before: Option<u64>,
}

/// The entry one line reads as (no origin yet).
fn entry_of(map: &Line, draft: &Draft<'_>, tools: &BTreeMap<String, String>) -> SessionEntry {
    let message = map.get("message");
    let content = message.and_then(|m| m.get("content"));
    let ts = draft.timestamp;
    let as_message = |message| message_entry(draft, message);
    match text_of(map, "type").unwrap_or_default() {
        "user" => {
            if map.get("isCompactSummary") == Some(&Value::Bool(true)) {
                if let Some(summary) = text_only(content) {
                    let first_kept = draft.parent.unwrap_or(draft.id);
                    let data = compaction_data(summary, first_kept, draft.tokens_before);
                    return custom_entry(draft, COMPACTION.into(), data);
                }
            }
            match single_tool_result(content) {
                Some(result) => as_message(result_message(result, map, tools, ts)),
                None => {
                    as_message(AgentMessage::User { content: blocks_of(content), timestamp: ts })
                }
            }
        }
        "assistant" => as_message(assistant_message(message, ts)),
        "system" => as_message(AgentMessage::Custom {
            custom_type: text_of(map, "subtype").unwrap_or("system").to_string(),
            content: blocks_of(map.get("content").filter(|c| c.is_string())),
            display: None,
            details: if is_boundary(map) { map.get("compactMetadata").cloned() } else { None },
            timestamp: ts,
        }),
        other => custom_entry(draft, other.to_string(), rest(map, &ENVELOPE)),
    }
}

pub(super) fn message_entry(draft: &Draft<'_>, message: AgentMessage) -> SessionEntry {
    SessionEntry::Message {
        id: draft.id.to_string(),
        parent_id: draft.parent.map(String::from),
        timestamp: draft.timestamp,
        revision: 0,
        origin: None,
        message,
    }
}

pub(super) fn custom_entry(draft: &Draft<'_>, custom_type: String, data: Value) -> SessionEntry {
    SessionEntry::Custom {
        id: draft.id.to_string(),
        parent_id: draft.parent.map(String::from),
        timestamp: draft.timestamp,
        revision: 0,
        origin: None,
        custom_type,
        data,
    }
}

pub(super) fn compaction_data(
    summary: String,
    first_kept: &str,
    tokens_before: Option<u64>,
) -> Value {
    let mut data = Map::new();
    data.insert("summary".into(), Value::String(summary));
    data.insert("first_kept_entry_id".into(), Value::String(first_kept.into()));
    if let Some(tokens) = tokens_before {
        data.insert("tokens_before".into(), Value::from(tokens));
    }
    Value::Object(data)
}

/// The text of content that is a string or only text blocks (at least one).
fn text_only(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) if !blocks.is_empty() => blocks
            .iter()
            .map(|b| (str_at(b, "type") == Some("text")).then(|| str_at(b, "text")).flatten())
            .collect::<Option<Vec<&str>>>()
            .map(|texts| texts.concat()),
        _ => None,
    }
}

/// The `tool_result` block of content that is exactly one.
fn single_tool_result(content: Option<&Value>) -> Option<&Value> {
    match content?.as_array()?.as_slice() {
        [block] if str_at(block, "type") == Some("tool_result") => Some(block),
        _ => None,
    }
}

fn result_message(
    block: &Value,
    map: &Line,
    tools: &BTreeMap<String, String>,
    timestamp: i64,
) -> AgentMessage {
    let call_id = str_at(block, "tool_use_id").unwrap_or_default();
    AgentMessage::FunctionResult {
        function_call_id: call_id.to_string(),
        function_id: tools.get(call_id).cloned().unwrap_or_default(),
        content: blocks_of(block.get("content")),
        details: map.get("toolUseResult").cloned().unwrap_or(Value::Null),
        is_error: block.get("is_error").and_then(Value::as_bool).unwrap_or(false),
        timestamp,
    }
}

fn assistant_message(message: Option<&Value>, timestamp: i64) -> AgentMessage {
    let field = |key| message.and_then(|m| m.get(key));
    anthropic_assistant(
        blocks_of(field("content")),
        stop_of(field("stop_reason").and_then(Value::as_str)),
        field("model").and_then(Value::as_str).unwrap_or_default().to_string(),
        field("usage").and_then(Value::as_object).map(usage_of),
        timestamp,
    )
}

/// An assistant message as an assistant line gives it: from `anthropic`, its stop reason with
/// the raw one when ours cannot say it, and no error, warnings or agent.
pub(super) fn anthropic_assistant(
    content: Vec<ContentBlock>,
    (stop_reason, native_stop_reason): (StopReason, Option<String>),
    model: String,
    usage: Option<Usage>,
    timestamp: i64,
) -> AgentMessage {
    AgentMessage::Assistant {
        content,
        stop_reason,
        model,
        provider: "anthropic".into(),
        timestamp,
        native_stop_reason,
        error_message: None,
        error_kind: None,
        warnings: None,
        usage,
        agent: None,
    }
}

/// Claude's `stop_reason` as ours and the raw one when ours cannot say it.
pub(super) fn stop_of(native: Option<&str>) -> (StopReason, Option<String>) {
    match native {
        Some("end_turn") => (StopReason::End, None),
        Some("max_tokens") => (StopReason::Length, None),
        Some("tool_use") => (StopReason::FunctionCall, None),
        Some(other) => (StopReason::End, Some(other.to_string())),
        None => (StopReason::End, None),
    }
}

fn usage_of(usage: &Line) -> Usage {
    let count = |key| usage.get(key).and_then(Value::as_u64);
    Usage {
        input: count("input_tokens"),
        output: count("output_tokens"),
        cache_read: count("cache_read_input_tokens"),
        cache_write: count("cache_creation_input_tokens"),
        reasoning: None,
        cost_usd: None,
    }
}

/// Content as blocks: a string is one text block; blocks this store has no kind for are left
/// out (the origin's patch brings them back).
fn blocks_of(content: Option<&Value>) -> Vec<ContentBlock> {
    match content {
        Some(Value::String(text)) => alloc::vec![ContentBlock::Text { text: text.clone() }],
        Some(Value::Array(blocks)) => blocks.iter().filter_map(block_of).collect(),
        _ => Vec::new(),
    }
}

fn block_of(block: &Value) -> Option<ContentBlock> {
    let text = |key| str_at(block, key).map(String::from);
    Some(match str_at(block, "type")? {
        "text" => ContentBlock::Text { text: text("text")? },
        "thinking" => {
            ContentBlock::Thinking { text: text("thinking")?, signature: text("signature") }
        }
        "tool_use" => ContentBlock::FunctionCall {
            id: text("id")?,
            function_id: text("name")?,
            arguments: block.get("input").cloned().unwrap_or(Value::Null),
        },
        "tool_result" => ContentBlock::FunctionResult {
            function_call_id: text("tool_use_id")?,
            content: blocks_of(block.get("content")),
            is_error: block.get("is_error").and_then(Value::as_bool),
        },
        "image" => {
            let source = block.get("source")?;
            if str_at(source, "type") != Some("base64") {
                return None;
            }
            ContentBlock::Image {
                mime: str_at(source, "media_type")?.to_string(),
                data: str_at(source, "data")?.to_string(),
                attachment_id: None,
            }
        }
        _ => return None,
    })
}

/// The session-level stash (`meta.metadata.claude_code`): the file's order of entries when the
/// writer would not give it back, and its `summary` lines (with their places) unless they are
/// the one summary line the writer writes for the title.
fn meta_stash(
    entries: &[SessionEntry],
    leaf: Option<&str>,
    title: &str,
    summaries: &[(usize, Value)],
) -> Option<Object> {
    let mut claude_code = Map::new();
    let file_order: Vec<&str> = entries.iter().map(SessionEntry::id).collect();
    let written: Vec<&str> =
        default_order(entries, leaf).into_iter().map(SessionEntry::id).collect();
    if file_order != written {
        let order = file_order.iter().map(|id| Value::String((*id).into())).collect();
        claude_code.insert("order".into(), Value::Array(order));
    }
    let default: Vec<(usize, Value)> = match title.is_empty() {
        true => Vec::new(),
        false => alloc::vec![(0, summary_line(title, leaf))],
    };
    if summaries != default.as_slice() {
        let placed = summaries
            .iter()
            .map(|(at, line)| {
                let mut placed = Map::new();
                placed.insert("at".into(), Value::from(*at));
                placed.insert("line".into(), line.clone());
                Value::Object(placed)
            })
            .collect();
        claude_code.insert("summaries".into(), Value::Array(placed));
    }
    stash(FORMAT, Value::Object(claude_code))
}
