//! git's C-style quoting: how it writes a path or message that holds a quote, a backslash, a
//! control character or (with `core.quotePath`, the default) a byte past ASCII, inside double
//! quotes with C's escapes and octal for the rest.

/// `text` inside double quotes with git's escapes, or `None` when it needs none (git writes
/// such a text as it is).
///
/// ```
/// assert_eq!(sluice_object::c_quote::quoted("plain words"), None);
/// assert_eq!(sluice_object::c_quote::quoted("a \"b\"\n").as_deref(), Some(r#""a \"b\"\n""#));
/// ```
pub fn quoted(text: &str) -> Option<String> {
    let needs = |b: u8| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f;
    if !text.bytes().any(needs) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 8);
    out.push('"');
    for b in text.bytes() {
        match b {
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b if needs(b) => out.push_str(&format!("\\{b:03o}")),
            b => out.push(b as char),
        }
    }
    out.push('"');
    Some(out)
}

/// `text` quoted where git would quote it, else as it is.
pub fn quoted_or_plain(text: &str) -> std::borrow::Cow<'_, str> {
    quoted(text).map_or(std::borrow::Cow::Borrowed(text), std::borrow::Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_byte_is_written_as_git_writes_it() {
        assert_eq!(quoted("tab\there").as_deref(), Some("\"tab\\there\""));
        assert_eq!(quoted("bell\x07").as_deref(), Some("\"bell\\a\""));
        assert_eq!(quoted("\x01\x7f").as_deref(), Some("\"\\001\\177\""));
        assert_eq!(quoted("é").as_deref(), Some("\"\\303\\251\""));
        assert_eq!(quoted("back\\slash").as_deref(), Some("\"back\\\\slash\""));
        assert_eq!(
            quoted_or_plain("deletion prohibited"),
            "deletion prohibited"
        );
    }
}
