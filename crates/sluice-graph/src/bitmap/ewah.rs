//! EWAH-compressed bitmaps as `.bitmap` files store them (`gitformat-bitmap`, Appendix A):
//! the bit count, the word count, the words (big-endian), the position of the last run-length
//! word. Each chunk is a run-length word (bit 0: the repeated bit; bits 1-32: how many words of
//! it; bits 33-63: how many literal words follow) and its literal words.

/// A plain bitmap: bit `i` is bit `i % 64` of word `i / 64`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitset {
    words: Vec<u64>,
}

impl Bitset {
    /// `bits` bits, all clear.
    pub(crate) fn new(bits: usize) -> Self {
        Bitset {
            words: vec![0; bits.div_ceil(64)],
        }
    }

    pub(crate) fn get(&self, bit: usize) -> bool {
        self.words
            .get(bit / 64)
            .is_some_and(|w| w & (1 << (bit % 64)) != 0)
    }

    pub(crate) fn set(&mut self, bit: usize) {
        if let Some(word) = self.words.get_mut(bit / 64) {
            *word |= 1 << (bit % 64);
        }
    }

    pub(crate) fn or(&mut self, other: &Bitset) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    pub(crate) fn xor(&mut self, other: &Bitset) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a ^= b;
        }
    }

    pub(crate) fn and_not(&mut self, other: &Bitset) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
    }

    /// The set bits, in order.
    pub(crate) fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    i * 64 + bit
                })
            })
        })
    }

    /// The 64 bits from bit `from` on (bits past the end read as clear).
    fn word_at(&self, from: usize) -> u64 {
        let (word, shift) = (from / 64, from % 64);
        let low = self.words.get(word).copied().unwrap_or(0) >> shift;
        let high = match shift {
            0 => 0,
            _ => self.words.get(word + 1).copied().unwrap_or(0) << (64 - shift),
        };
        low | high
    }

    /// Sets bits `to..to + len` where bits `from..from + len` of `src` are set, a word at a
    /// time: moving a pack's bitmaps to another pack that keeps its objects in runs.
    pub(crate) fn or_shifted(&mut self, to: usize, src: &Bitset, from: usize, len: usize) {
        let mut done = 0;
        while done < len {
            let take = (len - done).min(64);
            let mut bits = src.word_at(from + done);
            if take < 64 {
                bits &= (1u64 << take) - 1;
            }
            let (word, shift) = ((to + done) / 64, (to + done) % 64);
            if let Some(w) = self.words.get_mut(word) {
                *w |= bits << shift;
            }
            if shift > 0 {
                if let Some(w) = self.words.get_mut(word + 1) {
                    *w |= bits >> (64 - shift);
                }
            }
            done += take;
        }
    }

    /// Whether any of bits `from..from + len` is set.
    pub(crate) fn any_in(&self, from: usize, len: usize) -> bool {
        (from..from + len).step_by(64).any(|at| {
            let take = (from + len - at).min(64);
            let bits = self.word_at(at);
            (if take < 64 {
                bits & ((1u64 << take) - 1)
            } else {
                bits
            }) != 0
        })
    }

    pub(crate) fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The memory its words take.
    pub(crate) fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// Why an EWAH bitmap could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EwahError(pub(crate) &'static str);

fn be32(data: &[u8], at: usize) -> Result<u32, EwahError> {
    data.get(at..at + 4)
        .map(|b| u32::from_be_bytes(b.try_into().unwrap_or_default()))
        .ok_or(EwahError("truncated"))
}

/// The length in bytes of the serialized bitmap at the start of `data`.
pub(crate) fn serialized_len(data: &[u8]) -> Result<usize, EwahError> {
    let words = be32(data, 4)? as usize;
    let len = 8 + 8 * words + 4;
    if data.len() < len {
        return Err(EwahError("truncated"));
    }
    Ok(len)
}

/// Decodes the serialized bitmap at the start of `data` into `bits` bits. A bitmap that
/// describes more bits than that is refused (a hostile file cannot make it allocate more).
pub(crate) fn decode(data: &[u8], bits: usize) -> Result<Bitset, EwahError> {
    let len = serialized_len(data)?;
    // git rounds the stored bit count up to whole words.
    let stored_bits = be32(data, 0)? as usize;
    if stored_bits > bits.div_ceil(64) * 64 {
        return Err(EwahError("more bits than objects"));
    }
    let word_count = (len - 12) / 8;
    let word =
        |i: usize| u64::from_be_bytes(data[8 + 8 * i..16 + 8 * i].try_into().unwrap_or_default());
    let limit = bits.div_ceil(64);
    let mut out = Bitset::new(bits);
    let mut at = 0; // next output word
    let mut i = 0;
    while i < word_count {
        let rlw = word(i);
        i += 1;
        let run = ((rlw >> 1) & 0xffff_ffff) as usize;
        let literals = (rlw >> 33) as usize;
        if at + run > limit || at + run + literals > limit || i + literals > word_count {
            return Err(EwahError("run past the end"));
        }
        if rlw & 1 == 1 {
            out.words[at..at + run].fill(u64::MAX);
        }
        at += run;
        for k in 0..literals {
            out.words[at + k] = word(i + k);
        }
        at += literals;
        i += literals;
    }
    // Bits past the object count must be clear.
    if !bits.is_multiple_of(64) {
        if let Some(last) = out.words.last_mut() {
            *last &= (1u64 << (bits % 64)) - 1;
        }
    }
    Ok(out)
}

/// The most words one run-length word can repeat, and the most literals it can announce.
const MAX_RUN: usize = u32::MAX as usize;
const MAX_LITERALS: usize = (1 << 31) - 1;

/// Encodes `set` as git serializes an EWAH bitmap: the bit count (up to the last set bit, as
/// git counts it), the words, and the position of the last run-length word. Runs of all-clear
/// or all-set words are compressed; other words are stored as literals.
pub(crate) fn encode(set: &Bitset) -> Vec<u8> {
    let used = set.words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
    let words = &set.words[..used];
    let bits = match words.last() {
        Some(&last) => (used - 1) * 64 + (64 - last.leading_zeros() as usize),
        None => 0,
    };
    let mut out: Vec<u64> = Vec::new();
    let mut last_rlw;
    let mut i = 0;
    loop {
        let fill = match words.get(i) {
            Some(&w) if w == 0 || w == u64::MAX => Some(w),
            _ => None,
        };
        let mut run = 0;
        if let Some(fill) = fill {
            while run < MAX_RUN && words.get(i + run) == Some(&fill) {
                run += 1;
            }
        }
        let start = i + run;
        let mut literals = 0;
        while literals < MAX_LITERALS {
            match words.get(start + literals) {
                Some(&w) if w != 0 && w != u64::MAX => literals += 1,
                _ => break,
            }
        }
        last_rlw = out.len();
        let bit = u64::from(fill == Some(u64::MAX) && run > 0);
        out.push(bit | (run as u64) << 1 | (literals as u64) << 33);
        out.extend_from_slice(&words[start..start + literals]);
        i = start + literals;
        if i >= words.len() {
            break;
        }
    }
    let mut bytes = Vec::with_capacity(12 + 8 * out.len());
    bytes.extend_from_slice(&(bits as u32).to_be_bytes());
    bytes.extend_from_slice(&(out.len() as u32).to_be_bytes());
    for word in &out {
        bytes.extend_from_slice(&word.to_be_bytes());
    }
    bytes.extend_from_slice(&(last_rlw as u32).to_be_bytes());
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serialize(bits: u32, words: &[u64]) -> Vec<u8> {
        let mut out = bits.to_be_bytes().to_vec();
        out.extend_from_slice(&(words.len() as u32).to_be_bytes());
        for w in words {
            out.extend_from_slice(&w.to_be_bytes());
        }
        out.extend_from_slice(&0u32.to_be_bytes());
        out
    }

    #[test]
    fn runs_and_literals() {
        // Two words of ones, one literal 0b101, then one word of zeros and one literal.
        let rlw1 = 1 | (2 << 1) | (1 << 33);
        let rlw2 = (1 << 1) | (1 << 33);
        let data = serialize(320, &[rlw1, 0b101, rlw2, 1 << 63]);
        assert_eq!(serialized_len(&data).unwrap(), data.len());
        let set = decode(&data, 320).unwrap();
        let ones: Vec<usize> = set.ones().collect();
        let mut expected: Vec<usize> = (0..128).collect();
        expected.extend([128, 130, 319]);
        assert_eq!(ones, expected);
    }

    #[test]
    fn hostile_bitmaps_are_refused() {
        let huge_run = serialize(64, &[(u64::from(u32::MAX)) << 1]);
        assert!(decode(&huge_run, 64).is_err());
        let missing_literals = serialize(128, &[5 << 33]);
        assert!(decode(&missing_literals, 128).is_err());
        assert!(decode(&serialize(1000, &[]), 64).is_err());
        assert!(decode(&[0, 0, 0, 1, 0, 0, 0, 9], 64).is_err());
    }

    #[test]
    fn shifted_copies_move_every_bit() {
        let mut src = Bitset::new(500);
        for bit in [0, 1, 63, 64, 65, 127, 200, 330, 499] {
            src.set(bit);
        }
        for (to, from, len) in [(0, 0, 500), (7, 0, 300), (0, 60, 300), (130, 3, 250)] {
            let mut dst = Bitset::new(600);
            dst.or_shifted(to, &src, from, len);
            let expected: Vec<usize> = (src.ones())
                .filter(|b| (from..from + len).contains(b))
                .map(|b| b - from + to)
                .collect();
            assert_eq!(
                dst.ones().collect::<Vec<_>>(),
                expected,
                "{to} {from} {len}"
            );
        }
        assert!(src.any_in(199, 2));
        assert!(!src.any_in(201, 129));
        assert!(src.any_in(498, 2));
    }

    #[test]
    fn encoding_round_trips() {
        let mut set = Bitset::new(1000);
        for bit in (0..200).chain([300, 301, 640, 999]) {
            set.set(bit);
        }
        let bytes = encode(&set);
        assert_eq!(serialized_len(&bytes).unwrap(), bytes.len());
        assert_eq!(decode(&bytes, 1000).unwrap(), set);
        let empty = encode(&Bitset::new(64));
        assert_eq!(decode(&empty, 64).unwrap(), Bitset::new(64));
    }
}
