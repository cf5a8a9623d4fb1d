//! The pi format's tests: a session with two branches read, written back unchanged and with a
//! new leaf and title; generated conversations written and read back as `kept` says.

use super::*;
use crate::compaction::cut_at;
use crate::compaction::record_of;
use crate::formats::{tree, Conversation, Source};
use crate::wire::{AgentMessage, ContentBlock, SessionEntry, StopReason};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use proptest::prelude::*;
use serde_json::{json, Value};

/// A pi session with two branches off the first message: one with a model change, a tool
/// call and its result, a label, a compaction (time finer than milliseconds) and a bash
/// execution; the other, the active one, with a branch summary, a custom message (string
/// content, hidden), an extension entry, a thinking level change, an entry of a type this
/// module does not know, a session name and, last, a user message with an image.
const SESSION: &str = r#"{"type":"session","version":3,"id":"5f0c1c9e-1111-4a4a-9b9b-0123456789ab","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/home/u/project"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"Which port does the server use?","timestamp":1733234401000}}
{"type":"model_change","id":"a2","parentId":"a1","timestamp":"2024-12-03T14:00:01.500Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Read the config.","thinkingSignature":"sig-1"},{"type":"text","text":"Reading it.","textSignature":"msg_1"},{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"config.toml"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":20,"cacheRead":5,"cacheWrite":0,"totalTokens":125,"cost":{"input":0.0003,"output":0.0003,"cacheRead":0.0000015,"cacheWrite":0,"total":0.0006015}},"stopReason":"toolUse","timestamp":1733234402000}}
{"type":"message","id":"a4","parentId":"a3","timestamp":"2024-12-03T14:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"port = 8080"}],"details":{"lines":1},"isError":false,"timestamp":1733234403000}}
{"type":"message","id":"a5","parentId":"a4","timestamp":"2024-12-03T14:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Port 8080."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":130,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":134,"cost":{"input":0.00039,"output":0.00006,"cacheRead":0,"cacheWrite":0,"total":0.00045}},"stopReason":"stop","timestamp":1733234404000}}
{"type":"label","id":"a6","parentId":"a5","timestamp":"2024-12-03T14:00:05.000Z","targetId":"a3","label":"read config"}
{"type":"compaction","id":"a7","parentId":"a6","timestamp":"2024-12-03T14:01:00.123456Z","summary":"The user asked for the port; it is 8080.","firstKeptEntryId":"a3","tokensBefore":1234,"details":{"readFiles":["config.toml"],"modifiedFiles":[]},"fromHook":false}
{"type":"message","id":"a8","parentId":"a7","timestamp":"2024-12-03T14:01:01.000Z","message":{"role":"bashExecution","command":"ls","output":"config.toml","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1733234461000}}
{"type":"branch_summary","id":"b1","parentId":"a1","timestamp":"2024-12-03T14:02:00.000Z","fromId":"a8","summary":"Found the port in config.toml.","details":{"readFiles":["config.toml"]},"fromHook":false}
{"type":"custom_message","id":"b2","parentId":"b1","timestamp":"2024-12-03T14:02:01.000Z","customType":"reminder","content":"Keep answers short.","display":false}
{"type":"custom","id":"b3","parentId":"b2","timestamp":"2024-12-03T14:02:02.000Z","customType":"my-extension","data":{"count":42}}
{"type":"thinking_level_change","id":"b4","parentId":"b3","timestamp":"2024-12-03T14:02:03.000Z","thinkingLevel":"high"}
{"type":"bookmark_v9","id":"b5","parentId":"b4","timestamp":"2024-12-03T14:02:04.000Z","note":"a type from a later pi"}
{"type":"session_info","id":"b6","parentId":"b5","timestamp":"2024-12-03T14:02:05.000Z","name":"Server port"}
{"type":"message","id":"b7","parentId":"b6","timestamp":"2024-12-03T14:02:06.000Z","message":{"role":"user","content":[{"type":"text","text":"And the host?"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1733234526000}}
"#;

pub(super) fn source(bytes: &[u8]) -> Source<'_> {
    Source { name: "x.jsonl", bytes, modified: 0 }
}

fn json_lines(bytes: &[u8]) -> Vec<Value> {
    source(bytes)
        .lines()
        .map(|(line, text)| {
            serde_json::from_slice(text).unwrap_or_else(|e| panic!("line {line}: {e}"))
        })
        .collect()
}

pub(super) fn entry<'a>(conversation: &'a Conversation, id: &str) -> &'a SessionEntry {
    conversation.entries.iter().find(|e| e.id() == id).expect(id)
}

#[test]
fn reads_the_tree_leaf_title_and_compaction() {
    let conversation = read(&source(SESSION.as_bytes())).unwrap();
    assert_eq!(conversation.meta.session_id, "5f0c1c9e-1111-4a4a-9b9b-0123456789ab");
    assert_eq!(conversation.meta.title, "Server port");
    assert_eq!(conversation.meta.created_at, 1_733_234_400_000);
    assert_eq!(
        conversation.meta.metadata,
        Some(json!({ "pi": { "cwd": "/home/u/project" } }).as_object().cloned().unwrap())
    );
    assert_eq!(conversation.entries.len(), 15);
    assert!(conversation.skipped.is_empty());
    assert_eq!(conversation.leaf.as_deref(), Some("b7"));
    let branch: Vec<&str> = conversation.active_branch().iter().map(|e| e.id()).collect();
    assert_eq!(branch, ["a1", "b1", "b2", "b3", "b4", "b5", "b6", "b7"]);
    assert_eq!(conversation.meta.message_count, 8);

    let a3 = entry(&conversation, "a3").message().unwrap();
    let AgentMessage::Assistant { content, stop_reason, usage, .. } = a3 else { panic!() };
    assert_eq!(*stop_reason, StopReason::FunctionCall);
    assert_eq!(
        content[0],
        ContentBlock::Thinking { text: "Read the config.".into(), signature: Some("sig-1".into()) }
    );
    assert_eq!(
        content[2],
        ContentBlock::FunctionCall {
            id: "call_1".into(),
            function_id: "read".into(),
            arguments: json!({ "path": "config.toml" })
        }
    );
    let usage = usage.as_ref().unwrap();
    assert_eq!((usage.input, usage.output, usage.cache_read), (Some(100), Some(20), Some(5)));
    assert_eq!(usage.cost_usd, Some(0.0006015));
    let Some(AgentMessage::FunctionResult { function_call_id, details, is_error, .. }) =
        entry(&conversation, "a4").message()
    else {
        panic!()
    };
    assert_eq!(
        (function_call_id.as_str(), details, *is_error),
        ("call_1", &json!({"lines": 1}), false)
    );

    let record = record_of(entry(&conversation, "a7")).unwrap().unwrap();
    assert_eq!(record.first_kept_entry_id, "a3");
    assert_eq!(record.tokens_before, Some(1234));
    let path = tree::branch(&conversation.entries, Some("a6"));
    let before: Vec<SessionEntry> = path.into_iter().cloned().collect();
    assert_eq!(cut_at(&before, "a3"), Ok(2));

    let custom_type = |id| match entry(&conversation, id) {
        SessionEntry::Message { message: AgentMessage::Custom { custom_type, .. }, .. }
        | SessionEntry::Custom { custom_type, .. } => custom_type.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(custom_type("a2"), "model_change");
    assert_eq!(custom_type("a6"), "label");
    assert_eq!(custom_type("a8"), "bash_execution");
    assert_eq!(custom_type("b1"), "branch_summary");
    assert_eq!(custom_type("b2"), "reminder");
    assert_eq!(custom_type("b3"), "my-extension");
    assert_eq!(custom_type("b4"), "thinking_level_change");
    assert_eq!(custom_type("b5"), "bookmark_v9");
    assert!(entry(&conversation, "b1").is_message() && entry(&conversation, "b2").is_message());
    assert_eq!(
        entry(&conversation, "a2").custom_payload().unwrap().data["modelId"],
        "claude-sonnet-4-5"
    );
}

#[test]
fn writes_a_read_file_back_unchanged() {
    let conversation = read(&source(SESSION.as_bytes())).unwrap();
    let written = write(&conversation);
    assert_eq!(json_lines(&written), json_lines(SESSION.as_bytes()));
    let again = read(&source(&written)).unwrap();
    assert_eq!(again, conversation);
}

#[test]
fn writes_the_leaf_last_and_the_title_as_a_session_info() {
    let mut conversation = read(&source(SESSION.as_bytes())).unwrap();
    conversation.leaf = Some("a5".into());
    conversation.meta.title = "Renamed".into();
    let lines = json_lines(&write(&conversation));
    let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap_or("")).collect();
    assert_eq!(ids.last(), Some(&"a5"));
    let info = &lines[lines.len() - 2];
    assert_eq!(
        (info["type"].as_str(), info["name"].as_str()),
        (Some("session_info"), Some("Renamed"))
    );
    assert_eq!(info["parentId"], "a5");
    // a5's descendants come before it, every other entry after its parent.
    for (at, line) in lines.iter().enumerate().skip(1) {
        if let Some(parent) = line["parentId"].as_str() {
            let parent_at = ids.iter().position(|id| *id == parent).unwrap();
            assert!(parent_at < at || parent == "a5", "{line}");
        }
    }
    let again = read(&source(&write(&conversation))).unwrap();
    assert_eq!(again.leaf.as_deref(), Some("a5"));
    assert_eq!(again.meta.title, "Renamed");
    assert_eq!(again, kept(&conversation));
}

/// A file where pi went back to an earlier branch and went on there (lines of two branches
/// interleave), with an entry whose parent is not in the file (pi makes it a root) and a
/// version 2 header, comes back line for line.
#[test]
fn interleaved_branches_and_an_orphan_come_back_in_file_order() {
    let file = r#"{"type":"session","version":2,"id":"s2","timestamp":"2024-12-03T14:00:00Z","cwd":"/w","extra":1}
{"type":"message","id":"x1","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}
{"type":"message","id":"x2","parentId":"x1","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"hookMessage","customType":"h","content":"two","display":true,"timestamp":2}}
{"type":"custom","id":"y1","parentId":"x1","timestamp":"2024-12-03T14:00:03.000Z","customType":"compaction","data":{"summary":"s","first_kept_entry_id":"x1"}}
{"type":"custom","id":"z1","parentId":"gone","timestamp":"2024-12-03T14:00:04.000Z","customType":"t"}
{"type":"message","id":"x3","parentId":"x2","timestamp":"2024-12-03T14:00:05.000Z","message":{"role":"user","content":[],"timestamp":5}}
"#;
    let conversation = read(&source(file.as_bytes())).unwrap();
    assert_eq!(conversation.leaf.as_deref(), Some("x3"));
    assert_eq!(entry(&conversation, "z1").parent_id(), None);
    assert_eq!(json_lines(&write(&conversation)), json_lines(file.as_bytes()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// What this module writes reads back as what `kept` says survives.
    #[test]
    fn read_of_write_is_kept(conversation in super::super::corpus::conversation(12)) {
        let bytes = write(&conversation);
        prop_assert!(looks_like(&bytes));
        let again = read(&Source { name: "x.jsonl", bytes: &bytes, modified: 0 });
        prop_assert_eq!(again, Ok(kept(&conversation)));
    }

    /// Writing what was read gives the same lines.
    #[test]
    fn write_of_read_is_the_file(conversation in super::super::corpus::conversation(12)) {
        let bytes = write(&conversation);
        let again = read(&source(&bytes)).unwrap();
        prop_assert_eq!(json_lines(&write(&again)), json_lines(&bytes));
    }
}

#[test]
fn a_truncated_last_line_is_an_error_naming_it() {
    let file = format!("{}\n{}", SESSION.lines().next().unwrap(), r#"{"type":"message","id":"a1""#);
    let error = read(&source(file.as_bytes())).unwrap_err();
    assert_eq!(error.line, Some(2));
    assert!(error.message.contains("truncated"), "{error}");
    let mut cut = String::from(SESSION);
    cut.truncate(SESSION.len() - 20);
    let error = read(&source(cut.as_bytes())).unwrap_err();
    assert_eq!(error.line, Some(16), "{error}");
}

#[test]
fn a_broken_middle_line_is_skipped() {
    let mut lines: Vec<&str> = SESSION.lines().collect();
    lines.insert(3, "{not json");
    let file = lines.join("\n");
    let conversation = read(&source(file.as_bytes())).unwrap();
    assert_eq!(conversation.skipped.len(), 1);
    assert_eq!(conversation.skipped[0].line, 4);
    assert_eq!(conversation.entries.len(), 15);
}

#[test]
fn other_files_are_errors() {
    let claude = r#"{"parentUuid":null,"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","sessionId":"s1","timestamp":"2024-12-03T14:00:01.000Z"}"#;
    let error = read(&source(claude.as_bytes())).unwrap_err();
    assert_eq!(error.line, Some(1));
    assert!(error.message.contains("not a pi session"), "{error}");
    assert!(!looks_like(claude.as_bytes()));
    for empty in ["", "\n \n"] {
        let error = read(&source(empty.as_bytes())).unwrap_err();
        assert_eq!(error.line, None);
        assert!(error.message.contains("empty"), "{error}");
    }
    let v1 = r#"{"type":"session","id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/"}"#;
    let error = read(&source(v1.as_bytes())).unwrap_err();
    assert_eq!(error.line, Some(1));
    assert!(error.message.contains("version 1"), "{error}");
    assert!(looks_like(SESSION.as_bytes()) && looks_like(v1.as_bytes()));
}

#[test]
fn what_pi_cannot_hold_is_described_or_dropped() {
    let user = AgentMessage::User {
        content: vec![
            ContentBlock::File {
                attachment_id: "a_1".into(),
                name: "spec.pdf".into(),
                mime: "application/pdf".into(),
                size: 10,
            },
            ContentBlock::FunctionResult {
                function_call_id: "call_9".into(),
                content: vec![ContentBlock::Text { text: "done".into() }],
                is_error: None,
            },
        ],
        timestamp: 5,
    };
    let entries = vec![SessionEntry::Message {
        id: "m1".into(),
        parent_id: None,
        timestamp: 5,
        revision: 3,
        origin: Some(json!({ "turn_id": "t" }).as_object().cloned().unwrap()),
        message: user,
    }];
    let conversation = Conversation::new("s".into(), entries, None, 0).checked().unwrap();
    let again = read(&source(&write(&conversation))).unwrap();
    assert_eq!(again, kept(&conversation));
    let content = again.entries[0].message().unwrap().content();
    assert_eq!(
        content[0],
        ContentBlock::Text {
            text: "[file spec.pdf (application/pdf, 10 bytes), attachment a_1]".into()
        }
    );
    assert_eq!(content[1], ContentBlock::Text { text: "[result of call call_9]\ndone".into() });
    assert_eq!((again.entries[0].revision(), again.entries[0].origin()), (0, None));
}
