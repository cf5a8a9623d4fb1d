//! Reading OpenAI items into a chain of entries, one per item, each stashing what its item has
//! beyond our fields.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::Value;

use super::parts::{arguments_of, arguments_string, blocks_of_content, output_of};
use super::write::{content_of, kind_of, summary_of};
use super::{assistant, custom_type_of, ID_PREFIX, KNOWN_TYPES};
use crate::formats::items::{json_items, unique_id};
use crate::formats::{rest, stash, Conversation, Format, FormatError, Source};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason};

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

pub(super) fn item_type(item: &Object) -> Option<&str> {
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
