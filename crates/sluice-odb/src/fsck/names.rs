//! Names that some file system reads as `.git`, `.gitmodules`, `.gitattributes`, `.gitignore`
//! or `.mailmap`: HFS+ ignores some Unicode code points and case; NTFS ignores case and
//! trailing dots and spaces, and answers to 8.3 short names (`GIT~1`). A tree that names one of
//! these is a way to write into `.git` on checkout (CVE-2014-9390) or to smuggle a
//! `.gitmodules` past the checks.

/// A special name and its NTFS short forms: the 6-letter prefix (with `~1`..`~4`) and the hashed
/// fallback prefix Windows uses after them.
pub(super) struct Special {
    name: &'static str,
    short: &'static str,
    hashed: &'static str,
}

pub(super) const DOTGIT: Special = Special {
    name: ".git",
    short: "git",
    hashed: "",
};
pub(super) const GITMODULES: Special = Special {
    name: ".gitmodules",
    short: "gitmod",
    hashed: "gi7eba",
};
pub(super) const GITATTRIBUTES: Special = Special {
    name: ".gitattributes",
    short: "gitatt",
    hashed: "gi7d29",
};
pub(super) const GITIGNORE: Special = Special {
    name: ".gitignore",
    short: "gitign",
    hashed: "gi250a",
};
pub(super) const MAILMAP: Special = Special {
    name: ".mailmap",
    short: "mailma",
    hashed: "maba30",
};

/// Whether HFS+ or NTFS would take `name` for `special`.
pub(super) fn is(special: &Special, name: &[u8]) -> bool {
    is_hfs(special.name, name) || is_ntfs(special, name)
}

/// HFS+: the code points it ignores removed, ASCII case folded.
fn is_hfs(needle: &str, name: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(name) else {
        return false;
    };
    let ignorable = |c: &char| matches!(*c as u32, 0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff);
    let mut kept = text.chars().filter(|c| !ignorable(c));
    let mut wanted = needle.chars();
    loop {
        match (kept.next(), wanted.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a.eq_ignore_ascii_case(&b) => {}
            _ => return false,
        }
    }
}

/// NTFS: any backslash-separated component that is the name, or a short name of it, in any
/// case, followed only by dots and spaces (or an alternate data stream, `:`).
fn is_ntfs(special: &Special, name: &[u8]) -> bool {
    name.split(|&b| b == b'\\').any(|component| {
        let tail_ok = |rest: &[u8]| {
            let rest = &rest[rest.iter().take_while(|b| matches!(b, b' ' | b'.')).count()..];
            rest.is_empty() || rest[0] == b':'
        };
        let prefixed = |prefix: &str| {
            component.len() >= prefix.len()
                && component[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
        };
        let short = |prefix: &str, digits: std::ops::RangeInclusive<u8>| {
            !prefix.is_empty()
                && prefixed(prefix)
                && component.get(prefix.len()) == Some(&b'~')
                && component
                    .get(prefix.len() + 1)
                    .is_some_and(|d| digits.contains(d))
                && tail_ok(&component[prefix.len() + 2..])
        };
        (prefixed(special.name) && tail_ok(&component[special.name.len()..]))
            || short(special.short, b'1'..=b'4')
            || short(special.hashed, b'1'..=b'9')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_file_systems_take_for_special_ones() {
        for name in [
            ".git",
            ".GIT",
            ".git.",
            ".git . ",
            "git~1",
            "GIT~1",
            ".g\u{200c}it",
            "\u{feff}.Git",
            "a\\.git",
            ".git::$INDEX_ALLOCATION",
        ] {
            assert!(is(&DOTGIT, name.as_bytes()), "{name:?}");
        }
        for name in [".gitx", "git~5", "x.git", ".gi", "git", ".git/"] {
            assert!(!is(&DOTGIT, name.as_bytes()), "{name:?}");
        }
        for name in [".gitmodules", "GITMOD~1", ".gitmodules ", "gi7eba~9"] {
            assert!(is(&GITMODULES, name.as_bytes()), "{name:?}");
        }
        assert!(!is(&GITMODULES, b".gitmodulesx"));
        assert!(is(&GITATTRIBUTES, b".GitAttributes"));
        assert!(is(&GITIGNORE, b"gitign~1"));
        assert!(is(&MAILMAP, b".mailmap"));
    }
}
