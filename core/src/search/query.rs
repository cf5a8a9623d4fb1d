//! The query language, the third of the search rules: words (every one must match), `"exact
//! phrases"`, `prefix*`. Any string parses: an unclosed quote runs to the end, a `*` inside a
//! word separates like any other sign, and what tokenizes to nothing is left out. Only a query
//! with no term left, or one too long, is refused.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::tokens::tokenize;

/// Longest query accepted, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;
/// Most words and phrases in one query.
pub const MAX_ITEMS: usize = 32;

/// One word or phrase: terms that must stand at consecutive positions, the last one only as a
/// prefix when `prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub terms: Vec<String>,
    pub prefix: bool,
}

/// A parsed query: every item must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub items: Vec<Item>,
}

/// Parses `query`; the error says why it cannot be searched.
pub fn parse(query: &str) -> Result<Query, String> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(format!(
            "`query` is {} bytes; at most {MAX_QUERY_BYTES} are searched",
            query.len()
        ));
    }
    let mut items = Vec::new();
    for (i, segment) in query.split('"').enumerate() {
        if i % 2 == 1 {
            push(&mut items, segment, false);
            continue;
        }
        for word in segment.split_whitespace() {
            let stem = word.trim_end_matches('*');
            push(&mut items, stem, stem.len() < word.len());
        }
    }
    if items.is_empty() {
        return Err(String::from("`query` has no word to search for"));
    }
    if items.len() > MAX_ITEMS {
        return Err(format!("`query` has {} words and phrases; at most {MAX_ITEMS}", items.len()));
    }
    Ok(Query { items })
}

fn push(items: &mut Vec<Item>, text: &str, prefix: bool) {
    let terms: Vec<String> =
        tokenize(text).into_iter().filter(|t| !t.whole).map(|t| t.term).collect();
    if !terms.is_empty() {
        items.push(Item { terms, prefix });
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, Item};
    use alloc::string::String;
    use alloc::vec::Vec;

    fn items(q: &str) -> Vec<(Vec<String>, bool)> {
        parse(q)
            .expect("parses")
            .items
            .into_iter()
            .map(|Item { terms, prefix }| (terms, prefix))
            .collect()
    }

    #[test]
    fn words_phrases_and_prefixes() {
        let s = |v: &[&str]| v.iter().map(|t| String::from(*t)).collect::<Vec<_>>();
        assert_eq!(
            items(r#"Parser "run the tests" sess*"#),
            [(s(&["parser"]), false), (s(&["run", "the", "tests"]), false), (s(&["sess"]), true),]
        );
        assert_eq!(items("session::append"), [(s(&["session", "append"]), false)]);
        assert_eq!(
            items(r#"unclosed "quote runs on"#),
            [(s(&["unclosed"]), false), (s(&["quote", "runs", "on"]), false)]
        );
    }

    #[test]
    fn only_nothing_or_too_much_is_refused() {
        for q in ["", "   ", "*", "\"\"", "!!! ???", "\u{0}\u{7}"] {
            assert!(parse(q).is_err(), "{q:?}");
        }
        assert!(parse(&"a ".repeat(40)).is_err());
        assert!(parse(&"x".repeat(5000)).is_err());
        assert!(parse("a\u{1}b").is_ok());
    }
}
