//! Writing the active branch as a `UIMessage[]`: an assistant entry with the results after it
//! as one message, the stashed differences put back.

use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{json, Value};

use super::diff::{apply, object};
use super::parts::{part_of, Outcome};
use super::WHOLE_PART;
use crate::formats::message::texts;
use crate::formats::{stashed, Conversation, Format};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry};

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

pub(super) fn message_fields(id: &str, role: &str, parts: Vec<Object>) -> Object {
    let parts: Vec<Value> = parts.into_iter().map(Value::Object).collect();
    object(json!({ "id": id, "role": role, "parts": parts }))
}

/// The role and the blocks a message is written with (`None`: a message no UIMessage holds).
pub(super) fn role_and_blocks(message: &AgentMessage) -> Option<(&'static str, Vec<ContentBlock>)> {
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
pub(super) fn outcomes_after(
    blocks: &[ContentBlock],
    after: &[&SessionEntry],
) -> Vec<(String, Outcome)> {
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
