//! Fuzz target `formats`: arbitrary bytes as a file of each of the other agents' formats (pi,
//! Claude Code, OpenAI items, UI messages). Reading never panics: a file is read or refused with
//! a `FormatError`. What reads is a conversation this store can hold (checked: parents first,
//! unique ids, the leaf an entry). Writing it in its format and in every other one never panics,
//! nor does `kept`, and a written file that is not empty reads back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use session_core::formats::{self, Format, Source};

fuzz_target!(|data: &[u8]| {
    let _ = formats::detect(data);
    for format in Format::ALL {
        let source = Source { name: "fuzz.jsonl", bytes: data, modified: 0 };
        let Ok(conversation) = format.read(&source) else { continue };
        let again = conversation.clone().checked().expect("a read conversation is checked");
        assert!(again == conversation, "{format}: checking a read conversation changed it");
        for to in Format::ALL {
            let written = to.write(&conversation);
            let kept = match to {
                Format::Pi => formats::pi::kept(&conversation),
                Format::ClaudeCode => formats::claude_code::kept(&conversation),
                Format::Openai => formats::openai::kept(&conversation),
                Format::UiMessage => formats::ui_message::kept(&conversation),
            };
            if written.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let source = Source { name: "fuzz.jsonl", bytes: &written, modified: 0 };
            if let Err(e) = to.read(&source) {
                panic!("{format} → {to}: the written file does not read back: {e}");
            }
            drop(kept);
        }
    }
});
