//! A path read newest first from a position, one window at a time and only as far as a read
//! asks: what lets `messages-tail` and `context` cost what they show, not the session.

use alloc::vec::Vec;

use crate::error::Result;
use crate::path::PathSelect;
use crate::path_index::EntryClasses;
use crate::store::Store;
use crate::wire::SessionEntry;

/// Most entries asked of the store per window.
const MAX_WINDOW: usize = 1024;

/// The entries of `classes` on the path root → `leaf` below position `from`, newest first.
pub struct NewestFirst<'a> {
    store: &'a dyn Store,
    sid: &'a str,
    leaf: &'a str,
    classes: EntryClasses,
    /// Loaded entries with their path positions, newest first.
    pub loaded: Vec<(usize, SessionEntry)>,
    /// Path positions below this are not loaded yet.
    next_from: usize,
    /// Entries asked of the store per window; doubles up to [`MAX_WINDOW`].
    window: usize,
}

impl<'a> NewestFirst<'a> {
    /// Nothing loaded yet; the first window asks for `window` entries (at most [`MAX_WINDOW`]).
    pub fn new(
        store: &'a dyn Store,
        sid: &'a str,
        leaf: &'a str,
        classes: EntryClasses,
        from: usize,
        window: usize,
    ) -> Self {
        let window = window.clamp(1, MAX_WINDOW);
        NewestFirst { store, sid, leaf, classes, loaded: Vec::new(), next_from: from, window }
    }

    /// Loads until index `i` exists; false when the path is shorter.
    pub fn has(&mut self, i: usize) -> Result<bool> {
        while self.loaded.len() <= i && self.next_from > 0 {
            let query = PathSelect {
                classes: self.classes,
                from: self.next_from,
                backward: true,
                limit: self.window,
            };
            let older = self.store.path_select(self.sid, self.leaf, &query)?;
            self.next_from = match older.first() {
                Some((at, _)) if older.len() == self.window => *at,
                _ => 0,
            };
            self.loaded.extend(older.into_iter().rev());
            self.window = (self.window * 2).min(MAX_WINDOW);
        }
        Ok(i < self.loaded.len())
    }
}
