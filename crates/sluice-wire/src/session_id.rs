//! `transfer.advertiseSID`: a server names its session in its capabilities, and a client its
//! own in its requests to such a server, as git does with its trace2 session id, `<UTC time to
//! the microsecond>Z-H<host>-P<process>`, so that each side can match the other's logs.

use std::time::{SystemTime, UNIX_EPOCH};

/// This process's session id, in the shape git gives it.
pub fn session_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = now.as_secs();
    let (year, month, day) = civil_date(seconds / 86_400);
    let of_day = seconds % 86_400;
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}.{:06}Z-H{:08x}-P{:08x}",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60,
        now.subsec_micros(),
        host_hash(),
        std::process::id()
    )
}

/// The proleptic Gregorian date of a day counted from 1970-01-01.
fn civil_date(days: u64) -> (u64, u64, u64) {
    // Days from 0000-03-01, in 400-year eras of 146,097 days (March-based years keep the
    // leap day last).
    let days = days + 719_468;
    let era = days / 146_097;
    let of_era = days % 146_097;
    let year_of_era = (of_era - of_era / 1460 + of_era / 36_524 - of_era / 146_096) / 365;
    let of_year = of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * of_year + 2) / 153;
    let day = of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// A short hash of the host's name (FNV-1a), so that the id does not spell it out.
fn host_hash() -> u32 {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    name.trim().bytes().fold(0x811c_9dc5u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::civil_date;

    #[test]
    fn civil_dates_of_known_days() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(20_517), (2026, 3, 5));
    }
}
