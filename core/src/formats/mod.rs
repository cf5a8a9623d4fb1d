//! Other agents' conversation files, both ways (issue 40): pi's session JSONL ([`pi`]), Claude
//! Code transcripts ([`claude_code`]), OpenAI Responses items ([`openai`]) and the AI SDK's
//! `UIMessage[]` ([`ui_message`]). Each format reads one file into a [`Conversation`] (this
//! store's meta, entry tree and active leaf) and writes one back. What a format holds that this
//! store has no field for travels in each entry's `origin` under the format's key ([`stash`]), so
//! a conversation read from a format is written back to it unchanged. `architecture/formats.md`
//! says what maps to what and what each format cannot hold.

pub mod claude_code;
#[cfg(test)]
pub mod corpus;
mod data_url;
mod items;
mod message;
pub mod openai;
pub mod pi;
pub mod time;
pub mod tree;
pub mod ui_message;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::{Object, SessionEntry, SessionKind, SessionMeta, SessionStatus};

/// A foreign format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// pi coding agent's session JSONL (header, then a tree of entries by `id` / `parentId`).
    Pi,
    /// Claude Code's transcript JSONL (`~/.claude/projects/*/*.jsonl`, `uuid` / `parentUuid`).
    ClaudeCode,
    /// OpenAI Responses / Conversations items (JSON array or JSONL), one branch.
    Openai,
    /// The Vercel AI SDK's `UIMessage[]` (JSON array), one branch.
    UiMessage,
}

impl Format {
    /// Every format, in the order [`detect`] tries them.
    pub const ALL: [Format; 4] =
        [Format::Pi, Format::ClaudeCode, Format::Openai, Format::UiMessage];

    /// The name the CLI, the functions and the docs use (`pi`, `claude-code`, `openai`,
    /// `ui-message`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Pi => "pi",
            Format::ClaudeCode => "claude-code",
            Format::Openai => "openai",
            Format::UiMessage => "ui-message",
        }
    }

    /// The format `name` names.
    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The key of an entry's `origin` that holds what this format has and this store does not.
    pub fn origin_key(self) -> &'static str {
        match self {
            Format::Pi => "pi",
            Format::ClaudeCode => "claude_code",
            Format::Openai => "openai",
            Format::UiMessage => "ui_message",
        }
    }

    /// The extension of its files: `.jsonl` for the line formats, `.json` for a JSON array.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Pi | Format::ClaudeCode => ".jsonl",
            Format::Openai | Format::UiMessage => ".json",
        }
    }

    /// Whether the format holds a whole tree (branches); the others hold the active branch only.
    pub fn holds_tree(self) -> bool {
        matches!(self, Format::Pi | Format::ClaudeCode)
    }

    /// Reads one file of this format: a conversation each reader has already put through
    /// [`Conversation::checked`].
    pub fn read(self, source: &Source<'_>) -> Result<Conversation, FormatError> {
        match self {
            Format::Pi => pi::read(source),
            Format::ClaudeCode => claude_code::read(source),
            Format::Openai => openai::read(source),
            Format::UiMessage => ui_message::read(source),
        }
    }

    /// Writes `conversation` in this format (the active branch only when the format holds no
    /// tree).
    pub fn write(self, conversation: &Conversation) -> Vec<u8> {
        match self {
            Format::Pi => pi::write(conversation),
            Format::ClaudeCode => claude_code::write(conversation),
            Format::Openai => openai::write(conversation),
            Format::UiMessage => ui_message::write(conversation),
        }
    }

    /// Whether `bytes` look like this format: its first meaningful record has this format's
    /// shape (a cheap test; [`Format::read`] decides).
    pub fn looks_like(self, bytes: &[u8]) -> bool {
        match self {
            Format::Pi => pi::looks_like(bytes),
            Format::ClaudeCode => claude_code::looks_like(bytes),
            Format::Openai => openai::looks_like(bytes),
            Format::UiMessage => ui_message::looks_like(bytes),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The format `bytes` look like, if any.
pub fn detect(bytes: &[u8]) -> Option<Format> {
    Format::ALL.into_iter().find(|f| f.looks_like(bytes))
}

/// Reads `source` as `format`; when it does not look like `format` but like another one, the
/// error says which.
pub fn read(format: Format, source: &Source<'_>) -> Result<Conversation, FormatError> {
    if !format.looks_like(source.bytes) {
        if let Some(other) = detect(source.bytes) {
            return Err(FormatError::whole(format!(
                "{} is not a {format} file: it looks like {other}",
                source.name
            )));
        }
    }
    format.read(source)
}

/// One file to read.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The file's name (a path is fine): the session id of a format that names none is its stem.
    pub name: &'a str,
    pub bytes: &'a [u8],
    /// Milliseconds since epoch: the time of what the format gives no time (the file's mtime), so
    /// reading the same file twice gives the same conversation.
    pub modified: i64,
}

impl Source<'_> {
    /// The file name without its folders and its last extension: the session id of a format that
    /// names none.
    pub fn stem(&self) -> &str {
        let base = self.name.rsplit(['/', '\\']).next().unwrap_or(self.name);
        match base.rfind('.') {
            Some(dot) if dot > 0 => &base[..dot],
            _ => base,
        }
    }

    /// The non-blank lines of a JSONL file with their 1-based numbers.
    pub fn lines(&self) -> impl Iterator<Item = (usize, &[u8])> {
        self.bytes
            .split(|b| *b == b'\n')
            .enumerate()
            .map(|(i, line)| (i + 1, line.strip_suffix(b"\r").unwrap_or(line)))
            .filter(|(_, line)| line.iter().any(|b| !b.is_ascii_whitespace()))
    }
}

/// A conversation as this store holds it: what one file of a format reads into and what is
/// written out to one.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub meta: SessionMeta,
    /// Every entry, parents before children ([`Conversation::checked`] orders them).
    pub entries: Vec<SessionEntry>,
    /// The active leaf (`None`: the session has no entries).
    pub leaf: Option<String>,
    /// Lines of the file that were not imported, and why.
    pub skipped: Vec<Skipped>,
}

/// A line that was not imported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Skipped {
    /// 1-based line of the file (for a JSON array: the item's 1-based position).
    pub line: usize,
    pub reason: String,
}

/// Why a file cannot be read: it names the line when one is at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// 1-based line (or array item) at fault; `None` when the whole file is.
    pub line: Option<usize>,
    pub message: String,
}

impl FormatError {
    /// An error at `line`.
    pub fn at(line: usize, message: impl Into<String>) -> Self {
        FormatError { line: Some(line), message: message.into() }
    }

    /// An error of the whole file.
    pub fn whole(message: impl Into<String>) -> Self {
        FormatError { line: None, message: message.into() }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl Conversation {
    /// A conversation of `entries` with a fresh meta: `created_at` the first entry's time (else
    /// `at`), `updated_at` the newest one's, status `done`, and the active leaf `leaf` (else the
    /// last entry).
    pub fn new(
        session_id: String,
        entries: Vec<SessionEntry>,
        leaf: Option<String>,
        at: i64,
    ) -> Self {
        let created_at = entries.iter().map(SessionEntry::timestamp).min().unwrap_or(at);
        let updated_at = entries.iter().map(SessionEntry::timestamp).max().unwrap_or(at);
        let leaf = leaf.or_else(|| entries.last().map(|e| e.id().to_string()));
        let meta = SessionMeta {
            session_id,
            title: String::new(),
            description: String::new(),
            status: SessionStatus::Done,
            status_reason: None,
            kind: SessionKind::default(),
            metadata: None,
            forked_from: None,
            draft: None,
            draft_attachments: None,
            created_at,
            updated_at,
            message_count: 0,
        };
        Conversation { meta, entries, leaf, skipped: Vec::new() }
    }

    /// The entries root → active leaf (empty without a leaf).
    pub fn active_branch(&self) -> Vec<&SessionEntry> {
        tree::branch(&self.entries, self.leaf.as_deref())
    }

    /// The conversation as this store can hold it: ids unique and non-empty, every parent
    /// present and no cycle (a line that breaks these is an error naming it), entries parents
    /// first, the leaf an entry, `message_count` counted.
    pub fn checked(mut self) -> Result<Self, FormatError> {
        self.entries = tree::parents_first(core::mem::take(&mut self.entries))?;
        if let Some(leaf) = &self.leaf {
            if !self.entries.iter().any(|e| e.id() == leaf) {
                return Err(FormatError::whole(format!(
                    "the active leaf {leaf:?} is not an entry"
                )));
            }
        }
        self.meta.message_count = self.entries.iter().filter(|e| e.is_message()).count() as u64;
        Ok(self)
    }
}

/// `origin` holding `extra` under `format`'s key (`None` when `extra` is empty or null): what
/// `format` had that no field of this store holds.
pub fn stash(format: Format, extra: Value) -> Option<Object> {
    let empty = match &extra {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        _ => false,
    };
    if empty {
        return None;
    }
    let mut origin = Object::new();
    origin.insert(format.origin_key().into(), extra);
    Some(origin)
}

/// What [`stash`] kept of `format` in `entry`'s origin.
pub fn stashed(format: Format, entry: &SessionEntry) -> Option<&Value> {
    entry.origin()?.get(format.origin_key())
}

/// Puts `origin` in `entry` (in place of the one it had).
pub fn set_origin(entry: &mut SessionEntry, origin: Option<Object>) {
    match entry {
        SessionEntry::Message { origin: at, .. } | SessionEntry::Custom { origin: at, .. } => {
            *at = origin
        }
    }
}

/// The fields of `object` other than `known`: what a reader keeps with [`stash`].
pub fn rest(object: &serde_json::Map<String, Value>, known: &[&str]) -> Value {
    let rest: BTreeMap<&String, &Value> =
        object.iter().filter(|(k, _)| !known.contains(&k.as_str())).collect();
    serde_json::to_value(rest).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The corpus is what the formats' tests assume: checked trees whose leaf is an entry.
        #[test]
        fn corpus_is_well_formed(conversation in corpus::conversation(12)) {
            let again = conversation.clone().checked().unwrap();
            prop_assert_eq!(&again, &conversation);
            prop_assert!(!conversation.active_branch().is_empty());
        }
    }
}
