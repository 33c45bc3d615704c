//! Commits and tags: their header lines in git's order, and the identities in them.

use super::{Message, Report};
use sluice_object::ref_name::is_valid_ref_name;
use sluice_object::{HashKind, ObjectId, ObjectKind};

/// The header must end at an empty line (or, with no body, at a final newline) and hold no NUL.
fn headers_ok(data: &[u8], report: &mut Report<'_>) -> bool {
    for (at, &byte) in data.iter().enumerate() {
        if byte == 0 {
            report.add(
                Message::NulInHeader,
                format!("unterminated header: NUL at offset {at}"),
            );
            return false;
        }
        if byte == b'\n' && data.get(at + 1) == Some(&b'\n') {
            return true;
        }
    }
    if data.last() == Some(&b'\n') {
        return true;
    }
    report.add(Message::UnterminatedHeader, "unterminated header");
    false
}

/// The id after `prefix` at the start of `data`, ended by a newline; returns it and the rest.
fn id_line<'a>(hash: HashKind, data: &'a [u8], prefix: &[u8]) -> Option<(ObjectId, &'a [u8])> {
    let rest = data.strip_prefix(prefix)?;
    let hex_len = hash.len_in_bytes() * 2;
    let hex = rest.get(..hex_len)?;
    if rest.get(hex_len) != Some(&b'\n') {
        return None;
    }
    let id = ObjectId::from_hex(hash, hex).ok()?;
    Some((id, &rest[hex_len + 1..]))
}

/// git's `fsck_commit`.
pub(super) fn check_commit(hash: HashKind, data: &[u8], report: &mut Report<'_>) {
    if !headers_ok(data, report) {
        return;
    }
    if !data.starts_with(b"tree ") {
        return report.add(
            Message::MissingTree,
            "invalid format - expected 'tree' line",
        );
    }
    let Some((_, mut rest)) = id_line(hash, data, b"tree ") else {
        return report.add(
            Message::BadTreeSha1,
            "invalid 'tree' line format - bad sha1",
        );
    };
    while rest.starts_with(b"parent ") {
        match id_line(hash, rest, b"parent ") {
            Some((_, next)) => rest = next,
            None => {
                return report.add(
                    Message::BadParentSha1,
                    "invalid 'parent' line format - bad sha1",
                )
            }
        }
    }
    let mut authors = 0;
    while let Some(ident) = rest.strip_prefix(b"author ") {
        authors += 1;
        match check_ident(ident, report) {
            Some(next) => rest = next,
            None => return,
        }
    }
    match authors {
        0 => {
            return report.add(
                Message::MissingAuthor,
                "invalid format - expected 'author' line",
            )
        }
        1 => {}
        _ => {
            return report.add(
                Message::MultipleAuthors,
                "invalid format - multiple 'author' lines",
            )
        }
    }
    let Some(ident) = rest.strip_prefix(b"committer ") else {
        return report.add(
            Message::MissingCommitter,
            "invalid format - expected 'committer' line",
        );
    };
    if check_ident(ident, report).is_none() {
        return;
    }
    if data.contains(&0) {
        report.add(Message::NulInCommit, "NUL byte in the commit object body");
    }
}

/// git's `fsck_tag_standalone`.
pub(super) fn check_tag(hash: HashKind, data: &[u8], report: &mut Report<'_>) {
    if !headers_ok(data, report) {
        return;
    }
    if !data.starts_with(b"object ") {
        return report.add(
            Message::MissingObject,
            "invalid format - expected 'object' line",
        );
    }
    let Some((_, rest)) = id_line(hash, data, b"object ") else {
        return report.add(
            Message::BadObjectSha1,
            "invalid 'object' line format - bad sha1",
        );
    };
    let Some(rest) = rest.strip_prefix(b"type ") else {
        return report.add(
            Message::MissingTypeEntry,
            "invalid format - expected 'type' line",
        );
    };
    let Some((kind, rest)) = split_line(rest) else {
        return report.add(
            Message::MissingType,
            "invalid format - unexpected end after 'type' line",
        );
    };
    if ObjectKind::from_name(kind).is_none() {
        report.add(Message::BadType, "invalid 'type' value");
        return;
    }
    let Some(rest) = rest.strip_prefix(b"tag ") else {
        return report.add(
            Message::MissingTagEntry,
            "invalid format - expected 'tag' line",
        );
    };
    let Some((name, rest)) = split_line(rest) else {
        return report.add(
            Message::MissingTag,
            "invalid format - unexpected end after 'type' line",
        );
    };
    let name = String::from_utf8_lossy(name);
    if !is_valid_ref_name(&format!("refs/tags/{name}")) {
        report.add(Message::BadTagName, format!("invalid 'tag' name: {name}"));
    }
    let Some(ident) = rest.strip_prefix(b"tagger ") else {
        // Early tags had no tagger.
        return report.add(
            Message::MissingTaggerEntry,
            "invalid format - expected 'tagger' line",
        );
    };
    if let Some(rest) = check_ident(ident, report) {
        if !rest.starts_with(b"\n") {
            report.add(
                Message::ExtraHeaderEntry,
                "invalid format - extra header(s) after 'tagger'",
            );
        }
    }
}

/// The line at the start of `data` without its newline, and what follows; `None` without one.
fn split_line(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = data.iter().position(|&b| b == b'\n')?;
    Some((&data[..end], &data[end + 1..]))
}

/// git's `fsck_ident`: `Name <email> <seconds> <+hhmm>` and a newline. Returns what follows,
/// or `None` after reporting what is wrong.
fn check_ident<'a>(data: &'a [u8], report: &mut Report<'_>) -> Option<&'a [u8]> {
    let bad = |report: &mut Report<'_>, message, what: &str| {
        report.add(message, format!("invalid author/committer line - {what}"));
        None
    };
    let stop = |from: usize| {
        from + data[from..]
            .iter()
            .position(|b| matches!(b, b'<' | b'>' | b'\n'))
            .unwrap_or(data.len() - from)
    };
    let byte = |at: usize| data.get(at).copied().unwrap_or(0);
    if byte(0) == b'<' {
        return bad(
            report,
            Message::MissingNameBeforeEmail,
            "missing space before email",
        );
    }
    let mut p = stop(0);
    if byte(p) == b'>' {
        return bad(report, Message::BadName, "bad name");
    }
    if byte(p) != b'<' {
        return bad(report, Message::MissingEmail, "missing email");
    }
    if p == 0 || data[p - 1] != b' ' {
        return bad(
            report,
            Message::MissingSpaceBeforeEmail,
            "missing space before email",
        );
    }
    p = stop(p + 1);
    if byte(p) != b'>' {
        return bad(report, Message::BadEmail, "bad email");
    }
    p += 1;
    if byte(p) != b' ' {
        return bad(
            report,
            Message::MissingSpaceBeforeDate,
            "missing space before date",
        );
    }
    p += 1;
    if byte(p) == b'0' && byte(p + 1) != b' ' {
        return bad(report, Message::ZeroPaddedDate, "zero-padded date");
    }
    let (end, overflows) = timestamp(data, p);
    if overflows {
        return bad(
            report,
            Message::BadDateOverflow,
            "date causes integer overflow",
        );
    }
    if end == p || byte(end) != b' ' {
        return bad(report, Message::BadDate, "bad date");
    }
    p = end + 1;
    let zone_ok = matches!(byte(p), b'+' | b'-')
        && (1..=4).all(|i| byte(p + i).is_ascii_digit())
        && byte(p + 5) == b'\n';
    if !zone_ok {
        return bad(report, Message::BadTimezone, "bad time zone");
    }
    Some(&data[p + 6..])
}

/// Reads a timestamp as git's `parse_timestamp` (an unsigned `strtoumax`) at `at`: where it
/// ends, and whether it overflows git's signed 64-bit time.
fn timestamp(data: &[u8], at: usize) -> (usize, bool) {
    let mut p = at;
    let negative = match data.get(p) {
        Some(b'-') => {
            p += 1;
            true
        }
        Some(b'+') => {
            p += 1;
            false
        }
        _ => false,
    };
    let digits = data[p.min(data.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 {
        return (at, false);
    }
    let mut value: u64 = 0;
    let mut wrapped = false;
    for &d in &data[p..p + digits] {
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
        {
            Some(v) => value = v,
            None => wrapped = true,
        }
    }
    let overflows = wrapped || value > i64::MAX as u64 || (negative && value != 0);
    (p + digits, overflows)
}
