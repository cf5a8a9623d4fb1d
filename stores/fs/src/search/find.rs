//! Candidates of a query in the committed index: per segment, each query item's bound per
//! document (a word's count; a phrase's lowest count among its terms; a prefix's counts summed
//! over the terms it opens), summed over items where every item occurs, without the documents
//! that are unindexed again since ([`super::pending`]) or that `wanted` leaves out.

use std::collections::HashSet;

use session_core::search::index::{Candidate, Doc, Resolve, Unindexed, Wanted};
use session_core::search::{Item, Query};
use session_core::StoreError;
use tantivy::postings::Postings;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, DocId, DocSet, InvertedIndexReader, Searcher, SegmentReader, Term};
use tantivy::{TantivyDocument, TERMINATED};

use super::index_err;
use super::schema::{doc_in, key, kind_of, Fields, SESSION};

/// Adds the candidates of one segment (its ordinal `ord`) to `out`.
pub(super) fn segment(
    f: &Fields,
    seg: &SegmentReader,
    ord: u32,
    query: &Query,
    wanted: &Wanted<'_>,
    unindexed: &[Unindexed],
    out: &mut Vec<Candidate>,
) -> Result<(), StoreError> {
    let body = seg.inverted_index(f.body).map_err(index_err)?;
    let max = seg.max_doc() as usize;
    let mut total: Option<Vec<u32>> = None;
    for item in &query.items {
        let bound = item_bound(&body, f.body, item, max)?;
        total = Some(match total {
            None => bound,
            Some(mut sum) => {
                for (s, b) in sum.iter_mut().zip(&bound) {
                    *s = if *s == 0 || *b == 0 { 0 } else { s.saturating_add(*b) };
                }
                sum
            }
        });
    }
    let Some(total) = total else { return Ok(()) };
    if total.iter().all(|&b| b == 0) {
        return Ok(());
    }
    let excluded = excluded(f, seg, unindexed)?;
    let alive = seg.alive_bitset();
    let class = seg.fast_fields().u64("class").map_err(index_err)?;
    let timestamp = seg.fast_fields().i64("ts").map_err(index_err)?;
    for (doc, &bound) in total.iter().enumerate() {
        let doc = doc as DocId;
        if bound == 0 || alive.is_some_and(|a| !a.is_alive(doc)) || excluded.contains(&doc) {
            continue;
        }
        let (kind, role) = kind_of(class.first(doc).unwrap_or(SESSION));
        let at = timestamp.first(doc).unwrap_or(0);
        if wanted.admits(kind, role, at) {
            let doc = (u64::from(ord) << 32) | u64::from(doc);
            out.push(Candidate { bound: u64::from(bound), timestamp: at, doc });
        }
    }
    Ok(())
}

/// One item's bound per document: at least its number of occurrences (see the module doc).
fn item_bound(
    inv: &InvertedIndexReader,
    field: Field,
    item: &Item,
    max: usize,
) -> Result<Vec<u32>, StoreError> {
    let mut bound: Option<Vec<u32>> = None;
    for (i, term) in item.terms.iter().enumerate() {
        let mut counts = vec![0u32; max];
        if item.prefix && i + 1 == item.terms.len() {
            let mut terms = inv.terms().range().ge(term.as_bytes()).into_stream().map_err(io)?;
            while terms.advance() {
                if !terms.key().starts_with(term.as_bytes()) {
                    break;
                }
                let postings = inv
                    .read_postings_from_terminfo(terms.value(), IndexRecordOption::WithFreqs)
                    .map_err(io)?;
                add_counts(postings, &mut counts);
            }
        } else {
            let term = Term::from_field_text(field, term);
            if let Some(postings) =
                inv.read_postings(&term, IndexRecordOption::WithFreqs).map_err(io)?
            {
                add_counts(postings, &mut counts);
            }
        }
        bound = Some(match bound {
            None => counts,
            Some(mut low) => {
                low.iter_mut().zip(&counts).for_each(|(l, c)| *l = (*l).min(*c));
                low
            }
        });
    }
    Ok(bound.unwrap_or_else(|| vec![0; max]))
}

fn add_counts(mut postings: impl Postings, counts: &mut [u32]) {
    let mut doc = postings.doc();
    while doc != TERMINATED {
        if let Some(c) = counts.get_mut(doc as usize) {
            *c = c.saturating_add(postings.term_freq());
        }
        doc = postings.advance();
    }
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
        let term = Term::from_field_text(field, text);
        if let Some(mut postings) =
            inv.read_postings(&term, IndexRecordOption::Basic).map_err(io)?
        {
            let mut doc = postings.doc();
            while doc != TERMINATED {
                out.insert(doc);
                doc = postings.advance();
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

/// Names a candidate from the searcher that found it.
pub(super) struct Resolver {
    pub searcher: Searcher,
    pub fields: Fields,
}

impl Resolve for Resolver {
    fn resolve(&self, doc: u64) -> Result<Doc, StoreError> {
        let address = DocAddress::new((doc >> 32) as u32, doc as u32);
        let seg = self.searcher.segment_reader(address.segment_ord);
        let class = seg.fast_fields().u64("class").map_err(index_err)?.first(address.doc_id);
        let stored: TantivyDocument = self.searcher.doc(address).map_err(index_err)?;
        doc_in(&self.fields, &stored, class.unwrap_or(SESSION))
            .ok_or_else(|| StoreError::Io("fs store: search index: a document without ids".into()))
    }
}
