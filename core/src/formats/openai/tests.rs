//! The OpenAI format's tests: a turn read as a chain and written back unchanged, JSONL and
//! unknown items, bad input; generated conversations round-tripped as `kept` says.

use super::*;
use crate::formats::corpus::{assert_chain, json_of};
use crate::formats::Source;
use crate::wire::{AgentMessage, ContentBlock, SessionEntry, StopReason};
use alloc::string::ToString;
use alloc::vec::Vec;
use proptest::prelude::*;
use serde_json::{json, Value};

/// A developer prompt, a question, a reasoning item, an answer that calls a function (its
/// arguments spaced as the model wrote them), the output, and the final answer.
const TURN: &str = r#"[
  {"type": "message", "role": "developer", "content": "You are a terse assistant."},
  {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is in notes.txt?"}]},
  {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Read the file first."}], "encrypted_content": "gAAAAB"},
  {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
  {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file", "arguments": "{\"path\": \"notes.txt\"}", "status": "completed"},
  {"type": "function_call_output", "call_id": "call_1", "output": "buy milk"},
  {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "It says: buy milk.", "annotations": []}]}
]"#;

const AT: i64 = 1_733_234_400_000;

pub(super) fn source(bytes: &[u8]) -> Source<'_> {
    Source { name: "chats/s_turn.json", bytes, modified: AT }
}

#[test]
fn reads_a_turn_as_a_chain_of_one_entry_per_item() {
    let conversation = read(&source(TURN.as_bytes())).unwrap();
    assert_eq!(conversation.meta.session_id, "s_turn");
    assert_chain(
        &conversation,
        &["openai_0", "openai_1", "rs_1", "msg_1", "fc_1", "openai_5", "msg_2"],
        AT,
    );
    assert_eq!(conversation.leaf.as_deref(), Some("msg_2"));
    let messages: Vec<&AgentMessage> =
        conversation.entries.iter().filter_map(SessionEntry::message).collect();
    assert!(
        matches!(messages[0], AgentMessage::Custom { custom_type, .. } if custom_type == "developer")
    );
    assert_eq!(
        messages[1].content(),
        [ContentBlock::Text { text: "What is in notes.txt?".into() }]
    );
    assert_eq!(
        messages[2].content(),
        [ContentBlock::Thinking { text: "Read the file first.".into(), signature: None }]
    );
    assert_eq!(
        messages[4].content(),
        [ContentBlock::FunctionCall {
            id: "call_1".into(),
            function_id: "read_file".into(),
            arguments: json!({ "path": "notes.txt" }),
        }]
    );
    assert!(matches!(
        messages[5],
        AgentMessage::FunctionResult { function_id, content, .. }
            if function_id == "read_file" && content == &[ContentBlock::Text { text: "buy milk".into() }]
    ));
    assert!(matches!(
        messages[6],
        AgentMessage::Assistant { stop_reason: StopReason::End, provider, .. } if provider == "openai"
    ));
}

#[test]
fn writes_a_turn_back_unchanged() {
    let conversation = read(&source(TURN.as_bytes())).unwrap();
    assert_eq!(json_of(&write(&conversation)), json_of(TURN.as_bytes()));
}

#[test]
fn kept_keeps_a_conversation_read_from_openai_whole() {
    let conversation = read(&source(TURN.as_bytes())).unwrap();
    let mut again = kept(&conversation);
    again.meta.session_id = conversation.meta.session_id.clone();
    assert_eq!(again, conversation);
}

#[test]
fn reads_jsonl_and_keeps_unknown_items() {
    let jsonl = "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}\n\n{\"type\":\"web_search_call\",\"id\":\"ws_1\",\"status\":\"completed\"}\n";
    let conversation = read(&source(jsonl.as_bytes())).unwrap();
    assert!(matches!(
        &conversation.entries[1],
        SessionEntry::Custom { id, custom_type, .. } if id == "ws_1" && custom_type == "openai.web_search_call"
    ));
    let items: Vec<Value> =
        jsonl.lines().filter(|l| !l.is_empty()).map(|l| json_of(l.as_bytes())).collect();
    assert_eq!(json_of(&write(&conversation)), Value::Array(items));
}

#[test]
fn bad_input_is_an_error_naming_the_line() {
    let torn =
        "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}\n{\"type\":\"message\",\"ro";
    assert_eq!(read(&source(torn.as_bytes())).unwrap_err().line, Some(2));
    let pi = r#"{"type":"session","version":3,"id":"u","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/"}"#;
    assert_eq!(read(&source(pi.as_bytes())).unwrap_err().line, Some(1));
    assert!(!looks_like(pi.as_bytes()));
    assert!(read(&source(b"")).is_err());
    assert!(read(&source(b"  \n")).is_err());
    let torn_array = "[{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"},\n {\"type\":";
    assert_eq!(read(&source(torn_array.as_bytes())).unwrap_err().line, Some(2));
    assert_eq!(read(&source(b"[1]")).unwrap_err().line, Some(1));
}

#[test]
fn looks_like_openai_items_only() {
    assert!(looks_like(TURN.as_bytes()));
    assert!(looks_like(br#"{"role":"user","content":[{"type":"input_text","text":"hi"}]}"#));
    assert!(!looks_like(br#"[{"id":"m","role":"user","parts":[{"type":"text","text":"hi"}]}]"#));
    assert!(!looks_like(b"not json"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn generated_conversations_keep_what_kept_says(c in super::super::corpus::conversation(12)) {
        let bytes = write(&c);
        let source = Source { name: "s_generated.json", bytes: &bytes, modified: c.meta.created_at };
        let again = read(&source).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(again, kept(&c));
    }
}
