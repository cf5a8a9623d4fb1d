//! Writing the active branch as OpenAI items: an entry read from OpenAI as its stashed item with
//! our fields put back, any other as the fresh items its message splits into.

use alloc::vec;
use alloc::vec::Vec;
use serde_json::{json, Value};

use super::parts::{
    arguments_of, arguments_string, blocks_of_content, input_blocks, input_part, output_of,
    output_text_part,
};
use super::{assistant, KNOWN_TYPES};
use crate::formats::{stashed, Conversation, Format};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason};

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
pub(super) fn custom_item(custom_type: &str, data: &Value) -> Option<Value> {
    let kind = custom_type.strip_prefix("openai.")?;
    if KNOWN_TYPES.contains(&kind) {
        return None;
    }
    (data.get("type").and_then(Value::as_str) == Some(kind)).then(|| data.clone())
}

/// Whether `message` is still what an item of the stashed type holds.
pub(super) fn fits_stash(message: &AgentMessage, extra: &Object) -> bool {
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
pub(super) fn kind_of(message: &AgentMessage) -> &'static str {
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
pub(super) fn content_of(message: &AgentMessage) -> Value {
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

pub(super) fn summary_of(blocks: &[ContentBlock]) -> Value {
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
pub(super) fn fresh_pieces(message: &AgentMessage) -> Vec<AgentMessage> {
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
