//! The reflog line format, its one reader (`gitformat` of `logs/<ref>`): `<old> <new> <name>
//! <<email>> <time> <zone>\t<message>`. Its writer is [`super::Refs::append_log`]. Roots, `@{n}`,
//! `@{-n}` and `reflog expire` all read lines through here.

use sluice_object::{HashKind, ObjectId};

/// One reflog entry, borrowed from its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReflogEntry<'a> {
    /// The value before.
    pub old: ObjectId,
    /// The value after.
    pub new: ObjectId,
    /// Seconds since the epoch, when the identity carries a readable time.
    pub time: Option<i64>,
    /// What was done (`checkout: moving from a to b`), without the line's end.
    pub message: &'a str,
}

/// The entry of one line; `None` for a line without two readable ids (git skips those).
pub fn parse_entry(line: &[u8], hash: HashKind) -> Option<ReflogEntry<'_>> {
    let len = 2 * hash.len_in_bytes();
    let old = ObjectId::from_hex(hash, line.get(..len)?).ok()?;
    let new = ObjectId::from_hex(hash, line.get(len + 1..2 * len + 1)?).ok()?;
    let tab = line.iter().position(|&b| b == b'\t').unwrap_or(line.len());
    let head = &line[..tab];
    let time = (head.iter().rposition(|&b| b == b'>'))
        .and_then(|at| std::str::from_utf8(&head[at + 1..]).ok())
        .and_then(|after| after.split_whitespace().next()?.parse().ok());
    let message = line.get(tab + 1..).unwrap_or_default();
    let message = std::str::from_utf8(message).unwrap_or_default();
    Some(ReflogEntry {
        old,
        new,
        time,
        message: message.trim_end_matches('\n'),
    })
}

/// Every readable entry of a reflog's text, oldest first.
pub fn entries(text: &[u8], hash: HashKind) -> impl Iterator<Item = ReflogEntry<'_>> {
    text.split(|&b| b == b'\n')
        .filter_map(move |line| parse_entry(line, hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_git_writes() {
        let a = "1".repeat(40);
        let b = "2".repeat(40);
        let line = format!("{a} {b} C O Mitter <c@example.com> 1700000000 +0100\tcheckout: moving from main to x\n");
        let entry = parse_entry(line.as_bytes(), HashKind::Sha1).unwrap();
        assert_eq!(entry.old.to_string(), a);
        assert_eq!(entry.new.to_string(), b);
        assert_eq!(entry.time, Some(1700000000));
        assert_eq!(entry.message, "checkout: moving from main to x");
        assert!(parse_entry(b"garbage", HashKind::Sha1).is_none());
        let text = format!("{line}{line}");
        assert_eq!(entries(text.as_bytes(), HashKind::Sha1).count(), 2);
    }
}

/// Which ref updates are logged: `core.logAllRefUpdates` as git reads it. Whatever it says, a
/// ref that has a reflog already gets its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogRefs {
    /// Only refs with a reflog already (`false`; unset in a bare repository).
    Existing,
    /// Branches, remote-tracking refs, notes and `HEAD` too (`true`; unset with a work tree).
    Normal,
    /// Every ref (`always`).
    Always,
}

impl LogRefs {
    /// `core.logAllRefUpdates` of `config`, for a repository that is `bare` or not.
    pub fn from_config(
        config: &sluice_odb::Config,
        bare: bool,
    ) -> Result<LogRefs, sluice_odb::ConfigError> {
        let key = "core.logallrefupdates";
        if config
            .get(key)
            .is_some_and(|v| v.eq_ignore_ascii_case("always"))
        {
            return Ok(LogRefs::Always);
        }
        Ok(match config.get_bool(key)?.unwrap_or(!bare) {
            true => LogRefs::Normal,
            false => LogRefs::Existing,
        })
    }

    /// Whether an update of `name` gets a reflog entry, `has_log` telling whether it has a
    /// reflog already.
    pub fn logs(self, name: &str, has_log: impl FnOnce() -> bool) -> bool {
        let autocreated = ["refs/heads/", "refs/remotes/", "refs/notes/"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
            || name == "HEAD";
        match self {
            LogRefs::Always => true,
            LogRefs::Normal if autocreated => true,
            _ => has_log(),
        }
    }
}
