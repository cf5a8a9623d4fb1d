//! Generated conversations for the formats' round-trip property tests: trees with branches, every
//! role and block kind, function calls answered by results, custom messages and entries, and
//! compaction records, over texts that mix scripts; and the checks the one-branch formats' tests
//! share.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use proptest::prelude::*;
use serde_json::json;

use super::Conversation;
use crate::wire::{AgentMessage, ContentBlock, SessionEntry, StopReason, Usage};

/// A text of a few words from several scripts (possibly empty).
pub fn text() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("hello"),
        Just("Grüße"),
        Just("数据库"),
        Just("テスト"),
        Just("fs/mod.rs"),
        Just("snake_case"),
        Just("\"quoted\""),
        Just("line\nbreak"),
        Just("tab\t"),
        Just("🙂"),
    ];
    proptest::collection::vec(word, 0..5).prop_map(|words| words.join(" "))
}

/// What one entry is, before ids and parents are drawn.
#[derive(Debug, Clone)]
enum Shape {
    User { text: String, image: bool },
    Assistant { text: String, thinking: Option<String>, call: Option<String>, usage: bool },
    Result { text: String, is_error: bool },
    CustomMessage { text: String },
    CustomEntry { value: String },
    Compaction { summary: String },
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        3 => (text(), any::<bool>()).prop_map(|(text, image)| Shape::User { text, image }),
        3 => (text(), proptest::option::of(text()), proptest::option::of(text()), any::<bool>())
            .prop_map(|(text, thinking, call, usage)| Shape::Assistant { text, thinking, call, usage }),
        2 => (text(), any::<bool>()).prop_map(|(text, is_error)| Shape::Result { text, is_error }),
        1 => text().prop_map(|text| Shape::CustomMessage { text }),
        1 => text().prop_map(|value| Shape::CustomEntry { value }),
        1 => text().prop_map(|summary| Shape::Compaction { summary }),
    ]
}

/// A conversation of 1–`max` entries: each entry's parent is an earlier one (mostly the one just
/// before, so there are long branches and a few forks), the active leaf any entry.
pub fn conversation(max: usize) -> impl Strategy<Value = Conversation> {
    proptest::collection::vec((shape(), 0usize..4, any::<prop::sample::Index>()), 1..=max)
        .prop_flat_map(|shapes| {
            let n = shapes.len();
            (Just(shapes), 0..n, text())
        })
        .prop_map(|(shapes, leaf, title)| build(shapes, leaf, title))
}

fn build(
    shapes: Vec<(Shape, usize, prop::sample::Index)>,
    leaf: usize,
    title: String,
) -> Conversation {
    let base = 1_733_234_401_000i64;
    let mut entries: Vec<SessionEntry> = Vec::new();
    let mut calls: Vec<(String, String)> = Vec::new();
    for (i, (shape, jump, pick)) in shapes.into_iter().enumerate() {
        let id = format!("e{i:02}");
        let parent = match i {
            0 => None,
            _ if jump == 0 => Some(entries[pick.index(i)].id().to_string()),
            _ => Some(entries[i - 1].id().to_string()),
        };
        let timestamp = base + i as i64 * 1000;
        let message = |message| SessionEntry::Message {
            id: id.clone(),
            parent_id: parent.clone(),
            timestamp,
            revision: 0,
            origin: None,
            message,
        };
        let entry = match shape {
            Shape::User { text, image } => {
                let mut content = vec![ContentBlock::Text { text }];
                if image {
                    content.push(ContentBlock::Image {
                        mime: "image/png".into(),
                        data: "iVBORw0KGgo=".into(),
                        attachment_id: None,
                    });
                }
                message(AgentMessage::User { content, timestamp })
            }
            Shape::Assistant { text, thinking, call, usage } => {
                let mut content = Vec::new();
                if let Some(thinking) = thinking {
                    content.push(ContentBlock::Thinking { text: thinking, signature: None });
                }
                content.push(ContentBlock::Text { text });
                let stop_reason = match &call {
                    Some(args) => {
                        let call_id = format!("call_{i}");
                        let function_id = String::from("read");
                        calls.push((call_id.clone(), function_id.clone()));
                        content.push(ContentBlock::FunctionCall {
                            id: call_id,
                            function_id,
                            arguments: json!({ "path": args }),
                        });
                        StopReason::FunctionCall
                    }
                    None => StopReason::End,
                };
                message(AgentMessage::Assistant {
                    content,
                    stop_reason,
                    model: "claude-sonnet-4-5".into(),
                    provider: "anthropic".into(),
                    timestamp,
                    native_stop_reason: None,
                    error_message: None,
                    error_kind: None,
                    warnings: None,
                    usage: usage.then(|| Usage {
                        input: Some(10 + i as u64),
                        output: Some(5),
                        cache_read: Some(0),
                        cache_write: Some(0),
                        reasoning: None,
                        cost_usd: None,
                    }),
                    agent: None,
                })
            }
            Shape::Result { text, is_error } => {
                let (call_id, function_id) =
                    calls.last().cloned().unwrap_or_else(|| ("call_none".into(), "read".into()));
                message(AgentMessage::FunctionResult {
                    function_call_id: call_id,
                    function_id,
                    content: vec![ContentBlock::Text { text }],
                    details: serde_json::Value::Null,
                    is_error,
                    timestamp,
                })
            }
            Shape::CustomMessage { text } => message(AgentMessage::Custom {
                custom_type: "note".into(),
                content: vec![ContentBlock::Text { text }],
                display: None,
                details: None,
                timestamp,
            }),
            Shape::CustomEntry { value } => SessionEntry::Custom {
                id: id.clone(),
                parent_id: parent.clone(),
                timestamp,
                revision: 0,
                origin: None,
                custom_type: "bookmark".into(),
                data: json!({ "value": value }),
            },
            Shape::Compaction { summary } => {
                let first_kept = parent.clone().unwrap_or_else(|| id.clone());
                SessionEntry::Custom {
                    id: id.clone(),
                    parent_id: parent.clone(),
                    timestamp,
                    revision: 0,
                    origin: None,
                    custom_type: crate::compaction::COMPACTION.into(),
                    data: json!({ "summary": summary, "first_kept_entry_id": first_kept, "tokens_before": 1234 }),
                }
            }
        };
        entries.push(entry);
    }
    let leaf = Some(entries[leaf].id().to_string());
    let mut conversation = Conversation::new("s_generated".into(), entries, leaf, base);
    conversation.meta.title = title;
    conversation.checked().expect("a generated tree is well formed")
}

/// The JSON value of a file's bytes.
pub fn json_of(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).expect("JSON")
}

/// `conversation` is one chain: entry `i` is the child of entry `i - 1`, `at + i` ms old.
pub fn assert_chain(conversation: &Conversation, ids: &[&str], at: i64) {
    let got: Vec<&str> = conversation.entries.iter().map(SessionEntry::id).collect();
    assert_eq!(got, ids);
    for (i, entry) in conversation.entries.iter().enumerate() {
        assert_eq!(entry.timestamp(), at + i as i64);
        assert_eq!(entry.parent_id(), i.checked_sub(1).map(|p| ids[p]));
    }
}
