//! Matching and scoring, the last of the search rules: a text matches when every query item
//! occurs in it (its terms at consecutive positions); its score is the number of occurrences; its
//! snippet is a window of the text around the first occurrence, with every occurrence inside it
//! as a highlight (character ranges, counted in Unicode scalar values).

use alloc::string::String;
use alloc::vec::Vec;

use super::query::{Item, Query};
use super::tokens::{for_each_token, Token};

/// Characters of context kept before and after the first occurrence.
const BEFORE: usize = 60;
const AFTER: usize = 100;

/// How one text matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    pub score: u64,
    pub snippet: String,
    /// `[start, end)` in characters of `snippet`.
    pub highlights: Vec<[u64; 2]>,
}

/// Matches `text` against `query`: `None` unless every item occurs.
pub fn match_text(query: &Query, text: &str) -> Option<Matched> {
    matched(query, text, true)
}

/// [`match_text`] without the cheap test first.
pub fn match_tokens(query: &Query, text: &str) -> Option<Matched> {
    matched(query, text, false)
}

/// [`match_text`], with [`may_match`] first when `test_first` (word by word needs none: it
/// looks for the terms before it tokenizes).
fn matched(query: &Query, text: &str, test_first: bool) -> Option<Matched> {
    let spans = match by_words(query, text) {
        true => word_spans(query, text)?,
        false if test_first && !may_match(query, text) => return None,
        false => token_spans(query, text)?,
    };
    let score = spans.len() as u64;
    let (snippet, highlights) = snippet(text, &spans);
    Some(Matched { score, snippet, highlights })
}

/// Whether `text` is matched word by word ([`word_spans`]): an ASCII text, a query of one-term
/// items (words and prefixes).
fn by_words(query: &Query, text: &str) -> bool {
    text.is_ascii() && query.items.iter().all(|item| item.terms.len() == 1)
}

/// The byte span of every occurrence of every item, in order of start; `None` unless every item
/// occurs. Tokenizes the whole text.
fn token_spans(query: &Query, text: &str) -> Option<Vec<(usize, usize)>> {
    // Only a token some query term matches can stand in an occurrence: the others are not kept.
    let mut tokens: Vec<Token> = Vec::new();
    for_each_token(text, &mut 0, |t| {
        let wanted = |item: &Item| (0..item.terms.len()).any(|i| term_matches(item, i, t.term));
        if query.items.iter().any(wanted) {
            tokens.push(t.to_token());
        }
    });
    let mut spans = Vec::new();
    for item in &query.items {
        let before = spans.len();
        occurrences(item, &tokens, &mut spans);
        if spans.len() == before {
            return None;
        }
    }
    Some(spans)
}

/// [`token_spans`] where [`by_words`] holds, tokenizing only the words that hold a term.
fn word_spans(query: &Query, text: &str) -> Option<Vec<(usize, usize)>> {
    let mut spans = Vec::new();
    for item in &query.items {
        let before = spans.len();
        ascii_occurrences(item, text, &mut spans);
        if spans.len() == before {
            return None;
        }
    }
    Some(spans)
}

/// [`occurrences`] of a one-term item in an ASCII text, tokenizing only the words that hold its
/// term. There a token's term is its source lowercased, so a token the term matches starts where
/// the text holds the term whatever its case; a word is tokenized alone as it is in the text.
fn ascii_occurrences(item: &Item, text: &str, spans: &mut Vec<(usize, usize)>) {
    let (bytes, term) = (text.as_bytes(), item.terms[0].as_bytes());
    if term.is_empty() || term.len() > bytes.len() {
        return;
    }
    // Terms are folded: a byte of the text with bit 0x20 set is its lowercase letter (or a
    // byte that is no letter, which the whole compare then turns away).
    let first = term[0];
    let mut done_to = 0; // the end of the last word tokenized
    for at in 0..=bytes.len() - term.len() {
        if bytes[at] | 0x20 != first
            || at < done_to
            || !bytes[at..at + term.len()].eq_ignore_ascii_case(term)
        {
            continue;
        }
        let from =
            bytes[..at].iter().rposition(|b| !b.is_ascii_alphanumeric()).map_or(0, |i| i + 1);
        let to = bytes[at..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .map_or(bytes.len(), |i| at + i);
        for_each_token(&text[from..to], &mut 0, |t| {
            if term_matches(item, 0, t.term) {
                let span = (from + t.start, from + t.end);
                let place = spans.partition_point(|s| *s < span);
                spans.insert(place, span);
            }
        });
        done_to = to.max(at + 1);
    }
}

/// A cheap test before tokenizing: an ASCII text folds to its ASCII lowercase and every token is a
/// piece of that, so a term (or prefix) that is not a piece of it cannot occur. Other texts pass.
pub fn may_match(query: &Query, text: &str) -> bool {
    if !text.is_ascii() {
        return true;
    }
    // A plain window compare (terms are folded: lowercase): `str::contains` would link core's
    // two-way searcher into the browser bundle for texts this short.
    let holds = |term: &str| {
        text.as_bytes().windows(term.len()).any(|w| w.eq_ignore_ascii_case(term.as_bytes()))
    };
    query.items.iter().all(|item| item.terms.iter().all(|term| holds(term)))
}

fn term_matches(item: &Item, i: usize, term: &str) -> bool {
    if item.prefix && i + 1 == item.terms.len() {
        term.starts_with(item.terms[i].as_str())
    } else {
        term == item.terms[i]
    }
}

/// Adds the byte span of every occurrence of `item` to `spans`, kept in order of start.
fn occurrences(item: &Item, tokens: &[Token], spans: &mut Vec<(usize, usize)>) {
    // Tokens are in position order: those at `pos` are one run, found by bisection.
    let at = |pos: u32| {
        let from = tokens.partition_point(|t| t.pos < pos);
        tokens[from..].iter().take_while(move |t| t.pos == pos)
    };
    for first in tokens.iter().filter(|t| term_matches(item, 0, &t.term)) {
        if first.whole && item.terms.len() > 1 {
            continue;
        }
        let mut end = first.end;
        let whole = (1..item.terms.len()).all(|i| {
            match at(first.pos + i as u32).find(|t| !t.whole && term_matches(item, i, &t.term)) {
                Some(t) => {
                    end = t.end;
                    true
                }
                None => false,
            }
        });
        if whole {
            let span = (first.start, end);
            let place = spans.partition_point(|s| *s < span);
            spans.insert(place, span);
        }
    }
}

/// The window around the first span, and the spans inside it in characters.
fn snippet(text: &str, spans: &[(usize, usize)]) -> (String, Vec<[u64; 2]>) {
    let Some(&(first, _)) = spans.first() else {
        return (String::new(), Vec::new());
    };
    let from =
        text[..first].char_indices().rev().nth(BEFORE.saturating_sub(1)).map_or(0, |(i, _)| i);
    let to = text[first..].char_indices().nth(AFTER).map_or(text.len(), |(i, _)| first + i);
    let window = &text[from..to];
    let chars_before = |byte: usize| text[from..byte].chars().count() as u64;
    let mut highlights: Vec<[u64; 2]> = Vec::new();
    for &(start, end) in spans.iter().filter(|&&(s, _)| s >= from && s < to) {
        let range = [chars_before(start), chars_before(end.min(to))];
        match highlights.last_mut() {
            Some(last) if range[0] <= last[1] => last[1] = last[1].max(range[1]),
            _ => highlights.push(range),
        }
    }
    let snippet = window.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    (snippet, highlights)
}

#[cfg(test)]
mod tests {
    use super::match_text;
    use crate::search::query::parse;

    fn hit(q: &str, text: &str) -> Option<(u64, alloc::string::String, alloc::vec::Vec<[u64; 2]>)> {
        match_text(&parse(q).expect("parses"), text).map(|m| (m.score, m.snippet, m.highlights))
    }

    #[test]
    fn every_item_must_occur() {
        assert!(hit("parser tests", "Refactor the parser and run the tests").is_some());
        assert!(hit("parser lexer", "Refactor the parser").is_none());
        assert!(hit("\"run the tests\"", "run the tests").is_some());
        assert!(hit("\"the run tests\"", "run the tests").is_none());
    }

    #[test]
    fn identifiers_paths_cjk_and_accents() {
        assert!(hit("session::append", "call session::append twice").is_some());
        assert!(hit("append", "call session::append twice").is_some());
        assert!(hit("mod.rs", "see src/fs/mod.rs").is_some());
        assert!(hit("camelCase", "a camelCaseName here").is_some());
        assert!(hit("camelcase", "a camelCase here").is_some());
        assert!(hit("東京", "私は東京都に住んでいます").is_some());
        assert!(hit("京都に", "私は東京都に住んでいます").is_some());
        assert!(hit("大阪", "私は東京都に住んでいます").is_none());
        assert!(hit("strasse", "Die Straße ist lang").is_some());
        assert!(hit("CAFÉ", "un cafe noir").is_some());
        assert!(hit("sess*", "the Session store").is_some());
    }

    proptest::proptest! {
        /// Word by word is the whole text tokenized, for every ASCII text and one-term query.
        #[test]
        fn words_match_as_tokens_do(
            text in "([a-zA-Z0-9]{1,8}[ .:_/-]?){0,12}",
            items in proptest::collection::vec(("[a-z0-9]{1,4}", proptest::bool::ANY), 1..3),
        ) {
            let query: alloc::vec::Vec<alloc::string::String> = items
                .iter()
                .map(|(t, prefix)| alloc::format!("{t}{}", if *prefix { "*" } else { "" }))
                .collect();
            let query = query.join(" ");
            let Ok(query) = parse(&query) else { return Ok(()) };
            proptest::prop_assume!(super::by_words(&query, &text));
            proptest::prop_assert_eq!(super::word_spans(&query, &text), super::token_spans(&query, &text));
        }
    }

    #[test]
    fn highlights_are_character_ranges_of_the_snippet() {
        let (score, snippet, highlights) = hit("größe", "Die Größe, die GRÖSSE!").expect("matches");
        assert_eq!(score, 2);
        let chars: alloc::vec::Vec<char> = snippet.chars().collect();
        let shown: alloc::vec::Vec<alloc::string::String> = highlights
            .iter()
            .map(|[a, b]| chars[*a as usize..*b as usize].iter().collect())
            .collect();
        assert_eq!(shown, ["Größe", "GRÖSSE"]);
    }
}
