//! The character classes the search rules share: CJK (matched by bigrams, never folded) and the
//! combining accents folding drops.

/// Whether `c` is CJK: Han, kana, Hangul (matched by bigrams, not words).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x2E80..=0x2FDF | 0x3040..=0x30FF | 0x3130..=0x318F | 0x31F0..=0x31FF
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF66..=0xFF9F
        | 0x20000..=0x2FA1F)
}

/// Whether `c` is a combining diacritic (U+0300–U+036F): Latin, Greek and Cyrillic accents.
pub fn is_accent(c: char) -> bool {
    ('\u{300}'..='\u{36f}').contains(&c)
}
