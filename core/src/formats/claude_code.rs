//! Claude Code transcripts (`~/.claude/projects/<project>/<sessionId>.jsonl`) both ways: one
//! line is one entry, and what a line holds beyond the entry read from it is kept in the entry's
//! origin as a patch against the line this module would write for that entry, so a transcript
//! read and written back gives the same JSON values line for line.
//! `architecture/formats/claude-code.md` says what maps to what and what is lost.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use super::message::texts;
use super::time::{from_rfc3339, to_rfc3339};
use super::tree::branch;
use super::{rest, set_origin, stash, stashed, Conversation, Format, FormatError, Source};
use crate::compaction::COMPACTION;
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason, Usage};

const FORMAT: Format = Format::ClaudeCode;
/// The `subtype` of the system line Claude Code writes where it compacted.
const BOUNDARY: &str = "compact_boundary";
/// Line types that read as messages or titles: a custom entry of one of these types is written
/// as `custom:<type>`.
const RESERVED: [&str; 4] = ["user", "assistant", "system", "summary"];
const ESCAPE: &str = "custom:";
/// The keys of a line that a custom entry's id, parent, time and type fill.
const ENVELOPE: [&str; 5] = ["type", "uuid", "parentUuid", "sessionId", "timestamp"];
/// How many of the first lines [`looks_like`] tries.
const LOOK_AHEAD: usize = 5;

type Line = Map<String, Value>;

/// One non-blank line of the file with its 1-based number.
struct Record {
    line: usize,
    map: Line,
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

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

/// Whether `bytes` look like a Claude Code transcript: one of the first lines is a message line
/// (`sessionId` with `uuid` or `parentUuid`) or a `summary` with a `leafUuid`.
pub fn looks_like(bytes: &[u8]) -> bool {
    let source = Source { name: "", bytes, modified: 0 };
    for (_, line) in source.lines().take(LOOK_AHEAD) {
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(map)) if is_claude_code_line(&map) => return true,
            Ok(Value::Object(_)) => {}
            _ => return false,
        }
    }
    false
}

fn is_claude_code_line(map: &Line) -> bool {
    let message_line = map.contains_key("sessionId")
        && (map.contains_key("uuid") || map.contains_key("parentUuid"));
    let title_line = text_of(map, "type") == Some("summary") && map.contains_key("leafUuid");
    message_line || title_line
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
struct Draft<'a> {
    id: &'a str,
    parent: Option<&'a str>,
    timestamp: i64,
    /// The `preTokens` of the parent when it is a compact boundary.
    tokens_before: Option<u64>,
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

fn message_entry(draft: &Draft<'_>, message: AgentMessage) -> SessionEntry {
    SessionEntry::Message {
        id: draft.id.to_string(),
        parent_id: draft.parent.map(String::from),
        timestamp: draft.timestamp,
        revision: 0,
        origin: None,
        message,
    }
}

fn custom_entry(draft: &Draft<'_>, custom_type: String, data: Value) -> SessionEntry {
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

fn compaction_data(summary: String, first_kept: &str, tokens_before: Option<u64>) -> Value {
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
fn anthropic_assistant(
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
fn stop_of(native: Option<&str>) -> (StopReason, Option<String>) {
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

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

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
fn summary_line(title: &str, leaf: Option<&str>) -> Value {
    let mut line = Map::new();
    line.insert("type".into(), "summary".into());
    line.insert("summary".into(), title.into());
    line.insert("leafUuid".into(), leaf.map_or(Value::Null, Value::from));
    Value::Object(line)
}

/// The session-level stash of `conversation`, if any.
fn meta_stashed(conversation: &Conversation) -> Option<&Line> {
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
fn write_order(conversation: &Conversation) -> Vec<&SessionEntry> {
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
fn default_order<'a>(entries: &'a [SessionEntry], leaf: Option<&str>) -> Vec<&'a SessionEntry> {
    let oldest = super::tree::oldest_first(entries);
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
fn effective_leaf<'a>(order: &[&'a SessionEntry], lines: &[Value]) -> Option<&'a str> {
    let own =
        |(entry, line): &(&&'a SessionEntry, &Value)| str_at(line, "uuid") == Some(entry.id());
    let pairs: Vec<(&&SessionEntry, &Value)> = order.iter().zip(lines).filter(own).collect();
    let main =
        pairs.iter().rev().find(|(_, line)| line.get("isSidechain") != Some(&Value::Bool(true)));
    main.or(pairs.last()).map(|(e, _)| e.id()).or(order.last().map(|e| e.id()))
}

/// The line an entry is written as: its default line with its stashed patch applied.
fn line_of(entry: &SessionEntry, session_id: &str) -> Value {
    let line = render(entry, session_id);
    match stashed(FORMAT, entry) {
        Some(patch) => apply(line, patch),
        None => line,
    }
}

/// The line this module writes for an entry that came from nowhere else.
fn render(entry: &SessionEntry, session_id: &str) -> Value {
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
fn compaction_summary<'a>(custom_type: &str, data: &'a Value) -> Option<&'a str> {
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

fn escaped(custom_type: &str) -> String {
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
fn joined_text(content: &[ContentBlock]) -> Option<String> {
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

// ---------------------------------------------------------------------------------------------
// What survives ours → Claude Code → ours
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// The origin's patch: a line against the line this module would write
// ---------------------------------------------------------------------------------------------

/// How `line` differs from `default` (`None`: not at all): `{"=": value}` replaces, `{"~":
/// {key: patch}, "-": [key]}` edits an object's keys and drops some, `{"#": {index: patch}}`
/// edits an array of the same length.
fn diff(line: &Value, default: &Value) -> Option<Value> {
    if line == default {
        return None;
    }
    let mut out = Map::new();
    match (line, default) {
        (Value::Object(line), Value::Object(default)) => {
            let edits: Map<String, Value> = line
                .iter()
                .filter_map(|(k, v)| {
                    let patch = match default.get(k) {
                        Some(d) => diff(v, d)?,
                        None => replace(v),
                    };
                    Some((k.clone(), patch))
                })
                .collect();
            let dropped: Vec<Value> = default
                .keys()
                .filter(|k| !line.contains_key(*k))
                .map(|k| Value::String(k.clone()))
                .collect();
            if !edits.is_empty() {
                out.insert("~".into(), Value::Object(edits));
            }
            if !dropped.is_empty() {
                out.insert("-".into(), Value::Array(dropped));
            }
        }
        (Value::Array(line), Value::Array(default)) if line.len() == default.len() => {
            let edits: Map<String, Value> = line
                .iter()
                .zip(default)
                .enumerate()
                .filter_map(|(i, (l, d))| Some((i.to_string(), diff(l, d)?)))
                .collect();
            out.insert("#".into(), Value::Object(edits));
        }
        _ => return Some(replace(line)),
    }
    Some(Value::Object(out))
}

fn replace(value: &Value) -> Value {
    Value::Object(Map::from_iter([("=".to_string(), value.clone())]))
}

/// `default` with `patch` ([`diff`]'s) applied.
fn apply(default: Value, patch: &Value) -> Value {
    let Some(patch) = patch.as_object() else { return default };
    if let Some(value) = patch.get("=") {
        return value.clone();
    }
    match default {
        Value::Object(mut fields) => {
            for key in patch.get("-").and_then(Value::as_array).into_iter().flatten() {
                if let Some(key) = key.as_str() {
                    fields.remove(key);
                }
            }
            let edits = patch.get("~").and_then(Value::as_object);
            for (key, edit) in edits.into_iter().flatten() {
                let old = fields.remove(key).unwrap_or(Value::Null);
                fields.insert(key.clone(), apply(old, edit));
            }
            Value::Object(fields)
        }
        Value::Array(mut items) => {
            let edits = patch.get("#").and_then(Value::as_object);
            for (index, edit) in edits.into_iter().flatten() {
                if let Some(item) = index.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    *item = apply(core::mem::take(item), edit);
                }
            }
            Value::Array(items)
        }
        other => other,
    }
}

fn text_of<'a>(map: &'a Line, key: &str) -> Option<&'a str> {
    map.get(key)?.as_str()
}

fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key)?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::{cut_at, record_of};
    use proptest::prelude::*;

    /// A realistic transcript: a title, a prompt, one assistant API message over two lines
    /// (thinking, then a tool call), its result, an old-style sidechain line, a compaction
    /// (boundary and summary), a fork (the prompt edited) and a file snapshot.
    const TRANSCRIPT: &str = r#"{"type":"summary","summary":"Fix the login bug","leafUuid":"a3"}
{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":"Why does login fail?"},"uuid":"u1","timestamp":"2025-08-01T10:00:00.000Z"}
{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"Read the handler first.","signature":"sig=="}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":3,"service_tier":"standard"}},"requestId":"req_1","type":"assistant","uuid":"a1","timestamp":"2025-08-01T10:00:01.000Z"}
{"parentUuid":"a1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"src/login.rs"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":30,"service_tier":"standard"}},"requestId":"req_1","type":"assistant","uuid":"a2","timestamp":"2025-08-01T10:00:02.000Z"}
{"parentUuid":"a2","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"fn login() { if !ok { allow() } }"}]},"uuid":"r1","timestamp":"2025-08-01T10:00:03.000Z","toolUseResult":{"type":"text","file":{"filePath":"src/login.rs","numLines":1}}}
{"parentUuid":null,"isSidechain":true,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":"Search for other callers of allow()"},"uuid":"side1","timestamp":"2025-08-01T10:00:03.500Z"}
{"parentUuid":"r1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"The check is inverted."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":50,"output_tokens":7}},"type":"assistant","uuid":"a3","timestamp":"2025-08-01T10:00:04.000Z"}
{"parentUuid":null,"logicalParentUuid":"a3","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"2025-08-01T10:05:00.000Z","uuid":"cb1","level":"info","compactMetadata":{"trigger":"manual","preTokens":1200}}
{"parentUuid":"cb1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":"This session is being continued from a previous conversation. Summary: the login check is inverted."},"isVisibleInTranscriptOnly":true,"isCompactSummary":true,"uuid":"cs1","timestamp":"2025-08-01T10:05:01.000Z"}
{"parentUuid":"cs1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":"Now fix it"},"uuid":"u2","timestamp":"2025-08-01T10:06:00.000Z"}
{"parentUuid":"cs1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":"First add a failing test"},"uuid":"u3","timestamp":"2025-08-01T10:07:00.000Z"}
{"parentUuid":"u3","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Added tests/login.rs."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":60,"output_tokens":9}},"type":"assistant","uuid":"a4","timestamp":"2025-08-01T10:07:30.000Z"}
{"type":"file-history-snapshot","messageId":"u3","snapshot":{"messageId":"u3","trackedFileBackups":{},"timestamp":"2025-08-01T10:07:00.000Z"},"isSnapshotUpdate":false}
"#;

    fn source(bytes: &[u8]) -> Source<'_> {
        Source { name: "s-1.jsonl", bytes, modified: 0 }
    }

    fn values(bytes: &[u8]) -> Vec<Value> {
        source(bytes).lines().map(|(_, l)| serde_json::from_slice(l).unwrap()).collect()
    }

    fn entry<'a>(c: &'a Conversation, id: &str) -> &'a SessionEntry {
        c.entries.iter().find(|e| e.id() == id).unwrap()
    }

    #[test]
    fn reads_a_realistic_transcript_into_its_tree() {
        let c = read(&source(TRANSCRIPT.as_bytes())).unwrap();
        assert_eq!(c.meta.session_id, "s-1");
        assert_eq!(c.meta.title, "Fix the login bug");
        assert_eq!(c.entries.len(), 12, "every line but the summary is an entry");
        assert_eq!(c.leaf.as_deref(), Some("a4"), "the last non-sidechain line with a uuid");
        let path: Vec<&str> = c.active_branch().iter().map(|e| e.id()).collect();
        assert_eq!(path, ["u1", "a1", "a2", "r1", "a3", "cb1", "cs1", "u3", "a4"]);
        assert_eq!(entry(&c, "u2").parent_id(), Some("cs1"), "the fork");
        assert_eq!(entry(&c, "side1").parent_id(), None, "a sidechain root");
        assert_eq!(entry(&c, "cc_line_13").parent_id(), Some("a4"), "the snapshot");
        match entry(&c, "a2").message() {
            Some(AgentMessage::Assistant { content, stop_reason, usage, provider, .. }) => {
                assert_eq!(*stop_reason, StopReason::FunctionCall);
                assert_eq!(provider, "anthropic");
                assert_eq!(usage.as_ref().and_then(|u| u.output), Some(30));
                assert!(matches!(&content[..], [ContentBlock::FunctionCall { function_id, .. }]
                    if function_id == "Read"));
            }
            other => panic!("a2 is {other:?}"),
        }
        match entry(&c, "r1").message() {
            Some(AgentMessage::FunctionResult { function_id, details, is_error, .. }) => {
                assert_eq!(function_id, "Read");
                assert_eq!(details["file"]["filePath"], "src/login.rs");
                assert!(!is_error);
            }
            other => panic!("r1 is {other:?}"),
        }
        let record = record_of(entry(&c, "cs1")).unwrap().unwrap();
        assert_eq!(record.first_kept_entry_id, "cb1");
        assert_eq!(record.tokens_before, Some(1200));
        let before: Vec<SessionEntry> =
            c.active_branch().into_iter().take_while(|e| e.id() != "cs1").cloned().collect();
        assert!(cut_at(&before, "cb1").is_ok(), "a valid compaction keeping nothing before");
        let cwd = stashed(FORMAT, entry(&c, "u1")).unwrap();
        assert_eq!(cwd["~"]["cwd"]["="], "/repo");
    }

    #[test]
    fn writes_a_read_transcript_back_line_for_line() {
        let c = read(&source(TRANSCRIPT.as_bytes())).unwrap();
        let written = write(&c);
        assert_eq!(values(&written), values(TRANSCRIPT.as_bytes()));
        let again = read(&source(&written)).unwrap();
        assert_eq!(again, c);
    }

    #[test]
    fn refuses_truncated_foreign_and_empty_files() {
        let truncated = format!("{}{}", TRANSCRIPT, r#"{"parentUuid":"a4","type":"user","mess"#);
        let error = read(&source(truncated.as_bytes())).unwrap_err();
        assert_eq!(error.line, Some(14));
        let pi = r#"{"type":"session","version":3,"id":"u","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/"}"#;
        assert_eq!(read(&source(pi.as_bytes())).unwrap_err().line, Some(1));
        assert!(!looks_like(pi.as_bytes()));
        assert!(read(&source(b"")).is_err());
        assert!(read(&source(b"\n  \n")).is_err());
        assert!(looks_like(TRANSCRIPT.as_bytes()));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Ours → Claude Code → ours loses exactly what `kept` says.
        #[test]
        fn round_trip_keeps_what_kept_says(c in super::super::corpus::conversation(12)) {
            let bytes = write(&c);
            prop_assert!(looks_like(&bytes));
            let back = read(&Source { name: "x.jsonl", bytes: &bytes, modified: 0 }).unwrap();
            prop_assert_eq!(back, kept(&c));
        }
    }
}
