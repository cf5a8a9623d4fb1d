//! Messages and blocks of this store as more than one format makes or reads them: a bare
//! assistant message (no model, usage or error), the texts of text blocks.

use alloc::string::String;
use alloc::vec::Vec;

use crate::wire::{AgentMessage, ContentBlock, StopReason};

/// An assistant message of `content` from `provider` with nothing else known: no model, usage,
/// error, warnings or agent.
pub fn bare_assistant(
    content: Vec<ContentBlock>,
    stop_reason: StopReason,
    provider: &str,
    timestamp: i64,
) -> AgentMessage {
    AgentMessage::Assistant {
        content,
        stop_reason,
        model: String::new(),
        provider: provider.into(),
        timestamp,
        native_stop_reason: None,
        error_message: None,
        error_kind: None,
        warnings: None,
        usage: None,
        agent: None,
    }
}

/// The texts of the text blocks of `content`, in order (other blocks are passed over).
pub fn texts(content: &[ContentBlock]) -> Vec<&str> {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
