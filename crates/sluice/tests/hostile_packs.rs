//! Every kind of bad pack is refused with a message that names the problem and where it is,
//! exit status 128, and nothing left behind: not in a repository (`--stdin`), not beside a pack
//! file (file mode).

use crate::util::pack_builder::{append_delta, delta, fix_trailer, Op, PackBuilder};
use crate::util::{list_dir, stderr, Env};
use sluice_object::{HashKind, ObjectId, ObjectKind};

fn good_pack() -> (Vec<u8>, PackBuilder) {
    let base = b"the base object, long enough to copy from\n".to_vec();
    let mut builder = PackBuilder::new();
    let (b, _) = builder.object(ObjectKind::Blob, &base);
    builder.ofs_delta(b, &append_delta(&base, b"more\n"));
    builder.object(
        ObjectKind::Commit,
        b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nmsg\n",
    );
    (builder.build(), builder)
}

fn with_base(extra: impl FnOnce(&mut PackBuilder, usize, &[u8])) -> Vec<u8> {
    let base = b"0123456789abcdefghij".to_vec();
    let mut builder = PackBuilder::new();
    let (b, _) = builder.object(ObjectKind::Blob, &base);
    extra(&mut builder, b, &base);
    builder.build()
}

fn cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let (good, builder) = good_pack();
    let mut cases: Vec<(&'static str, Vec<u8>, &'static str)> = Vec::new();
    cases.push(("empty input", Vec::new(), "empty input"));
    cases.push(("short header", b"PACK\0\0".to_vec(), "truncated"));
    let mut bad = good.clone();
    bad[..4].copy_from_slice(b"KCAP");
    cases.push(("wrong signature", bad, "signature"));
    let mut bad = good.clone();
    bad[7] = 9;
    cases.push(("wrong version", bad, "version 9"));
    for cut in [
        13,
        builder.offset_of(1) as usize + 3,
        good.len() - 30,
        good.len() - 5,
    ] {
        cases.push(("truncated", good[..cut].to_vec(), "offset"));
    }
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    cases.push(("wrong trailer", bad, "SHA-1 mismatch"));
    let mut bad = good.clone();
    let at = builder.offset_of(0) as usize + 4;
    bad[at] ^= 0x55;
    fix_trailer(&mut bad);
    cases.push(("corrupt zlib", bad, "at offset 12"));

    let mut b = PackBuilder::new();
    let mut raw = Vec::new();
    sluice_pack::entry::write_entry_header(3, 10, &mut raw);
    raw.extend_from_slice(&sluice_pack::inflate::deflate(b"hello", 6));
    b.raw(&raw);
    cases.push(("size larger than data", b.build(), "size mismatch"));
    let mut b = PackBuilder::new();
    let mut raw = Vec::new();
    sluice_pack::entry::write_entry_header(3, 2, &mut raw);
    raw.extend_from_slice(&sluice_pack::inflate::deflate(b"hello", 6));
    b.raw(&raw);
    cases.push(("size smaller than data", b.build(), "size mismatch"));
    let mut b = PackBuilder::new();
    let mut raw = Vec::new();
    sluice_pack::entry::write_entry_header(3, 1 << 60, &mut raw);
    raw.extend_from_slice(&sluice_pack::inflate::deflate(b"hello", 6));
    b.raw(&raw);
    cases.push(("absurd declared size", b.build(), "size mismatch"));

    cases.push((
        "ofs-delta outside the pack",
        with_base(|b, _, base| {
            b.ofs_delta_distance(1 << 20, &append_delta(base, b"x"));
        }),
        "out of bounds",
    ));
    cases.push((
        "ofs-delta at itself",
        with_base(|b, _, base| {
            b.ofs_delta_distance(0, &append_delta(base, b"x"));
        }),
        "out of bounds",
    ));
    cases.push((
        "ofs-delta into an entry",
        with_base(|b, _, base| {
            let d = append_delta(base, b"x");
            let distance = b.offset_of(0);
            let _ = distance;
            // The base entry starts at 12; its middle is 13.
            let here = 12 + {
                let mut probe = PackBuilder::new();
                probe.object(ObjectKind::Blob, base);
                probe.build().len() as u64 - 32
            };
            b.ofs_delta_distance(here - 13, &d);
        }),
        "not the start of an entry",
    ));
    cases.push((
        "copy outside the base",
        with_base(|b, i, base| {
            b.ofs_delta(
                i,
                &delta(
                    base.len() as u64,
                    30,
                    &[Op::Copy {
                        offset: 0,
                        size: 30,
                    }],
                ),
            );
        }),
        "outside the base",
    ));
    cases.push((
        "base size mismatch",
        with_base(|b, i, base| {
            b.ofs_delta(i, &delta(base.len() as u64 + 1, 1, &[Op::Insert(b"x")]));
        }),
        "base size mismatch",
    ));
    cases.push((
        "result size mismatch",
        with_base(|b, i, base| {
            b.ofs_delta(i, &delta(base.len() as u64, 5, &[Op::Insert(b"x")]));
        }),
        "result size mismatch",
    ));
    cases.push((
        "reserved opcode",
        with_base(|b, i, base| {
            let mut d = delta(base.len() as u64, 1, &[]);
            d.push(0);
            b.ofs_delta(i, &d);
        }),
        "reserved opcode",
    ));
    cases.push((
        "reserved type 5",
        with_base(|b, _, _| {
            b.raw(&[0x50, 0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]);
        }),
        "invalid object type 5",
    ));
    cases.push((
        "type 0",
        with_base(|b, _, _| {
            b.raw(&[0x00, 0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]);
        }),
        "invalid object type 0",
    ));
    cases.push((
        "endless varint",
        with_base(|b, _, _| {
            b.raw(&[0xff; 16]);
        }),
        "varint",
    ));
    let missing =
        ObjectId::from_hex(HashKind::Sha1, b"1234567890123456789012345678901234567890").unwrap();
    cases.push((
        "missing base",
        with_base(|b, _, _| {
            b.ref_delta(&missing, &delta(3, 1, &[Op::Insert(b"x")]));
        }),
        "unresolved delta",
    ));
    let other =
        ObjectId::from_hex(HashKind::Sha1, b"abcdefabcdefabcdefabcdefabcdefabcdefabcd").unwrap();
    cases.push((
        "ref-delta cycle",
        with_base(|b, _, _| {
            b.ref_delta(&other, &delta(1, 1, &[Op::Insert(b"x")]));
            b.ref_delta(&missing, &delta(1, 1, &[Op::Insert(b"y")]));
        }),
        "2 unresolved deltas",
    ));
    let mut b = PackBuilder::new();
    b.object(ObjectKind::Blob, b"one");
    b.object(ObjectKind::Blob, b"two");
    b.count = Some(3);
    cases.push((
        "count larger than entries",
        b.build(),
        "claims 3 objects but holds only 2",
    ));
    let mut b = PackBuilder::new();
    b.object(ObjectKind::Blob, b"one");
    b.object(ObjectKind::Blob, b"two");
    b.count = Some(1);
    cases.push(("count smaller than entries", b.build(), "offset"));
    cases
}

#[test]
fn bad_packs_on_stdin_are_refused_and_leave_nothing() {
    let env = Env::new();
    let repo = env.init("repo", true);
    for (name, pack, expected) in cases() {
        for extra in [&[][..], &["--fix-thin"][..]] {
            let mut args = vec!["index-pack", "--stdin"];
            args.extend_from_slice(extra);
            let out = env.sluice(&repo, &args, &pack);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(128), "{name}: {err}");
            assert!(err.starts_with("fatal: "), "{name}: {err}");
            assert!(
                err.contains(expected),
                "{name}: expected '{expected}' in: {err}"
            );
            assert!(!err.contains("panicked"), "{name}: {err}");
            assert!(
                list_dir(&repo.join("objects/pack")).is_empty(),
                "{name}: files left behind"
            );
        }
    }
    env.git(&repo, &["fsck", "--strict"]);
}

#[test]
fn bad_pack_files_are_refused_and_leave_nothing() {
    let env = Env::new();
    let dir = env.path().join("packs");
    std::fs::create_dir(&dir).unwrap();
    let mut all = cases();
    let (mut good, _) = good_pack();
    good.extend_from_slice(b"junk");
    all.push(("junk after the trailer", good, "junk at the end"));
    for (name, pack, expected) in all {
        std::fs::write(dir.join("bad.pack"), &pack).unwrap();
        let out = env.sluice(&dir, &["index-pack", "bad.pack"], b"");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(128), "{name}: {err}");
        assert!(
            err.contains(expected),
            "{name}: expected '{expected}' in: {err}"
        );
        assert_eq!(
            list_dir(&dir),
            vec!["bad.pack"],
            "{name}: files left behind"
        );
    }
}

#[test]
fn max_input_size_is_enforced() {
    let env = Env::new();
    let repo = env.init("repo", true);
    let (good, _) = good_pack();
    let out = env.sluice(
        &repo,
        &["index-pack", "--stdin", "--max-input-size=50"],
        &good,
    );
    assert_eq!(out.status.code(), Some(128));
    assert!(
        stderr(&out).contains("exceeds maximum allowed size"),
        "{}",
        stderr(&out)
    );
    assert!(list_dir(&repo.join("objects/pack")).is_empty());
    let out = env.sluice(
        &repo,
        &["index-pack", "--stdin", "--max-input-size=100000"],
        &good,
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn usage_errors_exit_129_and_fatal_ones_128() {
    let env = Env::new();
    let out = env.sluice(env.path(), &["index-pack", "--no-such-flag"], b"");
    assert_eq!(out.status.code(), Some(129));
    let out = env.sluice(env.path(), &["index-pack", "--stdin"], b"");
    assert_eq!(out.status.code(), Some(128));
    assert!(stderr(&out).contains("--stdin requires a git repository"));
    std::fs::write(env.path().join("x.pck"), b"").unwrap();
    let out = env.sluice(env.path(), &["index-pack", "x.pck"], b"");
    assert_eq!(out.status.code(), Some(128));
    assert!(stderr(&out).contains("does not end with '.pack'"));
}
