//! The dates `--shallow-since` takes, as git's date parser reads the common forms: seconds since
//! the epoch (`1700000000`, `@1700000000`), relative dates (`3 days ago`, `3.days.ago`,
//! `1 year 2 months ago`, `yesterday`, `last week`, `noon`), and calendar dates in ISO 8601,
//! slashed, dotted and month-name forms with an optional time and zone. As in git, a date
//! without a time takes the current time of day, and dates without a zone are local: in `TZ`,
//! else the system's zone. Unlike git, which reads any text as some date, what fits none of
//! these forms is an error.
//!
//! Local time follows git's two paths through the C library. A calendar date with a time of
//! day is read in the offset in force on that date. Everything counted from now (relative
//! dates, `noon`, `midnight`, a date without a time) keeps the daylight-saving state of the
//! moment it counts from, as `mktime` does with the `tm_isdst` that `localtime` filled in: so
//! `2 months ago` read in July lands an hour off January's wall clock.

/// Why a date could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DateError {
    /// A part that should be a number is not one.
    #[error("bad {what} '{text}'")]
    BadNumber {
        /// Which part: "hour", "date", "timestamp", …
        what: &'static str,
        /// The text of the part.
        text: String,
    },
    /// A time of day that fits no form.
    #[error("cannot read the time in '{0}'")]
    BadTime(String),
    /// A date that fits no form.
    #[error("cannot read the date '{0}'")]
    Unreadable(String),
    /// A date outside what the time zone rules cover.
    #[error("the date '{0}' is out of range")]
    OutOfRange(String),
}

/// Days since 1970-01-01 of a proleptic Gregorian date (negative before it).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
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

fn number(text: &str, what: &'static str) -> Result<i64, DateError> {
    text.parse().map_err(|_| DateError::BadNumber {
        what,
        text: text.to_owned(),
    })
}

/// `now` moved back by `count` calendar months of its local calendar. A day past the end of
/// the month it lands in runs on into the next (January 31st less two months is December
/// 1st), as git's does.
fn months_back(now: i64, count: i64, zone: &Zone) -> i64 {
    let local = zone.local(now);
    let (days, seconds) = (local.div_euclid(86_400), local.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    let total = year * 12 + (month - 1) - count;
    let (year, month) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    zone.counted_from(now, days_from_civil(year, month, day) * 86_400 + seconds)
}

/// The time zone in which dates without one are read.
pub struct Zone(jiff::tz::TimeZone);

impl Zone {
    /// The zone of this process, as the C library finds it: `TZ` (a zone name or a POSIX
    /// rule), else the system's (`/etc/localtime`); UTC if neither can be read.
    pub fn system() -> Zone {
        Zone(jiff::tz::TimeZone::system())
    }

    /// Seconds east of UTC in force at `instant`.
    fn offset_at(&self, instant: i64) -> i64 {
        jiff::Timestamp::from_second(instant)
            .map_or(0, |t| i64::from(self.0.to_offset(t).seconds()))
    }

    /// `instant` as local wall-clock seconds (seconds since 1970-01-01 00:00 local).
    fn local(&self, instant: i64) -> i64 {
        instant + self.offset_at(instant)
    }

    /// The instant of local wall-clock time `local` reached by counting from `from`: read in
    /// `from`'s offset, as `mktime` reads a `struct tm` whose daylight-saving flag came from
    /// `localtime(from)`.
    fn counted_from(&self, from: i64, local: i64) -> i64 {
        local - self.offset_at(from)
    }

    /// The instant of local wall-clock time `local` on its own date, in the offset in force
    /// then (a time skipped by a clock change is read after it, a repeated one the first time).
    fn instant_of(&self, local: i64, text: &str) -> Result<i64, DateError> {
        let out_of_range = || DateError::OutOfRange(text.to_owned());
        let (days, seconds) = (local.div_euclid(86_400), local.rem_euclid(86_400));
        let (year, month, day) = civil_from_days(days);
        let civil = jiff::civil::DateTime::new(
            i16::try_from(year).map_err(|_| out_of_range())?,
            month as i8,
            day as i8,
            (seconds / 3_600) as i8,
            (seconds / 60 % 60) as i8,
            (seconds % 60) as i8,
            0,
        )
        .map_err(|_| out_of_range())?;
        let instant = self
            .0
            .to_ambiguous_timestamp(civil)
            .compatible()
            .map_err(|_| out_of_range())?;
        Ok(instant.as_second())
    }
}

/// The current time, in seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `--shallow-since`'s value, if given, as seconds since the epoch.
pub fn parse_since(text: Option<&str>) -> Result<Option<i64>, DateError> {
    text.map(|text| parse_date(text, now(), &Zone::system()))
        .transpose()
}

/// Seconds in one of a relative date's units (months and years count calendar months).
enum Unit {
    Seconds(i64),
    Months(i64),
}

fn unit(word: &str) -> Option<Unit> {
    Some(match word.strip_suffix('s').unwrap_or(word) {
        "second" | "sec" => Unit::Seconds(1),
        "minute" | "min" => Unit::Seconds(60),
        "hour" => Unit::Seconds(3_600),
        "day" => Unit::Seconds(86_400),
        "week" => Unit::Seconds(7 * 86_400),
        "month" => Unit::Months(1),
        "year" => Unit::Months(12),
        _ => return None,
    })
}

/// `now` moved back by `count` of `unit`.
fn back(now: i64, count: i64, unit: Unit, zone: &Zone) -> i64 {
    match unit {
        Unit::Seconds(seconds) => now - count * seconds,
        Unit::Months(months) => months_back(now, count * months, zone),
    }
}

/// The start of the local day holding `instant`, in local wall-clock seconds.
fn local_day(instant: i64, zone: &Zone) -> i64 {
    let local = zone.local(instant);
    local - local.rem_euclid(86_400)
}

/// The relative forms: `now`, `yesterday`, `noon`, `midnight`, `last <unit>`, and `<n> <unit>`
/// pairs with or without `ago`, words separated by spaces or dots (`3.days.ago`).
fn relative(text: &str, now: i64, zone: &Zone) -> Option<i64> {
    let words: Vec<&str> = text.split([' ', '.']).filter(|w| !w.is_empty()).collect();
    match words[..] {
        ["now"] => return Some(now),
        ["yesterday"] => return Some(now - 86_400),
        // The last noon that has passed: before noon, yesterday's, counted from this time
        // yesterday.
        ["noon"] => {
            let before_noon = zone.local(now).rem_euclid(86_400) < 12 * 3_600;
            let from = if before_noon { now - 86_400 } else { now };
            return Some(zone.counted_from(from, local_day(from, zone) + 12 * 3_600));
        }
        ["midnight"] => return Some(zone.counted_from(now, local_day(now, zone))),
        ["last", word] => return Some(back(now, 1, unit(word)?, zone)),
        _ => {}
    }
    let words = words.strip_suffix(&["ago"]).unwrap_or(&words);
    if words.is_empty() || !words.len().is_multiple_of(2) {
        return None;
    }
    let mut when = now;
    for pair in words.chunks(2) {
        let count: i64 = pair[0].parse().ok()?;
        when = back(when, count, unit(pair[1])?, zone);
    }
    Some(when)
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// `hh:mm[:ss]` as seconds into the day.
fn time_of_day(text: &str, whole: &str) -> Result<i64, DateError> {
    let fields: Vec<&str> = text.split(':').collect();
    let (hour, minute, second) = match fields[..] {
        [h, m] => (number(h, "hour")?, number(m, "minute")?, 0),
        [h, m, s] => (
            number(h, "hour")?,
            number(m, "minute")?,
            number(s, "second")?,
        ),
        _ => return Err(DateError::BadTime(whole.to_owned())),
    };
    if hour > 23 || minute > 59 || second > 60 {
        return Err(DateError::BadTime(whole.to_owned()));
    }
    Ok(hour * 3_600 + minute * 60 + second)
}

/// A zone (`Z`, `UTC`, `GMT`, `+HHMM`, `-HH:MM`) as seconds east of UTC.
fn zone_offset(text: &str) -> Option<i64> {
    if matches!(text, "z" | "utc" | "gmt") {
        return Some(0);
    }
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = text[1..].chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i64 = digits[..2].parse().ok()?;
    let minutes: i64 = digits[2..].parse().ok()?;
    Some(sign * (hours * 3_600 + minutes * 60))
}

/// A calendar date with an optional time and zone, in any of the orders git reads: ISO
/// (`2023-11-14[T| ]22:13[:20][zone]`), `2023/11/14`, `11/14/2023`, `14.11.2023`, and month
/// names (`Nov 14 2023`, `14 Nov 2023`, `Tue, 14 Nov 2023 22:13:20 +0000`). Without a time
/// the date takes the current time of day, as in git.
fn absolute(text: &str, now: i64, zone: &Zone) -> Result<i64, DateError> {
    let cannot = || DateError::Unreadable(text.to_owned());
    let (mut year, mut month, mut day) = (None, None, None);
    let (mut time, mut offset) = (None, None);
    // `T` between digits joins an ISO date to its time; a zone may follow the time directly.
    let bytes = text.as_bytes();
    let spaced: String = text
        .char_indices()
        .map(|(i, c)| {
            let digit_at =
                |j: Option<usize>| j.and_then(|j| bytes.get(j)).is_some_and(u8::is_ascii_digit);
            if c == 't' && digit_at(i.checked_sub(1)) && digit_at(Some(i + 1)) {
                ' '
            } else {
                c
            }
        })
        .collect();
    let mut words: Vec<String> = Vec::new();
    for word in spaced.split([' ', ',']).filter(|w| !w.is_empty()) {
        match word.find(['z', '+', '-']) {
            Some(at) if word[..at].contains(':') => {
                words.push(word[..at].to_owned());
                words.push(word[at..].to_owned());
            }
            _ => words.push(word.to_owned()),
        }
    }
    for word in &words {
        let word = word.as_str();
        let numeric = |parts: &[&str]| -> Result<Vec<i64>, DateError> {
            parts.iter().map(|p| number(p, "date")).collect()
        };
        if let Some(seconds) = zone_offset(word) {
            offset = Some(seconds);
        } else if word.contains(':') {
            time = Some(time_of_day(word, text)?);
        } else if let Some(index) = MONTHS
            .iter()
            .position(|m| word.len() >= 3 && word.starts_with(m))
        {
            month = Some(index as i64 + 1);
        } else if WEEKDAYS
            .iter()
            .any(|d| word.len() >= 3 && word.starts_with(d))
        {
            // The weekday a date falls on says nothing more.
        } else if let Some(separator) = ['-', '/', '.'].into_iter().find(|s| word.contains(*s)) {
            let parts: Vec<&str> = word.split(separator).collect();
            let [a, b, c] = numeric(&parts)?[..] else {
                return Err(cannot());
            };
            let (y, m, d) = match (separator, parts[0].len() == 4) {
                (_, true) => (a, b, c),
                ('/', false) => (c, a, b),
                (_, false) => (c, b, a),
            };
            (year, month, day) = (Some(y), Some(m), Some(d));
        } else if word.bytes().all(|b| b.is_ascii_digit()) {
            let value = number(word, "date")?;
            if word.len() == 4 {
                year = Some(value);
            } else if day.is_none() {
                day = Some(value);
            } else {
                return Err(cannot());
            }
        } else {
            return Err(cannot());
        }
    }
    let (Some(year), Some(month), Some(day)) = (year, month, day) else {
        return Err(cannot());
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Err(cannot());
    }
    let date = days_from_civil(year, month, day) * 86_400;
    match (time, offset) {
        (Some(time), Some(offset)) => Ok(date + time - offset),
        (Some(time), None) => zone.instant_of(date + time, text),
        // git reads a date without a time as today with the date changed: the time of day
        // and the offset are now's.
        (None, offset) => {
            let time = zone.local(now).rem_euclid(86_400);
            Ok(offset.map_or_else(
                || zone.counted_from(now, date + time),
                |offset| date + time - offset,
            ))
        }
    }
}

/// Seconds since the epoch for `text`, relative forms counted back from `now`, dates without
/// a zone read in `zone`.
pub fn parse_date(text: &str, now: i64, zone: &Zone) -> Result<i64, DateError> {
    let text = text.trim().to_ascii_lowercase();
    let digits = text.strip_prefix('@').unwrap_or(&text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return number(digits, "timestamp");
    }
    if let Some(when) = relative(&text, now, zone) {
        return Ok(when);
    }
    absolute(&text, now, zone)
}

#[cfg(test)]
mod tests {
    use super::{parse_date, Zone};
    use std::process::Command;

    /// What git makes of `text` at `now` in the zone `tz`: `git rev-parse --since` (in the
    /// repository `repo`) prints it, and git takes its clock from GIT_TEST_DATE_NOW.
    fn git_reads(git: &str, repo: &std::path::Path, text: &str, now: i64, tz: &str) -> i64 {
        let out = Command::new(git)
            .args(["rev-parse", &format!("--since={text}")])
            .current_dir(repo)
            .env("GIT_TEST_DATE_NOW", now.to_string())
            .env("TZ", tz)
            .output()
            .expect("git runs");
        let printed = String::from_utf8_lossy(&out.stdout);
        printed
            .trim()
            .strip_prefix("--max-age=")
            .unwrap_or_else(|| panic!("{git} rev-parse --since='{text}' printed '{printed}'"))
            .parse()
            .unwrap()
    }

    #[test]
    fn dates_read_as_git_reads_them() {
        let forms = [
            "1700000000",
            "@1700000000",
            "2020-01-01",
            "2020-01-01 10:00:00",
            "2020-07-01 10:00:00",
            "2020-01-01T10:00:00Z",
            "2020-01-01 10:00 +0200",
            "2020-01-01 10:00 -01:30",
            "2023-02-28 23:59:59+0100",
            "2023/11/14",
            "11/14/2023",
            "14.11.2023",
            "Nov 14 2023",
            "14 Nov 2023 10:00",
            "November 14, 2023 22:13",
            "Tue, 14 Nov 2023 22:13:20 +0000",
            "Sat, 14 Oct 2023 08:13:20 -0100",
            "now",
            "yesterday",
            "noon",
            "midnight",
            "last week",
            "last month",
            "3 days ago",
            "3.days.ago",
            "3 days",
            "1 week ago",
            "2 weeks ago",
            "5 hours ago",
            "90 minutes ago",
            "2 months ago",
            "1 year 2 months ago",
        ];
        let repo = tempfile::tempdir().unwrap();
        let init = Command::new("git")
            .args(["init", "-q"])
            .current_dir(repo.path())
            .status();
        assert!(init.is_ok_and(|s| s.success()), "git init");
        let gits: Vec<&str> = ["git", "/usr/bin/git"]
            .into_iter()
            .filter(|g| Command::new(g).arg("--version").output().is_ok())
            .collect();
        // Zones as POSIX rules, which the C library reads without zone files: UTC, one with
        // daylight saving time, one with a half-hour offset.
        let zones = ["UTC0", "EST5EDT,M3.2.0,M11.1.0", "IST-5:30"];
        // Every date above lies in the past (git reads a future one otherwise); mornings and
        // evenings, so `noon` falls on either side in every zone; the last day of a month, so
        // months back run over; winter and summer, so months back cross a clock change.
        let nows = [1_700_000_000, 1_706_745_599, 1_709_974_800, 1_720_000_000];
        for tz in zones {
            let zone = Zone(jiff::tz::TimeZone::posix(tz).expect("a valid rule"));
            for now in nows {
                for text in forms {
                    let ours =
                        parse_date(text, now, &zone).unwrap_or_else(|e| panic!("{text}: {e}"));
                    for git in &gits {
                        assert_eq!(
                            ours,
                            git_reads(git, repo.path(), text, now, tz),
                            "'{text}' at {now} in {tz} by {git}"
                        );
                    }
                }
            }
        }
        let utc = Zone(jiff::tz::TimeZone::UTC);
        for bad in [
            "yesterday-ish",
            "2020-13-01",
            "3 fortnights ago",
            "2020-01-01 10",
            "garbage",
        ] {
            assert!(parse_date(bad, 1_700_000_000, &utc).is_err(), "{bad}");
        }
    }
}
