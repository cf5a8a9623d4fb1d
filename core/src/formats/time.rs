//! RFC 3339 timestamps (`2024-12-03T14:00:01.000Z`) ↔ milliseconds since epoch, as the formats
//! write them (UTC, millisecond precision).

use alloc::format;
use alloc::string::String;

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of `days` since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `ms` as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn to_rfc3339(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (year, month, day) = civil_from_days(days);
    let (h, m, s, milli) = (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

/// Milliseconds of an RFC 3339 time (`Z` or `±HH:MM`, any fraction, cut to milliseconds);
/// `None` when it is not one.
pub fn from_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits
            .iter()
            .try_fold(0i64, |n, d| d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0')))
    };
    let sep = |at: usize, chars: &[u8]| b.get(at).is_some_and(|c| chars.contains(c));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, m, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let mut at = 19;
    let mut milli = 0i64;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 3 {
                milli = milli * 10 + i64::from(b[at] - b'0');
            }
            at += 1;
        }
        if at == start {
            return None;
        }
        for _ in (at - start)..3 {
            milli *= 10;
        }
    }
    let offset = match b.get(at) {
        Some(b'Z' | b'z') if at + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if at + 6 == b.len() && sep(at + 3, b":") => {
            let minutes = num(at + 1, 2)? * 60 + num(at + 4, 2)?;
            if *sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    Some((((days * 24 + h) * 60 + m - offset) * 60 + s) * 1000 + milli)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_offsets() {
        for ms in [0, 1, 999, 1_733_234_401_000, 951_782_400_123, -86_400_001, 4_102_444_800_000] {
            assert_eq!(from_rfc3339(&to_rfc3339(ms)), Some(ms), "{}", to_rfc3339(ms));
        }
        assert_eq!(to_rfc3339(1_733_234_401_000), "2024-12-03T14:00:01.000Z");
        assert_eq!(from_rfc3339("2024-12-03T15:00:01+01:00"), Some(1_733_234_401_000));
        assert_eq!(from_rfc3339("2024-12-03T14:00:01.1234567Z"), Some(1_733_234_401_123));
        for bad in [
            "",
            "2024-12-03",
            "2024-13-03T14:00:01Z",
            "2024-12-03T14:00:01",
            "x024-12-03T14:00:01Z",
        ] {
            assert_eq!(from_rfc3339(bad), None, "{bad}");
        }
    }
}
