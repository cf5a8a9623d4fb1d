//! Read-time views of stored entries: response items and image elision (contract §1.8, §8.9).

use crate::wire::{AgentMessage, ContentBlock, MessageItem, SessionEntry, TailItem};
use alloc::string::String;

/// Replaces the bytes of every image that has a stored original (`attachment_id`) with `""`,
/// recursing into nested `function_result` blocks.
pub fn elide_images(blocks: &mut [ContentBlock]) {
    for block in blocks {
        match block {
            ContentBlock::Image { data, attachment_id: Some(_), .. } => data.clear(),
            ContentBlock::FunctionResult { content, .. } => elide_images(content),
            _ => {}
        }
    }
}

/// A message as a reader asked for it: with or without linked image bytes.
pub fn message_view(message: &AgentMessage, include_image_data: bool) -> AgentMessage {
    let mut message = message.clone();
    if !include_image_data {
        elide_images(message.content_mut());
    }
    message
}

/// An entry as a reader asked for it (images elided in message entries only).
pub fn entry_view(entry: &SessionEntry, include_image_data: bool) -> SessionEntry {
    let mut entry = entry.clone();
    if let SessionEntry::Message { message, .. } = &mut entry {
        if !include_image_data {
            elide_images(message.content_mut());
        }
    }
    entry
}

/// The `session::messages` item of an entry: origin only on message entries.
pub fn message_item(entry: &SessionEntry, include_image_data: bool) -> MessageItem {
    match entry {
        SessionEntry::Message { id, origin, message, .. } => MessageItem {
            entry_id: String::from(id.as_str()),
            message: Some(message_view(message, include_image_data)),
            custom: None,
            origin: origin.clone(),
        },
        SessionEntry::Custom { id, .. } => MessageItem {
            entry_id: String::from(id.as_str()),
            message: None,
            custom: entry.custom_payload(),
            origin: None,
        },
    }
}

/// The whole (never elided) tail/range item of an entry.
pub fn tail_item(entry: &SessionEntry, include_image_data: bool) -> TailItem {
    let item = message_item(entry, include_image_data);
    TailItem {
        entry_id: item.entry_id,
        message: item.message,
        custom: item.custom,
        origin: item.origin,
        elided: None,
    }
}
