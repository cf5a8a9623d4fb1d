//! What of a conversation survives being written as OpenAI items and read back ([`kept`]).

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

use super::write::{custom_item, fits_stash, fresh_pieces};
use super::ID_PREFIX;
use crate::formats::items::unique_id;
use crate::formats::{stashed, Conversation, Format};
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry};

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
