//! What the postgres store keeps of a text for search: its terms (the core's tokens,
//! `session_core::search`) with how often each occurs, as the JSON object an entry's or a
//! session's `terms` column holds; `schema.rs` indexes its keys as a tsvector (GIN), and a
//! query's terms become the tsquery that finds them.

use std::collections::BTreeMap;

use session_core::search::text::{entry_text, session_text};
use session_core::search::tokens::tokenize;
use session_core::search::Query;
use session_core::wire::{SessionEntry, SessionMeta};

/// The longest key kept, in bytes: PostgreSQL refuses a lexeme of 2 KB or more, so a longer term
/// is kept as its first bytes (its count then bounds every term that shares them).
pub const KEY_MAX_BYTES: usize = 2000;

/// The most key bytes one text keeps (a tsvector holds at most 1 MB): a text with more distinct
/// terms has no `terms` (`NULL`) and every search reads it instead.
pub const TERMS_MAX_BYTES: usize = 512 << 10;

/// A term as a key: itself, or its first [`KEY_MAX_BYTES`] bytes at most (whole characters).
pub fn key(term: &str) -> &str {
    if term.len() <= KEY_MAX_BYTES {
        return term;
    }
    let mut end = KEY_MAX_BYTES;
    while !term.is_char_boundary(end) {
        end -= 1;
    }
    &term[..end]
}

/// The `terms` of `text`: `{"term": count, …}`, or `None` when it has too many to index.
pub fn terms_of(text: &str) -> Option<String> {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for token in tokenize(text) {
        match counts.get_mut(key(&token.term)) {
            Some(n) => *n += 1,
            None => {
                counts.insert(key(&token.term).to_string(), 1);
            }
        }
    }
    let bytes: usize = counts.keys().map(|k| k.len() + 8).sum();
    if bytes > TERMS_MAX_BYTES {
        return None;
    }
    serde_json::to_string(&counts).ok()
}

/// An entry's `terms`: those of its searched text.
pub fn entry_terms(entry: &SessionEntry) -> Option<String> {
    terms_of(&entry_text(entry))
}

/// A session's `terms`: those of its title and description.
pub fn session_terms(meta: &SessionMeta) -> Option<String> {
    terms_of(&session_text(meta))
}

/// The tsquery of `query` (every term of every item; a prefix as `:*`) and whether the counts
/// of its terms' keys are their counts (no term was cut to a key).
pub fn tsquery(query: &Query) -> (String, bool) {
    let mut parts = Vec::new();
    let mut exact = true;
    for item in &query.items {
        let last = item.terms.len() - 1;
        for (i, term) in item.terms.iter().enumerate() {
            exact &= term.len() <= KEY_MAX_BYTES;
            let quoted = key(term).replace('\\', "\\\\").replace('\'', "''");
            let star = if item.prefix && i == last { ":*" } else { "" };
            parts.push(format!("'{quoted}'{star}"));
        }
    }
    (parts.join(" & "), exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_keeps_each_term_with_its_count() {
        let terms = terms_of("Parse the parser: parse camelCase").expect("indexed");
        let map: BTreeMap<String, u64> = serde_json::from_str(&terms).expect("json");
        assert_eq!(map["parse"], 2);
        assert_eq!(map["camelcase"], 1, "a split word's whole is a term");
        assert_eq!(map["camel"], 1);
    }

    #[test]
    fn long_terms_are_cut_to_whole_characters() {
        let term = "é".repeat(KEY_MAX_BYTES);
        let cut = key(&term);
        assert!(cut.len() <= KEY_MAX_BYTES && term.starts_with(cut));
        assert!(cut.len() > KEY_MAX_BYTES - 2);
    }

    #[test]
    fn too_many_terms_leave_the_text_unindexed() {
        let text: Vec<String> = (0..TERMS_MAX_BYTES / 8).map(|i| format!("w{i}")).collect();
        assert_eq!(terms_of(&text.join(" ")), None);
        assert_eq!(terms_of("").as_deref(), Some("{}"));
    }

    #[test]
    fn a_query_becomes_a_tsquery_of_all_its_terms() {
        let query = session_core::search::parse("\"fs/mod.rs\" pars* it's").expect("parses");
        let (tsquery, exact) = tsquery(&query);
        assert_eq!(tsquery, "'fs' & 'mod' & 'rs' & 'pars':* & 'it' & 's'");
        assert!(exact);
    }
}
