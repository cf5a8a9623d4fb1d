//! Placeholder of the pi format (written by its own change).

use alloc::vec::Vec;

use super::{Conversation, FormatError, Source};

/// Reads one file.
pub fn read(_source: &Source<'_>) -> Result<Conversation, FormatError> {
    Err(FormatError::whole("not yet"))
}

/// Writes one conversation.
pub fn write(_conversation: &Conversation) -> Vec<u8> {
    Vec::new()
}

/// Whether the bytes look like this format.
pub fn looks_like(_bytes: &[u8]) -> bool {
    false
}
