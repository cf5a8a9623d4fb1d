//! Data URLs (`data:<mime>;base64,<data>`): how OpenAI input images and UIMessage file parts
//! carry the bytes an image block holds.

use alloc::format;
use alloc::string::{String, ToString};

/// `data:<mime>;base64,<data>` → (mime, data).
pub fn parse_data_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    Some((mime.to_string(), data.to_string()))
}

pub fn data_url(mime: &str, data: &str) -> String {
    format!("data:{mime};base64,{data}")
}
