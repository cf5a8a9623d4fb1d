//! The page being filled: the best hits seen so far that come after the cursor, in rank order
//! (score high first, then newest, then session id, then entry id).

use alloc::vec::Vec;
use core::cmp::Reverse;

use crate::cursor::ListCursor;
use crate::wire::SearchHit;

/// A hit's place in the order.
type Rank<'a> = (Reverse<u64>, Reverse<i64>, &'a str, Option<&'a str>);

fn rank(hit: &SearchHit) -> Rank<'_> {
    (Reverse(hit.score), Reverse(hit.timestamp), &hit.session_id, hit.entry_id.as_deref())
}

/// The best `limit` hits offered so far that come after the cursor.
#[derive(Debug)]
pub(super) struct Page {
    limit: usize,
    hits: Vec<SearchHit>,
    after: Option<ListCursor>,
}

impl Page {
    pub(super) fn new(limit: usize, after: Option<ListCursor>) -> Page {
        Page { limit, hits: Vec::new(), after }
    }

    fn cursor_rank(&self) -> Option<Rank<'_>> {
        self.after
            .as_ref()
            .map(|c| (Reverse(c.s.unwrap_or(0)), Reverse(c.k), c.id.as_str(), c.e.as_deref()))
    }

    pub(super) fn offer(&mut self, hit: SearchHit) {
        if self.cursor_rank().is_some_and(|at| rank(&hit) <= at) {
            return;
        }
        let at = self.hits.partition_point(|h| rank(h) < rank(&hit));
        if at < self.limit {
            self.hits.insert(at, hit);
            self.hits.truncate(self.limit);
        }
    }

    #[cfg(feature = "durable")]
    /// Whether a hit scoring at most `score` at `timestamp` could still enter the page: the page
    /// is not full, or its last hit does not rank above every such hit.
    pub(super) fn may_take(&self, score: u64, timestamp: i64) -> bool {
        match self.hits.last() {
            Some(last) if self.hits.len() >= self.limit => {
                (score, timestamp) >= (last.score, last.timestamp)
            }
            _ => true,
        }
    }

    #[cfg(feature = "durable")]
    /// Whether a hit of exactly `score` at `timestamp` ranks before the cursor whatever its ids
    /// (it was on an earlier page).
    pub(super) fn before_cursor(&self, score: u64, timestamp: i64) -> bool {
        self.after.as_ref().is_some_and(|c| (score, timestamp) > (c.s.unwrap_or(0), c.k))
    }

    #[cfg(feature = "durable")]
    /// How many hits the page holds at most.
    pub(super) fn limit(&self) -> usize {
        self.limit
    }

    #[cfg(feature = "durable")]
    /// The cursor's score and timestamp.
    pub(super) fn cursor_key(&self) -> Option<(u64, i64)> {
        self.after.as_ref().map(|c| (c.s.unwrap_or(0), c.k))
    }

    pub(super) fn into_hits(self) -> Vec<SearchHit> {
        self.hits
    }
}
