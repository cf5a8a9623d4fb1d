//! Reading a `UIMessage[]` into a chain of entries: one per message, and a function result
//! after an assistant message for each finished tool part.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{json, Value};

use super::diff::diff;
use super::parts::{block_of, part_of, Outcome};
use super::write::message_fields;
use super::{ID_PREFIX, WHOLE_PART};
use crate::formats::items::{fresh_id, json_items, unique_id};
use crate::formats::message::bare_assistant;
use crate::formats::time::from_rfc3339;
use crate::formats::{stash, Conversation, Format, FormatError, Source};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason};

/// Reads a `UIMessage[]` (or one UIMessage per JSONL line) into a chain of entries.
pub fn read(source: &Source<'_>) -> Result<Conversation, FormatError> {
    let mut chain = Chain::new(source.modified);
    for (line, message) in json_items(source)? {
        read_message(line, &message, &mut chain)?;
    }
    Conversation::new(source.stem().to_string(), chain.entries, None, source.modified).checked()
}

/// The entries read so far and the ids they took.
pub(super) struct Chain {
    pub(super) entries: Vec<SessionEntry>,
    pub(super) ids: BTreeSet<String>,
    pub(super) base: i64,
}

impl Chain {
    pub(super) fn new(base: i64) -> Self {
        Chain { entries: Vec::new(), ids: BTreeSet::new(), base }
    }

    /// Appends `message` (time: `own_time`, else the base plus its place in the chain).
    pub(super) fn push(
        &mut self,
        hint: Option<&str>,
        mut message: AgentMessage,
        own_time: Option<i64>,
        origin: Option<Object>,
    ) {
        let index = self.entries.len();
        let timestamp = own_time.unwrap_or(self.base + index as i64);
        set_time(&mut message, timestamp);
        let id = unique_id(ID_PREFIX, hint, index, &mut self.ids);
        let parent_id = self.entries.last().map(|e| e.id().to_string());
        self.entries.push(SessionEntry::Message {
            id,
            parent_id,
            timestamp,
            revision: 0,
            origin,
            message,
        });
    }
}

fn set_time(message: &mut AgentMessage, at: i64) {
    match message {
        AgentMessage::User { timestamp, .. }
        | AgentMessage::Assistant { timestamp, .. }
        | AgentMessage::FunctionResult { timestamp, .. }
        | AgentMessage::Custom { timestamp, .. } => *timestamp = at,
    }
}

/// A UIMessage's own time: its `createdAt` (older SDK versions) when that is an RFC 3339 time.
pub(super) fn own_time(fields: &Object) -> Option<i64> {
    fields.get("createdAt").and_then(Value::as_str).and_then(from_rfc3339)
}

fn read_message(line: usize, message: &Object, chain: &mut Chain) -> Result<(), FormatError> {
    let role = message
        .get("role")
        .and_then(Value::as_str)
        .ok_or_else(|| FormatError::at(line, "a UIMessage without role"))?;
    let parts = message
        .get("parts")
        .and_then(Value::as_array)
        .ok_or_else(|| FormatError::at(line, "a UIMessage without a parts array"))?;
    if !matches!(role, "user" | "assistant" | "system") {
        return Err(FormatError::at(line, format!("a UIMessage of role {role:?}")));
    }
    let mut blocks = Vec::new();
    let mut outcomes = Vec::new();
    let mut part_extras = Vec::new();
    for part in parts {
        let part =
            part.as_object().ok_or_else(|| FormatError::at(line, "a part is not an object"))?;
        match block_of(role, part) {
            Some((block, outcome)) => {
                let generated = part_of(&block, outcome.as_ref()).unwrap_or_default();
                part_extras.push(Value::Object(diff(part, &generated)));
                if let (ContentBlock::FunctionCall { id, function_id, .. }, Some(outcome)) =
                    (&block, outcome)
                {
                    outcomes.push((id.clone(), function_id.clone(), outcome));
                }
                blocks.push(block);
            }
            None => part_extras.push(json!({ WHOLE_PART: part })),
        }
    }
    let hint = message.get("id").and_then(Value::as_str);
    let time = own_time(message);
    let first = first_message(role, blocks);
    let index = chain.entries.len();
    let written_id = fresh_id(ID_PREFIX, hint, index, &chain.ids);
    let generated = message_fields(&written_id, role, Vec::new());
    let mut extra = diff(message, &generated);
    extra.remove("parts");
    if part_extras.iter().any(|p| p.as_object().is_some_and(|o| !o.is_empty())) {
        extra.insert("parts".into(), Value::Array(part_extras));
    }
    chain.push(hint, first, time, stash(Format::UiMessage, Value::Object(extra)));
    for (call_id, name, outcome) in outcomes {
        let origin = outcome.json.then(|| json!({ "json": true }));
        let result = result_message(call_id, name, &outcome);
        chain.push(None, result, time, origin.and_then(|o| stash(Format::UiMessage, o)));
    }
    Ok(())
}

/// The entry a UIMessage's blocks make: a user message, a `system` custom message, or an
/// assistant message.
pub(super) fn first_message(role: &str, content: Vec<ContentBlock>) -> AgentMessage {
    match role {
        "user" => AgentMessage::User { content, timestamp: 0 },
        "system" => AgentMessage::Custom {
            custom_type: "system".into(),
            content,
            display: None,
            details: None,
            timestamp: 0,
        },
        _ => assistant(content),
    }
}

pub(super) fn assistant(content: Vec<ContentBlock>) -> AgentMessage {
    let calls = content.iter().any(|b| matches!(b, ContentBlock::FunctionCall { .. }));
    let stop_reason = if calls { StopReason::FunctionCall } else { StopReason::End };
    bare_assistant(content, stop_reason, "", 0)
}

pub(super) fn result_message(call_id: String, name: String, outcome: &Outcome) -> AgentMessage {
    AgentMessage::FunctionResult {
        function_call_id: call_id,
        function_id: name,
        content: vec![ContentBlock::Text { text: outcome.text.clone() }],
        details: Value::Null,
        is_error: outcome.is_error,
        timestamp: 0,
    }
}
