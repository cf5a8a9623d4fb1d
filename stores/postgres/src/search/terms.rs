//! What the postgres store keeps of a text for search: its terms (the core's tokens,
//! `session_core::search`) with how often each occurs (an entry's or a session's `terms`
//! column); its terms' prefixes with how many terms each opens and its pairs of neighbouring
//! terms with how often (`groups`); its terms as a tsvector (`lex`), which `schema.rs` indexes
//! (GIN), with a tier lexeme (`#8#term`) for each of its tiers a term's count reaches, so the
//! documents where a word occurs at least so often are one index lookup away. A query becomes
//! the tsquery that finds its documents, the keys whose counts bound its score and, for a lone
//! word, the tsqueries of its tiers.

use std::collections::BTreeMap;

use session_core::search::text::{entry_text, session_text};
use session_core::search::tokens::for_each_token;
use session_core::search::Query;
use session_core::wire::{SessionEntry, SessionMeta};

/// The longest key kept, in bytes: PostgreSQL refuses a lexeme of 2 KB or more, so a longer term
/// is kept as its first bytes (its count then bounds every term that shares them).
pub const KEY_MAX_BYTES: usize = 2000;

/// The most key bytes one text keeps (a tsvector holds at most 1 MB): a text with more distinct
/// terms has no `terms` (`NULL`) and every search reads it instead.
pub const TERMS_MAX_BYTES: usize = 512 << 10;

/// The longest prefix a prefix key holds, in characters: a `prefix*` of at most this many is
/// bounded exactly by one lookup; a longer one by its first this many (an upper bound).
pub const PREFIX_CHARS: usize = 8;

/// What starts a prefix key (no term holds it: terms are letters, digits and CJK).
const PREFIX_MARK: char = '^';

/// What starts a tier lexeme and ends its tier (no term holds it either, so no query term or
/// prefix matches a tier lexeme).
const TIER_MARK: char = '#';

/// The tiers of a term's count in a text: `lex` holds `#t#term` for each `t` the count reaches.
/// Each about 1.4 times the one before, so the tier a page is read from holds at most a few
/// times the entries a page needs when counts spread evenly; a count above the last is in it.
pub const TIERS: [u64; 19] =
    [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024];

/// The tier lexeme of a term (a key, [`key`]) at `tier`: `#8#term`.
fn tier_key(key: &str, tier: u64) -> String {
    format!("{TIER_MARK}{tier}{TIER_MARK}{key}")
}

/// How many tiers a count reaches.
fn tiers_reached(count: u64) -> usize {
    TIERS.iter().take_while(|&&tier| count >= tier).count()
}

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

/// The prefix key of `prefix`: the mark and its first [`PREFIX_CHARS`] characters at most.
pub fn prefix_key(prefix: &str) -> String {
    let end = prefix.char_indices().nth(PREFIX_CHARS).map_or(prefix.len(), |(i, _)| i);
    format!("{PREFIX_MARK}{}", &prefix[..end])
}

/// Whether [`prefix_key`] keeps all of `prefix`.
fn whole_prefix(prefix: &str) -> bool {
    prefix.chars().nth(PREFIX_CHARS).is_none()
}

/// What a row keeps of a text: `json`, the text of `{"t": terms, "g": groups}` — `terms` the
/// count of each term (`{"parser": 2, …}`), `groups` (a column of its own, read only by prefix
/// and phrase queries, so a word's lookup reads the smaller one) the count of the terms each of
/// their first [`PREFIX_CHARS`] prefixes opens (`{"^pa": 3, …}`) and how often each two terms
/// follow one another (`{"first second": 1, …}`) — and `lex`, its terms as a tsvector's text
/// (`'term' …`), which the GIN index holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    pub json: String,
    pub lex: String,
}

/// The two objects of [`Terms::json`].
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    pub t: BTreeMap<String, u64>,
    pub g: BTreeMap<String, u64>,
}

/// Whether a key is counted in `groups` (a prefix or a pair), not in `terms`.
pub fn in_groups(key: &str) -> bool {
    key.starts_with(PREFIX_MARK) || key.contains(' ')
}

/// A term quoted for a tsvector's or a tsquery's text.
fn quoted(term: &str) -> String {
    let mut out = String::with_capacity(term.len() + 2);
    push_quoted(&mut out, term);
    out
}

/// [`quoted`] appended to `out`.
fn push_quoted(out: &mut String, term: &str) {
    out.push('\'');
    for c in term.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("''"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// Adds `n` to `key`'s count, allocating the key only the first time it is seen.
fn add_to(map: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    match map.get_mut(key) {
        Some(count) => *count += n,
        None => {
            map.insert(key.to_string(), n);
        }
    }
}

/// The pair key of two terms: how often the second follows the first (a space cannot be in a
/// term).
fn pair_key(first: &str, second: &str) -> String {
    let mut out = String::new();
    pair_key_into(first, second, &mut out);
    out
}

/// [`pair_key`] into `out` (cleared first).
fn pair_key_into(first: &str, second: &str, out: &mut String) {
    out.clear();
    out.push_str(key(first));
    out.push(' ');
    out.push_str(key(second));
}

/// The [`Terms`] of `text`; `None` when it has too many terms to index.
pub fn terms_of(text: &str) -> Option<Terms> {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut groups: BTreeMap<String, u64> = BTreeMap::new();
    // A phrase's terms stand at consecutive positions, never a split word's whole among them:
    // each part is paired with the part before it when that stands just before.
    let (mut before, mut before_at, mut pair) = (String::new(), None::<u32>, String::new());
    for_each_token(text, &mut 0, |t| {
        add_to(&mut counts, key(t.term), 1);
        if t.whole {
            return;
        }
        if before_at.is_some_and(|at| at + 1 == t.pos) {
            pair_key_into(&before, t.term, &mut pair);
            add_to(&mut groups, &pair, 1);
        }
        before.clear();
        before.push_str(t.term);
        before_at = Some(t.pos);
    });
    // Each term once, and once more per tier its count reaches (a tier lexeme is the term,
    // two marks and at most four digits: within the 8 bytes counted over each key).
    let bytes: usize = counts.iter().map(|(k, n)| (k.len() + 8) * (1 + tiers_reached(*n))).sum();
    if bytes > TERMS_MAX_BYTES {
        return None;
    }
    let mut lex = String::with_capacity(bytes);
    for (term, n) in &counts {
        if !lex.is_empty() {
            lex.push(' ');
        }
        push_quoted(&mut lex, term);
        for &tier in &TIERS[..tiers_reached(*n)] {
            lex.push(' ');
            push_quoted(&mut lex, &tier_key(term, tier));
        }
    }
    // The prefix keys `prefix_key` makes of a term's first one to `PREFIX_CHARS` characters,
    // each grown by one character from the one before (`^m`, `^me`, …).
    let mut prefix = String::new();
    for (term, n) in &counts {
        prefix.clear();
        prefix.push(PREFIX_MARK);
        for c in term.chars().take(PREFIX_CHARS) {
            prefix.push(c);
            add_to(&mut groups, &prefix, *n);
        }
    }
    let json = serde_json::to_string(&Counts { t: counts, g: groups }).ok()?;
    Some(Terms { json, lex })
}

/// An entry's `terms`: those of its searched text.
pub fn entry_terms(entry: &SessionEntry) -> Option<Terms> {
    terms_of(&entry_text(entry))
}

/// A session's `terms`: those of its title and description.
pub fn session_terms(meta: &SessionMeta) -> Option<Terms> {
    terms_of(&session_text(meta))
}

/// A query as the index looks it up: its tsquery (every term of every item; a prefix as `:*`),
/// per item the keys whose lowest count bounds its occurrences (a word: its own; a prefix: its
/// prefix key; a phrase: each two of its terms that follow one another, its prefix last),
/// whether those bounds are the counts themselves (every item a word, a prefix of at most
/// [`PREFIX_CHARS`] characters or a phrase of two words, and no term cut to a key), and for a
/// query of one word (whose bound is its count) the tsquery of each of its [`TIERS`], the
/// highest first: the documents that hold the word at least that often.
#[derive(Debug, PartialEq, Eq)]
pub struct Lookup {
    pub tsquery: String,
    pub items: Vec<Vec<String>>,
    pub exact: bool,
    pub tiers: Option<Vec<String>>,
}

impl Lookup {
    pub fn of(query: &Query) -> Lookup {
        let (mut parts, mut items, mut exact) = (Vec::new(), Vec::new(), true);
        for item in &query.items {
            let terms = &item.terms;
            let last = terms.len() - 1;
            exact &= terms.iter().all(|t| t.len() <= KEY_MAX_BYTES);
            for (i, term) in terms.iter().enumerate() {
                let star = if item.prefix && i == last { ":*" } else { "" };
                parts.push(format!("{}{star}", quoted(key(term))));
            }
            let words = if item.prefix { &terms[..last] } else { &terms[..] };
            let mut keys: Vec<String> = match words {
                [one] => vec![key(one).to_string()],
                _ => words.windows(2).map(|two| pair_key(&two[0], &two[1])).collect(),
            };
            if item.prefix {
                keys.push(prefix_key(&terms[last]));
            }
            exact &= match (terms.len(), item.prefix) {
                (1, true) => whole_prefix(&terms[0]),
                (1, false) | (2, false) => true,
                _ => false,
            };
            items.push(keys);
        }
        let tiers = match query.items.as_slice() {
            [one] if exact && !one.prefix && one.terms.len() == 1 => {
                let word = key(&one.terms[0]);
                Some(TIERS.iter().rev().map(|&tier| quoted(&tier_key(word, tier))).collect())
            }
            _ => None,
        };
        Lookup { tsquery: parts.join(" & "), items, exact, tiers }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_keeps_each_term_with_its_count() {
        let terms = terms_of("Parse the parser: parse camelCase").expect("indexed");
        let map = serde_json::from_str::<Counts>(&terms.json).expect("json").t;
        assert_eq!(terms.lex, "'camel' 'camelcase' 'case' 'parse' '#2#parse' 'parser' 'the'");
        assert_eq!(map["parse"], 2);
        assert_eq!(map["camelcase"], 1, "a split word's whole is a term");
        assert_eq!(map["camel"], 1);
        assert_eq!(quoted(r"it's a\b"), r"'it''s a\\b'", "quoted as a tsvector's text wants");
    }

    #[test]
    fn a_count_reaches_its_tiers() {
        let text = ["tick"; 9].join(" ");
        let terms = terms_of(&format!("{text} tock")).expect("indexed");
        assert_eq!(terms.lex, "'tick' '#2#tick' '#3#tick' '#4#tick' '#6#tick' '#8#tick' 'tock'");
        assert_eq!((tiers_reached(1), tiers_reached(3), tiers_reached(5000)), (0, 2, TIERS.len()));
    }

    #[test]
    fn a_lone_word_looks_up_its_tiers_from_the_highest() {
        let lookup = Lookup::of(&session_core::search::parse("Tick").expect("parses"));
        let tiers = lookup.tiers.expect("a lone word has tiers");
        assert_eq!(
            (tiers.first(), tiers.last()),
            (Some(&"'#1024#tick'".into()), Some(&"'#2#tick'".into()))
        );
        for other in ["tick tock", "tic*", "\"tick tock\""] {
            let lookup = Lookup::of(&session_core::search::parse(other).expect("parses"));
            assert_eq!(lookup.tiers, None, "{other}");
        }
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
        let empty = Terms { json: r#"{"t":{},"g":{}}"#.into(), lex: String::new() };
        assert_eq!(terms_of(""), Some(empty));
    }

    #[test]
    fn pairs_count_the_terms_that_follow_one_another() {
        let terms = terms_of("worker reply, worker replyTo worker").expect("indexed");
        let map = serde_json::from_str::<Counts>(&terms.json).expect("json").g;
        assert_eq!(map["worker reply"], 2, "the part of a split word follows");
        assert_eq!((map["reply worker"], map["reply to"]), (1, 1));
        assert!(!map.contains_key("worker replyto"), "a whole is never in a phrase");
    }

    #[test]
    fn prefixes_count_the_terms_they_open() {
        let terms = terms_of("cursor cursors cure Straßenbahnhaltestelle").expect("indexed");
        let map = serde_json::from_str::<Counts>(&terms.json).expect("json").g;
        assert_eq!((map["^c"], map["^cur"], map["^curs"], map["^cursor"]), (3, 3, 2, 2));
        assert_eq!(map["^strassen"], 1, "eight characters at most");
        assert!(!map.contains_key("^strassenb"));
    }

    #[test]
    fn a_query_becomes_a_tsquery_of_all_its_terms() {
        let query = session_core::search::parse("\"fs/mod.rs\" pars* it's").expect("parses");
        let lookup = Lookup::of(&query);
        assert_eq!(lookup.tsquery, "'fs' & 'mod' & 'rs' & 'pars':* & 'it' & 's'");
        let keys: Vec<Vec<&str>> = vec![vec!["fs mod", "mod rs"], vec!["^pars"], vec!["it s"]];
        assert_eq!(lookup.items, keys);
        assert!(!lookup.exact, "a phrase of three bounds from above");
        let two = session_core::search::parse("\"worker reply\" pars*").expect("parses");
        assert!(Lookup::of(&two).exact);
        let long = session_core::search::parse("strassenbahn*").expect("parses");
        assert!(!Lookup::of(&long).exact, "a prefix past its key bounds from above");
    }
}
