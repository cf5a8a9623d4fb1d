//! pi coding agent's session JSONL, both ways: a `session` header line, then a tree of entries
//! by `id` / `parentId` whose last line is pi's active leaf. `architecture/formats/pi.md` says
//! what maps to what, what each side cannot hold and how the stash makes a pi file read and
//! written back unchanged.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{json, Map, Value};

use super::time::{from_rfc3339, to_rfc3339};
use super::{set_origin, stash, stashed, tree, Conversation, Format, FormatError, Skipped, Source};
use crate::compaction::{record_of, COMPACTION};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason, Usage};

/// The session version this module writes.
const VERSION: u64 = 3;

/// The fields every pi entry line has, besides what its `type` adds.
const ENTRY_KEYS: [&str; 4] = ["type", "id", "parentId", "timestamp"];

/// The `custom_type` of the custom message a `bashExecution` message reads into.
const BASH_EXECUTION: &str = "bash_execution";

/// The `custom_type` of the custom message a `branch_summary` entry reads into.
const BRANCH_SUMMARY: &str = "branch_summary";

/// The `custom_type` of the custom entry a `session_info` entry reads into.
const SESSION_INFO: &str = "session_info";

/// What pi line an entry is (or is written as): a message by its role, or an entry type.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// `message`, role `user`: our user message.
    User,
    /// `message`, role `assistant`: our assistant message.
    Assistant,
    /// `message`, role `toolResult`: our function result.
    ToolResult,
    /// `message`, role `custom`: our custom message.
    RoleCustom,
    /// `message` of another role (`bashExecution`, ...): our custom message whose details are the
    /// pi message's fields.
    RoleOther(String),
    /// `custom_message`: our custom message.
    CustomMessage,
    /// `branch_summary`: our custom message `branch_summary`.
    BranchSummary,
    /// `compaction`: our compaction record.
    Compaction,
    /// `custom`: our custom entry.
    Custom,
    /// Any other entry type (`model_change`, `thinking_level_change`, `label`, `session_info`,
    /// types pi adds later): our custom entry of that type whose data is the line's other fields.
    Spread(String),
}

impl Kind {
    /// The name the stash keeps (`message:user`, `branch_summary`, ...).
    fn name(&self) -> String {
        match self {
            Kind::User => "message:user".into(),
            Kind::Assistant => "message:assistant".into(),
            Kind::ToolResult => "message:toolResult".into(),
            Kind::RoleCustom => "message:custom".into(),
            Kind::RoleOther(role) => format!("message:{role}"),
            Kind::CustomMessage => "custom_message".into(),
            Kind::BranchSummary => "branch_summary".into(),
            Kind::Compaction => "compaction".into(),
            Kind::Custom => "custom".into(),
            Kind::Spread(kind) => kind.clone(),
        }
    }

    /// The kind [`Kind::name`] names.
    fn parse(name: &str) -> Kind {
        if let Some(role) = name.strip_prefix("message:") {
            return Kind::of_role(role);
        }
        match name {
            "custom_message" => Kind::CustomMessage,
            "branch_summary" => Kind::BranchSummary,
            "compaction" => Kind::Compaction,
            "custom" => Kind::Custom,
            other => Kind::Spread(other.into()),
        }
    }

    fn of_role(role: &str) -> Kind {
        match role {
            "user" => Kind::User,
            "assistant" => Kind::Assistant,
            "toolResult" => Kind::ToolResult,
            "custom" => Kind::RoleCustom,
            other => Kind::RoleOther(other.into()),
        }
    }

    /// The kind of a pi entry line (a `message` without a role is spread like an unknown type).
    fn of_line(line: &Map<String, Value>) -> Kind {
        match str_at(line, "type") {
            "message" => match object_at(line, "message").and_then(|m| m.get("role")) {
                Some(Value::String(role)) => Kind::of_role(role),
                _ => Kind::Spread("message".into()),
            },
            kind => Kind::parse(kind),
        }
    }

    /// The kind an entry is written as when no stash says otherwise.
    fn default_for(entry: &SessionEntry) -> Kind {
        match entry {
            SessionEntry::Message { message, .. } => match message {
                AgentMessage::User { .. } => Kind::User,
                AgentMessage::Assistant { .. } => Kind::Assistant,
                AgentMessage::FunctionResult { .. } => Kind::ToolResult,
                AgentMessage::Custom { .. } => Kind::CustomMessage,
            },
            SessionEntry::Custom { .. } if is_compaction_record(entry) => Kind::Compaction,
            SessionEntry::Custom { .. } => Kind::Custom,
        }
    }

    /// Whether an entry can be written as this kind.
    fn fits(&self, entry: &SessionEntry) -> bool {
        match (self, entry.message()) {
            (Kind::User, Some(AgentMessage::User { .. }))
            | (Kind::Assistant, Some(AgentMessage::Assistant { .. }))
            | (Kind::ToolResult, Some(AgentMessage::FunctionResult { .. })) => true,
            (
                Kind::RoleCustom | Kind::RoleOther(_) | Kind::CustomMessage | Kind::BranchSummary,
                Some(AgentMessage::Custom { .. }),
            ) => true,
            (Kind::Compaction, None) => is_compaction_record(entry),
            (Kind::Custom | Kind::Spread(_), None) => true,
            _ => false,
        }
    }

    /// Whether the line's content (or its message's) may be a plain string.
    fn has_content(&self) -> bool {
        matches!(
            self,
            Kind::User
                | Kind::Assistant
                | Kind::ToolResult
                | Kind::RoleCustom
                | Kind::CustomMessage
        )
    }
}

fn is_compaction_record(entry: &SessionEntry) -> bool {
    matches!(record_of(entry), Some(Ok(_)))
}

/// What an entry's origin keeps of pi (`origin.pi`): the line's kind when it is not the one the
/// entry would be written as, whether its content was a plain string, and the JSON-pointer
/// patch from the line this module writes to the line pi had.
#[derive(Debug, Default, Clone, PartialEq)]
struct Stash {
    kind: Option<Kind>,
    string_content: bool,
    patch: Patch,
}

impl Stash {
    fn of(entry: &SessionEntry) -> Stash {
        let Some(Value::Object(pi)) = stashed(Format::Pi, entry) else { return Stash::default() };
        Stash {
            kind: pi.get("kind").and_then(Value::as_str).map(Kind::parse),
            string_content: pi.get("content").and_then(Value::as_str) == Some("string"),
            patch: Patch::of(pi),
        }
    }

    fn to_value(&self) -> Value {
        let mut pi = Map::new();
        if let Some(kind) = &self.kind {
            pi.insert("kind".into(), Value::String(kind.name()));
        }
        if self.string_content {
            pi.insert("content".into(), Value::String("string".into()));
        }
        self.patch.put(&mut pi);
        Value::Object(pi)
    }
}

/// The difference between two JSON objects as JSON pointers: what to set (with its value) and
/// what to remove. Objects and equal-length arrays are compared member by member; anything else
/// that differs is set whole.
#[derive(Debug, Default, Clone, PartialEq)]
struct Patch {
    set: Map<String, Value>,
    unset: Vec<String>,
}

impl Patch {
    /// The patch that turns `derived` into `original`.
    fn between(derived: &Value, original: &Value) -> Patch {
        let mut patch = Patch::default();
        patch.compare(derived, original, "");
        patch
    }

    fn compare(&mut self, derived: &Value, original: &Value, at: &str) {
        if derived == original {
            return;
        }
        match (derived, original) {
            (Value::Object(d), Value::Object(o)) => {
                for (key, dv) in d {
                    let pointer = format!("{at}/{}", escape(key));
                    match o.get(key) {
                        Some(ov) => self.compare(dv, ov, &pointer),
                        None => self.unset.push(pointer),
                    }
                }
                for (key, ov) in o.iter().filter(|(key, _)| !d.contains_key(*key)) {
                    self.set.insert(format!("{at}/{}", escape(key)), ov.clone());
                }
            }
            (Value::Array(d), Value::Array(o)) if d.len() == o.len() && !at.is_empty() => {
                for (i, (dv, ov)) in d.iter().zip(o).enumerate() {
                    self.compare(dv, ov, &format!("{at}/{i}"));
                }
            }
            _ => {
                self.set.insert(at.into(), original.clone());
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.set.is_empty() && self.unset.is_empty()
    }

    /// Applies the patch to `value` (a pointer whose parent is gone is passed over).
    fn apply(&self, value: &mut Value) {
        for pointer in &self.unset {
            let (parent, last) = split_pointer(pointer);
            if let Some(Value::Object(map)) = walk(value, &parent) {
                map.remove(&last);
            }
        }
        for (pointer, new) in &self.set {
            let (parent, last) = split_pointer(pointer);
            match walk(value, &parent) {
                Some(Value::Object(map)) => {
                    map.insert(last, new.clone());
                }
                Some(Value::Array(items)) => {
                    if let Some(slot) = last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                        *slot = new.clone();
                    }
                }
                _ => {}
            }
        }
    }

    /// The patch kept in `pi` (`set`, `unset`).
    fn of(pi: &Map<String, Value>) -> Patch {
        let set = object_at(pi, "set").cloned().unwrap_or_default();
        let unset = match pi.get("unset") {
            Some(Value::Array(items)) => {
                items.iter().filter_map(Value::as_str).map(String::from).collect()
            }
            _ => Vec::new(),
        };
        Patch { set, unset }
    }

    /// Keeps the patch in `pi` (nothing when it is empty).
    fn put(&self, pi: &mut Map<String, Value>) {
        if !self.set.is_empty() {
            pi.insert("set".into(), Value::Object(self.set.clone()));
        }
        if !self.unset.is_empty() {
            let unset = self.unset.iter().cloned().map(Value::String).collect();
            pi.insert("unset".into(), Value::Array(unset));
        }
    }
}

/// A JSON pointer's reference token for `key` (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A pointer's parent tokens and its last token.
fn split_pointer(pointer: &str) -> (Vec<String>, String) {
    let mut tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect();
    let last = tokens.pop().unwrap_or_default();
    (tokens, last)
}

/// The value `tokens` lead to from `value`.
fn walk<'a>(value: &'a mut Value, tokens: &[String]) -> Option<&'a mut Value> {
    tokens.iter().try_fold(value, |at, token| match at {
        Value::Object(map) => map.get_mut(token),
        Value::Array(items) => items.get_mut(token.parse::<usize>().ok()?),
        _ => None,
    })
}

// ---------------------------------------------------------------------------------------------
// Reading

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
    let ids: Vec<&str> = parsed.iter().map(|(_, object)| str_at(object, "id")).collect();
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
fn entry_of(line: &Map<String, Value>, ids: &[&str], modified: i64) -> SessionEntry {
    let kind = Kind::of_line(line);
    let id = str_at(line, "id").to_string();
    let parent_id = match line.get("parentId") {
        Some(Value::String(parent)) if *parent != id && ids.contains(&parent.as_str()) => {
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

fn custom_type_of_role(role: &str) -> String {
    match role {
        "bashExecution" => BASH_EXECUTION.into(),
        other => other.into(),
    }
}

/// What a reader is shown of a message of another role: a bash execution's command and output,
/// else the message's own content.
fn other_role_content(role: &str, fields: &Map<String, Value>) -> Vec<ContentBlock> {
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

fn is_zero_usage(usage: &Usage) -> bool {
    [usage.input, usage.output, usage.cache_read, usage.cache_write]
        .iter()
        .all(|n| n.unwrap_or(0) == 0)
        && usage.cost_usd.unwrap_or(0.0) == 0.0
}

/// The session's title as pi names it: the last `session_info` entry with a non-empty name.
fn title_of(entries: &[SessionEntry]) -> String {
    entries
        .iter()
        .rev()
        .filter(|entry| written_kind(entry) == Kind::Spread(SESSION_INFO.into()))
        .find_map(|entry| match entry {
            SessionEntry::Custom { data, .. } => {
                data.get("name").and_then(Value::as_str).filter(|name| !name.is_empty())
            }
            SessionEntry::Message { .. } => None,
        })
        .map(String::from)
        .unwrap_or_default()
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

// ---------------------------------------------------------------------------------------------
// Writing

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
fn meta_pi(metadata: &Option<Object>) -> Map<String, Value> {
    metadata
        .as_ref()
        .and_then(|m| m.get(Format::Pi.origin_key()))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The header pi would have for this session (before the stashed header patch).
fn header_line(session_id: &str, created_at: i64, pi: &Map<String, Value>) -> Value {
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
fn written_order(conversation: &Conversation) -> Vec<SessionEntry> {
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

/// The kind an entry is written as: its stash's, when the entry still fits it, else its own.
fn written_kind(entry: &SessionEntry) -> Kind {
    Stash::of(entry)
        .kind
        .filter(|kind| kind.fits(entry))
        .unwrap_or_else(|| Kind::default_for(entry))
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
fn line_of(entry: &SessionEntry, kind: &Kind, string_content: bool) -> Value {
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
enum Allowed {
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
fn held(block: &ContentBlock, allowed: Allowed) -> ContentBlock {
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

fn joined_text(blocks: &[ContentBlock]) -> String {
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

// ---------------------------------------------------------------------------------------------
// Detection and what survives

/// Whether `bytes` look like a pi session: the first non-blank line is an object with
/// `"type":"session"` and a string `id`.
pub fn looks_like(bytes: &[u8]) -> bool {
    let source = Source { name: "", bytes, modified: 0 };
    let Some((_, first)) = source.lines().next() else { return false };
    match serde_json::from_slice::<Value>(first) {
        Ok(Value::Object(header)) => {
            header.get("type").and_then(Value::as_str) == Some("session")
                && header.get("id").is_some_and(Value::is_string)
        }
        _ => false,
    }
}

/// What of `conversation` survives being written to pi and read back: the entries in the order
/// written, then put parents first, the leaf the last one written, each entry as pi holds it
/// ([`kept_entry`]), a `session_info` entry when the title needed one, and the meta pi holds
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

// ---------------------------------------------------------------------------------------------
// Small readers of JSON objects

/// The string at `key` ("" when there is none).
fn str_at<'a>(object: &'a Map<String, Value>, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or("")
}

fn object_at<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    object.get(key).and_then(Value::as_object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::cut_at;
    use proptest::prelude::*;

    /// A pi session with two branches off the first message: one with a model change, a tool
    /// call and its result, a label, a compaction (time finer than milliseconds) and a bash
    /// execution; the other, the active one, with a branch summary, a custom message (string
    /// content, hidden), an extension entry, a thinking level change, an entry of a type this
    /// module does not know, a session name and, last, a user message with an image.
    const SESSION: &str = r#"{"type":"session","version":3,"id":"5f0c1c9e-1111-4a4a-9b9b-0123456789ab","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/home/u/project"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"Which port does the server use?","timestamp":1733234401000}}
{"type":"model_change","id":"a2","parentId":"a1","timestamp":"2024-12-03T14:00:01.500Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Read the config.","thinkingSignature":"sig-1"},{"type":"text","text":"Reading it.","textSignature":"msg_1"},{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"config.toml"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":20,"cacheRead":5,"cacheWrite":0,"totalTokens":125,"cost":{"input":0.0003,"output":0.0003,"cacheRead":0.0000015,"cacheWrite":0,"total":0.0006015}},"stopReason":"toolUse","timestamp":1733234402000}}
{"type":"message","id":"a4","parentId":"a3","timestamp":"2024-12-03T14:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"port = 8080"}],"details":{"lines":1},"isError":false,"timestamp":1733234403000}}
{"type":"message","id":"a5","parentId":"a4","timestamp":"2024-12-03T14:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Port 8080."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":130,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":134,"cost":{"input":0.00039,"output":0.00006,"cacheRead":0,"cacheWrite":0,"total":0.00045}},"stopReason":"stop","timestamp":1733234404000}}
{"type":"label","id":"a6","parentId":"a5","timestamp":"2024-12-03T14:00:05.000Z","targetId":"a3","label":"read config"}
{"type":"compaction","id":"a7","parentId":"a6","timestamp":"2024-12-03T14:01:00.123456Z","summary":"The user asked for the port; it is 8080.","firstKeptEntryId":"a3","tokensBefore":1234,"details":{"readFiles":["config.toml"],"modifiedFiles":[]},"fromHook":false}
{"type":"message","id":"a8","parentId":"a7","timestamp":"2024-12-03T14:01:01.000Z","message":{"role":"bashExecution","command":"ls","output":"config.toml","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1733234461000}}
{"type":"branch_summary","id":"b1","parentId":"a1","timestamp":"2024-12-03T14:02:00.000Z","fromId":"a8","summary":"Found the port in config.toml.","details":{"readFiles":["config.toml"]},"fromHook":false}
{"type":"custom_message","id":"b2","parentId":"b1","timestamp":"2024-12-03T14:02:01.000Z","customType":"reminder","content":"Keep answers short.","display":false}
{"type":"custom","id":"b3","parentId":"b2","timestamp":"2024-12-03T14:02:02.000Z","customType":"my-extension","data":{"count":42}}
{"type":"thinking_level_change","id":"b4","parentId":"b3","timestamp":"2024-12-03T14:02:03.000Z","thinkingLevel":"high"}
{"type":"bookmark_v9","id":"b5","parentId":"b4","timestamp":"2024-12-03T14:02:04.000Z","note":"a type from a later pi"}
{"type":"session_info","id":"b6","parentId":"b5","timestamp":"2024-12-03T14:02:05.000Z","name":"Server port"}
{"type":"message","id":"b7","parentId":"b6","timestamp":"2024-12-03T14:02:06.000Z","message":{"role":"user","content":[{"type":"text","text":"And the host?"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1733234526000}}
"#;

    fn source(bytes: &[u8]) -> Source<'_> {
        Source { name: "x.jsonl", bytes, modified: 0 }
    }

    fn json_lines(bytes: &[u8]) -> Vec<Value> {
        source(bytes)
            .lines()
            .map(|(line, text)| {
                serde_json::from_slice(text).unwrap_or_else(|e| panic!("line {line}: {e}"))
            })
            .collect()
    }

    fn entry<'a>(conversation: &'a Conversation, id: &str) -> &'a SessionEntry {
        conversation.entries.iter().find(|e| e.id() == id).expect(id)
    }

    #[test]
    fn reads_the_tree_leaf_title_and_compaction() {
        let conversation = read(&source(SESSION.as_bytes())).unwrap();
        assert_eq!(conversation.meta.session_id, "5f0c1c9e-1111-4a4a-9b9b-0123456789ab");
        assert_eq!(conversation.meta.title, "Server port");
        assert_eq!(conversation.meta.created_at, 1_733_234_400_000);
        assert_eq!(
            conversation.meta.metadata,
            Some(json!({ "pi": { "cwd": "/home/u/project" } }).as_object().cloned().unwrap())
        );
        assert_eq!(conversation.entries.len(), 15);
        assert!(conversation.skipped.is_empty());
        assert_eq!(conversation.leaf.as_deref(), Some("b7"));
        let branch: Vec<&str> = conversation.active_branch().iter().map(|e| e.id()).collect();
        assert_eq!(branch, ["a1", "b1", "b2", "b3", "b4", "b5", "b6", "b7"]);
        assert_eq!(conversation.meta.message_count, 8);

        let a3 = entry(&conversation, "a3").message().unwrap();
        let AgentMessage::Assistant { content, stop_reason, usage, .. } = a3 else { panic!() };
        assert_eq!(*stop_reason, StopReason::FunctionCall);
        assert_eq!(
            content[0],
            ContentBlock::Thinking {
                text: "Read the config.".into(),
                signature: Some("sig-1".into())
            }
        );
        assert_eq!(
            content[2],
            ContentBlock::FunctionCall {
                id: "call_1".into(),
                function_id: "read".into(),
                arguments: json!({ "path": "config.toml" })
            }
        );
        let usage = usage.as_ref().unwrap();
        assert_eq!((usage.input, usage.output, usage.cache_read), (Some(100), Some(20), Some(5)));
        assert_eq!(usage.cost_usd, Some(0.0006015));
        let Some(AgentMessage::FunctionResult { function_call_id, details, is_error, .. }) =
            entry(&conversation, "a4").message()
        else {
            panic!()
        };
        assert_eq!(
            (function_call_id.as_str(), details, *is_error),
            ("call_1", &json!({"lines": 1}), false)
        );

        let record = record_of(entry(&conversation, "a7")).unwrap().unwrap();
        assert_eq!(record.first_kept_entry_id, "a3");
        assert_eq!(record.tokens_before, Some(1234));
        let path = tree::branch(&conversation.entries, Some("a6"));
        let before: Vec<SessionEntry> = path.into_iter().cloned().collect();
        assert_eq!(cut_at(&before, "a3"), Ok(2));

        let custom_type = |id| match entry(&conversation, id) {
            SessionEntry::Message { message: AgentMessage::Custom { custom_type, .. }, .. }
            | SessionEntry::Custom { custom_type, .. } => custom_type.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(custom_type("a2"), "model_change");
        assert_eq!(custom_type("a6"), "label");
        assert_eq!(custom_type("a8"), "bash_execution");
        assert_eq!(custom_type("b1"), "branch_summary");
        assert_eq!(custom_type("b2"), "reminder");
        assert_eq!(custom_type("b3"), "my-extension");
        assert_eq!(custom_type("b4"), "thinking_level_change");
        assert_eq!(custom_type("b5"), "bookmark_v9");
        assert!(entry(&conversation, "b1").is_message() && entry(&conversation, "b2").is_message());
        assert_eq!(
            entry(&conversation, "a2").custom_payload().unwrap().data["modelId"],
            "claude-sonnet-4-5"
        );
    }

    #[test]
    fn writes_a_read_file_back_unchanged() {
        let conversation = read(&source(SESSION.as_bytes())).unwrap();
        let written = write(&conversation);
        assert_eq!(json_lines(&written), json_lines(SESSION.as_bytes()));
        let again = read(&source(&written)).unwrap();
        assert_eq!(again, conversation);
    }

    #[test]
    fn writes_the_leaf_last_and_the_title_as_a_session_info() {
        let mut conversation = read(&source(SESSION.as_bytes())).unwrap();
        conversation.leaf = Some("a5".into());
        conversation.meta.title = "Renamed".into();
        let lines = json_lines(&write(&conversation));
        let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap_or("")).collect();
        assert_eq!(ids.last(), Some(&"a5"));
        let info = &lines[lines.len() - 2];
        assert_eq!(
            (info["type"].as_str(), info["name"].as_str()),
            (Some("session_info"), Some("Renamed"))
        );
        assert_eq!(info["parentId"], "a5");
        // a5's descendants come before it, every other entry after its parent.
        for (at, line) in lines.iter().enumerate().skip(1) {
            if let Some(parent) = line["parentId"].as_str() {
                let parent_at = ids.iter().position(|id| *id == parent).unwrap();
                assert!(parent_at < at || parent == "a5", "{line}");
            }
        }
        let again = read(&source(&write(&conversation))).unwrap();
        assert_eq!(again.leaf.as_deref(), Some("a5"));
        assert_eq!(again.meta.title, "Renamed");
        assert_eq!(again, kept(&conversation));
    }

    /// A file where pi went back to an earlier branch and went on there (lines of two branches
    /// interleave), with an entry whose parent is not in the file (pi makes it a root) and a
    /// version 2 header, comes back line for line.
    #[test]
    fn interleaved_branches_and_an_orphan_come_back_in_file_order() {
        let file = r#"{"type":"session","version":2,"id":"s2","timestamp":"2024-12-03T14:00:00Z","cwd":"/w","extra":1}
{"type":"message","id":"x1","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}
{"type":"message","id":"x2","parentId":"x1","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"hookMessage","customType":"h","content":"two","display":true,"timestamp":2}}
{"type":"custom","id":"y1","parentId":"x1","timestamp":"2024-12-03T14:00:03.000Z","customType":"compaction","data":{"summary":"s","first_kept_entry_id":"x1"}}
{"type":"custom","id":"z1","parentId":"gone","timestamp":"2024-12-03T14:00:04.000Z","customType":"t"}
{"type":"message","id":"x3","parentId":"x2","timestamp":"2024-12-03T14:00:05.000Z","message":{"role":"user","content":[],"timestamp":5}}
"#;
        let conversation = read(&source(file.as_bytes())).unwrap();
        assert_eq!(conversation.leaf.as_deref(), Some("x3"));
        assert_eq!(entry(&conversation, "z1").parent_id(), None);
        assert_eq!(json_lines(&write(&conversation)), json_lines(file.as_bytes()));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// What this module writes reads back as what `kept` says survives.
        #[test]
        fn read_of_write_is_kept(conversation in super::super::corpus::conversation(12)) {
            let bytes = write(&conversation);
            prop_assert!(looks_like(&bytes));
            let again = read(&Source { name: "x.jsonl", bytes: &bytes, modified: 0 });
            prop_assert_eq!(again, Ok(kept(&conversation)));
        }

        /// Writing what was read gives the same lines.
        #[test]
        fn write_of_read_is_the_file(conversation in super::super::corpus::conversation(12)) {
            let bytes = write(&conversation);
            let again = read(&source(&bytes)).unwrap();
            prop_assert_eq!(json_lines(&write(&again)), json_lines(&bytes));
        }
    }

    #[test]
    fn a_truncated_last_line_is_an_error_naming_it() {
        let file =
            format!("{}\n{}", SESSION.lines().next().unwrap(), r#"{"type":"message","id":"a1""#);
        let error = read(&source(file.as_bytes())).unwrap_err();
        assert_eq!(error.line, Some(2));
        assert!(error.message.contains("truncated"), "{error}");
        let mut cut = String::from(SESSION);
        cut.truncate(SESSION.len() - 20);
        let error = read(&source(cut.as_bytes())).unwrap_err();
        assert_eq!(error.line, Some(16), "{error}");
    }

    #[test]
    fn a_broken_middle_line_is_skipped() {
        let mut lines: Vec<&str> = SESSION.lines().collect();
        lines.insert(3, "{not json");
        let file = lines.join("\n");
        let conversation = read(&source(file.as_bytes())).unwrap();
        assert_eq!(conversation.skipped.len(), 1);
        assert_eq!(conversation.skipped[0].line, 4);
        assert_eq!(conversation.entries.len(), 15);
    }

    #[test]
    fn other_files_are_errors() {
        let claude = r#"{"parentUuid":null,"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","sessionId":"s1","timestamp":"2024-12-03T14:00:01.000Z"}"#;
        let error = read(&source(claude.as_bytes())).unwrap_err();
        assert_eq!(error.line, Some(1));
        assert!(error.message.contains("not a pi session"), "{error}");
        assert!(!looks_like(claude.as_bytes()));
        for empty in ["", "\n \n"] {
            let error = read(&source(empty.as_bytes())).unwrap_err();
            assert_eq!(error.line, None);
            assert!(error.message.contains("empty"), "{error}");
        }
        let v1 = r#"{"type":"session","id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/"}"#;
        let error = read(&source(v1.as_bytes())).unwrap_err();
        assert_eq!(error.line, Some(1));
        assert!(error.message.contains("version 1"), "{error}");
        assert!(looks_like(SESSION.as_bytes()) && looks_like(v1.as_bytes()));
    }

    #[test]
    fn what_pi_cannot_hold_is_described_or_dropped() {
        let user = AgentMessage::User {
            content: vec![
                ContentBlock::File {
                    attachment_id: "a_1".into(),
                    name: "spec.pdf".into(),
                    mime: "application/pdf".into(),
                    size: 10,
                },
                ContentBlock::FunctionResult {
                    function_call_id: "call_9".into(),
                    content: vec![ContentBlock::Text { text: "done".into() }],
                    is_error: None,
                },
            ],
            timestamp: 5,
        };
        let entries = vec![SessionEntry::Message {
            id: "m1".into(),
            parent_id: None,
            timestamp: 5,
            revision: 3,
            origin: Some(json!({ "turn_id": "t" }).as_object().cloned().unwrap()),
            message: user,
        }];
        let conversation = Conversation::new("s".into(), entries, None, 0).checked().unwrap();
        let again = read(&source(&write(&conversation))).unwrap();
        assert_eq!(again, kept(&conversation));
        let content = again.entries[0].message().unwrap().content();
        assert_eq!(
            content[0],
            ContentBlock::Text {
                text: "[file spec.pdf (application/pdf, 10 bytes), attachment a_1]".into()
            }
        );
        assert_eq!(content[1], ContentBlock::Text { text: "[result of call call_9]\ndone".into() });
        assert_eq!((again.entries[0].revision(), again.entries[0].origin()), (0, None));
    }
}
