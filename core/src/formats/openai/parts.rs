//! Content parts ↔ blocks: the blocks a message item's `content` (or an output's `output`)
//! holds, the parts blocks are written as, and a call's `arguments` string.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{json, Value};

use crate::formats::data_url::{data_url, parse_data_url};
use crate::wire::ContentBlock;

/// The block of one content part (`None`: a part no block holds, kept only in the stash).
fn block_of_part(part: &Value) -> Option<ContentBlock> {
    let text = |key: &str| part.get(key).and_then(Value::as_str).map(str::to_string);
    match part.get("type").and_then(Value::as_str)? {
        "input_text" | "output_text" => Some(ContentBlock::Text { text: text("text")? }),
        "refusal" => Some(ContentBlock::Text { text: text("refusal")? }),
        "input_image" => {
            let (mime, data) = parse_data_url(&text("image_url")?)?;
            Some(ContentBlock::Image { mime, data, attachment_id: None })
        }
        _ => None,
    }
}

/// The blocks of a message's `content` or an output's `output` (a string or a part list).
pub(super) fn blocks_of_content(content: &Value) -> Vec<ContentBlock> {
    match content {
        Value::String(text) => vec![ContentBlock::Text { text: text.clone() }],
        Value::Array(parts) => parts.iter().filter_map(block_of_part).collect(),
        _ => Vec::new(),
    }
}

/// The part of a block sent as input (`None`: a block this format has no part for).
pub(super) fn input_part(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text { text } => Some(json!({ "type": "input_text", "text": text })),
        ContentBlock::Image { mime, data, .. } => Some(json!({
            "type": "input_image", "image_url": data_url(mime, data), "detail": "auto"
        })),
        _ => None,
    }
}

pub(super) fn output_text_part(text: &str) -> Value {
    json!({ "type": "output_text", "text": text, "annotations": [] })
}

/// The text and image blocks of `content` (image attachment ids dropped): what input parts hold.
pub(super) fn input_blocks(content: &[ContentBlock]) -> Vec<ContentBlock> {
    content.iter().filter_map(|b| input_part(b).and_then(|p| block_of_part(&p))).collect()
}

/// A function result's `output`: the text of one text block, else a part list.
pub(super) fn output_of(content: &[ContentBlock]) -> Value {
    match input_blocks(content).as_slice() {
        [ContentBlock::Text { text }] => Value::String(text.clone()),
        blocks => Value::Array(blocks.iter().filter_map(input_part).collect()),
    }
}

/// A call's `arguments` string read as JSON (a string that is not JSON is kept as a string).
pub(super) fn arguments_of(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

pub(super) fn arguments_string(arguments: &Value) -> String {
    serde_json::to_string(arguments).unwrap_or_default()
}
