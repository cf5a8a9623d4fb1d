//! What the `session::context` model test writes (issue 38): the messages of its script — user messages (some with a linked image), assistant messages with
//! thinking, text, function calls and usage, function results answering a call or none.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{json, Value};

use super::context_model::ModelSession;

impl ModelSession<'_> {
    pub(super) fn next_serial(&mut self) -> u64 {
        self.serial += 1;
        self.serial
    }

    pub(super) fn text(&mut self) -> String {
        let len = self.rng.below(48);
        (0..len)
            .map(|_| match self.rng.below(30) {
                0 => 'é',
                1 => ' ',
                n => char::from(b'a' + (n as u8 % 26)),
            })
            .collect()
    }

    pub(super) fn text_blocks(&mut self) -> Value {
        json!([{ "type": "text", "text": self.text() }])
    }

    /// An inline image, usually with the stored original it was made from (elided on request).
    pub(super) fn image(&mut self) -> Value {
        match self.rng.chance(75) {
            true => json!({ "type": "image", "mime": "image/png", "data": "aGVsbG8=",
                "attachment_id": "a_img" }),
            false => json!({ "type": "image", "mime": "image/png", "data": "aGk=" }),
        }
    }

    pub(super) fn user_message(&mut self) -> Value {
        let mut content = vec![json!({ "type": "text", "text": self.text() })];
        if self.rng.chance(15) {
            content.push(self.image());
        }
        json!({ "role": "user", "content": content, "timestamp": self.next_serial() })
    }

    /// Assistant content: sometimes thinking, a text, sometimes function calls (new call ids,
    /// remembered for results to answer; now and then the id of a result already written, so an
    /// update can also split a call from a result that was there first).
    pub(super) fn assistant_content(&mut self) -> (Vec<Value>, bool) {
        let mut content = Vec::new();
        if self.rng.chance(25) {
            content.push(json!({ "type": "thinking", "text": self.text() }));
        }
        content.push(json!({ "type": "text", "text": self.text() }));
        let calls = if self.rng.chance(40) { 1 + self.rng.below(2) } else { 0 };
        for _ in 0..calls {
            let answered = match self.rng.chance(20) {
                true => self.rng.pick(&self.answered),
                false => None,
            };
            let id = answered.unwrap_or_else(|| format!("k{}", self.next_serial()));
            content.push(json!({ "type": "function_call", "id": id, "function_id": "tool",
                "arguments": { "q": self.text() } }));
            self.calls.push(id);
        }
        (content, calls > 0)
    }

    pub(super) fn usage(&mut self) -> Option<Value> {
        match self.rng.below(10) {
            0..=3 => Some(json!({ "input": 9, "output": 1 + self.rng.below(300) })),
            4 => Some(json!({ "input": 7 })),
            _ => None,
        }
    }

    pub(super) fn assistant_message(&mut self) -> Value {
        let (content, calls) = self.assistant_content();
        let stop_reason = if calls { "function_call" } else { "end" };
        let mut message = json!({ "role": "assistant", "content": content,
            "stop_reason": stop_reason, "model": "m", "provider": "p",
            "timestamp": self.next_serial() });
        if let Some(usage) = self.usage() {
            message["usage"] = usage;
        }
        message
    }

    /// A result answering an earlier call (on any branch), or now and then one no call made;
    /// sometimes carrying a nested result with an image.
    pub(super) fn result_message(&mut self) -> Value {
        let call_id = match self.rng.chance(85) {
            true => self.rng.pick(&self.calls),
            false => None,
        };
        let call_id = call_id.unwrap_or_else(|| format!("orphan{}", self.next_serial()));
        self.answered.push(call_id.clone());
        let mut content = vec![json!({ "type": "text", "text": self.text() })];
        if self.rng.chance(10) {
            content.push(json!({ "type": "function_result", "function_call_id": call_id,
                "content": [self.image()] }));
        }
        json!({ "role": "function_result", "function_call_id": call_id, "function_id": "tool",
            "content": content, "is_error": self.rng.chance(10),
            "timestamp": self.next_serial() })
    }
}
