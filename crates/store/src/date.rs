//! Dates as the records write them, `YYYY-MM-DD` in UTC: the date of a
//! moment ([`utc_date`]: a run's start, a recorded run's folder, a
//! benchmark baseline), the check of a date's form ([`valid_date`]: a
//! fact's `measured` date, `cargo xtask record --date`) and the moment now
//! ([`now_secs`]). The one home of all three.

/// Seconds since the epoch by the system clock (0 for a clock before it).
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The UTC date of `unix_secs`, `YYYY-MM-DD` (days since the epoch to the
/// civil date, H. Hinnant's `civil_from_days`).
pub fn utc_date(unix_secs: u64) -> String {
    let z = (unix_secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Whether `d` is a date as the records write it: `YYYY-MM-DD`.
pub fn valid_date(d: &str) -> bool {
    let b = d.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_of_moments() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(1_795_305_600), "2026-11-22");
        // The last second of a day is still that day.
        assert_eq!(utc_date(1_795_305_600 - 1), "2026-11-21");
    }

    #[test]
    fn every_date_written_is_valid_and_only_that_form() {
        for secs in [0, 951_782_400, 1_795_305_600, 4_102_444_799] {
            assert!(valid_date(&utc_date(secs)), "{}", utc_date(secs));
        }
        for bad in ["2026-11-2", "2026/11/26", "2026-11-26.2", "2026-1a-26", ""] {
            assert!(!valid_date(bad), "{bad}");
        }
    }
}
