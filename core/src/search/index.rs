//! The seam between `session::search` and a backend's search index: the index names candidates
//! with an upper bound of their score, the core ([`crate::ops::search`]) checks and ranks them
//! with the same rules as a scan, so an index changes how fast hits are found, never which.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use super::query::Query;
use crate::error::StoreError;
use crate::wire::{Role, SearchKind, SessionMeta};

/// The cheap filters an index applies itself (from fields it keeps beside each document).
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    pub kinds: &'a [SearchKind],
    pub roles: Option<&'a [Role]>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Set when the core takes every candidate the index admits (no scope, all branches): an
    /// index whose bounds are the scores for this query ([`Found::exact`]) may keep only the
    /// best `keep` by bound then timestamp, with every one that ties with the last of them.
    pub keep: Option<usize>,
    /// With `keep`: the cursor's score and timestamp; candidates that rank strictly before it
    /// (a higher score, or the same and newer) were on an earlier page.
    pub after: Option<(u64, i64)>,
}

impl Wanted<'_> {
    /// Whether a document of this kind (and role, for a message) passes.
    pub fn admits(&self, kind: SearchKind, role: Option<Role>, timestamp: i64) -> bool {
        self.admits_kind(kind, role)
            && self.since.is_none_or(|since| timestamp >= since)
            && self.until.is_none_or(|until| timestamp < until)
    }

    /// Whether documents of this kind (and role, for a message) pass, whatever their time.
    pub fn admits_kind(&self, kind: SearchKind, role: Option<Role>) -> bool {
        let role_ok = match (self.roles, role) {
            (None, _) => true,
            (Some(roles), Some(role)) => roles.contains(&role),
            (Some(_), None) => false,
        };
        self.kinds.contains(&kind) && role_ok
    }
}

/// One indexed document that may match: the session's own text or one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// At least the score the core's matcher gives it (so 0 only for a document that cannot
    /// match); exactly that when the index says so ([`Found::exact`]).
    pub bound: u64,
    pub timestamp: i64,
    /// The index's own handle, for [`Resolve::resolve`].
    pub doc: u64,
}

/// What the index does not hold yet and the core must read from the store instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unindexed {
    /// The whole session.
    Session(String),
    /// These entries and the session's own text.
    Entries { session_id: String, entry_ids: Vec<String> },
}

/// What an index keeps of one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    pub session_id: String,
    /// `None`: the session's own text (title, description).
    pub entry_id: Option<String>,
    /// An entry's searched text ([`super::text::entry_text`]) as it was indexed, when the index
    /// keeps it: the core matches it instead of reading the entry. The index leaves out every
    /// entry written since (it is unindexed), so it is the entry's text now.
    pub text: Option<String>,
    pub kind: SearchKind,
    pub role: Option<Role>,
}

/// Turns a candidate's handle into what the index keeps of it.
pub trait Resolve {
    fn resolve(&self, doc: u64) -> Result<Doc, StoreError>;

    /// The meta of a candidate's session, listed, when the index read it with the candidates (in
    /// their snapshot), so the core need not ask the store for it; `None`: ask the store.
    fn listed_meta(&self, _session_id: &str) -> Option<&SessionMeta> {
        None
    }
}

/// An index's answer: candidates (in no order) and what it does not cover. No document is both:
/// what is unindexed has no candidate.
pub struct Found<'a> {
    pub candidates: Vec<Candidate>,
    /// Whether each candidate's bound is its score for this query. Only then may the index have
    /// applied [`Wanted::keep`]; otherwise its bounds are upper bounds and it kept every
    /// candidate.
    pub exact: bool,
    pub unindexed: Vec<Unindexed>,
    pub resolver: Box<dyn Resolve + 'a>,
}

impl core::fmt::Debug for Found<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Found")
            .field("candidates", &self.candidates.len())
            .field("exact", &self.exact)
            .field("unindexed", &self.unindexed)
            .finish_non_exhaustive()
    }
}

/// A backend's search index ([`crate::Store::search_index`]).
pub trait SearchIndex {
    /// Every document that may match `query` and passes `wanted`, plus what is not indexed.
    fn find(&self, query: &Query, wanted: &Wanted<'_>) -> Result<Found<'_>, StoreError>;
}
