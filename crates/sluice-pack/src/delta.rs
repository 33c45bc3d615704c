//! Git's delta format (`gitformat-pack`, "Deltified representation"): the base's size and the
//! result's size as varints, then copy instructions (a range of the base) and insert
//! instructions (literal bytes). Every copy is bounds-checked against the base and every write
//! against the declared result size, so a hostile delta cannot read or grow past either.

/// Why a delta cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeltaError {
    /// The delta ends inside its size header or an instruction.
    #[error("delta data is truncated")]
    Truncated,
    /// A size varint longer than 64 bits.
    #[error("delta size varint does not end within 64 bits")]
    EndlessVarint,
    /// The base is not as long as the delta says.
    #[error("delta base size mismatch: delta expects {expected} bytes, base has {actual}")]
    BaseSizeMismatch {
        /// Size the delta declares.
        expected: u64,
        /// Size of the base it was applied to.
        actual: u64,
    },
    /// A copy instruction reaches outside the base.
    #[error("delta copy of {size} bytes at {offset} is outside the base of {base_size} bytes")]
    CopyOutOfBounds {
        /// Start of the copy in the base.
        offset: u64,
        /// Length of the copy.
        size: u64,
        /// Length of the base.
        base_size: u64,
    },
    /// Instructions produce more or fewer bytes than the declared result size.
    #[error("delta result size mismatch: declared {declared}, instructions produce {actual}")]
    ResultSizeMismatch {
        /// The size the delta declares.
        declared: u64,
        /// The size its instructions produce (or would exceed).
        actual: u64,
    },
    /// Opcode 0, which the format reserves.
    #[error("delta uses the reserved opcode 0 at position {position}")]
    ReservedOpcode {
        /// Position in the delta data.
        position: usize,
    },
    /// A declared result size no instruction stream of this length could produce.
    #[error("delta declares an impossible result size of {declared} bytes")]
    ImpossibleSize {
        /// The declared size.
        declared: u64,
    },
    /// The result cannot be allocated.
    #[error("cannot allocate {size} bytes for a delta result")]
    TooLarge {
        /// The declared size.
        size: u64,
    },
}

/// The sizes at the start of a delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeltaSizes {
    /// The size the base must have.
    pub base: u64,
    /// The size of the result.
    pub result: u64,
    /// Where the instructions start.
    pub header_len: usize,
}

fn read_varint(delta: &[u8], pos: &mut usize) -> Result<u64, DeltaError> {
    let mut value = 0u64;
    let mut shift = 0u32;
    loop {
        let byte = *delta.get(*pos).ok_or(DeltaError::Truncated)?;
        *pos += 1;
        if shift > 63 || (shift == 63 && byte & 0x7e != 0) {
            return Err(DeltaError::EndlessVarint);
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
        shift += 7;
    }
}

/// Reads the base and result sizes at the start of a delta.
pub fn delta_sizes(delta: &[u8]) -> Result<DeltaSizes, DeltaError> {
    let mut pos = 0;
    let base = read_varint(delta, &mut pos)?;
    let result = read_varint(delta, &mut pos)?;
    // One copy instruction of at most 8 bytes yields at most 0xffffff bytes; an insert yields
    // fewer bytes than it takes. So no honest delta produces more than this, and checking it
    // before allocating keeps a 100-byte delta from asking for an exabyte.
    let instructions = (delta.len() - pos) as u64;
    if result > instructions.saturating_mul(0xff_ffff) {
        return Err(DeltaError::ImpossibleSize { declared: result });
    }
    Ok(DeltaSizes {
        base,
        result,
        header_len: pos,
    })
}

/// The base and result sizes from the first bytes of a delta (at most 20 are needed), without
/// judging them against the delta's length: for sizing objects before they are rebuilt.
pub fn delta_sizes_of_prefix(prefix: &[u8]) -> Result<(u64, u64), DeltaError> {
    let mut pos = 0;
    let base = read_varint(prefix, &mut pos)?;
    let result = read_varint(prefix, &mut pos)?;
    Ok((base, result))
}

/// Applies `delta` to `base`, replacing the contents of `out` with the result. Returns how many
/// leading bytes of the result are the base's own leading bytes, copied in place: hashing can
/// resume after them (`sluice_object::SharedPrefix`).
pub fn apply_delta(base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<usize, DeltaError> {
    let sizes = delta_sizes(delta)?;
    if sizes.base != base.len() as u64 {
        return Err(DeltaError::BaseSizeMismatch {
            expected: sizes.base,
            actual: base.len() as u64,
        });
    }
    let result_size = sizes.result as usize;
    out.clear();
    // Reserve what is declared, up to 64 MiB: a larger result grows as its instructions really
    // produce bytes, so a lying header costs no memory.
    let reserve = result_size.min(64 << 20);
    out.try_reserve_exact(reserve)
        .map_err(|_| DeltaError::TooLarge { size: sizes.result })?;
    let mut pos = sizes.header_len;
    // Stays equal to `out.len()` while every instruction so far copied the base in place.
    let mut in_place = 0;
    while pos < delta.len() {
        let op = delta[pos];
        pos += 1;
        if op & 0x80 != 0 {
            let mut offset = 0u64;
            let mut size = 0u64;
            for bit in 0..4 {
                if op & (1 << bit) != 0 {
                    let byte = *delta.get(pos).ok_or(DeltaError::Truncated)?;
                    pos += 1;
                    offset |= u64::from(byte) << (8 * bit);
                }
            }
            for bit in 0..3 {
                if op & (0x10 << bit) != 0 {
                    let byte = *delta.get(pos).ok_or(DeltaError::Truncated)?;
                    pos += 1;
                    size |= u64::from(byte) << (8 * bit);
                }
            }
            if size == 0 {
                size = 0x10000;
            }
            let end = offset + size;
            if end > base.len() as u64 {
                return Err(DeltaError::CopyOutOfBounds {
                    offset,
                    size,
                    base_size: base.len() as u64,
                });
            }
            if out.len() + size as usize > result_size {
                return Err(DeltaError::ResultSizeMismatch {
                    declared: sizes.result,
                    actual: (out.len() as u64) + size,
                });
            }
            if in_place == out.len() && offset == in_place as u64 {
                in_place += size as usize;
            }
            out.extend_from_slice(&base[offset as usize..end as usize]);
        } else if op != 0 {
            let size = usize::from(op);
            let literal = delta.get(pos..pos + size).ok_or(DeltaError::Truncated)?;
            pos += size;
            if out.len() + size > result_size {
                return Err(DeltaError::ResultSizeMismatch {
                    declared: sizes.result,
                    actual: (out.len() + size) as u64,
                });
            }
            out.extend_from_slice(literal);
        } else {
            return Err(DeltaError::ReservedOpcode { position: pos - 1 });
        }
    }
    if out.len() != result_size {
        return Err(DeltaError::ResultSizeMismatch {
            declared: sizes.result,
            actual: out.len() as u64,
        });
    }
    Ok(in_place)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut n: u64, out: &mut Vec<u8>) {
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    fn delta(base: u64, result: u64, ops: &[u8]) -> Vec<u8> {
        let mut d = Vec::new();
        varint(base, &mut d);
        varint(result, &mut d);
        d.extend_from_slice(ops);
        d
    }

    #[test]
    fn copies_and_inserts() {
        let base = b"hello world";
        // copy 5 bytes at 6 ("world"), insert "!!", copy 5 at 0 ("hello")
        let d = delta(11, 12, &[0x91, 6, 5, 2, b'!', b'!', 0x90, 5]);
        let mut out = Vec::new();
        assert_eq!(apply_delta(base, &d, &mut out), Ok(0));
        assert_eq!(out, b"world!!hello");
    }

    #[test]
    fn reports_the_prefix_copied_in_place() {
        let base = b"hello world";
        // copy 5 at 0, copy 1 at 5, insert "W", copy 4 at 7: in place up to the insert only
        let d = delta(11, 11, &[0x90, 5, 0x91, 5, 1, 1, b'W', 0x91, 7, 4]);
        let mut out = Vec::new();
        assert_eq!(apply_delta(base, &d, &mut out), Ok(6));
        assert_eq!(out, b"hello World");
        // a copy from elsewhere first: nothing in place, even when a later copy lines up
        let d = delta(11, 11, &[0x91, 6, 5, 0x91, 5, 6]);
        assert_eq!(apply_delta(base, &d, &mut out), Ok(0));
        assert_eq!(out, b"world world");
    }

    #[test]
    fn hostile_deltas_are_refused() {
        let base = b"hello world";
        let mut out = Vec::new();
        let cases: Vec<(Vec<u8>, DeltaError)> = vec![
            (
                delta(10, 1, &[1, b'x']),
                DeltaError::BaseSizeMismatch {
                    expected: 10,
                    actual: 11,
                },
            ),
            (
                delta(11, 5, &[0x91, 8, 5]),
                DeltaError::CopyOutOfBounds {
                    offset: 8,
                    size: 5,
                    base_size: 11,
                },
            ),
            (
                delta(11, 1, &[2, b'x', b'y']),
                DeltaError::ResultSizeMismatch {
                    declared: 1,
                    actual: 2,
                },
            ),
            (
                delta(11, 3, &[2, b'x', b'y']),
                DeltaError::ResultSizeMismatch {
                    declared: 3,
                    actual: 2,
                },
            ),
            (
                delta(11, 1, &[0]),
                DeltaError::ReservedOpcode { position: 2 },
            ),
            (delta(11, 3, &[3, b'x']), DeltaError::Truncated),
            (delta(11, 3, &[0x91, 1]), DeltaError::Truncated),
            (
                delta(11, 1 << 40, &[1, b'x']),
                DeltaError::ImpossibleSize { declared: 1 << 40 },
            ),
            (vec![0xff; 12], DeltaError::EndlessVarint),
            (vec![], DeltaError::Truncated),
        ];
        for (d, expected) in cases {
            assert_eq!(apply_delta(base, &d, &mut out), Err(expected), "{d:?}");
        }
    }
}
