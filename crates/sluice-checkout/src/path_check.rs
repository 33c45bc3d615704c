//! Which tree paths may be written to a work tree: git's `verify_path` rules, with both the
//! NTFS and the HFS+ protections on (git enables each by default on its own platform; a tree
//! that is unsafe on any of them is refused everywhere, since work trees move between
//! machines and a hostile tree should not depend on where it lands).

/// Why a path is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// Empty path or empty component (`a//b`, leading or trailing `/`).
    #[error("empty path component")]
    Empty,
    /// A `.` or `..` component.
    #[error("'.' or '..' path component")]
    DotComponent,
    /// A component that is `.git` or one of its disguises.
    #[error("path component would write into .git")]
    DotGit,
    /// A backslash, colon or other character NTFS would reinterpret.
    #[error("path component has a character that is not allowed ('\\\\' or ':')")]
    BadCharacter,
    /// A NUL byte (impossible in a tree, but checked for index entries).
    #[error("NUL byte in path")]
    Nul,
    /// `.gitmodules` (and friends) as a symlink.
    #[error("'{0}' must not be a symbolic link")]
    SymlinkedGitFile(&'static str),
}

/// Checks a full path (components separated by `/`) of an entry with `mode`.
pub fn verify_path(path: &[u8], mode: u32) -> Result<(), PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    let is_symlink = mode & 0o170000 == 0o120000;
    let mut components = path.split(|&b| b == b'/').peekable();
    while let Some(component) = components.next() {
        let last = components.peek().is_none();
        verify_component(component)?;
        if last && is_symlink {
            for name in [".gitmodules", ".gitattributes", ".gitignore", ".mailmap"] {
                if is_ntfs_dot_generic(component, &name[1..])
                    || is_hfs_dot_generic(component, &name[1..])
                {
                    return Err(PathError::SymlinkedGitFile(name));
                }
            }
        }
    }
    Ok(())
}

/// Checks one component of a path.
pub fn verify_component(component: &[u8]) -> Result<(), PathError> {
    if component.is_empty() {
        return Err(PathError::Empty);
    }
    if component.contains(&0) {
        return Err(PathError::Nul);
    }
    if component == b"." || component == b".." {
        return Err(PathError::DotComponent);
    }
    if component.contains(&b'\\') || component.contains(&b':') {
        return Err(PathError::BadCharacter);
    }
    if component.eq_ignore_ascii_case(b".git")
        || is_ntfs_dotgit(component)
        || is_hfs_dot_generic(component, "git")
    {
        return Err(PathError::DotGit);
    }
    Ok(())
}

/// NTFS treats `.git ` / `.git.` / `.git...` as `.git`, and its 8.3 short name is `git~1`.
fn is_ntfs_dotgit(component: &[u8]) -> bool {
    is_ntfs_dot_generic(component, "git") || component.eq_ignore_ascii_case(b"git~1")
}

/// `.<name>` followed only by spaces and dots (NTFS strips them), in any case; also the
/// `<first six>~<digit>` short name for longer names.
fn is_ntfs_dot_generic(component: &[u8], name: &str) -> bool {
    let name = name.as_bytes();
    if component.len() > name.len()
        && component[0] == b'.'
        && component[1..=name.len()].eq_ignore_ascii_case(name)
    {
        return component[name.len() + 1..]
            .iter()
            .all(|&b| b == b' ' || b == b'.');
    }
    if name.len() > 6 && component.len() == 8 {
        let (head, tail) = component.split_at(6);
        return head.eq_ignore_ascii_case(&name[..6])
            && tail[0] == b'~'
            && (b'1'..=b'4').contains(&tail[1]);
    }
    false
}

/// HFS+ ignores certain Unicode code points when comparing names, so `.g\u{200c}it` is `.git`.
fn is_hfs_dot_generic(component: &[u8], name: &str) -> bool {
    // Every ignorable code point starts with byte 0xE2 or 0xEF in UTF-8: most names have
    // neither, and need no decoding.
    if !component.iter().any(|&b| b == 0xe2 || b == 0xef) {
        return false;
    }
    let Ok(text) = std::str::from_utf8(component) else {
        return false;
    };
    let stripped: String = text.chars().filter(|c| !is_hfs_ignorable(*c)).collect();
    if stripped.len() == text.len() {
        return false;
    }
    let mut expected = String::from(".");
    expected.push_str(name);
    stripped.eq_ignore_ascii_case(&expected)
}

/// The code points HFS+ ignores (as listed by git's `utf8.c`).
fn is_hfs_ignorable(c: char) -> bool {
    matches!(
        c as u32,
        0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_paths_pass() {
        for path in [
            "a",
            "a/b/c.txt",
            ".gitignore",
            "dir/.github/x",
            "gitx",
            ".gitx/y",
            "a.git",
        ] {
            assert_eq!(verify_path(path.as_bytes(), 0o100644), Ok(()), "{path}");
        }
    }

    #[test]
    fn unsafe_paths_are_refused() {
        let cases: &[(&str, PathError)] = &[
            ("", PathError::Empty),
            ("/etc/passwd", PathError::Empty),
            ("a//b", PathError::Empty),
            ("a/", PathError::Empty),
            (".", PathError::DotComponent),
            ("a/../b", PathError::DotComponent),
            ("..", PathError::DotComponent),
            (".git/config", PathError::DotGit),
            ("sub/.GIT/hooks/x", PathError::DotGit),
            (".Git", PathError::DotGit),
            (".git /x", PathError::DotGit),
            (".git./x", PathError::DotGit),
            (".git. . ./x", PathError::DotGit),
            ("GIT~1/config", PathError::DotGit),
            (".g\u{200c}it/config", PathError::DotGit),
            ("\u{feff}.git/config", PathError::DotGit),
            ("a\\b", PathError::BadCharacter),
            (".git::$INDEX_ALLOCATION/x", PathError::BadCharacter),
        ];
        for (path, error) in cases {
            assert_eq!(
                verify_path(path.as_bytes(), 0o100644),
                Err(error.clone()),
                "{path:?}"
            );
        }
        assert_eq!(
            verify_path(b".gitmodules", 0o120000),
            Err(PathError::SymlinkedGitFile(".gitmodules"))
        );
        assert_eq!(
            verify_path(b"sub/GITMOD~1", 0o120000),
            Err(PathError::SymlinkedGitFile(".gitmodules"))
        );
        assert_eq!(verify_path(b".gitmodules", 0o100644), Ok(()));
    }
}
