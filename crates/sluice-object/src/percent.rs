//! `%XX` escapes (RFC 3986) undone, leniently: a malformed escape stays as it is. URL paths
//! served over HTTP, `combine:` filter parts and `.gitmodules` URLs are read this way.

/// `text` with its `%XX` escapes undone.
pub fn decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_are_undone_and_malformed_ones_kept() {
        assert_eq!(super::decode("/a%20b/%2e%2e/c%zz%4"), b"/a b/../c%zz%4");
        assert_eq!(super::decode("a%0Ab%2B"), b"a\nb+");
    }
}
