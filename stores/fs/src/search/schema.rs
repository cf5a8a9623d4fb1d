//! The fs search index's documents: one per entry, and one per session holding the session's own
//! text (title, description) and the stamp of the log it was read from. Their text is indexed as
//! the core's tokens ([`CoreTokenizer`] hands tantivy [`session_core::search::tokens`]), so the
//! index finds what the core's matcher finds, with each term's count and positions per document
//! (the score's bound), and stored (the hit's snippet is cut from it).

use session_core::path_index::EntryClass;
use session_core::search::index::Doc;
use session_core::search::text::{entry_text, session_text};
use session_core::search::tokens::for_each_token;
use session_core::wire::{Role, SearchKind, SessionEntry, SessionMeta};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, FAST, STORED, STRING,
};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{Index, TantivyDocument};

use crate::io::Stamp;

/// Written beside the index; an index of another format is rebuilt.
pub(crate) const FORMAT: &str = "session-manager search index 4\n";

/// The class of the session's own document; entries are [`class_of`].
pub(crate) const SESSION: u64 = 0;

/// The index's fields.
#[derive(Debug, Clone)]
pub(crate) struct Fields {
    pub schema: Schema,
    /// Session id: indexed whole (to drop a session's documents), stored.
    pub sid: Field,
    /// [`key`] of the document, to drop one.
    pub key: Field,
    /// Entry id, stored (absent on the session's document).
    pub eid: Field,
    pub class: Field,
    pub timestamp: Field,
    pub body: Field,
    /// The log's stamp when the session's document was written.
    pub len: Field,
    pub mtime: Field,
    pub ino: Field,
}

impl Fields {
    pub(crate) fn new() -> Fields {
        let mut b = Schema::builder();
        let sid = b.add_text_field("sid", STRING | STORED);
        let key = b.add_text_field("key", STRING);
        let eid = b.add_text_field("eid", STORED);
        let class = b.add_u64_field("class", FAST);
        let timestamp = b.add_i64_field("ts", FAST);
        let indexing = TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_fieldnorms(false)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions);
        let body =
            b.add_text_field("body", TextOptions::from(STORED).set_indexing_options(indexing));
        let len = b.add_u64_field("len", STORED);
        let mtime = b.add_i64_field("mtime", STORED);
        let ino = b.add_u64_field("ino", STORED);
        Fields { schema: b.build(), sid, key, eid, class, timestamp, body, len, mtime, ino }
    }
}

/// A document's key: the session id's length, the session id, the entry id (none for the
/// session's own document).
pub(crate) fn key(sid: &str, entry_id: Option<&str>) -> String {
    format!("{}:{sid}{}", sid.len(), entry_id.unwrap_or(""))
}

/// The class of an entry's document: its kind and role as one number (the core's
/// [`EntryClass`] plus one; [`SESSION`] is 0).
pub(crate) fn class_of(entry: &SessionEntry) -> u64 {
    EntryClass::of(entry) as u64 + 1
}

/// What [`class_of`] (or [`SESSION`]) encoded.
pub(crate) fn kind_of(class: u64) -> (SearchKind, Option<Role>) {
    if class == SESSION {
        return (SearchKind::Session, None);
    }
    let entry_class = u8::try_from(class - 1).ok().and_then(EntryClass::from_index);
    entry_class.map_or((SearchKind::Message, Some(Role::Custom)), EntryClass::search_kind)
}

/// The name the index knows [`CoreTokenizer`] by.
const TOKENIZER: &str = "session-core";

/// The core's tokenizer as tantivy's: the same terms at the same positions (a split word's whole
/// at its first part's).
#[derive(Debug, Clone, Default)]
pub(crate) struct CoreTokenizer;

/// The tokens of one text: their terms one after another in `terms` (two buffers per text,
/// not one string per token; [`TokenStream::advance`] copies each term into `current`'s).
#[derive(Debug)]
pub(crate) struct CoreTokens {
    terms: String,
    /// Per token: the end of its term in `terms`, its position and its byte range in the text.
    tokens: std::vec::IntoIter<(usize, u32, usize, usize)>,
    term_start: usize,
    current: Token,
}

impl Tokenizer for CoreTokenizer {
    type TokenStream<'a> = CoreTokens;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CoreTokens {
        let (mut terms, mut tokens) = (String::new(), Vec::new());
        for_each_token(text, &mut 0, |t| {
            terms.push_str(t.term);
            tokens.push((terms.len(), t.pos, t.start, t.end));
        });
        CoreTokens { terms, tokens: tokens.into_iter(), term_start: 0, current: Token::default() }
    }
}

impl TokenStream for CoreTokens {
    fn advance(&mut self) -> bool {
        let Some((term_end, pos, start, end)) = self.tokens.next() else { return false };
        let current = &mut self.current;
        current.text.clear();
        current.text.push_str(&self.terms[self.term_start..term_end]);
        self.term_start = term_end;
        (current.offset_from, current.offset_to, current.position) = (start, end, pos as usize);
        current.position_length = 1;
        true
    }
    fn token(&self) -> &Token {
        &self.current
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.current
    }
}

/// Makes `index` tokenize with the core's rules (every open index, before it is written).
pub(crate) fn register_tokenizer(index: &Index) {
    index.tokenizers().register(TOKENIZER, CoreTokenizer);
}

/// The document of one entry; returns it with the bytes of text it indexes.
pub(crate) fn entry_doc(f: &Fields, sid: &str, entry: &SessionEntry) -> (TantivyDocument, usize) {
    let text = entry_text(entry);
    let mut doc = TantivyDocument::default();
    doc.add_text(f.sid, sid);
    doc.add_text(f.key, key(sid, Some(entry.id())));
    doc.add_text(f.eid, entry.id());
    doc.add_u64(f.class, class_of(entry));
    doc.add_i64(f.timestamp, entry.timestamp());
    let len = text.len();
    doc.add_text(f.body, text);
    (doc, len)
}

/// The session's own document: its text when it is listed (`meta`), and the log's stamp.
pub(crate) fn session_doc(
    f: &Fields,
    sid: &str,
    meta: Option<&SessionMeta>,
    stamp: Option<Stamp>,
) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    doc.add_text(f.sid, sid);
    doc.add_text(f.key, key(sid, None));
    doc.add_u64(f.class, SESSION);
    doc.add_i64(f.timestamp, meta.map_or(0, |m| m.updated_at));
    doc.add_text(f.body, meta.map(session_text).unwrap_or_default());
    if let Some(stamp) = stamp {
        doc.add_u64(f.len, stamp.len);
        doc.add_i64(f.mtime, i64::try_from(stamp.mtime_ns).unwrap_or(i64::MAX));
        doc.add_u64(f.ino, stamp.ino);
    }
    doc
}

/// A session document's session id and stamp (`None` for the stamp: the log was missing).
pub(crate) fn stamp_in(f: &Fields, doc: &TantivyDocument) -> Option<(String, Option<Stamp>)> {
    let sid = doc.get_first(f.sid)?.as_str()?.to_string();
    let len = doc.get_first(f.len).and_then(|v| v.as_u64());
    let mtime = doc.get_first(f.mtime).and_then(|v| v.as_i64());
    let ino = doc.get_first(f.ino).and_then(|v| v.as_u64());
    let stamp = match (len, mtime, ino) {
        (Some(len), Some(mtime), Some(ino)) => {
            Some(Stamp { len, mtime_ns: i128::from(mtime), ino })
        }
        _ => None,
    };
    Some((sid, stamp))
}

/// What a stored document says of itself, its class read by the caller.
pub(crate) fn doc_in(f: &Fields, doc: &TantivyDocument, class: u64) -> Option<Doc> {
    let str_of = |field| doc.get_first(field).and_then(|v| v.as_str()).map(String::from);
    let (kind, role) = kind_of(class);
    Some(Doc {
        session_id: str_of(f.sid)?,
        entry_id: str_of(f.eid),
        text: str_of(f.body),
        kind,
        role,
    })
}
