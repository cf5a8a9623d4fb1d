//! Typed errors: one `ErrorCode` per `session/*` wire code (contract §4) and the error value that
//! carries it, displayed on the wire as `"<code>: <text>"`.

use alloc::format;
use alloc::string::{String, ToString};
use core::fmt;

/// Every `session/*` error code a caller can match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// Unknown `session_id` on a mutation or path read.
    NotFound,
    /// Unknown entry id where one is required.
    EntryNotFound,
    /// Explicit `parent_id` that is not in the session.
    ParentNotFound,
    /// Operation not valid for this entry or message kind.
    InvalidEntryKind,
    /// `details` sent for a `user` or `assistant` message.
    DetailsNotSupported,
    /// `append-many` with no messages.
    EmptyBatch,
    /// Malformed, foreign or stale cursor / anchor.
    InvalidCursor,
    /// A request that is well-typed but not acceptable, or not well-typed at all.
    InvalidRequest,
    /// Attachment larger than `max_attachment_bytes`.
    AttachmentTooLarge,
    /// Attachment still referenced by a message entry.
    AttachmentInUse,
    /// Backend failure; retryable.
    Storage,
}

impl ErrorCode {
    /// All codes, for tests and documentation.
    pub const ALL: [ErrorCode; 11] = [
        ErrorCode::NotFound,
        ErrorCode::EntryNotFound,
        ErrorCode::ParentNotFound,
        ErrorCode::InvalidEntryKind,
        ErrorCode::DetailsNotSupported,
        ErrorCode::EmptyBatch,
        ErrorCode::InvalidCursor,
        ErrorCode::InvalidRequest,
        ErrorCode::AttachmentTooLarge,
        ErrorCode::AttachmentInUse,
        ErrorCode::Storage,
    ];

    /// The wire code, e.g. `session/not_found`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "session/not_found",
            ErrorCode::EntryNotFound => "session/entry_not_found",
            ErrorCode::ParentNotFound => "session/parent_not_found",
            ErrorCode::InvalidEntryKind => "session/invalid_entry_kind",
            ErrorCode::DetailsNotSupported => "session/details_not_supported",
            ErrorCode::EmptyBatch => "session/empty_batch",
            ErrorCode::InvalidCursor => "session/invalid_cursor",
            ErrorCode::InvalidRequest => "session/invalid_request",
            ErrorCode::AttachmentTooLarge => "session/attachment_too_large",
            ErrorCode::AttachmentInUse => "session/attachment_in_use",
            ErrorCode::Storage => "session/storage",
        }
    }

    /// Parses a wire code back (the bridge reads a main's error code with it).
    pub fn parse(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == code)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Longest serde detail quoted in an `invalid request` message.
pub const MAX_DETAIL_BYTES: usize = 512;

/// A failed call: a code plus human text. `Display` gives the wire message `"<code>: <text>"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionError {
    pub code: ErrorCode,
    pub text: String,
}

impl SessionError {
    pub fn new(code: ErrorCode, text: impl Into<String>) -> Self {
        SessionError { code, text: text.into() }
    }

    /// `session/not_found: session <id> does not exist`.
    pub fn session_not_found(session_id: &str) -> Self {
        Self::new(ErrorCode::NotFound, format!("session {session_id} does not exist"))
    }

    /// `session/entry_not_found: entry <id> does not exist in session <sid>`.
    pub fn entry_not_found(session_id: &str, entry_id: &str) -> Self {
        Self::new(
            ErrorCode::EntryNotFound,
            format!("entry {entry_id} does not exist in session {session_id}"),
        )
    }

    /// A request that failed to decode (wrong types, missing fields, unknown enum values). serde
    /// quotes the offending value, so the detail is cut after [`MAX_DETAIL_BYTES`].
    pub fn bad_request_shape(detail: impl fmt::Display) -> Self {
        Self::bad_request_shape_of(&detail)
    }

    /// [`SessionError::bad_request_shape`], written once whatever the detail's type.
    fn bad_request_shape_of(detail: &dyn fmt::Display) -> Self {
        let mut text = format!("invalid request: {detail}");
        if text.len() > MAX_DETAIL_BYTES {
            let mut end = MAX_DETAIL_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push('…');
        }
        Self::new(ErrorCode::InvalidRequest, text)
    }

    pub fn invalid_request(text: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, text)
    }

    pub fn invalid_cursor(text: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidCursor, text)
    }

    pub fn storage(text: impl Into<String>) -> Self {
        Self::new(ErrorCode::Storage, text)
    }

    /// The full wire message, `"<code>: <text>"`.
    pub fn message(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.text)
    }
}

impl core::error::Error for SessionError {}

/// A failure inside a storage backend; callers of the functions see it as `session/storage`.
/// Match on the variant (a bridged main's error keeps its `session/*` code in `Remote`); the text
/// is for people.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The backing medium failed: a file-system call (the text names the action and the path).
    Io(String),
    /// Stored data that does not decode (an attachment's metadata file, …).
    Corrupt(String),
    /// A rule of the store refused the write (`commit_append`'s checks).
    Rejected(String),
    /// The store could not answer without blocking; the caller retries where it may block (the
    /// fs store's inline read view).
    WouldBlock,
    /// A broken invariant of the store itself (a bug, not the caller's or the medium's fault).
    Internal(String),
    /// A remote store (a bridge's main) answered `function` with an error; `code` is its
    /// `session/*` code when it sent one.
    Remote { function: String, code: Option<ErrorCode>, message: String },
    /// A remote store did not answer `function`: unreachable, or no answer in time.
    Unavailable { function: String, detail: String },
    /// The store does not do this (e.g. keep a change feed); the text says what and why.
    Unsupported(String),
}

impl StoreError {
    /// `Rejected` with this text.
    pub fn rejected(text: impl Into<String>) -> Self {
        StoreError::Rejected(text.into())
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Io(text)
            | StoreError::Corrupt(text)
            | StoreError::Rejected(text)
            | StoreError::Internal(text)
            | StoreError::Unsupported(text) => f.write_str(text),
            StoreError::WouldBlock => f.write_str("the store would block"),
            StoreError::Remote { function, message, .. } => {
                write!(f, "bridge {function} failed: {message}")
            }
            StoreError::Unavailable { function, detail } => {
                write!(f, "bridge {function} failed: {detail}")
            }
        }
    }
}

impl core::error::Error for StoreError {}

/// Every store error reaches callers as `session/storage` with the error's text (contract §4,
/// §5.6: a bridge's remote error too, its text naming the protocol function); the main's own code
/// stays in [`StoreError::Remote`] for Rust callers.
impl From<StoreError> for SessionError {
    fn from(e: StoreError) -> Self {
        SessionError::storage(e.to_string())
    }
}

/// Result alias for core operations.
pub type Result<T, E = SessionError> = core::result::Result<T, E>;
