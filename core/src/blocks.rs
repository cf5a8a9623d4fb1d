//! The block / elision rules of `session::messages-tail` (contract §8.2–§8.8): wake entries,
//! activity-run membership (blocks are maximal member runs or single non-members) and the
//! collapsed view of a run.

use alloc::vec::Vec;
use serde_json::Value;

use crate::view;
use crate::wire::{AgentMessage, ContentBlock, Object, SessionEntry, TailItem};

/// Entry id prefixes that mark machine wake-ups (§8.2).
pub const WAKE_PREFIXES: [&str; 9] = [
    "e_fire_",
    "e_notify_",
    "e_expire_",
    "e_stalespawn_",
    "e_claimfail_",
    "e_condfail_",
    "e_trigfired_",
    "e_trigexpired_",
    "e_trigstale_",
];

/// A wake entry: `origin.notification` or `origin.trigger_fired` is JSON `true`, or the id has a
/// wake prefix.
pub fn is_wake(entry: &SessionEntry) -> bool {
    let flag = |origin: &Object, key: &str| origin.get(key) == Some(&Value::Bool(true));
    if let Some(origin) = entry.origin() {
        if flag(origin, "notification") || flag(origin, "trigger_fired") {
            return true;
        }
    }
    WAKE_PREFIXES.iter().any(|p| entry.id().starts_with(p))
}

/// Whether an entry belongs to an activity run (§8.3).
pub fn is_run_member(entry: &SessionEntry) -> bool {
    match entry {
        SessionEntry::Message { message, .. } => match message {
            AgentMessage::Assistant { .. } => message.has_function_call(),
            AgentMessage::FunctionResult { .. } => true,
            AgentMessage::User { .. } => is_wake(entry),
            AgentMessage::Custom { custom_type, .. } => {
                custom_type == "trigger_fired" || is_wake(entry)
            }
        },
        SessionEntry::Custom { custom_type, .. } => {
            custom_type == "trigger_fired" || is_wake(entry)
        }
    }
}

/// Which entries of a run stay whole (§8.7); the others are elided.
pub fn run_keep_flags(run: &[SessionEntry]) -> Vec<bool> {
    let last_call =
        run.iter().rposition(|e| e.message().is_some_and(AgentMessage::has_function_call));
    // A list, not a set: one message's calls are few (and no set type to add to the bundle).
    let call_ids: Vec<&str> = last_call
        .and_then(|i| run[i].message())
        .map(|m| {
            m.content()
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::FunctionCall { id, .. } => Some(id.as_str()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    run.iter()
        .enumerate()
        .map(|(i, entry)| match entry.message() {
            None => true,
            Some(_) if Some(i) == last_call => true,
            Some(AgentMessage::FunctionResult { function_call_id, .. }) => {
                call_ids.contains(&function_call_id.as_str())
            }
            Some(AgentMessage::User { .. } | AgentMessage::Custom { .. }) => true,
            Some(AgentMessage::Assistant { .. }) => false,
        })
        .collect()
}

/// The placeholder form of an elided message (§8.8).
pub fn elide_message(message: &AgentMessage) -> AgentMessage {
    let mut message = message.clone();
    match &mut message {
        AgentMessage::Assistant { content, .. } => {
            content.retain(|b| !matches!(b, ContentBlock::Thinking { .. }));
            for block in content.iter_mut() {
                if let ContentBlock::FunctionCall { function_id, arguments, .. } = block {
                    *arguments = elided_arguments(function_id, arguments);
                }
            }
        }
        AgentMessage::FunctionResult { content, details, .. } => {
            content.clear();
            *details = Value::Null;
        }
        AgentMessage::User { .. } | AgentMessage::Custom { .. } => {}
    }
    message
}

/// `{}` for ordinary calls; an `agent_trigger` call keeps its string `function` / `description`.
fn elided_arguments(function_id: &str, arguments: &Value) -> Value {
    let mut kept = Object::new();
    if function_id == "agent_trigger" {
        if let Value::Object(args) = arguments {
            for key in ["function", "description"] {
                if let Some(v @ Value::String(_)) = args.get(key) {
                    kept.insert(key.into(), v.clone());
                }
            }
        }
    }
    Value::Object(kept)
}

/// The collapsed items of one activity run, oldest first.
pub fn collapse_run(run: &[SessionEntry], include_image_data: bool) -> Vec<TailItem> {
    run.iter()
        .zip(run_keep_flags(run))
        .map(|(entry, keep)| {
            let mut item = view::tail_item(entry, true);
            if !keep {
                if let Some(message) = &item.message {
                    item.message = Some(elide_message(message));
                    item.elided = Some(true);
                }
            }
            if !include_image_data {
                if let Some(message) = &mut item.message {
                    view::elide_images(message.content_mut());
                }
            }
            item
        })
        .collect()
}
