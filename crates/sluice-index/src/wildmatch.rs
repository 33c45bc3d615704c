//! Glob matching as git's `wildmatch` with `WM_PATHNAME`: `*` and `?` stop at `/`, `**` as a
//! whole component crosses directories, `[...]` classes with ranges, negation and `[:name:]`.

/// Whether `text` matches `pattern`.
pub fn wildmatch(pattern: &[u8], text: &[u8]) -> bool {
    matches(pattern, text, 0, true)
}

/// Whether `text` matches `pattern` with `/` an ordinary character (git's `wildmatch` without
/// `WM_PATHNAME`, as `gc.<pattern>.reflogExpire` matches ref names): `*`, `?` and classes
/// match it too, and `**` is `*`.
pub fn wildmatch_anywhere(pattern: &[u8], text: &[u8]) -> bool {
    matches(pattern, text, 0, false)
}

fn matches(p: &[u8], t: &[u8], depth: usize, pathname: bool) -> bool {
    // Patterns come from .gitattributes files: bound the backtracking they can cause.
    if depth > 64 {
        return false;
    }
    let (mut pi, mut ti) = (0, 0);
    while pi < p.len() {
        match p[pi] {
            b'*' => {
                let double = p.get(pi + 1) == Some(&b'*');
                if double && !pathname {
                    pi += 1;
                } else if double {
                    let at_start = pi == 0 || p[pi - 1] == b'/';
                    let rest = &p[pi + 2..];
                    if at_start && (rest.is_empty() || rest[0] == b'/') {
                        // "**" as a component: zero or more directories.
                        if rest.is_empty() {
                            return true;
                        }
                        // "**/x" matches "x" and "a/b/x".
                        let after = &rest[1..];
                        if matches(after, &t[ti..], depth + 1, pathname) {
                            return true;
                        }
                        let mut i = ti;
                        while i < t.len() {
                            if t[i] == b'/' && matches(after, &t[i + 1..], depth + 1, pathname) {
                                return true;
                            }
                            i += 1;
                        }
                        return false;
                    }
                    // Otherwise "**" is like "*".
                    pi += 1;
                }
                let rest = &p[pi + 1..];
                let mut i = ti;
                loop {
                    if matches(rest, &t[i..], depth + 1, pathname) {
                        return true;
                    }
                    if i >= t.len() || pathname && t[i] == b'/' {
                        return false;
                    }
                    i += 1;
                }
            }
            b'?' => {
                if ti >= t.len() || pathname && t[ti] == b'/' {
                    return false;
                }
                pi += 1;
                ti += 1;
            }
            b'[' => {
                let Some(&c) = t.get(ti) else { return false };
                match class(&p[pi..], c) {
                    Some((true, len)) if c != b'/' || !pathname => {
                        pi += len;
                        ti += 1;
                    }
                    Some(_) => return false,
                    // An unterminated class matches a literal '['.
                    None => {
                        if c != b'[' {
                            return false;
                        }
                        pi += 1;
                        ti += 1;
                    }
                }
            }
            b'\\' if pi + 1 < p.len() => {
                if t.get(ti) != Some(&p[pi + 1]) {
                    return false;
                }
                pi += 2;
                ti += 1;
            }
            c => {
                if t.get(ti) != Some(&c) {
                    return false;
                }
                pi += 1;
                ti += 1;
            }
        }
    }
    ti == t.len()
}

/// Matches `c` against the class at the start of `p`; returns (matched, class length).
fn class(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some(b'!') | Some(b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let &ch = p.get(i)?;
        if ch == b']' && !first {
            i += 1;
            break;
        }
        first = false;
        if ch == b'[' && p.get(i + 1) == Some(&b':') {
            let end = p[i + 2..].windows(2).position(|w| w == b":]")? + i + 2;
            let name = &p[i + 2..end];
            matched |= match name {
                b"alnum" => c.is_ascii_alphanumeric(),
                b"alpha" => c.is_ascii_alphabetic(),
                b"digit" => c.is_ascii_digit(),
                b"lower" => c.is_ascii_lowercase(),
                b"upper" => c.is_ascii_uppercase(),
                b"space" => c.is_ascii_whitespace(),
                b"punct" => c.is_ascii_punctuation(),
                b"xdigit" => c.is_ascii_hexdigit(),
                b"blank" => c == b' ' || c == b'\t',
                b"cntrl" => c.is_ascii_control(),
                b"graph" => c.is_ascii_graphic(),
                b"print" => c.is_ascii_graphic() || c == b' ',
                _ => false,
            };
            i = end + 2;
            continue;
        }
        let (lo, step) = if ch == b'\\' {
            (*p.get(i + 1)?, 2)
        } else {
            (ch, 1)
        };
        if p.get(i + step) == Some(&b'-') && p.get(i + step + 1).is_some_and(|&x| x != b']') {
            let hi = p[i + step + 1];
            matched |= lo <= c && c <= hi;
            i += step + 2;
        } else {
            matched |= lo == c;
            i += step;
        }
    }
    Some((matched != negate, i))
}

#[cfg(test)]
mod tests {
    use super::{wildmatch, wildmatch_anywhere};

    #[test]
    fn slashes_are_ordinary_without_pathname() {
        let yes = [
            ("refs/remotes/*", "refs/remotes/origin/main"),
            ("refs/stash", "refs/stash"),
            ("*", "refs/heads/a"),
            ("refs/?eads/a", "refs/heads/a"),
            ("refs/**/a", "refs/heads/x/a"),
            ("a[/]b", "a/b"),
        ];
        for (p, t) in yes {
            assert!(wildmatch_anywhere(p.as_bytes(), t.as_bytes()), "{p} {t}");
        }
        // With WM_PATHNAME a `*` stops at `/`.
        assert!(!wildmatch(b"refs/remotes/*", b"refs/remotes/origin/main"));
        for (p, t) in [
            ("refs/heads/*", "refs/tags/v1"),
            ("refs/stash", "refs/stash2"),
        ] {
            assert!(!wildmatch_anywhere(p.as_bytes(), t.as_bytes()), "{p} {t}");
        }
    }

    #[test]
    fn globs() {
        let yes = [
            ("*.txt", "a.txt"),
            ("a/*.c", "a/b.c"),
            ("**/x", "x"),
            ("**/x", "a/b/x"),
            ("a/**", "a/b/c"),
            ("a/**/b", "a/b"),
            ("a/**/b", "a/x/y/b"),
            ("[a-c]x", "bx"),
            ("[!a]x", "bx"),
            ("[[:digit:]]", "7"),
            ("\\*", "*"),
            ("?", "a"),
        ];
        for (p, t) in yes {
            assert!(wildmatch(p.as_bytes(), t.as_bytes()), "{p} {t}");
        }
        let no = [
            ("*.txt", "a/b.txt"),
            ("?", "/"),
            ("a/*.c", "a/b/c.c"),
            ("[!a]x", "ax"),
            ("a/**/b", "a/bc"),
        ];
        for (p, t) in no {
            assert!(!wildmatch(p.as_bytes(), t.as_bytes()), "{p} {t}");
        }
    }
}
