//! The dates `--shallow-since` takes, as git's date parser reads the common forms: seconds since
//! the epoch (`1700000000`, `@1700000000`), ISO 8601 (`2023-11-14`, `2023-11-14 22:20[:00]`,
//! `2023-11-14T22:20:00Z`, with `+HHMM`/`+HH:MM` zones) and `<n> <unit>s ago`. As in git, a
//! date without a time takes the current time of day. A time without a zone is taken as UTC
//! (git takes the local zone; Sluice does not read the system's zone database).

use anyhow::{anyhow, bail};

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

/// The date of a day count since 1970-01-01.
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

fn number(text: &str, what: &str) -> anyhow::Result<i64> {
    text.parse().map_err(|_| anyhow!("bad {what} '{text}'"))
}

/// `now` moved back by `count` calendar months (the day clamped to the month's end).
fn months_back(now: i64, count: i64) -> i64 {
    let (days, seconds) = (now.div_euclid(86_400), now.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    let total = year * 12 + (month - 1) - count;
    let (year, month) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    let last = days_from_civil(year + i64::from(month == 12), month % 12 + 1, 1)
        - days_from_civil(year, month, 1);
    days_from_civil(year, month, day.min(last)) * 86_400 + seconds
}

/// The current time, in seconds since the epoch.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `--shallow-since`'s value, if given, as seconds since the epoch.
pub(crate) fn parse_since(text: Option<&str>) -> anyhow::Result<Option<i64>> {
    text.map(|text| parse_date(text, now())).transpose()
}

/// Seconds since the epoch for `text`, relative forms counted back from `now`.
pub(crate) fn parse_date(text: &str, now: i64) -> anyhow::Result<i64> {
    let text = text.trim();
    let digits = text.strip_prefix('@').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return number(digits, "timestamp");
    }
    if let Some(amount) = text.strip_suffix(" ago") {
        let (count, unit) = amount
            .trim()
            .split_once(' ')
            .ok_or_else(|| anyhow!("cannot read the date '{text}'"))?;
        let count = number(count, "count")?;
        let unit = unit.trim().trim_end_matches('s');
        let seconds = match unit {
            "second" => 1,
            "minute" => 60,
            "hour" => 3_600,
            "day" => 86_400,
            "week" => 7 * 86_400,
            "month" => return Ok(months_back(now, count)),
            "year" => return Ok(months_back(now, 12 * count)),
            _ => bail!("cannot read the date '{text}': unknown unit '{unit}'"),
        };
        return Ok(now - count * seconds);
    }
    // ISO 8601: the date, then an optional time and zone.
    let (date, rest) = text.split_at(text.find(['T', ' ']).unwrap_or(text.len()));
    let parts: Vec<&str> = date.split('-').collect();
    let [year, month, day] = parts[..] else {
        bail!("cannot read the date '{text}'");
    };
    let (year, month, day) = (
        number(year, "year")?,
        number(month, "month")?,
        number(day, "day")?,
    );
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        bail!("cannot read the date '{text}'");
    }
    let rest = rest.trim_start_matches(['T', ' ']).trim();
    let (time, zone) = match rest.find(['Z', '+', '-']) {
        Some(at) => (rest[..at].trim(), rest[at..].trim()),
        None => (rest, ""),
    };
    let time_of_day = if time.is_empty() {
        now.rem_euclid(86_400)
    } else {
        let fields: Vec<&str> = time.split(':').collect();
        let (hour, minute, second) = match fields[..] {
            [h, m] => (number(h, "hour")?, number(m, "minute")?, 0),
            [h, m, s] => (
                number(h, "hour")?,
                number(m, "minute")?,
                number(s, "second")?,
            ),
            _ => bail!("cannot read the time in '{text}'"),
        };
        hour * 3_600 + minute * 60 + second
    };
    let offset = match zone {
        "" | "Z" => 0,
        _ => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
            if digits.len() != 4 {
                bail!("cannot read the zone in '{text}'");
            }
            sign * (number(&digits[..2], "zone")? * 3_600 + number(&digits[2..], "zone")? * 60)
        }
    };
    Ok(days_from_civil(year, month, day) * 86_400 + time_of_day - offset)
}

#[cfg(test)]
mod tests {
    use super::parse_date;

    #[test]
    fn the_common_forms_read_as_git_reads_them() {
        // 2020-01-01 09:03:49 UTC.
        let now = 1_577_869_429;
        for (text, expected) in [
            ("1700000000", 1_700_000_000),
            ("@1700000000", 1_700_000_000),
            ("2020-01-01", 1_577_869_429),
            ("2020-01-01 10:00:00", 1_577_872_800),
            ("2020-01-01T10:00:00Z", 1_577_872_800),
            ("2020-01-01 10:00 +0200", 1_577_865_600),
            ("2020-01-01 10:00 -01:30", 1_577_878_200),
            ("3 days ago", now - 3 * 86_400),
            ("1 week ago", now - 7 * 86_400),
            ("2 months ago", 1_572_599_029),
        ] {
            assert_eq!(parse_date(text, now).unwrap(), expected, "{text}");
        }
        for bad in [
            "yesterday-ish",
            "2020-13-01",
            "3 fortnights ago",
            "2020-01-01 10",
        ] {
            assert!(parse_date(bad, now).is_err(), "{bad}");
        }
    }
}
