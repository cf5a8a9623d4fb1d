//! The search rules (issue 39) on texts and queries proptest picks — any Unicode, control
//! characters, quotes and stars, CJK, identifiers: matching never panics, a word taken from a
//! text always finds it, highlights are ordered ranges inside their snippet, and the cheap test
//! before tokenizing never turns a match away.
//! `PROPTEST_CASES` overrides the default of 256 cases.

use proptest::prelude::*;
use session_core::search::{match_text, match_tokens, may_match, parse, tokens::tokenize};

/// Text from pieces that stress the tokenizer: words, identifiers, CJK, accents, signs.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-zA-Z]{1,8}",
        "[a-z]{1,5}(::|/|_|\\.|-)[a-z]{1,5}",
        "[a-z]{1,4}[A-Z][a-z]{1,4}",
        "[東京都大阪日本語かなカタカナ한국]{1,4}",
        "[ÄÖÜäöüßéèçÉŒœ]{1,3}[a-z]{0,3}",
        "[ \\n\\t\"*()\\x00-\\x1f]{1,3}",
        any::<String>().prop_map(|s| s.chars().take(6).collect()),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_query_on_any_text_answers_without_panicking(query in text(), body in text()) {
        if let Ok(q) = parse(&query) {
            if let Some(m) = match_text(&q, &body) {
                let len = m.snippet.chars().count() as u64;
                let mut end = 0;
                for [a, b] in &m.highlights {
                    prop_assert!(end <= *a && a < b && *b <= len, "{:?} in {:?}", m.highlights, m.snippet);
                    end = *b;
                }
                prop_assert!(m.score >= q.items.len() as u64);
            }
        }
    }

    #[test]
    fn the_cheap_test_never_turns_a_match_away(query in text(), body in text()) {
        if let Ok(q) = parse(&query) {
            if match_tokens(&q, &body).is_some() {
                prop_assert!(may_match(&q, &body), "{:?} in {:?}", query, body);
            }
        }
    }

    #[test]
    fn every_word_of_a_text_finds_it(body in text(), pick in any::<prop::sample::Index>()) {
        let words: Vec<&str> = body.split_whitespace().filter(|w| !tokenize(w).is_empty()).collect();
        if words.is_empty() {
            return Ok(());
        }
        let word = words[pick.index(words.len())];
        let query = format!("\"{}\"", word.replace('"', " "));
        if let Ok(q) = parse(&query) {
            prop_assert!(match_text(&q, &body).is_some(), "{:?} not found in {:?}", query, body);
        }
    }
}
