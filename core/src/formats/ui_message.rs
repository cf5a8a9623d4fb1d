//! The Vercel AI SDK's `UIMessage[]` (one branch) ↔ this store's entries: a user / system
//! message is one entry, an assistant message one assistant entry followed by a function result
//! entry per finished tool part; what a message or part has beyond our fields stays in the first
//! entry's origin under `"ui_message"` (`architecture/formats/ui-message.md`).

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{json, Value};

use super::data_url::{data_url, parse_data_url};
use super::items::{first_object, json_items, unique_id};
use super::message::{bare_assistant, texts};
use super::time::from_rfc3339;
use super::{stash, stashed, Conversation, Format, FormatError, Source};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, StopReason};

/// The prefix of the id of an entry whose UIMessage has none (`ui_message_<index>`).
const ID_PREFIX: &str = "ui_message";
/// The stash key of a part no block holds, kept whole in its place.
const WHOLE_PART: &str = "$part";
/// The stash key listing the fields writing would add that the original did not have.
const ABSENT: &str = "$absent";

// ---------------------------------------------------------------------------------------------
// Differences from what writing gives

/// The fields of `original` that `generated` does not give as they are, plus [`ABSENT`]: what
/// `generated` has that `original` had not.
fn diff(original: &Object, generated: &Object) -> Object {
    let mut extra: Object = original
        .iter()
        .filter(|(key, value)| generated.get(*key) != Some(*value))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let absent: Vec<Value> = generated
        .keys()
        .filter(|key| !original.contains_key(*key))
        .map(|key| Value::String(key.clone()))
        .collect();
    if !absent.is_empty() {
        extra.insert(ABSENT.into(), Value::Array(absent));
    }
    extra
}

/// `generated` with a [`diff`] put back: the original.
fn apply(mut generated: Object, extra: &Object) -> Object {
    for (key, value) in extra {
        if key == ABSENT {
            for absent in value.as_array().into_iter().flatten().filter_map(Value::as_str) {
                generated.remove(absent);
            }
        } else {
            generated.insert(key.clone(), value.clone());
        }
    }
    generated
}

fn object(value: Value) -> Object {
    match value {
        Value::Object(map) => map,
        _ => Object::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Parts ↔ blocks

/// A tool call's outcome, as a function result entry holds it.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    text: String,
    is_error: bool,
    /// The output was JSON other than a string (its text is that JSON).
    json: bool,
}

/// The part a block is written as (`None`: a block a UIMessage has no part for).
fn part_of(block: &ContentBlock, outcome: Option<&Outcome>) -> Option<Object> {
    let part = match block {
        ContentBlock::Text { text } => json!({ "type": "text", "text": text }),
        ContentBlock::Thinking { text, .. } => json!({ "type": "reasoning", "text": text }),
        ContentBlock::Image { mime, data, .. } if mime.starts_with("image/") => {
            json!({ "type": "file", "mediaType": mime, "url": data_url(mime, data) })
        }
        ContentBlock::FunctionCall { id, function_id, arguments } => {
            return Some(tool_part(id, function_id, arguments, outcome))
        }
        _ => return None,
    };
    Some(object(part))
}

fn tool_part(id: &str, name: &str, input: &Value, outcome: Option<&Outcome>) -> Object {
    let mut part = object(json!({
        "type": format!("tool-{name}"), "toolCallId": id, "input": input,
        "state": "input-available",
    }));
    match outcome {
        Some(Outcome { text, is_error: true, .. }) => {
            part.insert("state".into(), "output-error".into());
            part.insert("errorText".into(), Value::String(text.clone()));
        }
        Some(Outcome { text, json, .. }) => {
            part.insert("state".into(), "output-available".into());
            let output = match json {
                true => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
                false => Value::String(text.clone()),
            };
            part.insert("output".into(), output);
        }
        None => {}
    }
    part
}

/// The block (and, for a finished tool part, its outcome) of one part of a message of `role`;
/// `None` for a part no block holds.
fn block_of(role: &str, part: &Object) -> Option<(ContentBlock, Option<Outcome>)> {
    let kind = part.get("type").and_then(Value::as_str)?;
    let text = |key: &str| part.get(key).and_then(Value::as_str).map(str::to_string);
    let block = match kind {
        "text" => ContentBlock::Text { text: text("text")? },
        "file" => {
            let mime = text("mediaType").filter(|m| m.starts_with("image/"))?;
            let (_, data) = parse_data_url(&text("url")?)?;
            ContentBlock::Image { mime, data, attachment_id: None }
        }
        _ if role != "assistant" => return None,
        "reasoning" => ContentBlock::Thinking { text: text("text")?, signature: None },
        "dynamic-tool" => return tool_block(&text("toolName")?, part),
        _ => return tool_block(kind.strip_prefix("tool-")?, part),
    };
    Some((block, None))
}

fn tool_block(name: &str, part: &Object) -> Option<(ContentBlock, Option<Outcome>)> {
    let id = part.get("toolCallId").and_then(Value::as_str)?.to_string();
    let arguments = part.get("input").cloned().unwrap_or(Value::Null);
    let outcome = match part.get("state").and_then(Value::as_str) {
        Some("output-available") => {
            let output = part.get("output").cloned().unwrap_or(Value::Null);
            let (text, json) = match output {
                Value::String(text) => (text, false),
                other => (serde_json::to_string(&other).unwrap_or_default(), true),
            };
            Some(Outcome { text, is_error: false, json })
        }
        Some("output-error") => {
            let text = part.get("errorText").and_then(Value::as_str).unwrap_or_default();
            Some(Outcome { text: text.to_string(), is_error: true, json: false })
        }
        _ => None,
    };
    let block = ContentBlock::FunctionCall { id, function_id: name.to_string(), arguments };
    Some((block, outcome))
}

// ---------------------------------------------------------------------------------------------
// looks_like

/// Whether `bytes` are a `UIMessage[]`: the first element is an object with `role` and a `parts`
/// array.
pub fn looks_like(bytes: &[u8]) -> bool {
    let starts_array = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    starts_array
        && first_object(bytes).is_some_and(|first| {
            first.contains_key("role") && first.get("parts").is_some_and(Value::is_array)
        })
}

// ---------------------------------------------------------------------------------------------
// read

/// Reads a `UIMessage[]` (or one UIMessage per JSONL line) into a chain of entries.
pub fn read(source: &Source<'_>) -> Result<Conversation, FormatError> {
    let mut chain = Chain::new(source.modified);
    for (line, message) in json_items(source)? {
        read_message(line, &message, &mut chain)?;
    }
    Conversation::new(source.stem().to_string(), chain.entries, None, source.modified).checked()
}

/// The entries read so far and the ids they took.
struct Chain {
    entries: Vec<SessionEntry>,
    ids: BTreeSet<String>,
    base: i64,
}

impl Chain {
    fn new(base: i64) -> Self {
        Chain { entries: Vec::new(), ids: BTreeSet::new(), base }
    }

    /// Appends `message` (time: `own_time`, else the base plus its place in the chain).
    fn push(
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
fn own_time(fields: &Object) -> Option<i64> {
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
    let written_id = unique_id(ID_PREFIX, hint, index, &mut chain.ids.clone());
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
fn first_message(role: &str, content: Vec<ContentBlock>) -> AgentMessage {
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

fn assistant(content: Vec<ContentBlock>) -> AgentMessage {
    let calls = content.iter().any(|b| matches!(b, ContentBlock::FunctionCall { .. }));
    let stop_reason = if calls { StopReason::FunctionCall } else { StopReason::End };
    bare_assistant(content, stop_reason, "", 0)
}

fn result_message(call_id: String, name: String, outcome: &Outcome) -> AgentMessage {
    AgentMessage::FunctionResult {
        function_call_id: call_id,
        function_id: name,
        content: vec![ContentBlock::Text { text: outcome.text.clone() }],
        details: Value::Null,
        is_error: outcome.is_error,
        timestamp: 0,
    }
}

// ---------------------------------------------------------------------------------------------
// write

/// Writes the active branch as a pretty JSON `UIMessage[]`.
pub fn write(conversation: &Conversation) -> Vec<u8> {
    let branch = conversation.active_branch();
    let messages: Vec<Value> =
        (0..branch.len()).filter_map(|i| ui_message_at(&branch, i)).map(Value::Object).collect();
    let mut bytes = serde_json::to_vec_pretty(&messages).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// The UIMessage that `branch[i]` starts: a user, system or assistant message (with the
/// results that follow it); `None` for what starts none.
fn ui_message_at(branch: &[&SessionEntry], i: usize) -> Option<Object> {
    let entry = branch[i];
    let (role, blocks) = role_and_blocks(entry.message()?)?;
    let outcomes = match role {
        "assistant" => outcomes_after(&blocks, &branch[i + 1..]),
        _ => Vec::new(),
    };
    let parts: Vec<Object> =
        blocks.iter().filter_map(|block| part_of(block, outcome_of(block, &outcomes))).collect();
    let extra = stashed(Format::UiMessage, entry).and_then(Value::as_object);
    let parts = with_stashed_parts(parts, extra.and_then(|e| e.get("parts")));
    let generated = message_fields(entry.id(), role, parts);
    Some(match extra {
        Some(extra) => {
            let mut extra = extra.clone();
            extra.remove("parts");
            apply(generated, &extra)
        }
        None => generated,
    })
}

fn message_fields(id: &str, role: &str, parts: Vec<Object>) -> Object {
    let parts: Vec<Value> = parts.into_iter().map(Value::Object).collect();
    object(json!({ "id": id, "role": role, "parts": parts }))
}

/// The role and the blocks a message is written with (`None`: a message no UIMessage holds).
fn role_and_blocks(message: &AgentMessage) -> Option<(&'static str, Vec<ContentBlock>)> {
    let keep = |content: &[ContentBlock], assistant: bool| -> Vec<ContentBlock> {
        content.iter().filter_map(|b| written_block(b, assistant)).collect()
    };
    match message {
        AgentMessage::User { content, .. } => Some(("user", keep(content, false))),
        AgentMessage::Custom { custom_type, content, .. } if custom_type == "system" => {
            Some(("system", keep(content, false)))
        }
        AgentMessage::Assistant { content, .. } => Some(("assistant", keep(content, true))),
        _ => None,
    }
}

/// A block as a part gives it back (`None`: one no part of such a message holds).
fn written_block(block: &ContentBlock, assistant: bool) -> Option<ContentBlock> {
    match block {
        ContentBlock::Text { .. } => Some(block.clone()),
        ContentBlock::Image { mime, data, .. } if mime.starts_with("image/") => {
            Some(ContentBlock::Image {
                mime: mime.clone(),
                data: data.clone(),
                attachment_id: None,
            })
        }
        ContentBlock::Thinking { text, .. } if assistant => {
            Some(ContentBlock::Thinking { text: text.clone(), signature: None })
        }
        ContentBlock::FunctionCall { .. } if assistant => Some(block.clone()),
        _ => None,
    }
}

/// The outcomes of the calls among `blocks` that the function results right after the
/// assistant entry give (the first result of a call counts), by call id.
fn outcomes_after(blocks: &[ContentBlock], after: &[&SessionEntry]) -> Vec<(String, Outcome)> {
    let results: Vec<&AgentMessage> = after
        .iter()
        .map_while(|e| e.message().filter(|m| matches!(m, AgentMessage::FunctionResult { .. })))
        .collect();
    let mut outcomes = Vec::new();
    for block in blocks {
        let ContentBlock::FunctionCall { id, .. } = block else { continue };
        let found = results.iter().find_map(|m| match m {
            AgentMessage::FunctionResult { function_call_id, content, is_error, .. }
                if function_call_id == id =>
            {
                Some((content, *is_error, after.iter().find(|e| e.message() == Some(*m))))
            }
            _ => None,
        });
        if let Some((content, is_error, entry)) = found {
            let json = entry
                .and_then(|e| stashed(Format::UiMessage, e))
                .and_then(|s| s.get("json"))
                .is_some_and(|j| j == &Value::Bool(true));
            outcomes.push((id.clone(), Outcome { text: joined_text(content), is_error, json }));
        }
    }
    outcomes
}

fn joined_text(content: &[ContentBlock]) -> String {
    texts(content).join("\n")
}

fn outcome_of<'a>(block: &ContentBlock, outcomes: &'a [(String, Outcome)]) -> Option<&'a Outcome> {
    let ContentBlock::FunctionCall { id, .. } = block else { return None };
    outcomes.iter().find(|(call, _)| call == id).map(|(_, outcome)| outcome)
}

/// `parts` with the stashed parts put back in place and the stashed differences applied in
/// order; parts beyond the stash follow.
fn with_stashed_parts(parts: Vec<Object>, stashed: Option<&Value>) -> Vec<Object> {
    let Some(stashed) = stashed.and_then(Value::as_array) else { return parts };
    let mut generated = parts.into_iter();
    let mut out = Vec::new();
    for element in stashed {
        let element = element.as_object().cloned().unwrap_or_default();
        match element.get(WHOLE_PART) {
            Some(Value::Object(whole)) => out.push(whole.clone()),
            _ => {
                if let Some(part) = generated.next() {
                    out.push(apply(part, &element));
                }
            }
        }
    }
    out.extend(generated);
    out
}

// ---------------------------------------------------------------------------------------------
// kept

/// What of `conversation` survives writing it as a `UIMessage[]` and reading it back (with
/// `Source::modified` = its `created_at` and a name whose stem is its session id): the active
/// branch re-chained, with the losses `architecture/formats/ui-message.md` lists.
pub fn kept(conversation: &Conversation) -> Conversation {
    let branch = conversation.active_branch();
    let mut chain = Chain::new(conversation.meta.created_at);
    for (i, entry) in branch.iter().enumerate() {
        let Some(message) = entry.message() else { continue };
        let Some((role, blocks)) = role_and_blocks(message) else { continue };
        let extra = stashed(Format::UiMessage, entry).and_then(Value::as_object);
        let time = extra.and_then(own_time);
        let outcomes = match role {
            "assistant" => outcomes_after(&blocks, &branch[i + 1..]),
            _ => Vec::new(),
        };
        chain.push(
            Some(entry.id()),
            first_message(role, blocks.clone()),
            time,
            entry.origin().cloned(),
        );
        for (call_id, outcome) in outcomes {
            let name = blocks.iter().find_map(|b| match b {
                ContentBlock::FunctionCall { id, function_id, .. } if *id == call_id => {
                    Some(function_id.clone())
                }
                _ => None,
            });
            let origin = outcome.json.then(|| json!({ "json": true }));
            let result = result_message(call_id, name.unwrap_or_default(), &outcome);
            chain.push(None, result, time, origin.and_then(|o| stash(Format::UiMessage, o)));
        }
    }
    let base = conversation.meta.created_at;
    let mut kept =
        Conversation::new(conversation.meta.session_id.clone(), chain.entries, None, base);
    kept.meta.message_count = kept.entries.iter().filter(|e| e.is_message()).count() as u64;
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A user asking about a screenshot, and an assistant step that reasons, answers, runs one
    /// tool that works and one that fails.
    const CHAT: &str = r#"[
  {"id": "u1", "role": "user", "metadata": {"client": "web"}, "parts": [
    {"type": "text", "text": "What is on this screen?"},
    {"type": "file", "mediaType": "image/png", "filename": "shot.png", "url": "data:image/png;base64,iVBORw0KGgo="}
  ]},
  {"id": "a1", "role": "assistant", "parts": [
    {"type": "step-start"},
    {"type": "reasoning", "text": "Look at the image, then check the weather.", "state": "done"},
    {"type": "text", "text": "A weather widget. Checking both cities.", "state": "done"},
    {"type": "tool-weather", "toolCallId": "call_1", "state": "output-available", "input": {"city": "Berlin"}, "output": {"celsius": 21}},
    {"type": "data-progress", "id": "p1", "data": {"done": 1}},
    {"type": "tool-weather", "toolCallId": "call_2", "state": "output-error", "input": {"city": "Atlantis"}, "errorText": "unknown city", "providerExecuted": false}
  ]}
]"#;

    const AT: i64 = 1_733_234_400_000;

    fn source(bytes: &[u8]) -> Source<'_> {
        Source { name: "chats/s_ui.json", bytes, modified: AT }
    }

    fn json_of(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn reads_a_chat_as_assistant_then_results() {
        let conversation = read(&source(CHAT.as_bytes())).unwrap();
        assert_eq!(conversation.meta.session_id, "s_ui");
        let ids: Vec<&str> = conversation.entries.iter().map(SessionEntry::id).collect();
        assert_eq!(ids, ["u1", "a1", "ui_message_2", "ui_message_3"]);
        for (i, entry) in conversation.entries.iter().enumerate() {
            assert_eq!(entry.timestamp(), AT + i as i64);
            assert_eq!(entry.parent_id(), i.checked_sub(1).map(|p| ids[p]));
        }
        let messages: Vec<&AgentMessage> =
            conversation.entries.iter().filter_map(SessionEntry::message).collect();
        assert_eq!(
            messages[0].content(),
            [
                ContentBlock::Text { text: "What is on this screen?".into() },
                ContentBlock::Image {
                    mime: "image/png".into(),
                    data: "iVBORw0KGgo=".into(),
                    attachment_id: None
                },
            ]
        );
        assert!(matches!(
            messages[1],
            AgentMessage::Assistant { stop_reason: StopReason::FunctionCall, .. }
        ));
        assert_eq!(messages[1].content().len(), 4);
        assert!(matches!(
            messages[2],
            AgentMessage::FunctionResult { function_call_id, function_id, content, is_error: false, .. }
                if function_call_id == "call_1" && function_id == "weather"
                    && content == &[ContentBlock::Text { text: "{\"celsius\":21}".into() }]
        ));
        assert!(matches!(
            messages[3],
            AgentMessage::FunctionResult { function_call_id, content, is_error: true, .. }
                if function_call_id == "call_2" && content == &[ContentBlock::Text { text: "unknown city".into() }]
        ));
    }

    #[test]
    fn writes_a_chat_back_unchanged() {
        let conversation = read(&source(CHAT.as_bytes())).unwrap();
        assert_eq!(json_of(&write(&conversation)), json_of(CHAT.as_bytes()));
    }

    #[test]
    fn kept_keeps_a_conversation_read_from_ui_messages_whole() {
        let conversation = read(&source(CHAT.as_bytes())).unwrap();
        let mut again = kept(&conversation);
        again.meta.session_id = conversation.meta.session_id.clone();
        assert_eq!(again, conversation);
    }

    #[test]
    fn bad_input_is_an_error_naming_the_line() {
        let torn = "{\"id\":\"u1\",\"role\":\"user\",\"parts\":[]}\n{\"id\":\"u2\",\"ro";
        assert_eq!(read(&source(torn.as_bytes())).unwrap_err().line, Some(2));
        let pi = r#"{"type":"session","version":3,"id":"u","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/"}"#;
        assert_eq!(read(&source(pi.as_bytes())).unwrap_err().line, Some(1));
        assert!(!looks_like(pi.as_bytes()));
        assert!(read(&source(b"")).is_err());
        let torn_array = "[{\"id\":\"u1\",\"role\":\"user\",\"parts\":[]},\n {\"id\":";
        assert_eq!(read(&source(torn_array.as_bytes())).unwrap_err().line, Some(2));
    }

    #[test]
    fn looks_like_ui_messages_only() {
        assert!(looks_like(CHAT.as_bytes()));
        assert!(!looks_like(br#"[{"type":"message","role":"user","content":"hi"}]"#));
        assert!(!looks_like(b"[]"));
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
