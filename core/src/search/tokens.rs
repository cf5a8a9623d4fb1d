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
use super::fold::{fold, fold_char_into};

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

fn is_word(c: char) -> bool {
    (c.is_alphanumeric() || is_accent(c)) && !is_cjk(c)
}

/// Appends the tokens of `text` to `out`, positions from `*pos` (advanced past them).
pub fn tokenize_into(text: &str, pos: &mut u32, out: &mut Vec<Token>) {
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if is_word(c) {
            let mut end = start;
            while let Some(&(i, c)) = chars.peek() {
                if !is_word(c) {
                    break;
                }
                end = i + c.len_utf8();
                chars.next();
            }
            word(text, start, end, pos, out);
        } else if is_cjk(c) {
            let mut run = Vec::new();
            while let Some(&(i, c)) = chars.peek() {
                if !is_cjk(c) {
                    break;
                }
                run.push((i, c));
                chars.next();
            }
            cjk(&run, pos, out);
        } else {
            chars.next();
        }
    }
}

/// The tokens of `text`, from position 0.
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    tokenize_into(text, &mut 0, &mut out);
    out
}

/// A word: its parts split at case changes, and its whole when it was split.
fn word(text: &str, start: usize, end: usize, pos: &mut u32, out: &mut Vec<Token>) {
    let source = &text[start..end];
    let chars: Vec<(usize, char)> = source.char_indices().collect();
    let mut cuts = Vec::new();
    for i in 1..chars.len() {
        let (prev, cur) = (chars[i - 1].1, chars[i].1);
        let next = chars.get(i + 1).map(|&(_, c)| c);
        let lower_to_upper = (prev.is_lowercase() || prev.is_numeric()) && cur.is_uppercase();
        let acronym_end =
            prev.is_uppercase() && cur.is_uppercase() && next.is_some_and(char::is_lowercase);
        if lower_to_upper || acronym_end {
            cuts.push(chars[i].0);
        }
    }
    if !cuts.is_empty() {
        // The whole goes first, at its first part's position: tokens stay in position order.
        out.push(Token { term: fold(source), pos: *pos, start, end, whole: true });
    }
    let mut from = 0;
    for cut in cuts.iter().copied().chain([source.len()]) {
        out.push(Token {
            term: fold(&source[from..cut]),
            pos: *pos,
            start: start + from,
            end: start + cut,
            whole: false,
        });
        *pos += 1;
        from = cut;
    }
}

/// A CJK run: its bigrams, or its one character.
fn cjk(run: &[(usize, char)], pos: &mut u32, out: &mut Vec<Token>) {
    let end_of = |k: usize| run[k].0 + run[k].1.len_utf8();
    if run.len() == 1 {
        let mut term = String::new();
        fold_char_into(run[0].1, &mut term);
        out.push(Token { term, pos: *pos, start: run[0].0, end: end_of(0), whole: false });
        *pos += 1;
        return;
    }
    for k in 0..run.len() - 1 {
        let mut term = String::new();
        fold_char_into(run[k].1, &mut term);
        fold_char_into(run[k + 1].1, &mut term);
        out.push(Token { term, pos: *pos, start: run[k].0, end: end_of(k + 1), whole: false });
        *pos += 1;
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
