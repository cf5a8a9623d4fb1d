//! What of a conversation survives being written as a `UIMessage[]` and read back ([`kept`]).

use alloc::vec::Vec;
use serde_json::{json, Value};

use super::read::{first_message, own_time, result_message, Chain};
use super::write::{outcomes_after, role_and_blocks};
use crate::formats::{stash, stashed, Conversation, Format};
use crate::wire::ContentBlock;

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
