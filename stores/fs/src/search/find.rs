//! Candidates of a query in the committed index. Per segment, each query item gives the
//! documents it occurs in with a bound of its occurrences: a word its count; a phrase the number
//! of places its terms stand at consecutive positions (a phrase ending in a prefix: the lowest
//! count among its terms); a prefix the counts summed over the terms it opens. A document is a
//! candidate when every item occurs, its bound the sum. Left out: documents unindexed again since
//! ([`super::pending`]) and what `wanted` does not admit. With `wanted.keep`, only the best
//! candidates are kept ([`Best`]): without reading the timestamp of any that cannot make it.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use session_core::search::index::{Candidate, Doc, Resolve, Unindexed, Wanted};
use session_core::search::{Item, Query};
use session_core::StoreError;
use tantivy::columnar::Column;
use tantivy::postings::{Postings, SegmentPostings, TermInfo};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, DocId, DocSet, InvertedIndexReader, Searcher, SegmentReader, Term};
use tantivy::{TantivyDocument, TERMINATED};

use super::index_err;
use super::schema::{doc_in, key, kind_of, Fields, SESSION};

/// Documents of a segment in ascending order, each with a count.
type Counts = Vec<(DocId, u32)>;

/// A segment's columns a search reads for each document: its class and its timestamp. Opening
/// one parses its block index (about a thousand blocks at 500k documents), so the index keeps
/// them per segment, which never changes once written (`super::FsSearch::columns_of`).
#[derive(Clone)]
pub(super) struct Columns {
    class: Column<u64>,
    timestamp: Column<i64>,
}

impl Columns {
    pub(super) fn open(seg: &SegmentReader) -> Result<Columns, StoreError> {
        let fast = seg.fast_fields();
        Ok(Columns {
            class: fast.u64("class").map_err(index_err)?,
            timestamp: fast.i64("ts").map_err(index_err)?,
        })
    }
}

/// Adds the candidates of one segment (its ordinal in the searcher and its columns) to `out`.
pub(super) fn segment(
    f: &Fields,
    seg: &SegmentReader,
    (ord, columns): (u32, &Columns),
    query: &Query,
    wanted: &Wanted<'_>,
    unindexed: &[Unindexed],
    out: &mut Best,
) -> Result<(), StoreError> {
    let body = seg.inverted_index(f.body).map_err(index_err)?;
    let mut total: Option<Counts> = None;
    for item in &query.items {
        let counts = item_counts(&body, f.body, item)?;
        total = Some(match total {
            None => counts,
            Some(sum) => both(&sum, &counts, |a, b| a.saturating_add(b)),
        });
        if total.as_ref().is_some_and(Vec::is_empty) {
            return Ok(());
        }
    }
    let Some(total) = total else { return Ok(()) };
    let excluded = excluded(f, seg, unindexed)?;
    let alive = seg.alive_bitset();
    let Columns { class, timestamp } = columns;
    for (doc, bound) in total {
        let bound = u64::from(bound);
        if !out.may_take(bound)
            || alive.is_some_and(|a| !a.is_alive(doc))
            || excluded.contains(&doc)
        {
            continue;
        }
        let (kind, role) = kind_of(class.first(doc).unwrap_or(SESSION));
        let at = timestamp.first(doc).unwrap_or(0);
        if wanted.admits(kind, role, at) {
            out.offer(Candidate {
                bound,
                timestamp: at,
                doc: (u64::from(ord) << 32) | u64::from(doc),
            });
        }
    }
    Ok(())
}

/// How many postings finding `query` in `seg` reads (each item's lists, read whole before they
/// are joined), counting only up to `budget`: `None` once it is passed. From the term dictionary
/// alone (each term's document count), no posting list is opened.
pub(super) fn postings_within(
    f: &Fields,
    seg: &SegmentReader,
    query: &Query,
    budget: u64,
) -> Result<Option<u64>, StoreError> {
    let body = seg.inverted_index(f.body).map_err(index_err)?;
    let mut read = 0u64;
    for item in &query.items {
        for (i, term) in item.terms.iter().enumerate() {
            if item.prefix && i + 1 == item.terms.len() {
                opened_terms(&body, term, |info| {
                    read += u64::from(info.doc_freq);
                    Ok(read <= budget)
                })?;
            } else {
                read += u64::from(body.doc_freq(&Term::from_field_text(f.body, term)).map_err(io)?);
            }
            if read > budget {
                return Ok(None);
            }
        }
    }
    Ok(Some(read))
}

/// One item's documents, each with a bound of its occurrences (see the module doc).
fn item_counts(inv: &InvertedIndexReader, field: Field, item: &Item) -> Result<Counts, StoreError> {
    let last = item.terms.len() - 1;
    if item.terms.len() > 1 && !item.prefix {
        return phrase_counts(inv, field, &item.terms);
    }
    let mut low: Option<Counts> = None;
    for (i, term) in item.terms.iter().enumerate() {
        let counts = match item.prefix && i == last {
            true => prefix_counts(inv, term)?,
            false => term_counts(inv, field, term)?,
        };
        low = Some(match low {
            None => counts,
            Some(low) => both(&low, &counts, u32::min),
        });
    }
    Ok(low.unwrap_or_default())
}

fn postings(
    inv: &InvertedIndexReader,
    field: Field,
    term: &str,
    option: IndexRecordOption,
) -> Result<Option<SegmentPostings>, StoreError> {
    inv.read_postings(&Term::from_field_text(field, term), option).map_err(io)
}

fn term_counts(inv: &InvertedIndexReader, field: Field, term: &str) -> Result<Counts, StoreError> {
    let mut out = Vec::new();
    if let Some(p) = postings(inv, field, term, IndexRecordOption::WithFreqs)? {
        add_counts(p, &mut out);
    }
    Ok(out)
}

/// Every term that starts with `prefix`, counts summed per document.
fn prefix_counts(inv: &InvertedIndexReader, prefix: &str) -> Result<Counts, StoreError> {
    let mut all = Vec::new();
    opened_terms(inv, prefix, |info| {
        let p = inv.read_postings_from_terminfo(info, IndexRecordOption::WithFreqs).map_err(io)?;
        add_counts(p, &mut all);
        Ok(true)
    })?;
    all.sort_unstable_by_key(|&(doc, _)| doc);
    let mut out: Counts = Vec::with_capacity(all.len());
    for (doc, n) in all {
        match out.last_mut() {
            Some((last, sum)) if *last == doc => *sum = sum.saturating_add(n),
            _ => out.push((doc, n)),
        }
    }
    Ok(out)
}

/// Where `terms` stand at consecutive positions, counted per document.
fn phrase_counts(
    inv: &InvertedIndexReader,
    field: Field,
    terms: &[String],
) -> Result<Counts, StoreError> {
    let mut lists = Vec::with_capacity(terms.len());
    for term in terms {
        match postings(inv, field, term, IndexRecordOption::WithFreqsAndPositions)? {
            Some(p) => lists.push(p),
            None => return Ok(Vec::new()),
        }
    }
    let (mut out, mut first, mut rest) = (Vec::new(), Vec::new(), vec![Vec::new(); terms.len()]);
    let mut doc = lists[0].doc();
    'docs: while doc != TERMINATED {
        for list in &mut lists[1..] {
            let at = if list.doc() < doc { list.seek(doc) } else { list.doc() };
            if at != doc {
                doc = if at == TERMINATED { TERMINATED } else { lists[0].seek(at) };
                continue 'docs;
            }
        }
        lists[0].positions(&mut first);
        for (list, positions) in lists.iter_mut().zip(rest.iter_mut()).skip(1) {
            list.positions(positions);
        }
        let n = first
            .iter()
            .filter(|&&p| (1..terms.len()).all(|i| rest[i].binary_search(&(p + i as u32)).is_ok()))
            .count();
        if n > 0 {
            out.push((doc, n as u32));
        }
        doc = lists[0].advance();
    }
    Ok(out)
}

/// Hands `each` the term info of every term of `inv` that starts with `prefix`, in order, until
/// it answers `false`.
fn opened_terms(
    inv: &InvertedIndexReader,
    prefix: &str,
    mut each: impl FnMut(&TermInfo) -> Result<bool, StoreError>,
) -> Result<(), StoreError> {
    let mut terms = inv.terms().range().ge(prefix.as_bytes()).into_stream().map_err(io)?;
    while terms.advance() && terms.key().starts_with(prefix.as_bytes()) {
        if !each(terms.value())? {
            break;
        }
    }
    Ok(())
}

fn add_counts(mut postings: SegmentPostings, out: &mut Counts) {
    let mut doc = postings.doc();
    while doc != TERMINATED {
        out.push((doc, postings.term_freq()));
        doc = postings.advance();
    }
}

/// The documents in both `a` and `b`, their counts joined by `join`.
fn both(a: &Counts, b: &Counts, join: impl Fn(u32, u32) -> u32) -> Counts {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, join(a[i].1, b[j].1)));
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// The segment's documents that searches read from the store instead.
fn excluded(
    f: &Fields,
    seg: &SegmentReader,
    unindexed: &[Unindexed],
) -> Result<HashSet<DocId>, StoreError> {
    let mut out = HashSet::new();
    if unindexed.is_empty() {
        return Ok(out);
    }
    let sids = seg.inverted_index(f.sid).map_err(index_err)?;
    let keys = seg.inverted_index(f.key).map_err(index_err)?;
    let mut add = |inv: &InvertedIndexReader, field: Field, text: &str| -> Result<(), StoreError> {
        if let Some(mut p) = postings(inv, field, text, IndexRecordOption::Basic)? {
            let mut doc = p.doc();
            while doc != TERMINATED {
                out.insert(doc);
                doc = p.advance();
            }
        }
        Ok(())
    };
    for u in unindexed {
        match u {
            Unindexed::Session(sid) => add(&sids, f.sid, sid)?,
            Unindexed::Entries { session_id, entry_ids } => {
                add(&keys, f.key, &key(session_id, None))?;
                for id in entry_ids {
                    add(&keys, f.key, &key(session_id, Some(id)))?;
                }
            }
        }
    }
    Ok(out)
}

fn io(e: std::io::Error) -> StoreError {
    StoreError::Io(format!("fs store: search index: {e}"))
}

/// The candidates kept: all of them, or with `keep` the best `keep` by bound then timestamp —
/// and every one that ties with the last of those, so the core's order by ids decides among
/// them — leaving out those that rank strictly before `after` (the cursor's score and time).
#[derive(Debug)]
pub(super) struct Best {
    keep: Option<usize>,
    after: Option<(u64, i64)>,
    /// With `keep`: the best so far, worst on top.
    heap: BinaryHeap<Reverse<(u64, i64, u64)>>,
    /// Pushed out of the heap (they may tie with its final worst).
    evicted: Vec<Candidate>,
    all: Vec<Candidate>,
}

impl Best {
    pub(super) fn new(wanted: &Wanted<'_>) -> Best {
        Best {
            keep: wanted.keep,
            after: wanted.after,
            heap: BinaryHeap::new(),
            evicted: Vec::new(),
            all: Vec::new(),
        }
    }

    /// Whether a candidate of this bound could still be kept (before its timestamp is read).
    fn may_take(&self, bound: u64) -> bool {
        match (self.keep, self.heap.peek()) {
            (Some(keep), Some(Reverse((worst, _, _)))) if self.heap.len() >= keep => {
                bound >= *worst
            }
            _ => true,
        }
    }

    fn offer(&mut self, c: Candidate) {
        if self.after.is_some_and(|after| (c.bound, c.timestamp) > after) {
            return; // on an earlier page whatever its ids
        }
        // Without `keep`, or tied with the cursor (its ids decide whether it was on an earlier
        // page, so it cannot take one of the `keep` places): always kept.
        let Some(keep) = self.keep.filter(|_| self.after != Some((c.bound, c.timestamp))) else {
            self.all.push(c);
            return;
        };
        self.heap.push(Reverse((c.bound, c.timestamp, c.doc)));
        if self.heap.len() > keep {
            let Some(Reverse((bound, timestamp, doc))) = self.heap.pop() else { return };
            // The worst kept only grows: one below it now can never tie with the final one.
            if self.heap.peek().is_some_and(|Reverse((b, t, _))| (*b, *t) == (bound, timestamp)) {
                self.evicted.push(Candidate { bound, timestamp, doc });
            }
        }
    }

    pub(super) fn into_candidates(self) -> Vec<Candidate> {
        if self.keep.is_none() {
            return self.all;
        }
        let tied_with_cursor = self.all;
        let worst = self.heap.peek().map(|Reverse((b, t, _))| (*b, *t));
        let mut out: Vec<Candidate> = self
            .heap
            .into_iter()
            .map(|Reverse((bound, timestamp, doc))| Candidate { bound, timestamp, doc })
            .collect();
        out.extend(self.evicted.into_iter().filter(|c| Some((c.bound, c.timestamp)) == worst));
        out.extend(tied_with_cursor);
        out
    }
}

/// Names a candidate from the searcher that found it.
pub(super) struct Resolver {
    searcher: Searcher,
    fields: Fields,
    /// Each segment's columns, by its ordinal in the searcher.
    columns: Vec<Columns>,
}

impl Resolver {
    pub(super) fn new(searcher: Searcher, fields: Fields, columns: Vec<Columns>) -> Resolver {
        Resolver { searcher, fields, columns }
    }

    fn class(&self, address: DocAddress) -> Option<u64> {
        let columns = self.columns.get(address.segment_ord as usize)?;
        columns.class.first(address.doc_id)
    }
}

impl Resolve for Resolver {
    fn resolve(&self, doc: u64) -> Result<Doc, StoreError> {
        let address = DocAddress::new((doc >> 32) as u32, doc as u32);
        let class = self.class(address);
        let stored: TantivyDocument = self.searcher.doc(address).map_err(index_err)?;
        doc_in(&self.fields, &stored, class.unwrap_or(SESSION))
            .ok_or_else(|| StoreError::Io("fs store: search index: a document without ids".into()))
    }
}
