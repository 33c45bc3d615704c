//! sirocco against zlib-rs on arbitrary bytes: whole-stream inflation must succeed or fail
//! together and produce the same bytes; streamed in pieces, a stream both accept must end at
//! the same place with the same output.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_pack::inflate::{SiroccoInflater, ZlibInflate, ZlibRsInflater};

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let size = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let piece = usize::from(data[2]).max(1);
    let input = &data[3..];
    let (mut a, mut b) = (SiroccoInflater::new(), ZlibRsInflater::new());
    let (mut out_a, mut out_b) = (Vec::new(), Vec::new());
    let ra = a.inflate_exact(input, size, &mut out_a);
    let rb = b.inflate_exact(input, size, &mut out_b);
    assert_eq!(ra.is_ok(), rb.is_ok(), "{ra:?} vs {rb:?}");
    if let (Ok(ca), Ok(cb)) = (&ra, &rb) {
        assert_eq!(ca, cb);
        assert_eq!(out_a, out_b);
    }

    let stream = |inflater: &mut dyn FnMut(&[u8], bool) -> Option<(usize, usize, Vec<u8>, bool)>| {
        let (mut at, mut end, mut out) = (0usize, piece.min(input.len()), Vec::new());
        loop {
            let eoi = end == input.len();
            let (consumed, produced, output, done) = inflater(&input[at..end], eoi)?;
            at += consumed;
            out.extend_from_slice(&output);
            if done {
                return Some((at, out));
            }
            if consumed == 0 && produced == 0 && at != end {
                return None;
            }
            if at == end {
                if eoi {
                    return None;
                }
                end = (end + piece).min(input.len());
            }
        }
    };
    a.begin();
    b.begin();
    let sa = stream(&mut |i, eoi| a.feed(i, eoi, true).ok().map(|f| (f.consumed, f.produced, f.output.to_vec(), f.done)));
    let sb = stream(&mut |i, eoi| b.feed(i, eoi, true).ok().map(|f| (f.consumed, f.produced, f.output.to_vec(), f.done)));
    assert_eq!(sa, sb);
});
