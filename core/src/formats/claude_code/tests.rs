//! The Claude Code format's tests: a realistic transcript read, written back line for line,
//! refused when cut or foreign; generated conversations round-tripped as `kept` says.

use super::*;
use crate::compaction::{cut_at, record_of};
use crate::formats::{stashed, Conversation};
use crate::wire::{AgentMessage, ContentBlock, SessionEntry, StopReason};
use proptest::prelude::*;

/// A realistic transcript: a title, a prompt, one assistant API message over two lines
/// (thinking, then a tool call), its result, an old-style sidechain line, a compaction
/// (boundary and summary), a fork (the prompt edited) and a file snapshot.
const TRANSCRIPT: &str = r#"{"type":"summary","summary":"Fix the login bug","leafUuid":"a3"}
{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":"Why does login fail?"},"uuid":"u1","timestamp":"2025-08-01T10:00:00.000Z"}
{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"Read the handler first.","signature":"sig=="}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":3,"service_tier":"standard"}},"requestId":"req_1","type":"assistant","uuid":"a1","timestamp":"2025-08-01T10:00:01.000Z"}
{"parentUuid":"a1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"src/login.rs"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":30,"service_tier":"standard"}},"requestId":"req_1","type":"assistant","uuid":"a2","timestamp":"2025-08-01T10:00:02.000Z"}
{"parentUuid":"a2","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"fn login() { if !ok { allow() } }"}]},"uuid":"r1","timestamp":"2025-08-01T10:00:03.000Z","toolUseResult":{"type":"text","file":{"filePath":"src/login.rs","numLines":1}}}
{"parentUuid":null,"isSidechain":true,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":"Search for other callers of allow()"},"uuid":"side1","timestamp":"2025-08-01T10:00:03.500Z"}
{"parentUuid":"r1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"The check is inverted."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":50,"output_tokens":7}},"type":"assistant","uuid":"a3","timestamp":"2025-08-01T10:00:04.000Z"}
{"parentUuid":null,"logicalParentUuid":"a3","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"2025-08-01T10:05:00.000Z","uuid":"cb1","level":"info","compactMetadata":{"trigger":"manual","preTokens":1200}}
{"parentUuid":"cb1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":"This session is being continued from a previous conversation. Summary: the login check is inverted."},"isVisibleInTranscriptOnly":true,"isCompactSummary":true,"uuid":"cs1","timestamp":"2025-08-01T10:05:01.000Z"}
{"parentUuid":"cs1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":"Now fix it"},"uuid":"u2","timestamp":"2025-08-01T10:06:00.000Z"}
{"parentUuid":"cs1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","type":"user","message":{"role":"user","content":"First add a failing test"},"uuid":"u3","timestamp":"2025-08-01T10:07:00.000Z"}
{"parentUuid":"u3","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s-1","version":"1.0.98","gitBranch":"main","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Added tests/login.rs."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":60,"output_tokens":9}},"type":"assistant","uuid":"a4","timestamp":"2025-08-01T10:07:30.000Z"}
{"type":"file-history-snapshot","messageId":"u3","snapshot":{"messageId":"u3","trackedFileBackups":{},"timestamp":"2025-08-01T10:07:00.000Z"},"isSnapshotUpdate":false}
"#;

fn source(bytes: &[u8]) -> Source<'_> {
    Source { name: "s-1.jsonl", bytes, modified: 0 }
}

fn values(bytes: &[u8]) -> Vec<Value> {
    source(bytes).lines().map(|(_, l)| serde_json::from_slice(l).unwrap()).collect()
}

fn entry<'a>(c: &'a Conversation, id: &str) -> &'a SessionEntry {
    c.entries.iter().find(|e| e.id() == id).unwrap()
}

#[test]
fn reads_a_realistic_transcript_into_its_tree() {
    let c = read(&source(TRANSCRIPT.as_bytes())).unwrap();
    assert_eq!(c.meta.session_id, "s-1");
    assert_eq!(c.meta.title, "Fix the login bug");
    assert_eq!(c.entries.len(), 12, "every line but the summary is an entry");
    assert_eq!(c.leaf.as_deref(), Some("a4"), "the last non-sidechain line with a uuid");
    let path: Vec<&str> = c.active_branch().iter().map(|e| e.id()).collect();
    assert_eq!(path, ["u1", "a1", "a2", "r1", "a3", "cb1", "cs1", "u3", "a4"]);
    assert_eq!(entry(&c, "u2").parent_id(), Some("cs1"), "the fork");
    assert_eq!(entry(&c, "side1").parent_id(), None, "a sidechain root");
    assert_eq!(entry(&c, "cc_line_13").parent_id(), Some("a4"), "the snapshot");
    match entry(&c, "a2").message() {
        Some(AgentMessage::Assistant { content, stop_reason, usage, provider, .. }) => {
            assert_eq!(*stop_reason, StopReason::FunctionCall);
            assert_eq!(provider, "anthropic");
            assert_eq!(usage.as_ref().and_then(|u| u.output), Some(30));
            assert!(matches!(&content[..], [ContentBlock::FunctionCall { function_id, .. }]
                if function_id == "Read"));
        }
        other => panic!("a2 is {other:?}"),
    }
    match entry(&c, "r1").message() {
        Some(AgentMessage::FunctionResult { function_id, details, is_error, .. }) => {
            assert_eq!(function_id, "Read");
            assert_eq!(details["file"]["filePath"], "src/login.rs");
            assert!(!is_error);
        }
        other => panic!("r1 is {other:?}"),
    }
    let record = record_of(entry(&c, "cs1")).unwrap().unwrap();
    assert_eq!(record.first_kept_entry_id, "cb1");
    assert_eq!(record.tokens_before, Some(1200));
    let before: Vec<SessionEntry> =
        c.active_branch().into_iter().take_while(|e| e.id() != "cs1").cloned().collect();
    assert!(cut_at(&before, "cb1").is_ok(), "a valid compaction keeping nothing before");
    let cwd = stashed(FORMAT, entry(&c, "u1")).unwrap();
    assert_eq!(cwd["~"]["cwd"]["="], "/repo");
}

#[test]
fn writes_a_read_transcript_back_line_for_line() {
    let c = read(&source(TRANSCRIPT.as_bytes())).unwrap();
    let written = write(&c);
    assert_eq!(values(&written), values(TRANSCRIPT.as_bytes()));
    let again = read(&source(&written)).unwrap();
    assert_eq!(again, c);
}

#[test]
fn refuses_truncated_foreign_and_empty_files() {
    let truncated = format!("{}{}", TRANSCRIPT, r#"{"parentUuid":"a4","type":"user","mess"#);
    let error = read(&source(truncated.as_bytes())).unwrap_err();
    assert_eq!(error.line, Some(14));
    let pi = r#"{"type":"session","version":3,"id":"u","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/"}"#;
    assert_eq!(read(&source(pi.as_bytes())).unwrap_err().line, Some(1));
    assert!(!looks_like(pi.as_bytes()));
    assert!(read(&source(b"")).is_err());
    assert!(read(&source(b"\n  \n")).is_err());
    assert!(looks_like(TRANSCRIPT.as_bytes()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Ours → Claude Code → ours loses exactly what `kept` says.
    #[test]
    fn round_trip_keeps_what_kept_says(c in super::super::corpus::conversation(12)) {
        let bytes = write(&c);
        prop_assert!(looks_like(&bytes));
        let back = read(&Source { name: "x.jsonl", bytes: &bytes, modified: 0 }).unwrap();
        prop_assert_eq!(back, kept(&c));
    }
}
