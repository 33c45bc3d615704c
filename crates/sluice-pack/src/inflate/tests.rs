//! Differential tests: sirocco must agree with zlib-rs on every stream, whole or fed in
//! pieces, valid or not.

use super::*;

fn samples() -> Vec<Vec<u8>> {
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect()
    };
    let text: Vec<u8> = b"line of text that repeats, more or less; "
        .iter()
        .cycle()
        .take(100_000)
        .copied()
        .collect();
    vec![
        Vec::new(),
        b"x".to_vec(),
        b"hello hello hello\n".to_vec(),
        text.clone(),
        noise(70_000),
        [noise(1000), text[..5000].to_vec(), noise(3000)].concat(),
    ]
}

/// The class of an outcome, ignoring the wording of corruption messages.
fn class(result: &Result<usize, InflateError>) -> String {
    match result {
        Ok(n) => format!("ok {n}"),
        Err(InflateError::Corrupt(_)) => "corrupt".into(),
        Err(e) => format!("{e:?}"),
    }
}

fn both_exact(input: &[u8], size: usize) -> (String, Vec<u8>) {
    let (mut a, mut b) = (SiroccoInflater::new(), ZlibRsInflater::new());
    let (mut out_a, mut out_b) = (Vec::new(), Vec::new());
    let ra = a.inflate_exact(input, size, &mut out_a);
    let rb = b.inflate_exact(input, size, &mut out_b);
    let (ca, cb) = (class(&ra), class(&rb));
    // Corrupt data may be reported as corruption by one and as a size mismatch by the other
    // (the wrong size is what one of them meets first): both refuse it.
    assert_eq!(ra.is_ok(), rb.is_ok(), "{ca} vs {cb}");
    if ra.is_ok() {
        assert_eq!(ca, cb);
        assert_eq!(out_a, out_b);
    }
    (ca, out_a)
}

#[test]
fn whole_streams_agree() {
    for data in samples() {
        for level in [0, 1, 6, 9] {
            let packed = deflate(&data, level);
            let (outcome, out) = both_exact(&packed, data.len());
            assert_eq!(outcome, format!("ok {}", packed.len()));
            assert_eq!(out, data);
            // Trailing bytes after the stream are not part of it.
            let mut trailing = packed.clone();
            trailing.extend_from_slice(b"next entry");
            assert_eq!(
                both_exact(&trailing, data.len()).0,
                format!("ok {}", packed.len())
            );
            // Wrong sizes.
            assert!(both_exact(&packed, data.len() + 1)
                .0
                .contains("SizeMismatch"));
            if !data.is_empty() {
                assert!(both_exact(&packed, data.len() - 1)
                    .0
                    .contains("SizeMismatch"));
            }
        }
    }
}

#[test]
fn truncated_and_corrupt_streams_are_refused_by_both() {
    for data in samples().into_iter().take(4) {
        let packed = deflate(&data, 6);
        let step = (packed.len() / 97).max(1);
        for cut in (0..packed.len()).step_by(step) {
            let (outcome, _) = both_exact(&packed[..cut], data.len());
            assert!(!outcome.starts_with("ok"), "cut at {cut}: {outcome}");
        }
        for at in (0..packed.len()).step_by(step) {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = packed.clone();
                bad[at] ^= flip;
                // Either both refuse it, or both decode the same bytes (a flip can be harmless
                // only if zlib's own checks accept it too).
                both_exact(&bad, data.len());
            }
        }
    }
}

fn stream_all<I: ZlibInflate>(
    inflater: &mut I,
    input: &[u8],
    piece: usize,
    keep: bool,
) -> Result<(usize, Vec<u8>, usize), InflateError> {
    inflater.begin();
    let mut out = Vec::new();
    let mut produced = 0;
    let mut at = 0;
    let mut end = piece.min(input.len());
    loop {
        let eoi = end == input.len();
        let fed = inflater.feed(&input[at..end], eoi, keep)?;
        at += fed.consumed;
        produced += fed.produced;
        out.extend_from_slice(fed.output);
        if fed.done {
            return Ok((at, out, produced));
        }
        if at == end {
            if eoi {
                return Err(InflateError::Truncated);
            }
            end = (end + piece).min(input.len());
        }
    }
}

#[test]
fn streamed_pieces_agree() {
    for data in samples() {
        let packed = deflate(&data, 6);
        let mut input = packed.clone();
        input.extend_from_slice(b"trailing");
        for piece in [1, 7, 4096, 1 << 20] {
            for keep in [true, false] {
                let a = stream_all(&mut SiroccoInflater::new(), &input, piece, keep);
                let b = stream_all(&mut ZlibRsInflater::new(), &input, piece, keep);
                let (ca, oa, pa) = a.expect("sirocco streams");
                let (cb, ob, pb) = b.expect("zlib-rs streams");
                assert_eq!((ca, pa), (cb, pb), "piece {piece} keep {keep}");
                assert_eq!(ca, packed.len());
                assert_eq!(pa, data.len());
                if keep {
                    assert_eq!(oa, data);
                    assert_eq!(ob, data);
                }
            }
        }
        // Truncated streams end in an error for both.
        let cut = &packed[..packed.len() / 2];
        assert!(stream_all(&mut SiroccoInflater::new(), cut, 4096, true).is_err());
        assert!(stream_all(&mut ZlibRsInflater::new(), cut, 4096, true).is_err());
    }
}
