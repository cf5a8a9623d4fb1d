//! The Vercel AI SDK's `UIMessage[]` (one branch) ↔ this store's entries: a user / system
//! message is one entry, an assistant message one assistant entry followed by a function result
//! entry per finished tool part; what a message or part has beyond our fields stays in the first
//! entry's origin under `"ui_message"` (`architecture/formats/ui-message.md`). This file holds
//! the names every operation uses and [`looks_like`]; the stashed differences, parts, [`read`],
//! [`write()`] and [`kept`] have a file each.

mod diff;
mod kept;
mod parts;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use kept::kept;
pub use read::read;
pub use write::write;

use serde_json::Value;

use crate::formats::items::first_object;

/// The prefix of the id of an entry whose UIMessage has none (`ui_message_<index>`).
const ID_PREFIX: &str = "ui_message";
/// The stash key of a part no block holds, kept whole in its place.
const WHOLE_PART: &str = "$part";
/// The stash key listing the fields writing would add that the original did not have.
const ABSENT: &str = "$absent";

/// Whether `bytes` are a `UIMessage[]`: the first element is an object with `role` and a `parts`
/// array.
pub fn looks_like(bytes: &[u8]) -> bool {
    let starts_array = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    starts_array
        && first_object(bytes).is_some_and(|first| {
            first.contains_key("role") && first.get("parts").is_some_and(Value::is_array)
        })
}
