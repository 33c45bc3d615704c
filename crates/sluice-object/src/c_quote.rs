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
    quoted_as(text, true)
}

/// `text` inside double quotes with git's escapes where it needs them, a byte past ASCII among
/// what needs them only when `fully` (`core.quotePath`, true unless set otherwise).
fn quoted_as(text: &str, fully: bool) -> Option<String> {
    let needs = |b: u8| b < 0x20 || b == b'"' || b == b'\\' || b == 0x7f || (fully && b > 0x7f);
    if !text.bytes().any(needs) {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() + 8);
    out.push(b'"');
    for b in text.bytes() {
        let escape: &[u8] = match b {
            0x07 => b"\\a",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0b => b"\\v",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b if needs(b) => {
                out.extend(format!("\\{b:03o}").into_bytes());
                continue;
            }
            // Unquoted, a byte keeps its place in the text's UTF-8.
            b => {
                out.push(b);
                continue;
            }
        };
        out.extend_from_slice(escape);
    }
    out.push(b'"');
    // Only whole UTF-8 sequences stay unescaped (or none at all), so the bytes are UTF-8.
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// `text` quoted where git would quote it, else as it is.
pub fn quoted_or_plain(text: &str) -> std::borrow::Cow<'_, str> {
    quoted(text).map_or(std::borrow::Cow::Borrowed(text), std::borrow::Cow::Owned)
}

/// A path as git writes it in its lists: quoted where it needs to be, bytes past ASCII among
/// what needs it unless `core.quotePath` is false (`fully`).
pub fn path(text: &str, fully: bool) -> std::borrow::Cow<'_, str> {
    quoted_as(text, fully).map_or(std::borrow::Cow::Borrowed(text), std::borrow::Cow::Owned)
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
        assert_eq!(path("é\t", false), "\"é\\t\"");
        assert_eq!(path("é", false), "é");
    }
}
