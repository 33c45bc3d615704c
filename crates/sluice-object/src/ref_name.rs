//! The names git allows for refs (`git check-ref-format`): one rule for refs themselves and
//! for the tag names fsck checks inside tag objects.

/// Whether `name` is a valid ref name (git's `check-ref-format` rules for full names).
pub fn is_valid_ref_name(name: &str) -> bool {
    if name == "HEAD" || name == "FETCH_HEAD" || name == "ORIG_HEAD" {
        return true;
    }
    if name.is_empty() || name.starts_with('/') || name.ends_with('/') || name.ends_with('.') {
        return false;
    }
    if name.contains("..") || name.contains("@{") || name.contains("//") || name == "@" {
        return false;
    }
    for component in name.split('/') {
        if component.starts_with('.') || component.ends_with(".lock") || component.is_empty() {
            return false;
        }
    }
    name.bytes()
        .all(|b| b > 0x20 && b != 0x7f && !b" ~^:?*[\\".contains(&b))
}
