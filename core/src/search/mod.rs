//! Full-text search's rules (issue 39), one set for every backend: character classes
//! ([`chars`]), folding ([`fold`]), tokens
//! ([`tokens`]), the query language ([`query`]) and matching with its score, snippet and
//! highlights ([`matcher`]), over what is searched of an entry or a session ([`text`]). A backend may find candidates its own way (an index); what is a hit,
//! and how hits rank, is decided here; [`index`] is the seam an index plugs into, [`touched`] what a write
//! changes of the searched text.

pub mod chars;
pub mod fold;
pub mod index;
pub mod matcher;
pub mod query;
pub mod text;
pub mod tokens;
#[cfg(feature = "durable")]
pub mod touched;

pub use matcher::{match_text, match_tokens, may_match, Matched};
pub use query::{parse, Item, Query};
