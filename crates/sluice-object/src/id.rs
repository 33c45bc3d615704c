//! Object ids. `ObjectId` is an enum over hash functions so that SHA-256 repositories can be added
//! later as a new variant without changing any signature that takes or returns an id.

use std::fmt;

/// The hash function a repository uses for its object ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum HashKind {
    /// SHA-1 (with collision detection for object ids), git's default object format.
    #[default]
    Sha1,
}

impl HashKind {
    /// Length of a binary id.
    pub const fn len_in_bytes(self) -> usize {
        match self {
            HashKind::Sha1 => 20,
        }
    }

    /// Length of a hexadecimal id.
    pub const fn len_in_hex(self) -> usize {
        self.len_in_bytes() * 2
    }

    /// The number git writes into `.rev` and other headers for this function (1 for SHA-1).
    pub const fn format_id(self) -> u32 {
        match self {
            HashKind::Sha1 => 1,
        }
    }

    /// The name used in `extensions.objectFormat` and the protocol's `object-format`.
    pub const fn name(self) -> &'static str {
        match self {
            HashKind::Sha1 => "sha1",
        }
    }

    /// Looks up a hash function by its configuration name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "sha1" => Some(HashKind::Sha1),
            _ => None,
        }
    }

    /// The all-zero id of this function, which git uses as "no object".
    pub const fn null_id(self) -> ObjectId {
        match self {
            HashKind::Sha1 => ObjectId::Sha1([0; 20]),
        }
    }
}

/// The id of a git object: the hash of its header and content.
#[derive(Clone, Copy, Eq, PartialOrd, Ord)]
pub enum ObjectId {
    /// A SHA-1 id.
    Sha1([u8; 20]),
}

impl PartialEq for ObjectId {
    /// Two wide loads instead of a call to `bcmp`: ids are compared in every hash-table probe.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ObjectId::Sha1(a), ObjectId::Sha1(b)) => {
                let head =
                    |x: &[u8; 20]| u128::from_ne_bytes(x[..16].try_into().expect("16 bytes"));
                let tail = |x: &[u8; 20]| u32::from_ne_bytes(x[16..].try_into().expect("4 bytes"));
                head(a) == head(b) && tail(a) == tail(b)
            }
        }
    }
}

impl std::hash::Hash for ObjectId {
    /// The id's bytes in one write, which [`crate::IdHasher`] takes in one step.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.as_bytes());
    }
}

/// Why a textual or binary id could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseIdError {
    /// The input has the wrong length for the hash function.
    #[error("object id has length {actual}, expected {expected}")]
    Length {
        /// Length that was given.
        actual: usize,
        /// Length the hash function needs.
        expected: usize,
    },
    /// The input has a character that is not a lowercase or uppercase hex digit.
    #[error("invalid hex digit in object id at position {position}")]
    Digit {
        /// Position of the first bad character.
        position: usize,
    },
}

impl ObjectId {
    /// Builds an id from its binary form.
    pub fn from_bytes(kind: HashKind, bytes: &[u8]) -> Result<Self, ParseIdError> {
        match kind {
            HashKind::Sha1 => {
                let array: [u8; 20] = bytes.try_into().map_err(|_| ParseIdError::Length {
                    actual: bytes.len(),
                    expected: 20,
                })?;
                Ok(ObjectId::Sha1(array))
            }
        }
    }

    /// Parses a full hexadecimal id.
    pub fn from_hex(kind: HashKind, hex: &[u8]) -> Result<Self, ParseIdError> {
        if hex.len() != kind.len_in_hex() {
            return Err(ParseIdError::Length {
                actual: hex.len(),
                expected: kind.len_in_hex(),
            });
        }
        let mut out = [0u8; 20];
        for (i, pair) in hex.chunks_exact(2).enumerate() {
            let hi = hex_value(pair[0]).ok_or(ParseIdError::Digit { position: 2 * i })?;
            let lo = hex_value(pair[1]).ok_or(ParseIdError::Digit {
                position: 2 * i + 1,
            })?;
            out[i] = (hi << 4) | lo;
        }
        Ok(ObjectId::Sha1(out))
    }

    /// The binary form of the id.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            ObjectId::Sha1(bytes) => bytes,
        }
    }

    /// The hash function that made this id.
    pub fn kind(&self) -> HashKind {
        match self {
            ObjectId::Sha1(_) => HashKind::Sha1,
        }
    }

    /// The first byte, which selects the fan-out bucket in `.idx` files and `objects/xx`.
    pub fn first_byte(&self) -> u8 {
        self.as_bytes()[0]
    }

    /// Whether this is the all-zero id.
    pub fn is_null(&self) -> bool {
        self.as_bytes().iter().all(|&b| b == 0)
    }

    /// Writes the lowercase hex form into `out`, which must be `hex_len()` long.
    pub fn write_hex(&self, out: &mut [u8]) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        for (i, byte) in self.as_bytes().iter().enumerate() {
            out[2 * i] = DIGITS[(byte >> 4) as usize];
            out[2 * i + 1] = DIGITS[(byte & 15) as usize];
        }
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 64];
        let len = self.kind().len_in_hex();
        self.write_hex(&mut buf[..len]);
        // Hex digits are ASCII, so this cannot fail.
        f.write_str(std::str::from_utf8(&buf[..len]).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let hex = b"ce013625030ba8dba906f756967f9e9ca394464a";
        let id = ObjectId::from_hex(HashKind::Sha1, hex).unwrap();
        assert_eq!(id.to_string().as_bytes(), hex);
        assert_eq!(id.first_byte(), 0xce);
    }

    #[test]
    fn bad_hex_is_refused() {
        assert_eq!(
            ObjectId::from_hex(HashKind::Sha1, b"zz"),
            Err(ParseIdError::Length {
                actual: 2,
                expected: 40
            })
        );
        let mut hex = *b"ce013625030ba8dba906f756967f9e9ca394464a";
        hex[7] = b'g';
        assert_eq!(
            ObjectId::from_hex(HashKind::Sha1, &hex),
            Err(ParseIdError::Digit { position: 7 })
        );
    }
}
