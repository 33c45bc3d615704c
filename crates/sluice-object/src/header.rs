//! The `"<kind> <size>\0"` header that precedes an object's content when it is hashed, and that
//! starts every loose object file once inflated.

use crate::ObjectKind;

/// The longest header: "commit" + space + 20 digits + NUL.
pub const MAX_HEADER_LEN: usize = 32;

/// Why a loose object's header could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The kind name is not one of the four object kinds.
    #[error("unknown object type")]
    UnknownKind,
    /// The size is missing, not decimal, or too large.
    #[error("bad object size")]
    BadSize,
    /// No NUL ends the header within its maximum length.
    #[error("object header is not terminated")]
    Unterminated,
}

/// Writes the header for an object of `kind` and `size` into `buf`, returning its length.
pub fn write_header(kind: ObjectKind, size: u64, buf: &mut [u8; MAX_HEADER_LEN]) -> usize {
    let name = kind.as_str().as_bytes();
    buf[..name.len()].copy_from_slice(name);
    let mut pos = name.len();
    buf[pos] = b' ';
    pos += 1;
    let mut digits = [0u8; 20];
    let mut n = size;
    let mut count = 0;
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        count += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in (0..count).rev() {
        buf[pos] = digits[i];
        pos += 1;
    }
    buf[pos] = 0;
    pos + 1
}

/// Parses a header at the start of `data`: the kind, the size, and the header's length
/// including its NUL.
pub fn parse_header(data: &[u8]) -> Result<(ObjectKind, u64, usize), HeaderError> {
    let limit = data.len().min(MAX_HEADER_LEN);
    let nul = data[..limit]
        .iter()
        .position(|&b| b == 0)
        .ok_or(HeaderError::Unterminated)?;
    let header = &data[..nul];
    let space = header
        .iter()
        .position(|&b| b == b' ')
        .ok_or(HeaderError::UnknownKind)?;
    let kind = ObjectKind::from_name(&header[..space]).ok_or(HeaderError::UnknownKind)?;
    let digits = &header[space + 1..];
    if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
        return Err(HeaderError::BadSize);
    }
    let mut size: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(HeaderError::BadSize);
        }
        size = size
            .checked_mul(10)
            .and_then(|s| s.checked_add(u64::from(d - b'0')))
            .ok_or(HeaderError::BadSize)?;
    }
    Ok((kind, size, nul + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut buf = [0u8; MAX_HEADER_LEN];
        let len = write_header(ObjectKind::Commit, u64::MAX, &mut buf);
        assert_eq!(&buf[..len], b"commit 18446744073709551615\0");
        assert_eq!(
            parse_header(&buf[..len]),
            Ok((ObjectKind::Commit, u64::MAX, len))
        );
        let len = write_header(ObjectKind::Blob, 0, &mut buf);
        assert_eq!(&buf[..len], b"blob 0\0");
    }

    #[test]
    fn bad_headers() {
        assert_eq!(parse_header(b"blob 12"), Err(HeaderError::Unterminated));
        assert_eq!(parse_header(b"blub 1\0"), Err(HeaderError::UnknownKind));
        assert_eq!(parse_header(b"blob 01\0"), Err(HeaderError::BadSize));
        assert_eq!(parse_header(b"blob \0"), Err(HeaderError::BadSize));
        assert_eq!(
            parse_header(b"blob 99999999999999999999\0"),
            Err(HeaderError::BadSize)
        );
    }
}
