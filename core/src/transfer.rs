//! Exported session files: one `<enc(session_id)>.jsonl` log per session, read with the fs store's
//! replay rules (contract §5.4) and written as snapshot lines (§5.5). Shared by the native
//! `export` / `import` commands and the browser host, so both name and read files the same way.

use alloc::string::String;
use serde::Serialize;

use crate::jsonl::{self, dec, enc, ReplayStats};
use crate::record::SessionState;

/// Extension of a session log.
pub const EXTENSION: &str = ".jsonl";

/// What importing one file found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Imported {
    /// From the log's last meta record, else decoded from the file name.
    pub session_id: String,
    /// Non-blank lines seen.
    pub lines: usize,
    /// Lines skipped as malformed, unknown or torn.
    pub skipped: usize,
}

/// What opening one file of any known format found (the browser's `Workspace.loadFile`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LoadedFile {
    /// What the file was read as: `session-manager` (this store's own log, replayed), or the
    /// other agent's format it looks like (`pi`, `claude-code`, `openai`, `ui-message`).
    pub format: String,
    pub session_id: String,
    /// Lines (for another format: entries and lines left out) read.
    pub lines: usize,
    /// Of which left out.
    pub skipped: usize,
}

impl LoadedFile {
    /// An exported log of this store, replayed.
    pub fn native(imported: Imported) -> Self {
        let Imported { session_id, lines, skipped } = imported;
        LoadedFile { format: "session-manager".into(), session_id, lines, skipped }
    }
}

/// The file name of a session's log: `enc(session_id)` + `.jsonl` (contract §5.2).
pub fn file_name(session_id: &str) -> String {
    let mut name = enc(session_id);
    name.push_str(EXTENSION);
    name
}

/// The session id a file name encodes: the last path component without `.jsonl`, decoded
/// strictly ([`dec`]). `None` for other extensions or invalid encodings.
pub fn session_id_of_file(path: &str) -> Option<String> {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    dec(base.strip_suffix(EXTENSION)?)
}

/// Replays an exported log. The session id is the one of the replayed meta, else the file name's;
/// `None` when there is neither.
pub fn import(file_name: &str, bytes: &[u8]) -> Option<(Imported, SessionState)> {
    let (state, ReplayStats { lines, skipped }) = jsonl::replay(bytes);
    let session_id = match &state.meta {
        Some(meta) => meta.session_id.clone(),
        None => session_id_of_file(file_name)?,
    };
    Some((Imported { session_id, lines, skipped }, state))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{message_entry, sample_meta};
    use crate::record::Record;

    fn log(records: &[Record]) -> alloc::vec::Vec<u8> {
        records.iter().flat_map(jsonl::encode_record).collect()
    }

    #[test]
    fn file_names_round_trip() {
        assert_eq!(file_name("a/b c"), "a%2Fb%20c.jsonl");
        assert_eq!(session_id_of_file("dir/a%2Fb%20c.jsonl").as_deref(), Some("a/b c"));
        assert_eq!(session_id_of_file("C:\\x\\s_1.jsonl").as_deref(), Some("s_1"));
        assert_eq!(session_id_of_file("s_1.json"), None);
        assert_eq!(session_id_of_file("bad%zz.jsonl"), None);
    }

    #[test]
    fn id_comes_from_meta_then_file_name() {
        let bytes = log(&[Record::Meta { meta: sample_meta("s_meta", 1) }]);
        assert_eq!(
            import("other.jsonl", &bytes).map(|i| i.0.session_id).as_deref(),
            Some("s_meta")
        );
        let entry = message_entry("e_1", None, 2, "hi");
        let bytes = log(&[Record::Entry { entry }]);
        assert_eq!(
            import("s_file.jsonl", &bytes).map(|i| i.0.session_id).as_deref(),
            Some("s_file")
        );
        assert_eq!(import("nothing.txt", &bytes), None);
    }

    #[test]
    fn torn_and_malformed_lines_are_counted() {
        let mut bytes = log(&[Record::Meta { meta: sample_meta("s_1", 1) }]);
        bytes.extend_from_slice(b"not json\n\n{\"type\":\"meta\",\"me");
        let (imported, state) = import("s_1.jsonl", &bytes).expect("imports");
        assert_eq!((imported.lines, imported.skipped), (3, 2));
        assert_eq!(state.meta.map(|m| m.session_id).as_deref(), Some("s_1"));
    }

    #[test]
    fn snapshot_round_trips() {
        let meta = sample_meta("s_1", 1);
        let bytes = log(&[
            Record::Meta { meta: meta.clone() },
            Record::Append { entry: message_entry("e_1", None, 2, "a"), meta: meta.clone() },
            Record::Entry { entry: message_entry("e_2", Some("e_1"), 3, "b") },
            Record::Leaf { entry_id: Some("e_2".into()) },
        ]);
        let (_, state) = import("x.jsonl", &bytes).expect("imports");
        let snapshot = jsonl::encode_snapshot(&state);
        let (_, again) = import("x.jsonl", &snapshot).expect("imports");
        assert_eq!(again, state);
        assert_eq!(jsonl::encode_snapshot(&again), snapshot);
    }
}
