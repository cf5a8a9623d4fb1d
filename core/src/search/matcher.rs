//! Matching and scoring, the last of the search rules: a text matches when every query item
//! occurs in it (its terms at consecutive positions); its score is the number of occurrences; its
//! snippet is a window of the text around the first occurrence, with every occurrence inside it
//! as a highlight (character ranges, counted in Unicode scalar values).

use alloc::string::String;
use alloc::vec::Vec;

use super::query::{Item, Query};
use super::tokens::{tokenize, Token};

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
    if !may_match(query, text) {
        return None;
    }
    match_tokens(query, text)
}

/// [`match_text`] without the cheap test first: tokenizes every text.
pub fn match_tokens(query: &Query, text: &str) -> Option<Matched> {
    let tokens = tokenize(text);
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for item in &query.items {
        let before = spans.len();
        occurrences(item, &tokens, &mut spans);
        if spans.len() == before {
            return None;
        }
    }
    let score = spans.len() as u64;
    let (snippet, highlights) = snippet(text, &spans);
    Some(Matched { score, snippet, highlights })
}

/// A cheap test before tokenizing: an ASCII text folds to its ASCII lowercase and every token is a
/// piece of that, so a term (or prefix) that is not a piece of it cannot occur. Other texts pass.
pub fn may_match(query: &Query, text: &str) -> bool {
    if !text.is_ascii() {
        return true;
    }
    let lower = text.to_ascii_lowercase();
    // A plain window compare: `str::contains` would link core's two-way searcher into the
    // browser bundle for texts this short.
    let holds = |term: &str| lower.as_bytes().windows(term.len()).any(|w| w == term.as_bytes());
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
