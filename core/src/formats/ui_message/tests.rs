//! The UIMessage format's tests: a chat read as assistant then results and written back
//! unchanged, bad input; generated conversations round-tripped as `kept` says.

use super::*;
use crate::formats::corpus::{assert_chain, json_of};
use crate::formats::Source;
use crate::wire::{AgentMessage, ContentBlock, SessionEntry, StopReason};
use alloc::string::ToString;
use alloc::vec::Vec;
use proptest::prelude::*;

/// A user asking about a screenshot, and an assistant step that reasons, answers, runs one
/// tool that works and one that fails.
const CHAT: &str = r#"[
  {"id": "u1", "role": "user", "metadata": {"client": "web"}, "parts": [
{"type": "text", "text": "What is on this screen?"},
{"type": "file", "mediaType": "image/png", "filename": "shot.png", "url": "data:image/png;base64,iVBORw0KGgo="}
  ]},
  {"id": "a1", "role": "assistant", "parts": [
{"type": "step-start"},
{"type": "reasoning", "text": "Look at the image, then check the weather.", "state": "done"},
{"type": "text", "text": "A weather widget. Checking both cities.", "state": "done"},
{"type": "tool-weather", "toolCallId": "call_1", "state": "output-available", "input": {"city": "Berlin"}, "output": {"celsius": 21}},
{"type": "data-progress", "id": "p1", "data": {"done": 1}},
{"type": "tool-weather", "toolCallId": "call_2", "state": "output-error", "input": {"city": "Atlantis"}, "errorText": "unknown city", "providerExecuted": false}
  ]}
]"#;

const AT: i64 = 1_733_234_400_000;

pub(super) fn source(bytes: &[u8]) -> Source<'_> {
    Source { name: "chats/s_ui.json", bytes, modified: AT }
}

#[test]
fn reads_a_chat_as_assistant_then_results() {
    let conversation = read(&source(CHAT.as_bytes())).unwrap();
    assert_eq!(conversation.meta.session_id, "s_ui");
    assert_chain(&conversation, &["u1", "a1", "ui_message_2", "ui_message_3"], AT);
    let messages: Vec<&AgentMessage> =
        conversation.entries.iter().filter_map(SessionEntry::message).collect();
    assert_eq!(
        messages[0].content(),
        [
            ContentBlock::Text { text: "What is on this screen?".into() },
            ContentBlock::Image {
                mime: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
                attachment_id: None
            },
        ]
    );
    assert!(matches!(
        messages[1],
        AgentMessage::Assistant { stop_reason: StopReason::FunctionCall, .. }
    ));
    assert_eq!(messages[1].content().len(), 4);
    assert!(matches!(
        messages[2],
        AgentMessage::FunctionResult { function_call_id, function_id, content, is_error: false, .. }
            if function_call_id == "call_1" && function_id == "weather"
                && content == &[ContentBlock::Text { text: "{\"celsius\":21}".into() }]
    ));
    assert!(matches!(
        messages[3],
        AgentMessage::FunctionResult { function_call_id, content, is_error: true, .. }
            if function_call_id == "call_2" && content == &[ContentBlock::Text { text: "unknown city".into() }]
    ));
}

#[test]
fn writes_a_chat_back_unchanged() {
    let conversation = read(&source(CHAT.as_bytes())).unwrap();
    assert_eq!(json_of(&write(&conversation)), json_of(CHAT.as_bytes()));
}

#[test]
fn kept_keeps_a_conversation_read_from_ui_messages_whole() {
    let conversation = read(&source(CHAT.as_bytes())).unwrap();
    let mut again = kept(&conversation);
    again.meta.session_id = conversation.meta.session_id.clone();
    assert_eq!(again, conversation);
}

#[test]
fn bad_input_is_an_error_naming_the_line() {
    let torn = "{\"id\":\"u1\",\"role\":\"user\",\"parts\":[]}\n{\"id\":\"u2\",\"ro";
    assert_eq!(read(&source(torn.as_bytes())).unwrap_err().line, Some(2));
    let pi = r#"{"type":"session","version":3,"id":"u","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/"}"#;
    assert_eq!(read(&source(pi.as_bytes())).unwrap_err().line, Some(1));
    assert!(!looks_like(pi.as_bytes()));
    assert!(read(&source(b"")).is_err());
    let torn_array = "[{\"id\":\"u1\",\"role\":\"user\",\"parts\":[]},\n {\"id\":";
    assert_eq!(read(&source(torn_array.as_bytes())).unwrap_err().line, Some(2));
}

#[test]
fn looks_like_ui_messages_only() {
    assert!(looks_like(CHAT.as_bytes()));
    assert!(!looks_like(br#"[{"type":"message","role":"user","content":"hi"}]"#));
    assert!(!looks_like(b"[]"));
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
