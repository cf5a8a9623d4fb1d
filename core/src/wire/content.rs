//! Message content: the `ContentBlock` union and provider `Usage` accounting (contract §1.2–§1.3).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

crate::internally_tagged! {
tag = "type", rename_all = "snake_case", remote = "ContentBlock";
/// The atomic unit of message content. A message's `content` is an ordered array of these.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ContentBlock {
    Text {
        text: String,
    },
    Image {
        /// MIME type, e.g. `image/png`.
        mime: String,
        /// Base64-encoded image bytes. Empty when the reader asked for `include_image_data: false`
        /// and the block carries an `attachment_id`: the original is then one
        /// `session::get-attachment` away.
        data: String,
        /// The stored original this inline copy was made from, when the writer also parked it with
        /// `session::put-attachment`. Lets a transcript reader skip the inline bytes and fetch them
        /// lazily; model-bound consumers ignore it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attachment_id: Option<String>,
    },
    /// Reference to an attachment kept in the session's attachment store
    /// (`session::put-attachment` / `session::get-attachment`). The bytes are never inline;
    /// consumers that hand content to a model drop this block and rely on the text expansion that
    /// travels beside it.
    File {
        /// Id returned by `session::put-attachment`.
        attachment_id: String,
        /// Original filename.
        name: String,
        /// MIME type, e.g. `application/pdf`.
        mime: String,
        /// Original byte length.
        size: u64,
    },
    Thinking {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    FunctionCall {
        /// Unique per call, echoed by the result.
        id: String,
        /// The iii function id to invoke.
        function_id: String,
        /// Model-produced arguments (JSON).
        #[serde(default)]
        arguments: Value,
    },
    FunctionResult {
        function_call_id: String,
        content: Vec<ContentBlock>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
}
}

/// Token / cost accounting reported by providers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl ContentBlock {
    /// The attachment this block references (`file` blocks and linked `image` blocks), if any.
    /// Nested `function_result` blocks are not inspected here; see [`visit_attachment_ids`].
    pub fn attachment_ref(&self) -> Option<&str> {
        match self {
            ContentBlock::File { attachment_id, .. } => Some(attachment_id),
            ContentBlock::Image { attachment_id: Some(id), .. } => Some(id),
            _ => None,
        }
    }
}

/// Calls `visit` with every attachment id referenced by `blocks`, recursing into nested
/// `function_result` blocks, in document order (duplicates included).
pub fn visit_attachment_ids<'a>(blocks: &'a [ContentBlock], visit: &mut dyn FnMut(&'a str)) {
    for block in blocks {
        if let Some(id) = block.attachment_ref() {
            visit(id);
        }
        if let ContentBlock::FunctionResult { content, .. } = block {
            visit_attachment_ids(content, visit);
        }
    }
}
