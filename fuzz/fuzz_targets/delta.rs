//! Delta application and entry-header parsing on arbitrary bytes: errors, never panics, and a
//! result that is exactly the declared size when it succeeds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_object::HashKind;
use sluice_pack::delta::{apply_delta, delta_sizes};
use sluice_pack::entry::parse_entry_header;

fuzz_target!(|data: &[u8]| {
    let _ = parse_entry_header(data, 1 << 20, HashKind::Sha1);
    if data.len() < 2 {
        return;
    }
    let split = (data[0] as usize).min(data.len() - 1);
    let (base, delta) = data[1..].split_at(split.min(data.len() - 1));
    let mut out = Vec::new();
    if apply_delta(base, delta, &mut out).is_ok() {
        let sizes = delta_sizes(delta).expect("applied delta has sizes");
        assert_eq!(out.len() as u64, sizes.result);
    }
});
