//! OpenAI Responses / Conversations items (a JSON array or JSONL, one branch) ↔ this store's
//! entries: one entry per item; what an item has beyond our fields stays in the entry's origin
//! under `"openai"` (`architecture/formats/openai.md`).

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{json, Value};

use super::data_url::{data_url, parse_data_url};
use super::items::{first_object, json_items, unique_id};
use super::message::bare_assistant;
use super::{rest, stash, stashed, Conversation, Format, FormatError, Source};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason};

/// The item types this module maps to messages; any other type becomes a custom entry.
const KNOWN_TYPES: [&str; 4] = ["message", "function_call", "function_call_output", "reasoning"];

/// The prefix of the id of an entry whose item has none (`openai_<index>`).
const ID_PREFIX: &str = "openai";

/// The custom type of an entry holding an item of a type we do not map.
fn custom_type_of(item_type: &str) -> String {
    format!("openai.{item_type}")
}

// ---------------------------------------------------------------------------------------------
// looks_like

/// Whether `bytes` are OpenAI items: the first object is a message / function_call /
/// function_call_output / reasoning item (and no UIMessage, which has `parts`), or a typeless
/// `role` + `content` message whose parts are `input_*` / `output_text`.
pub fn looks_like(bytes: &[u8]) -> bool {
    let Some(first) = first_object(bytes) else { return false };
    if first.contains_key("parts") {
        return false;
    }
    match first.get("type").and_then(Value::as_str) {
        Some("message") => first.contains_key("role"),
        Some(kind) => KNOWN_TYPES.contains(&kind),
        None => first.contains_key("role") && has_openai_parts(first.get("content")),
    }
}

fn has_openai_parts(content: Option<&Value>) -> bool {
    let Some(Value::Array(parts)) = content else { return false };
    parts.iter().any(|part| {
        matches!(
            part.get("type").and_then(Value::as_str),
            Some("input_text" | "output_text" | "input_image" | "refusal")
        )
    })
}

// ---------------------------------------------------------------------------------------------
// Content parts ↔ blocks

/// The block of one content part (`None`: a part no block holds, kept only in the stash).
fn block_of_part(part: &Value) -> Option<ContentBlock> {
    let text = |key: &str| part.get(key).and_then(Value::as_str).map(str::to_string);
    match part.get("type").and_then(Value::as_str)? {
        "input_text" | "output_text" => Some(ContentBlock::Text { text: text("text")? }),
        "refusal" => Some(ContentBlock::Text { text: text("refusal")? }),
        "input_image" => {
            let (mime, data) = parse_data_url(&text("image_url")?)?;
            Some(ContentBlock::Image { mime, data, attachment_id: None })
        }
        _ => None,
    }
}

/// The blocks of a message's `content` or an output's `output` (a string or a part list).
fn blocks_of_content(content: &Value) -> Vec<ContentBlock> {
    match content {
        Value::String(text) => vec![ContentBlock::Text { text: text.clone() }],
        Value::Array(parts) => parts.iter().filter_map(block_of_part).collect(),
        _ => Vec::new(),
    }
}

/// The part of a block sent as input (`None`: a block this format has no part for).
fn input_part(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text { text } => Some(json!({ "type": "input_text", "text": text })),
        ContentBlock::Image { mime, data, .. } => Some(json!({
            "type": "input_image", "image_url": data_url(mime, data), "detail": "auto"
        })),
        _ => None,
    }
}

fn output_text_part(text: &str) -> Value {
    json!({ "type": "output_text", "text": text, "annotations": [] })
}

/// The text and image blocks of `content` (image attachment ids dropped): what input parts hold.
fn input_blocks(content: &[ContentBlock]) -> Vec<ContentBlock> {
    content.iter().filter_map(|b| input_part(b).and_then(|p| block_of_part(&p))).collect()
}

/// A function result's `output`: the text of one text block, else a part list.
fn output_of(content: &[ContentBlock]) -> Value {
    match input_blocks(content).as_slice() {
        [ContentBlock::Text { text }] => Value::String(text.clone()),
        blocks => Value::Array(blocks.iter().filter_map(input_part).collect()),
    }
}

/// A call's `arguments` string read as JSON (a string that is not JSON is kept as a string).
fn arguments_of(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

fn arguments_string(arguments: &Value) -> String {
    serde_json::to_string(arguments).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// read

/// Reads OpenAI items (a JSON array or JSONL) into a chain of entries, one per item.
pub fn read(source: &Source<'_>) -> Result<Conversation, FormatError> {
    let items = json_items(source)?;
    check_has_known_item(&items)?;
    let mut reader = Reader::default();
    let mut entries: Vec<SessionEntry> = Vec::new();
    for (index, (line, item)) in items.into_iter().enumerate() {
        let timestamp = source.modified + index as i64;
        let hint = item.get("id").and_then(Value::as_str).map(str::to_string);
        let id = unique_id(ID_PREFIX, hint.as_deref(), index, &mut reader.ids);
        let parent_id = entries.last().map(|e| e.id().to_string());
        let entry = match reader.message_of(line, &item, timestamp)? {
            Some((message, extra)) => SessionEntry::Message {
                id,
                parent_id,
                timestamp,
                revision: 0,
                origin: stash(Format::Openai, Value::Object(extra)),
                message,
            },
            None => SessionEntry::Custom {
                id,
                parent_id,
                timestamp,
                revision: 0,
                origin: None,
                custom_type: custom_type_of(item_type(&item).unwrap_or_default()),
                data: Value::Object(item),
            },
        };
        entries.push(entry);
    }
    Conversation::new(source.stem().to_string(), entries, None, source.modified).checked()
}

/// A file whose items are all of types we do not know is not OpenAI's (a pi header, say).
fn check_has_known_item(items: &[(usize, Object)]) -> Result<(), FormatError> {
    if items.iter().any(|(_, item)| is_known(item)) {
        return Ok(());
    }
    match items.first() {
        None => Ok(()),
        Some((line, item)) => Err(FormatError::at(
            *line,
            format!(
                "no message, function_call, function_call_output or reasoning item; the first has type {:?}",
                item_type(item).unwrap_or_default()
            ),
        )),
    }
}

fn item_type(item: &Object) -> Option<&str> {
    item.get("type").and_then(Value::as_str)
}

fn is_known(item: &Object) -> bool {
    match item_type(item) {
        Some(kind) => KNOWN_TYPES.contains(&kind),
        None => item.contains_key("role"),
    }
}

/// What reading remembers across items: the ids taken and the calls made (call id → name).
#[derive(Default)]
struct Reader {
    ids: BTreeSet<String>,
    calls: BTreeMap<String, String>,
}

impl Reader {
    /// The message of a known item and what to stash of it; `None` for an item of another type.
    fn message_of(
        &mut self,
        line: usize,
        item: &Object,
        timestamp: i64,
    ) -> Result<Option<(AgentMessage, Object)>, FormatError> {
        let kind = item_type(item);
        let read = match kind {
            Some("message") | None if item.contains_key("role") => message_item(item, timestamp),
            Some("message") => Err("a message without role".into()),
            Some("function_call") => self.function_call_item(item, timestamp),
            Some("function_call_output") => self.function_output_item(item, timestamp),
            Some("reasoning") => reasoning_item(item, timestamp),
            Some(_) => return Ok(None),
            None => Err("an item with neither type nor role".into()),
        };
        let (message, mut extra) = read.map_err(|why| FormatError::at(line, why))?;
        if kind == Some(kind_of(&message)) {
            extra.remove("type");
        }
        Ok(Some((message, extra)))
    }

    fn function_call_item(
        &mut self,
        item: &Object,
        timestamp: i64,
    ) -> Result<(AgentMessage, Object), String> {
        let call_id = string_field(item, "call_id")?;
        let name = string_field(item, "name")?;
        let raw = string_field(item, "arguments")?;
        let arguments = arguments_of(&raw);
        let mut extra = stash_of(item, &["call_id", "name", "arguments"]);
        if arguments_string(&arguments) != raw {
            extra.insert("arguments".into(), Value::String(raw));
        }
        self.calls.insert(call_id.clone(), name.clone());
        let content =
            vec![ContentBlock::FunctionCall { id: call_id, function_id: name, arguments }];
        Ok((assistant(content, StopReason::FunctionCall, timestamp), extra))
    }

    fn function_output_item(
        &mut self,
        item: &Object,
        timestamp: i64,
    ) -> Result<(AgentMessage, Object), String> {
        let call_id = string_field(item, "call_id")?;
        let output = item.get("output").ok_or("a function_call_output without output")?;
        let content = blocks_of_content(output);
        let mut extra = stash_of(item, &["call_id", "output"]);
        keep_unless_regenerated(&mut extra, "output", output, &output_of(&content));
        let function_id = item
            .get("name")
            .and_then(Value::as_str)
            .or_else(|| self.calls.get(&call_id).map(String::as_str))
            .unwrap_or_default()
            .to_string();
        let message = AgentMessage::FunctionResult {
            function_call_id: call_id,
            function_id,
            content,
            details: Value::Null,
            is_error: false,
            timestamp,
        };
        Ok((message, extra))
    }
}

fn string_field(item: &Object, key: &str) -> Result<String, String> {
    item.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("no string {key:?}"))
}

/// The item's fields other than `known`, `type` included (a missing `type` as null; reading
/// drops it again when the message tells it).
fn stash_of(item: &Object, known: &[&str]) -> Object {
    let mut extra = match rest(item, known) {
        Value::Object(map) => map,
        _ => Object::new(),
    };
    extra.entry("type").or_insert(Value::Null);
    extra
}

/// Stashes `original` under `key` when what writing would give back differs from it.
fn keep_unless_regenerated(extra: &mut Object, key: &str, original: &Value, regenerated: &Value) {
    if original != regenerated {
        extra.insert(key.into(), original.clone());
    }
}

fn message_item(item: &Object, timestamp: i64) -> Result<(AgentMessage, Object), String> {
    let role = string_field(item, "role")?;
    let original = item.get("content").ok_or("a message without content")?;
    let content = blocks_of_content(original);
    let mut extra = stash_of(item, &["role", "content"]);
    let message = match role.as_str() {
        "user" => AgentMessage::User { content, timestamp },
        "assistant" => assistant(content, StopReason::End, timestamp),
        "system" | "developer" => AgentMessage::Custom {
            custom_type: role,
            content,
            display: None,
            details: None,
            timestamp,
        },
        other => return Err(format!("a message of role {other:?}")),
    };
    keep_unless_regenerated(&mut extra, "content", original, &content_of(&message));
    Ok((message, extra))
}

fn reasoning_item(item: &Object, timestamp: i64) -> Result<(AgentMessage, Object), String> {
    let original = item.get("summary").cloned().unwrap_or(Value::Array(Vec::new()));
    let summaries = original.as_array().map(Vec::as_slice).unwrap_or_default();
    let content: Vec<ContentBlock> = summaries
        .iter()
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .map(|text| ContentBlock::Thinking { text: text.to_string(), signature: None })
        .collect();
    let mut extra = stash_of(item, &["summary"]);
    keep_unless_regenerated(&mut extra, "summary", &original, &summary_of(&content));
    Ok((assistant(content, StopReason::End, timestamp), extra))
}

fn assistant(content: Vec<ContentBlock>, stop_reason: StopReason, timestamp: i64) -> AgentMessage {
    bare_assistant(content, stop_reason, "openai", timestamp)
}

// ---------------------------------------------------------------------------------------------
// write

/// Writes the active branch as a pretty JSON array of items.
pub fn write(conversation: &Conversation) -> Vec<u8> {
    let items: Vec<Value> =
        conversation.active_branch().into_iter().flat_map(items_of_entry).collect();
    let mut bytes = serde_json::to_vec_pretty(&items).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// The items of one entry: its stashed item with our fields put back when it was read from
/// OpenAI and still fits that item, else fresh items.
fn items_of_entry(entry: &SessionEntry) -> Vec<Value> {
    match entry {
        SessionEntry::Custom { custom_type, data, .. } => {
            custom_item(custom_type, data).into_iter().collect()
        }
        SessionEntry::Message { message, .. } => {
            match stashed(Format::Openai, entry).and_then(Value::as_object) {
                Some(extra) if fits_stash(message, extra) => vec![stashed_item(message, extra)],
                _ => fresh_pieces(message).iter().map(fresh_item).collect(),
            }
        }
    }
}

/// An `openai.<type>` custom entry is written back as its item; other custom entries (and
/// compaction records) are dropped.
fn custom_item(custom_type: &str, data: &Value) -> Option<Value> {
    let kind = custom_type.strip_prefix("openai.")?;
    if KNOWN_TYPES.contains(&kind) {
        return None;
    }
    (data.get("type").and_then(Value::as_str) == Some(kind)).then(|| data.clone())
}

/// Whether `message` is still what an item of the stashed type holds.
fn fits_stash(message: &AgentMessage, extra: &Object) -> bool {
    let only = |content: &[ContentBlock], f: fn(&ContentBlock) -> bool| content.iter().all(f);
    match (stashed_kind(message, extra), message) {
        ("message", AgentMessage::User { .. }) => true,
        ("message", AgentMessage::Custom { custom_type, .. }) => {
            matches!(custom_type.as_str(), "system" | "developer")
        }
        ("message", AgentMessage::Assistant { content, .. }) => {
            only(content, |b| matches!(b, ContentBlock::Text { .. }))
        }
        ("reasoning", AgentMessage::Assistant { content, .. }) => {
            only(content, |b| matches!(b, ContentBlock::Thinking { .. }))
        }
        ("function_call", AgentMessage::Assistant { content, .. }) => {
            matches!(content.as_slice(), [ContentBlock::FunctionCall { .. }])
        }
        ("function_call_output", AgentMessage::FunctionResult { .. }) => true,
        _ => false,
    }
}

/// The type of the item an entry read from OpenAI came from: the stashed one, a typeless
/// message (stashed null), or else the one its message tells.
fn stashed_kind<'a>(message: &AgentMessage, extra: &'a Object) -> &'a str {
    match extra.get("type") {
        Some(Value::String(kind)) => kind,
        Some(_) => "message",
        None => kind_of(message),
    }
}

/// The stashed item with `message`'s fields; a stashed original (content, output, summary,
/// arguments) is used when it still reads as `message` holds it.
fn stashed_item(message: &AgentMessage, extra: &Object) -> Value {
    let kind = stashed_kind(message, extra);
    let mut item = extra.clone();
    match extra.get("type") {
        Some(Value::Null) => drop(item.remove("type")),
        Some(_) => {}
        None => drop(item.insert("type".into(), Value::String(kind.into()))),
    }
    for (key, value) in fresh_fields(message, kind) {
        let original = extra.get(&key);
        let keep = original.is_some_and(|o| reads_same(&key, o, &value));
        if !keep {
            item.insert(key, value);
        }
    }
    Value::Object(item)
}

/// Whether the stashed `original` of field `key` reads as the same as `fresh`.
fn reads_same(key: &str, original: &Value, fresh: &Value) -> bool {
    match key {
        "content" | "output" => blocks_of_content(original) == blocks_of_content(fresh),
        "arguments" => match (original.as_str(), fresh.as_str()) {
            (Some(a), Some(b)) => arguments_of(a) == arguments_of(b),
            _ => false,
        },
        "summary" => original == fresh,
        _ => true,
    }
}

/// The item type a message (one of [`fresh_pieces`]) is written as.
fn kind_of(message: &AgentMessage) -> &'static str {
    match message {
        AgentMessage::FunctionResult { .. } => "function_call_output",
        AgentMessage::Assistant { content, .. } => match content.as_slice() {
            [ContentBlock::FunctionCall { .. }] => "function_call",
            blocks if is_reasoning(blocks) => "reasoning",
            _ => "message",
        },
        _ => "message",
    }
}

fn is_reasoning(blocks: &[ContentBlock]) -> bool {
    !blocks.is_empty() && blocks.iter().all(|b| matches!(b, ContentBlock::Thinking { .. }))
}

/// The fields other than `type` of the `kind` item that `message` gives.
fn fresh_fields(message: &AgentMessage, kind: &str) -> Object {
    let mut fields = Object::new();
    let mut put = |key: &str, value: Value| {
        fields.insert(key.into(), value);
    };
    match (kind, message) {
        (
            "function_call_output",
            AgentMessage::FunctionResult { function_call_id, content, .. },
        ) => {
            put("call_id", Value::String(function_call_id.clone()));
            put("output", output_of(content));
        }
        ("function_call", AgentMessage::Assistant { content, .. }) => {
            if let [ContentBlock::FunctionCall { id, function_id, arguments }] = content.as_slice()
            {
                put("call_id", Value::String(id.clone()));
                put("name", Value::String(function_id.clone()));
                put("arguments", Value::String(arguments_string(arguments)));
            }
        }
        ("reasoning", AgentMessage::Assistant { content, .. }) => {
            put("summary", summary_of(content))
        }
        _ => {
            put("role", Value::String(role_of(message).into()));
            put("content", content_of(message));
        }
    }
    fields
}

/// The role of the message item `message` is written as (a custom message other than
/// system / developer is written as the user's).
fn role_of(message: &AgentMessage) -> &str {
    match message {
        AgentMessage::Assistant { .. } => "assistant",
        AgentMessage::Custom { custom_type, .. }
            if matches!(custom_type.as_str(), "system" | "developer") =>
        {
            custom_type
        }
        _ => "user",
    }
}

/// A message item's `content` part list.
fn content_of(message: &AgentMessage) -> Value {
    let parts = match message {
        AgentMessage::Assistant { content, .. } => content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(output_text_part(text)),
                _ => None,
            })
            .collect(),
        other => other.content().iter().filter_map(input_part).collect(),
    };
    Value::Array(parts)
}

fn summary_of(blocks: &[ContentBlock]) -> Value {
    let parts = blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Thinking { text, .. } => {
                Some(json!({ "type": "summary_text", "text": text }))
            }
            _ => None,
        })
        .collect();
    Value::Array(parts)
}

/// The item a message (one of [`fresh_pieces`]) is written as.
fn fresh_item(message: &AgentMessage) -> Value {
    let kind = kind_of(message);
    let mut item = fresh_fields(message, kind);
    item.insert("type".into(), Value::String(kind.into()));
    Value::Object(item)
}

/// `message` as the messages its fresh items read back as: an assistant message splits into
/// one per run of thinking blocks (a reasoning item), run of text blocks (a message item) and
/// function call (a function_call item); other blocks are dropped; the rest is normalised the
/// same way (see the module doc of `architecture/formats/openai.md`).
fn fresh_pieces(message: &AgentMessage) -> Vec<AgentMessage> {
    let timestamp = 0;
    match message {
        AgentMessage::User { content, .. } => {
            vec![AgentMessage::User { content: input_blocks(content), timestamp }]
        }
        AgentMessage::Custom { custom_type, content, .. }
            if matches!(custom_type.as_str(), "system" | "developer") =>
        {
            vec![AgentMessage::Custom {
                custom_type: custom_type.clone(),
                content: input_blocks(content),
                display: None,
                details: None,
                timestamp,
            }]
        }
        AgentMessage::Custom { content, .. } => {
            vec![AgentMessage::User { content: input_blocks(content), timestamp }]
        }
        AgentMessage::FunctionResult { function_call_id, function_id, content, .. } => {
            vec![AgentMessage::FunctionResult {
                function_call_id: function_call_id.clone(),
                function_id: function_id.clone(),
                content: input_blocks(content),
                details: Value::Null,
                is_error: false,
                timestamp,
            }]
        }
        AgentMessage::Assistant { content, .. } => assistant_pieces(content),
    }
}

fn assistant_pieces(content: &[ContentBlock]) -> Vec<AgentMessage> {
    let mut pieces: Vec<(Vec<ContentBlock>, StopReason)> = Vec::new();
    for block in content {
        let block = match block {
            ContentBlock::Thinking { text, .. } => {
                ContentBlock::Thinking { text: text.clone(), signature: None }
            }
            ContentBlock::Text { .. } | ContentBlock::FunctionCall { .. } => block.clone(),
            _ => continue,
        };
        let last = pieces
            .last_mut()
            .filter(|(blocks, _)| blocks.last().is_some_and(|last| one_item(last, &block)));
        match last {
            Some((blocks, _)) => blocks.push(block),
            None => {
                let stop = match block {
                    ContentBlock::FunctionCall { .. } => StopReason::FunctionCall,
                    _ => StopReason::End,
                };
                pieces.push((vec![block], stop));
            }
        }
    }
    if pieces.is_empty() {
        pieces.push((Vec::new(), StopReason::End));
    }
    pieces.into_iter().map(|(blocks, stop)| assistant(blocks, stop, 0)).collect()
}

/// Whether two blocks in a row go into one item (thinking into one reasoning item, text into
/// one message item).
fn one_item(last: &ContentBlock, next: &ContentBlock) -> bool {
    matches!(
        (last, next),
        (ContentBlock::Thinking { .. }, ContentBlock::Thinking { .. })
            | (ContentBlock::Text { .. }, ContentBlock::Text { .. })
    )
}

// ---------------------------------------------------------------------------------------------
// kept

/// What of `conversation` survives writing it as OpenAI items and reading them back (with
/// `Source::modified` = its `created_at` and a name whose stem is its session id): the active
/// branch, one entry per item, re-chained, with the losses `architecture/formats/openai.md`
/// lists.
pub fn kept(conversation: &Conversation) -> Conversation {
    let base = conversation.meta.created_at;
    let mut pieces: Vec<Piece> = Vec::new();
    for entry in conversation.active_branch() {
        pieces.extend(pieces_of_entry(entry));
    }
    let mut ids = BTreeSet::new();
    let mut calls: BTreeMap<String, String> = BTreeMap::new();
    let mut entries: Vec<SessionEntry> = Vec::new();
    for (index, piece) in pieces.into_iter().enumerate() {
        let timestamp = base + index as i64;
        let id = unique_id(ID_PREFIX, piece.id_hint.as_deref(), index, &mut ids);
        let parent_id = entries.last().map(|e| e.id().to_string());
        let entry = match piece.body {
            PieceBody::Custom(custom_type, data) => SessionEntry::Custom {
                id,
                parent_id,
                timestamp,
                revision: 0,
                origin: None,
                custom_type,
                data,
            },
            PieceBody::Message(message, origin) => {
                let mut message = *message;
                settle(&mut message, timestamp, &mut calls, origin.as_ref());
                SessionEntry::Message { id, parent_id, timestamp, revision: 0, origin, message }
            }
        };
        entries.push(entry);
    }
    let mut kept = Conversation::new(conversation.meta.session_id.clone(), entries, None, base);
    kept.meta.message_count = kept.entries.iter().filter(|e| e.is_message()).count() as u64;
    kept
}

/// One item's worth of an entry, before its id and time are drawn.
struct Piece {
    id_hint: Option<String>,
    body: PieceBody,
}

enum PieceBody {
    Message(Box<AgentMessage>, Option<Object>),
    Custom(String, Value),
}

fn pieces_of_entry(entry: &SessionEntry) -> Vec<Piece> {
    match entry {
        SessionEntry::Custom { custom_type, data, .. } => custom_item(custom_type, data)
            .map(|item| Piece {
                id_hint: item.get("id").and_then(Value::as_str).map(str::to_string),
                body: PieceBody::Custom(custom_type.clone(), item),
            })
            .into_iter()
            .collect(),
        SessionEntry::Message { message, origin, .. } => {
            match stashed(Format::Openai, entry).and_then(Value::as_object) {
                Some(extra) if fits_stash(message, extra) => fresh_pieces(message)
                    .into_iter()
                    .map(|m| Piece {
                        id_hint: extra.get("id").and_then(Value::as_str).map(str::to_string),
                        body: PieceBody::Message(Box::new(m), origin.clone()),
                    })
                    .collect(),
                _ => fresh_pieces(message)
                    .into_iter()
                    .map(|m| Piece { id_hint: None, body: PieceBody::Message(Box::new(m), None) })
                    .collect(),
            }
        }
    }
}

/// Sets what reading gives every message: its time, a result's function id from its call
/// (or the stashed `name`), no error flag, no details.
fn settle(
    message: &mut AgentMessage,
    at: i64,
    calls: &mut BTreeMap<String, String>,
    origin: Option<&Object>,
) {
    match message {
        AgentMessage::User { timestamp, .. }
        | AgentMessage::Custom { timestamp, .. }
        | AgentMessage::Assistant { timestamp, .. } => *timestamp = at,
        AgentMessage::FunctionResult {
            function_call_id,
            function_id,
            details,
            is_error,
            timestamp,
            ..
        } => {
            *timestamp = at;
            *details = Value::Null;
            *is_error = false;
            let named = origin
                .and_then(|o| o.get(Format::Openai.origin_key()))
                .and_then(|extra| extra.get("name"))
                .and_then(Value::as_str);
            *function_id = named
                .or_else(|| calls.get(function_call_id.as_str()).map(String::as_str))
                .unwrap_or_default()
                .to_string();
        }
    }
    if let AgentMessage::Assistant { content, .. } = message {
        for block in content.iter() {
            if let ContentBlock::FunctionCall { id, function_id, .. } = block {
                calls.insert(id.clone(), function_id.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A developer prompt, a question, a reasoning item, an answer that calls a function (its
    /// arguments spaced as the model wrote them), the output, and the final answer.
    const TURN: &str = r#"[
  {"type": "message", "role": "developer", "content": "You are a terse assistant."},
  {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is in notes.txt?"}]},
  {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Read the file first."}], "encrypted_content": "gAAAAB"},
  {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
  {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file", "arguments": "{\"path\": \"notes.txt\"}", "status": "completed"},
  {"type": "function_call_output", "call_id": "call_1", "output": "buy milk"},
  {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "It says: buy milk.", "annotations": []}]}
]"#;

    const AT: i64 = 1_733_234_400_000;

    fn source(bytes: &[u8]) -> Source<'_> {
        Source { name: "chats/s_turn.json", bytes, modified: AT }
    }

    fn json_of(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn reads_a_turn_as_a_chain_of_one_entry_per_item() {
        let conversation = read(&source(TURN.as_bytes())).unwrap();
        assert_eq!(conversation.meta.session_id, "s_turn");
        let ids: Vec<&str> = conversation.entries.iter().map(SessionEntry::id).collect();
        assert_eq!(ids, ["openai_0", "openai_1", "rs_1", "msg_1", "fc_1", "openai_5", "msg_2"]);
        for (i, entry) in conversation.entries.iter().enumerate() {
            assert_eq!(entry.timestamp(), AT + i as i64);
            assert_eq!(entry.parent_id(), i.checked_sub(1).map(|p| ids[p]));
        }
        assert_eq!(conversation.leaf.as_deref(), Some("msg_2"));
        let messages: Vec<&AgentMessage> =
            conversation.entries.iter().filter_map(SessionEntry::message).collect();
        assert!(
            matches!(messages[0], AgentMessage::Custom { custom_type, .. } if custom_type == "developer")
        );
        assert_eq!(
            messages[1].content(),
            [ContentBlock::Text { text: "What is in notes.txt?".into() }]
        );
        assert_eq!(
            messages[2].content(),
            [ContentBlock::Thinking { text: "Read the file first.".into(), signature: None }]
        );
        assert_eq!(
            messages[4].content(),
            [ContentBlock::FunctionCall {
                id: "call_1".into(),
                function_id: "read_file".into(),
                arguments: json!({ "path": "notes.txt" }),
            }]
        );
        assert!(matches!(
            messages[5],
            AgentMessage::FunctionResult { function_id, content, .. }
                if function_id == "read_file" && content == &[ContentBlock::Text { text: "buy milk".into() }]
        ));
        assert!(matches!(
            messages[6],
            AgentMessage::Assistant { stop_reason: StopReason::End, provider, .. } if provider == "openai"
        ));
    }

    #[test]
    fn writes_a_turn_back_unchanged() {
        let conversation = read(&source(TURN.as_bytes())).unwrap();
        assert_eq!(json_of(&write(&conversation)), json_of(TURN.as_bytes()));
    }

    #[test]
    fn kept_keeps_a_conversation_read_from_openai_whole() {
        let conversation = read(&source(TURN.as_bytes())).unwrap();
        let mut again = kept(&conversation);
        again.meta.session_id = conversation.meta.session_id.clone();
        assert_eq!(again, conversation);
    }

    #[test]
    fn reads_jsonl_and_keeps_unknown_items() {
        let jsonl = "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}\n\n{\"type\":\"web_search_call\",\"id\":\"ws_1\",\"status\":\"completed\"}\n";
        let conversation = read(&source(jsonl.as_bytes())).unwrap();
        assert!(matches!(
            &conversation.entries[1],
            SessionEntry::Custom { id, custom_type, .. } if id == "ws_1" && custom_type == "openai.web_search_call"
        ));
        let items: Vec<Value> =
            jsonl.lines().filter(|l| !l.is_empty()).map(|l| json_of(l.as_bytes())).collect();
        assert_eq!(json_of(&write(&conversation)), Value::Array(items));
    }

    #[test]
    fn bad_input_is_an_error_naming_the_line() {
        let torn = "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}\n{\"type\":\"message\",\"ro";
        assert_eq!(read(&source(torn.as_bytes())).unwrap_err().line, Some(2));
        let pi = r#"{"type":"session","version":3,"id":"u","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/"}"#;
        assert_eq!(read(&source(pi.as_bytes())).unwrap_err().line, Some(1));
        assert!(!looks_like(pi.as_bytes()));
        assert!(read(&source(b"")).is_err());
        assert!(read(&source(b"  \n")).is_err());
        let torn_array =
            "[{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"},\n {\"type\":";
        assert_eq!(read(&source(torn_array.as_bytes())).unwrap_err().line, Some(2));
        assert_eq!(read(&source(b"[1]")).unwrap_err().line, Some(1));
    }

    #[test]
    fn looks_like_openai_items_only() {
        assert!(looks_like(TURN.as_bytes()));
        assert!(looks_like(br#"{"role":"user","content":[{"type":"input_text","text":"hi"}]}"#));
        assert!(!looks_like(
            br#"[{"id":"m","role":"user","parts":[{"type":"text","text":"hi"}]}]"#
        ));
        assert!(!looks_like(b"not json"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn generated_conversations_keep_what_kept_says(c in super::super::corpus::conversation(12)) {
            let bytes = write(&c);
            let source = Source { name: "s_generated.json", bytes: &bytes, modified: c.meta.created_at };
            let again = read(&source).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(again, kept(&c));
        }
    }
}
