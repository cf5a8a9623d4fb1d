//! Folding, the first of the search rules: what a character matches as. Lowercase (Unicode's
//! simple lowercase mapping) and accents off (the combining diacritics U+0300–U+036F of a
//! character's canonical decomposition dropped: Latin, Greek and Cyrillic accents), from a table
//! build.rs generates (basic plane; capitals beyond it are left as they are); `ß` as `ss`. CJK characters stay as they are: `が` is not `か`.

use alloc::string::String;

include!(concat!(env!("OUT_DIR"), "/fold_table.rs"));

/// What a non-ASCII `c` folds to from the generated table: itself when it is not there, `None`
/// when it folds to nothing (a lone accent).
fn from_table(c: char) -> Option<char> {
    let Ok(code) = u16::try_from(c as u32) else {
        return Some(c);
    };
    let at = FOLD_RUNS.partition_point(|run| run.0 <= code);
    let Some(&(from, to, count, from_stride, to_stride)) = at.checked_sub(1).map(|i| &FOLD_RUNS[i])
    else {
        return Some(c);
    };
    let step = u32::from(code - from);
    let stride = u32::from(from_stride).max(1);
    let k = step / stride;
    if step % stride != 0 || k >= u32::from(count) {
        return Some(c);
    }
    if to == 0 {
        return None;
    }
    char::from_u32(u32::from(to) + k * u32::from(to_stride))
}

/// Appends what `c` folds to.
pub fn fold_char_into(c: char, out: &mut String) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return;
    }
    if super::chars::is_cjk(c) {
        out.push(c); // no case, and kana keep their voicing marks
        return;
    }
    if matches!(c, 'ß' | 'ẞ') {
        out.push_str("ss");
        return;
    }
    if let Some(folded) = from_table(c) {
        out.push(folded);
    }
}

/// `text` folded into `out` (cleared first).
pub fn fold_into(text: &str, out: &mut String) {
    out.clear();
    if text.is_ascii() {
        out.push_str(text);
        out.make_ascii_lowercase();
    } else {
        text.chars().for_each(|c| fold_char_into(c, out));
    }
}

/// `text` folded.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    fold_into(text, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::{fold, from_table, FOLD_PAIRS};

    #[test]
    fn the_runs_hold_exactly_the_pairs() {
        let mut pairs = FOLD_PAIRS.iter().peekable();
        for code in 0x80..=0xFFFFu32 {
            let Some(c) = char::from_u32(code) else { continue };
            let want = match pairs.next_if(|&&(from, _)| u32::from(from) == code) {
                Some(&(_, 0)) => None,
                Some(&(_, to)) => char::from_u32(u32::from(to)),
                None => Some(c),
            };
            assert_eq!(from_table(c), want, "{c:?}");
        }
        assert!(pairs.next().is_none());
    }

    #[test]
    fn folds_case_accents_and_sharp_s() {
        assert_eq!(fold("Straße ÜBER Café"), "strasse uber cafe");
        assert_eq!(fold("ÉCOLE Ελλάδα Йога"), "ecole ελλαδα иога");
        assert_eq!(fold("が東京"), "が東京", "kana voicing and Han unchanged");
    }
}
