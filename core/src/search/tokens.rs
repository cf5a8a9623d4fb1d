//! Tokens, the second of the search rules: a text as a sequence of folded terms at positions,
//! each with the byte range of the source text it came from (for highlights).
//!
//! - A run of letters and digits (not CJK) is a word. A word is split where its ASCII case changes
//!   (`camelCase` → `camel`, `case`; `HTTPServer` → `http`, `server`), and a split word also gives
//!   its whole (`camelcase`) at its first part's position.
//! - Anything else separates words without a gap, so an identifier's parts stay adjacent:
//!   `session::append`, `fs/mod.rs` and `snake_case` are phrases of their parts.
//! - A run of CJK characters (Han, kana, Hangul) gives its overlapping two-character substrings
//!   (bigrams) at consecutive positions, or the one character of a one-character run: any
//!   substring of two or more characters is then a phrase of bigrams.

use alloc::string::String;
use alloc::vec::Vec;

use super::chars::{is_accent, is_cjk};
use super::fold::{fold_char_into, fold_into};

/// One term of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The folded term.
    pub term: String,
    /// Its position; a split word's whole shares its first part's (and comes before it: tokens
    /// are in position order).
    pub pos: u32,
    /// Byte range in the source text.
    pub start: usize,
    pub end: usize,
    /// The whole of a split word (queries use only the parts).
    pub whole: bool,
}

/// One term of a text as [`for_each_token`] hands it out: borrowed for the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenRef<'a> {
    pub term: &'a str,
    pub pos: u32,
    pub start: usize,
    pub end: usize,
    pub whole: bool,
}

impl TokenRef<'_> {
    /// The token as an owned [`Token`].
    pub fn to_token(self) -> Token {
        let TokenRef { term, pos, start, end, whole } = self;
        Token { term: String::from(term), pos, start, end, whole }
    }
}

#[inline]
fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    (c.is_alphanumeric() || is_accent(c)) && !is_cjk(c)
}

/// The character at byte `at` of `text` (a character boundary).
#[inline]
fn char_at(text: &str, at: usize) -> char {
    match text.as_bytes()[at] {
        b if b.is_ascii() => char::from(b),
        _ => text[at..].chars().next().unwrap_or('\0'),
    }
}

/// The end of the run of characters `keep` takes from byte `from` of `text`.
fn run_end(text: &str, from: usize, keep: impl Fn(char) -> bool) -> usize {
    let mut at = from;
    while at < text.len() {
        let c = char_at(text, at);
        if !keep(c) {
            break;
        }
        at += c.len_utf8();
    }
    at
}

/// Hands each token of `text` to `each`, positions from `*pos` (advanced past them). Allocates
/// only the one buffer its terms are folded into: a matcher that keeps a few tokens of a long
/// text pays for those, not for every word.
pub fn for_each_token(text: &str, pos: &mut u32, mut each: impl FnMut(TokenRef<'_>)) {
    let mut term = String::new();
    let mut at = 0;
    while at < text.len() {
        let c = char_at(text, at);
        if is_word(c) {
            let end = run_end(text, at, is_word);
            word(text, at, end, pos, &mut term, &mut each);
            at = end;
        } else if is_cjk(c) {
            let end = run_end(text, at, is_cjk);
            cjk(text, at, end, pos, &mut term, &mut each);
            at = end;
        } else {
            at += c.len_utf8();
        }
    }
}

/// A CJK run: its overlapping bigrams, or its one character.
fn cjk(
    text: &str,
    start: usize,
    end: usize,
    pos: &mut u32,
    term: &mut String,
    each: &mut impl FnMut(TokenRef<'_>),
) {
    let mut chars = text[start..end].char_indices().peekable();
    let mut bigrams = 0;
    while let Some((i, c)) = chars.next() {
        let Some(&(j, d)) = chars.peek() else { break };
        term.clear();
        fold_char_into(c, term);
        fold_char_into(d, term);
        let (from, to) = (start + i, start + j + d.len_utf8());
        each(TokenRef { term, pos: *pos, start: from, end: to, whole: false });
        *pos += 1;
        bigrams += 1;
    }
    if bigrams == 0 {
        fold_into(&text[start..end], term);
        each(TokenRef { term, pos: *pos, start, end, whole: false });
        *pos += 1;
    }
}

/// Appends the tokens of `text` to `out`, positions from `*pos` (advanced past them).
pub fn tokenize_into(text: &str, pos: &mut u32, out: &mut Vec<Token>) {
    for_each_token(text, pos, |t| out.push(t.to_token()));
}

/// The tokens of `text`, from position 0.
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    tokenize_into(text, &mut 0, &mut out);
    out
}

/// Where a word is split: the byte offsets (in `source`) of each part but the first, where its
/// ASCII case changes (`camelCase`: before `C`; `HTTPServer`: before `S`).
fn cuts(source: &str) -> impl Iterator<Item = usize> + '_ {
    let mut chars = source.char_indices().peekable();
    let mut prev: Option<char> = None;
    core::iter::from_fn(move || {
        while let Some((i, cur)) = chars.next() {
            let next = chars.peek().map(|&(_, c)| c);
            let cut = prev.is_some_and(|prev| {
                let lower_to_upper =
                    (prev.is_lowercase() || prev.is_numeric()) && cur.is_uppercase();
                let acronym_end = prev.is_uppercase()
                    && cur.is_uppercase()
                    && next.is_some_and(char::is_lowercase);
                lower_to_upper || acronym_end
            });
            prev = Some(cur);
            if cut {
                return Some(i);
            }
        }
        None
    })
}

/// A word: its parts split at case changes, and its whole when it was split.
fn word(
    text: &str,
    start: usize,
    end: usize,
    pos: &mut u32,
    term: &mut String,
    each: &mut impl FnMut(TokenRef<'_>),
) {
    let source = &text[start..end];
    if source.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        // Most words: one part, already folded.
        each(TokenRef { term: source, pos: *pos, start, end, whole: false });
        *pos += 1;
        return;
    }
    if cuts(source).next().is_some() {
        // The whole goes first, at its first part's position: tokens stay in position order.
        fold_into(source, term);
        each(TokenRef { term, pos: *pos, start, end, whole: true });
    }
    let mut from = 0;
    for cut in cuts(source).chain([source.len()]) {
        fold_into(&source[from..cut], term);
        each(TokenRef { term, pos: *pos, start: start + from, end: start + cut, whole: false });
        *pos += 1;
        from = cut;
    }
}

#[cfg(test)]
mod tests {
    use super::tokenize;
    use alloc::vec::Vec;

    fn terms(text: &str) -> Vec<(&'static str, u32)> {
        tokenize(text)
            .into_iter()
            .map(|t| (&*alloc::boxed::Box::leak(t.term.into_boxed_str()), t.pos))
            .collect()
    }

    #[test]
    fn identifiers_are_phrases_of_their_parts() {
        assert_eq!(terms("session::append"), [("session", 0), ("append", 1)]);
        assert_eq!(terms("fs/mod.rs"), [("fs", 0), ("mod", 1), ("rs", 2)]);
        assert_eq!(terms("snake_case"), [("snake", 0), ("case", 1)]);
        assert_eq!(terms("camelCase"), [("camelcase", 0), ("camel", 0), ("case", 1)]);
        assert_eq!(terms("HTTPServer2"), [("httpserver2", 0), ("http", 0), ("server2", 1)]);
    }

    #[test]
    fn cjk_runs_give_bigrams() {
        assert_eq!(terms("東京都へ"), [("東京", 0), ("京都", 1), ("都へ", 2)]);
        assert_eq!(terms("Rust言語"), [("rust", 0), ("言語", 1)]);
        assert_eq!(terms("字 x"), [("字", 0), ("x", 1)]);
    }

    #[test]
    fn spans_point_into_the_source() {
        let text = "Größe: fooBar";
        for t in tokenize(text) {
            assert!(text.is_char_boundary(t.start) && text.is_char_boundary(t.end));
        }
        assert_eq!(tokenize(text)[0].term, "grosse");
        assert_eq!(&text[tokenize(text)[0].start..tokenize(text)[0].end], "Größe");
    }
}
