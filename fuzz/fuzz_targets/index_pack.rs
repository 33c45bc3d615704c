//! The whole indexer on arbitrary bytes: it must return an error or an index, never panic,
//! hang or allocate without bound. Inputs whose trailer is wrong are given a correct one half
//! of the time, so that the fuzzer reaches past the checksum into entries and deltas.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_object::{HashKind, TrailerHasher};
use sluice_pack::{IndexOptions, PackIndexer, PackSource};
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let mut input = data.to_vec();
    if input.len() > 32 && input[0] & 1 == 0 {
        let end = input.len() - 20;
        let mut hasher = TrailerHasher::new(HashKind::Sha1);
        hasher.update(&input[..end]);
        let sum = hasher.finalize();
        input[end..].copy_from_slice(sum.as_bytes());
    }
    let options = IndexOptions {
        threads: 1,
        max_input_size: Some(1 << 20),
        ..IndexOptions::default()
    };
    let indexer = PackIndexer::new(options);

    let mut file = tempfile::tempfile().expect("temporary file");
    file.write_all(&input).expect("write");
    let _ = indexer.index(PackSource::File(&file));

    let pack = tempfile::tempfile().expect("temporary file");
    let mut reader = &input[..];
    if let Ok(indexed) = indexer.index(PackSource::Stream { input: &mut reader, pack: &pack }) {
        let order = indexed.index_order();
        let mut idx = Vec::new();
        indexed
            .write_idx(&order, &Default::default(), &mut idx)
            .expect("writing to memory");
        let parsed = sluice_pack::PackIndex::new(&idx[..], HashKind::Sha1).expect("own index parses");
        assert_eq!(parsed.len(), indexed.len());
    }
});
