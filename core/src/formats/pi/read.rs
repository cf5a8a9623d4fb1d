//! Reading a pi session file: the header, each entry line as an entry whose origin stashes what
//! the entry does not hold of it, the title and `metadata.pi`.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{json, Map, Value};

use super::kind::Kind;
use super::patch::Patch;
use super::write::{header_line, line_of};
use super::{
    object_at, str_at, title_of, Stash, BASH_EXECUTION, BRANCH_SUMMARY, ENTRY_KEYS, VERSION,
};
use crate::compaction::COMPACTION;
use crate::formats::time::from_rfc3339;
use crate::formats::{set_origin, stash, Conversation, Format, FormatError, Skipped, Source};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason, Usage};

/// Reads one pi session file: the header's id, time, `cwd` and `parentSession`, every entry line
/// (the whole tree) and, as the active leaf, the last entry line, as pi does.
pub fn read(source: &Source<'_>) -> Result<Conversation, FormatError> {
    let lines: Vec<(usize, &[u8])> = source.lines().collect();
    let Some(&(header_line, header_bytes)) = lines.first() else {
        return Err(FormatError::whole(format!(
            "{} is empty: a pi session starts with a session header line",
            source.name
        )));
    };
    let header = header_of(header_line, header_bytes)?;
    check_version(header_line, &header)?;
    let last_line = lines.last().map_or(header_line, |(line, _)| *line);
    let mut skipped = Vec::new();
    let mut parsed = Vec::new();
    for &(line, bytes) in &lines[1..] {
        match entry_object(line, bytes, last_line)? {
            Ok(object) => parsed.push((line, object)),
            Err(reason) => skipped.push(Skipped { line, reason }),
        }
    }
    let parsed = without_replaced_ids(parsed, &mut skipped);
    let ids: BTreeSet<&str> = parsed.iter().map(|(_, object)| str_at(object, "id")).collect();
    let entries: Vec<SessionEntry> =
        parsed.iter().map(|(_, object)| entry_of(object, &ids, source.modified)).collect();
    let title = title_of(&entries);
    let leaf = entries.last().map(|entry| entry.id().to_string());
    let created_at = header.get("timestamp").and_then(Value::as_str).and_then(from_rfc3339);
    let mut conversation = Conversation::new(
        str_at(&header, "id").into(),
        entries,
        leaf,
        created_at.unwrap_or(source.modified),
    );
    if let Some(created_at) = created_at {
        conversation.meta.created_at = created_at;
    }
    conversation.meta.title = title;
    conversation.meta.metadata = metadata_of(&header, &conversation);
    conversation.skipped = skipped;
    conversation.checked()
}

/// The header line as an object: an error naming the line when it is not pi's session header.
fn header_of(line: usize, bytes: &[u8]) -> Result<Map<String, Value>, FormatError> {
    let not_pi = |why: &str| {
        FormatError::at(
            line,
            format!(
                "not a pi session: {why} (pi's first line is {{\"type\":\"session\",\"id\":...}})"
            ),
        )
    };
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| not_pi(&format!("the first line is not JSON: {e}")))?;
    let Value::Object(header) = value else { return Err(not_pi("the first line is no object")) };
    if header.get("type").and_then(Value::as_str) != Some("session") {
        return Err(not_pi("the first line is no session header"));
    }
    if !header.get("id").is_some_and(Value::is_string) {
        return Err(not_pi("the session header has no string id"));
    }
    Ok(header)
}

/// Versions 2 and 3 read (they differ only in a message role this module keeps as it is);
/// version 1 (no entry ids) and versions after 3 are refused.
fn check_version(line: usize, header: &Map<String, Value>) -> Result<(), FormatError> {
    match header.get("version").and_then(Value::as_u64) {
        None | Some(0 | 1) => Err(FormatError::at(
            line,
            "a version 1 pi session (entries without ids): open it in pi once, which migrates \
             it to version 3, then read it again",
        )),
        Some(version) if version > VERSION => Err(FormatError::at(
            line,
            format!("a version {version} pi session: this reader knows versions 2 and 3"),
        )),
        Some(_) => Ok(()),
    }
}

/// One entry line as an object (`Err`: why it is skipped); an error when the file's last line
/// is not JSON (the file was cut off while being written).
fn entry_object(
    line: usize,
    bytes: &[u8],
    last_line: usize,
) -> Result<Result<Map<String, Value>, String>, FormatError> {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) if line == last_line => {
            return Err(FormatError::at(
                line,
                format!("the file is truncated: its last line is not JSON: {e}"),
            ))
        }
        Err(e) => return Ok(Err(format!("not JSON: {e}"))),
    };
    let Value::Object(object) = value else { return Ok(Err("not a JSON object".into())) };
    if str_at(&object, "type") == "session" {
        return Ok(Err("a second session header (pi ignores it)".into()));
    }
    if str_at(&object, "id").is_empty() {
        return Ok(Err("an entry without an id".into()));
    }
    Ok(Ok(object))
}

/// The entry lines without those whose id a later line uses again (pi's index keeps the later).
fn without_replaced_ids(
    parsed: Vec<(usize, Map<String, Value>)>,
    skipped: &mut Vec<Skipped>,
) -> Vec<(usize, Map<String, Value>)> {
    let mut last_of: BTreeMap<String, usize> = BTreeMap::new();
    for (line, object) in &parsed {
        last_of.insert(str_at(object, "id").into(), *line);
    }
    let mut kept = Vec::with_capacity(parsed.len());
    for (line, object) in parsed {
        match last_of.get(str_at(&object, "id")) {
            Some(&last) if last != line => {
                let id = str_at(&object, "id");
                let reason = format!("id {id:?} is used again on line {last} (pi keeps that one)");
                skipped.push(Skipped { line, reason });
            }
            _ => kept.push((line, object)),
        }
    }
    skipped.sort_by_key(|s| s.line);
    kept
}

/// One entry line as an entry whose origin stashes what the entry does not hold of it. A parent
/// that is not in the file (or the entry itself) makes it a root, as pi's tree does.
fn entry_of(line: &Map<String, Value>, ids: &BTreeSet<&str>, modified: i64) -> SessionEntry {
    let kind = Kind::of_line(line);
    let id = str_at(line, "id").to_string();
    let parent_id = match line.get("parentId") {
        Some(Value::String(parent)) if *parent != id && ids.contains(parent.as_str()) => {
            Some(parent.clone())
        }
        _ => None,
    };
    let message = object_at(line, "message");
    let timestamp = line
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(from_rfc3339)
        .or_else(|| message.and_then(|m| m.get("timestamp")).and_then(Value::as_i64))
        .unwrap_or(modified);
    let body = match message {
        Some(message) if kind_is_message(&kind) => message,
        _ => line,
    };
    let string_content = kind.has_content() && body.get("content").is_some_and(Value::is_string);
    let mut entry = match read_message(&kind, body, timestamp) {
        Some(message) => {
            SessionEntry::Message { id, parent_id, timestamp, revision: 0, origin: None, message }
        }
        None => {
            let (custom_type, data) = read_custom(&kind, line);
            SessionEntry::Custom {
                id,
                parent_id,
                timestamp,
                revision: 0,
                origin: None,
                custom_type,
                data,
            }
        }
    };
    let mut kept = Stash { kind: None, string_content, patch: Patch::default() };
    if kind != Kind::default_for(&entry) {
        kept.kind = Some(kind.clone());
    }
    let derived = line_of(&entry, &kind, string_content);
    kept.patch = Patch::between(&derived, &Value::Object(line.clone()));
    set_origin(&mut entry, stash(Format::Pi, kept.to_value()));
    entry
}

fn kind_is_message(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::User | Kind::Assistant | Kind::ToolResult | Kind::RoleCustom | Kind::RoleOther(_)
    )
}

/// The message a line of `kind` reads into (`None`: it reads into a custom entry). `body` is
/// the pi message for `message` lines, else the line; `at` is the line's time.
fn read_message(kind: &Kind, body: &Map<String, Value>, at: i64) -> Option<AgentMessage> {
    let own_time = body.get("timestamp").and_then(Value::as_i64).unwrap_or(at);
    let message = match kind {
        Kind::User => {
            AgentMessage::User { content: blocks_of(body.get("content")), timestamp: own_time }
        }
        Kind::Assistant => AgentMessage::Assistant {
            content: blocks_of(body.get("content")),
            stop_reason: stop_reason_of(str_at(body, "stopReason")),
            model: str_at(body, "model").into(),
            provider: str_at(body, "provider").into(),
            timestamp: own_time,
            native_stop_reason: None,
            error_message: body.get("errorMessage").and_then(Value::as_str).map(String::from),
            error_kind: None,
            warnings: None,
            usage: body.get("usage").and_then(usage_of),
            agent: None,
        },
        Kind::ToolResult => AgentMessage::FunctionResult {
            function_call_id: str_at(body, "toolCallId").into(),
            function_id: str_at(body, "toolName").into(),
            content: blocks_of(body.get("content")),
            details: body.get("details").cloned().unwrap_or(Value::Null),
            is_error: body.get("isError").and_then(Value::as_bool).unwrap_or(false),
            timestamp: own_time,
        },
        Kind::RoleCustom | Kind::CustomMessage => AgentMessage::Custom {
            custom_type: str_at(body, "customType").into(),
            content: blocks_of(body.get("content")),
            display: None,
            details: body.get("details").cloned(),
            timestamp: if *kind == Kind::RoleCustom { own_time } else { at },
        },
        Kind::RoleOther(role) => other_role_message(role, body, own_time),
        Kind::BranchSummary => AgentMessage::Custom {
            custom_type: BRANCH_SUMMARY.into(),
            content: vec![ContentBlock::Text { text: str_at(body, "summary").into() }],
            display: None,
            details: body.get("details").cloned(),
            timestamp: at,
        },
        Kind::Compaction | Kind::Custom | Kind::Spread(_) => return None,
    };
    Some(message)
}

/// A message of a role that is not user / assistant / toolResult / custom: a custom message
/// whose details are the pi message's fields and whose content renders it for a reader.
fn other_role_message(role: &str, body: &Map<String, Value>, timestamp: i64) -> AgentMessage {
    let details: Map<String, Value> = body
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "role" | "timestamp"))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    AgentMessage::Custom {
        custom_type: custom_type_of_role(role),
        content: other_role_content(role, &details),
        display: None,
        details: Some(Value::Object(details)),
        timestamp,
    }
}

pub(super) fn custom_type_of_role(role: &str) -> String {
    match role {
        "bashExecution" => BASH_EXECUTION.into(),
        other => other.into(),
    }
}

/// What a reader is shown of a message of another role: a bash execution's command and output,
/// else the message's own content.
pub(super) fn other_role_content(role: &str, fields: &Map<String, Value>) -> Vec<ContentBlock> {
    if role != "bashExecution" {
        return blocks_of(fields.get("content"));
    }
    let mut text = format!("$ {}\n{}", str_at(fields, "command"), str_at(fields, "output"));
    if fields.get("cancelled").and_then(Value::as_bool) == Some(true) {
        text.push_str("\n(cancelled)");
    } else if let Some(code) = fields.get("exitCode").and_then(Value::as_i64).filter(|c| *c != 0) {
        text.push_str(&format!("\n(exit code {code})"));
    }
    vec![ContentBlock::Text { text }]
}

/// The custom type and data of a line that reads into a custom entry.
fn read_custom(kind: &Kind, line: &Map<String, Value>) -> (String, Value) {
    match kind {
        Kind::Compaction => {
            let mut data = Map::new();
            data.insert("summary".into(), json!(str_at(line, "summary")));
            data.insert("first_kept_entry_id".into(), json!(str_at(line, "firstKeptEntryId")));
            if let Some(tokens) = line.get("tokensBefore").and_then(Value::as_u64) {
                data.insert("tokens_before".into(), json!(tokens));
            }
            if let Some(details) = line.get("details").filter(|d| !d.is_null()) {
                data.insert("details".into(), details.clone());
            }
            (COMPACTION.into(), Value::Object(data))
        }
        Kind::Custom => {
            (str_at(line, "customType").into(), line.get("data").cloned().unwrap_or(Value::Null))
        }
        _ => {
            let rest: Map<String, Value> = line
                .iter()
                .filter(|(key, _)| !ENTRY_KEYS.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            (Kind::of_line(line).name(), Value::Object(rest))
        }
    }
}

/// pi content (a string, or text / image / thinking / toolCall blocks) as blocks; a block of a
/// type this store has none for becomes a text block holding its JSON.
fn blocks_of(content: Option<&Value>) -> Vec<ContentBlock> {
    match content {
        Some(Value::String(text)) => vec![ContentBlock::Text { text: text.clone() }],
        Some(Value::Array(blocks)) => blocks.iter().map(block_of).collect(),
        _ => Vec::new(),
    }
}

fn block_of(block: &Value) -> ContentBlock {
    let Some(fields) = block.as_object() else {
        return ContentBlock::Text { text: block.to_string() };
    };
    match str_at(fields, "type") {
        "text" => ContentBlock::Text { text: str_at(fields, "text").into() },
        "image" => ContentBlock::Image {
            mime: str_at(fields, "mimeType").into(),
            data: str_at(fields, "data").into(),
            attachment_id: None,
        },
        "thinking" => ContentBlock::Thinking {
            text: str_at(fields, "thinking").into(),
            signature: fields.get("thinkingSignature").and_then(Value::as_str).map(String::from),
        },
        "toolCall" => ContentBlock::FunctionCall {
            id: str_at(fields, "id").into(),
            function_id: str_at(fields, "name").into(),
            arguments: fields.get("arguments").cloned().unwrap_or(Value::Null),
        },
        _ => ContentBlock::Text { text: block.to_string() },
    }
}

fn stop_reason_of(reason: &str) -> StopReason {
    match reason {
        "length" => StopReason::Length,
        "toolUse" => StopReason::FunctionCall,
        "error" => StopReason::Error,
        "aborted" => StopReason::Aborted,
        _ => StopReason::End,
    }
}

/// pi's usage as ours (`None` when every count and the total cost are zero, which is what pi
/// writes when it has none).
fn usage_of(usage: &Value) -> Option<Usage> {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let cost =
        usage.get("cost").and_then(|c| c.get("total")).and_then(Value::as_f64).unwrap_or(0.0);
    let usage = Usage {
        input: Some(count("input")),
        output: Some(count("output")),
        cache_read: Some(count("cacheRead")),
        cache_write: Some(count("cacheWrite")),
        reasoning: None,
        cost_usd: Some(cost),
    };
    (!is_zero_usage(&usage)).then_some(usage)
}

pub(super) fn is_zero_usage(usage: &Usage) -> bool {
    [usage.input, usage.output, usage.cache_read, usage.cache_write]
        .iter()
        .all(|n| n.unwrap_or(0) == 0)
        && usage.cost_usd.unwrap_or(0.0) == 0.0
}

/// `metadata.pi` of a read header: `cwd` (when not empty), `parent_session`, and `header`, the
/// patch from the header this module writes to the one pi had.
fn metadata_of(header: &Map<String, Value>, conversation: &Conversation) -> Option<Object> {
    let mut pi = Map::new();
    if let Some(cwd) = header.get("cwd").and_then(Value::as_str).filter(|cwd| !cwd.is_empty()) {
        pi.insert("cwd".into(), json!(cwd));
    }
    if let Some(parent) = header.get("parentSession").and_then(Value::as_str) {
        pi.insert("parent_session".into(), json!(parent));
    }
    let derived = header_line(&conversation.meta.session_id, conversation.meta.created_at, &pi);
    let patch = Patch::between(&derived, &Value::Object(header.clone()));
    if !patch.is_empty() {
        let mut kept = Map::new();
        patch.put(&mut kept);
        pi.insert("header".into(), Value::Object(kept));
    }
    (!pi.is_empty()).then(|| {
        let mut metadata = Object::new();
        metadata.insert(Format::Pi.origin_key().into(), Value::Object(pi));
        metadata
    })
}
