//! The journal's on-disk format: a header block naming the current epoch, then checksummed
//! records, each the exact bytes one append wrote to one session file (or a reset of that file).
//!
//! ```text
//! header (offset 0, HEADER_LEN bytes): MAGIC (8) | epoch u64 LE | crc32 of the 16 bytes before
//! record: crc32 u32 | len u32 | body (len bytes)      crc32 covers len and body
//! body:   epoch u64 | kind u8 | name_len u16 | name | offset u64 | data
//! ```
//!
//! A record counts only when its checksum holds and its epoch is the header's: the zeros the
//! journal is filled with, a torn record, and the records an earlier epoch left behind all end the
//! walk.

/// The header's size: records start here.
pub(crate) const HEADER_LEN: u64 = 4096;
const MAGIC: &[u8; 8] = b"SMJRNL01";
/// The shortest body: epoch, kind, name_len, offset.
const MIN_BODY: usize = 8 + 1 + 2 + 8;
/// The longest body a record may claim (a session file name plus one append's bytes).
const MAX_BODY: usize = 64 << 20;

/// One journal record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Record<'a> {
    /// `data` was written at `offset` of the session file `name`.
    Write { name: &'a str, offset: u64, data: &'a [u8] },
    /// The session file `name` was made durable and is about to be replaced: no earlier record
    /// of it applies any more.
    Reset { name: &'a str },
}

impl Record<'_> {
    pub(crate) fn name(&self) -> &str {
        match self {
            Record::Write { name, .. } | Record::Reset { name } => name,
        }
    }
}

/// The header block of `epoch`.
pub(crate) fn header(epoch: u64) -> Vec<u8> {
    let mut out = vec![0u8; HEADER_LEN as usize];
    out[..8].copy_from_slice(MAGIC);
    out[8..16].copy_from_slice(&epoch.to_le_bytes());
    let crc = crc32fast::hash(&out[..16]);
    out[16..20].copy_from_slice(&crc.to_le_bytes());
    out
}

/// What a header block says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Header {
    /// Never written (all zeros: a journal whose creation was interrupted).
    Blank,
    Epoch(u64),
    /// Not a journal header.
    Corrupt,
}

pub(crate) fn read_header(bytes: &[u8]) -> Header {
    let Some(head) = bytes.get(..20) else {
        return if bytes.iter().all(|b| *b == 0) { Header::Blank } else { Header::Corrupt };
    };
    if head.iter().all(|b| *b == 0) {
        return Header::Blank;
    }
    let crc = u32::from_le_bytes(head[16..20].try_into().expect("4 bytes"));
    if &head[..8] != MAGIC || crc32fast::hash(&head[..16]) != crc {
        return Header::Corrupt;
    }
    Header::Epoch(u64::from_le_bytes(head[8..16].try_into().expect("8 bytes")))
}

/// The bytes of `record` in `epoch`.
#[cfg(test)]
pub(crate) fn encode(epoch: u64, record: &Record<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded_len(record));
    encode_into(epoch, record, &mut out);
    out
}

/// How many bytes `record` takes in the journal (in any epoch).
pub(crate) fn encoded_len(record: &Record<'_>) -> usize {
    let (name, data) = match record {
        Record::Write { name, data, .. } => (*name, *data),
        Record::Reset { name } => (*name, &[][..]),
    };
    8 + MIN_BODY + name.len() + data.len()
}

/// Appends the bytes of `record` in `epoch` to `out` (the journal's batch of records not yet
/// written: no buffer of its own per record).
pub(crate) fn encode_into(epoch: u64, record: &Record<'_>, out: &mut Vec<u8>) {
    let (kind, name, offset, data) = match record {
        Record::Write { name, offset, data } => (1u8, *name, *offset, *data),
        Record::Reset { name } => (2u8, *name, 0, &[][..]),
    };
    let name_len = u16::try_from(name.len()).expect("session file names are short");
    let start = out.len();
    out.reserve(encoded_len(record));
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&epoch.to_le_bytes());
    out.push(kind);
    out.extend_from_slice(&name_len.to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(data);
    let len = u32::try_from(out.len() - start - 8).expect("records are below 4 GiB");
    out[start + 4..start + 8].copy_from_slice(&len.to_le_bytes());
    let crc = crc32fast::hash(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&crc.to_le_bytes());
}

/// The record at the start of `bytes` and its length, when it is a valid record of `epoch`.
pub(crate) fn decode(bytes: &[u8], epoch: u64) -> Option<(Record<'_>, usize)> {
    let crc = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
    let len = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?) as usize;
    if !(MIN_BODY..=MAX_BODY).contains(&len) {
        return None;
    }
    let whole = bytes.get(..8 + len)?;
    if crc32fast::hash(&whole[4..]) != crc {
        return None;
    }
    let body = &whole[8..];
    if u64::from_le_bytes(body[..8].try_into().ok()?) != epoch {
        return None;
    }
    let kind = body[8];
    let name_len = u16::from_le_bytes(body[9..11].try_into().ok()?) as usize;
    let name = std::str::from_utf8(body.get(11..11 + name_len)?).ok()?;
    let rest = &body[11 + name_len..];
    let offset = u64::from_le_bytes(rest.get(..8)?.try_into().ok()?);
    let data = &rest[8..];
    let record = match kind {
        1 => Record::Write { name, offset, data },
        2 if data.is_empty() => Record::Reset { name },
        _ => return None,
    };
    Some((record, whole.len()))
}

/// The valid records of `epoch` from [`HEADER_LEN`] on, up to the first that is not.
pub(crate) fn walk(bytes: &[u8], epoch: u64) -> Vec<Record<'_>> {
    let mut at = HEADER_LEN as usize;
    let mut out = Vec::new();
    while let Some((record, len)) = bytes.get(at..).and_then(|b| decode(b, epoch)) {
        out.push(record);
        at += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal(epoch: u64, records: &[Record<'_>]) -> Vec<u8> {
        let mut bytes = header(epoch);
        for r in records {
            bytes.extend(encode(epoch, r));
        }
        bytes.extend(vec![0u8; 256]);
        bytes
    }

    #[test]
    fn records_round_trip_and_a_walk_stops_at_zeros() {
        let records = [
            Record::Write { name: "a.jsonl", offset: 0, data: b"{\"type\":\"meta\"}\n" },
            Record::Reset { name: "a.jsonl" },
            Record::Write { name: "b.jsonl", offset: 7, data: b"" },
        ];
        let bytes = journal(3, &records);
        assert_eq!(read_header(&bytes), Header::Epoch(3));
        assert_eq!(walk(&bytes, 3), records);
        assert!(walk(&bytes, 4).is_empty(), "another epoch's records do not count");
    }

    #[test]
    fn a_torn_or_flipped_record_ends_the_walk_at_every_byte() {
        let records = [
            Record::Write { name: "a.jsonl", offset: 0, data: b"line one\n" },
            Record::Write { name: "a.jsonl", offset: 9, data: b"line two\n" },
        ];
        let whole = journal(1, &records);
        let first = HEADER_LEN as usize + encode(1, &records[0]).len();
        let end = first + encode(1, &records[1]).len();
        for cut in HEADER_LEN as usize..end {
            let mut torn = whole[..cut].to_vec();
            torn.extend(vec![0u8; 64]);
            let expect = if cut < first { 0 } else { 1 };
            assert_eq!(walk(&torn, 1).len(), expect, "cut at {cut}");
        }
        for flip in HEADER_LEN as usize..end {
            let mut bad = whole.clone();
            bad[flip] ^= 0x40;
            let expect = if flip < first { 0 } else { 1 };
            assert_eq!(walk(&bad, 1).len(), expect, "flipped byte {flip}");
        }
    }

    #[test]
    fn headers_tell_blank_from_corrupt() {
        assert_eq!(read_header(&[0u8; 4096]), Header::Blank);
        assert_eq!(read_header(&[]), Header::Blank);
        let mut h = header(9);
        h[9] ^= 1;
        assert_eq!(read_header(&h), Header::Corrupt);
        assert_eq!(read_header(b"{\"type\":\"meta\"}"), Header::Corrupt);
    }
}
