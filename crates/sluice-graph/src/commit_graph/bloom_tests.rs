use super::*;

/// murmur3's published check values (32-bit, x86 variant), which version 2 follows.
#[test]
fn version_two_is_standard_murmur3() {
    assert_eq!(murmur3(0, b"", 2), 0);
    assert_eq!(murmur3(1, b"", 2), 0x514e_28b7);
    assert_eq!(murmur3(0xffff_ffff, b"", 2), 0x81f1_6f39);
    assert_eq!(murmur3(0, b"\xff\xff\xff\xff", 2), 0x7629_3b50);
    assert_eq!(murmur3(0x9747_b28c, b"Hello, world!", 2), 0x2488_4cba);
}

/// Below 0x80 the versions agree; from there version 1 differs (C's signed `char`).
#[test]
fn version_one_differs_only_for_high_bytes() {
    for data in [&b"a/b/c.txt"[..], b"abcd", b"abc"] {
        assert_eq!(murmur3(SEEDS[0], data, 1), murmur3(SEEDS[0], data, 2));
    }
    let high = "caf\u{e9}/t\u{ea}te".as_bytes();
    assert_ne!(murmur3(SEEDS[0], high, 1), murmur3(SEEDS[0], high, 2));
}

#[test]
fn filters_have_ten_bits_a_path_and_the_two_special_forms() {
    let settings = BloomSettings::default();
    assert_eq!(filter_of(None, settings), vec![0xff]);
    assert_eq!(filter_of(Some(&HashSet::new()), settings), vec![0]);
    let paths: HashSet<Vec<u8>> = ["a", "a/b", "c"]
        .iter()
        .map(|p| p.as_bytes().to_vec())
        .collect();
    let filter = filter_of(Some(&paths), settings);
    assert_eq!(filter.len(), 4);
    assert!(filter.iter().map(|b| b.count_ones()).sum::<u32>() <= 21);
}

#[test]
fn a_path_brings_its_leading_directories() {
    let mut set = ChangedSet {
        paths: HashSet::new(),
        max: 3,
    };
    assert!(matches!(set.add(b"a/b/c"), Flow::Go));
    assert_eq!(set.paths.len(), 3);
    assert!(matches!(set.add(b"a/d"), Flow::TooMany));
}
