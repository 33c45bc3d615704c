//! Every kind of bad pack is refused with a message that names the problem and where it is,
//! exit status 128, and nothing left behind: not in a repository (`--stdin`), not beside a pack
//! file (file mode).

use crate::util::pack_builder::{append_delta, delta, fix_trailer, Op, PackBuilder};
use crate::util::{
    assert_says_each_cause_once, gits, list_dir, noise, stderr, text, Env, FastImport,
};
use sluice_object::{HashKind, ObjectId, ObjectKind};
use sluice_pack::entry::{parse_entry_header, EntryKind};

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

/// Every hostile pack, its name, and what the refusal must say.
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
    cases.extend(delta_cases());
    cases
}

/// Packs whose deltas are broken: bases outside the pack, bad copies, cycles, counts.
fn delta_cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let mut cases: Vec<(&'static str, Vec<u8>, &'static str)> = Vec::new();
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

/// A pack past `--max-input-size` is refused in git's words (index-pack's and unpack-objects'
/// differ) and exit code, and leaves nothing.
#[test]
fn max_input_size_is_enforced() {
    let (good, _) = good_pack();
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let cases: [&[&str]; 2] = [
            &["index-pack", "--stdin", "--max-input-size=50"],
            &["unpack-objects", "--max-input-size=50"],
        ];
        for (i, args) in cases.iter().enumerate() {
            let repo = env.init(&format!("twin-{i}"), true);
            let out = env.sluice(&repo, args, &good);
            assert!(list_dir(&repo.join("objects/pack")).is_empty());
            // (git leaves its temporary pack behind; Sluice leaves nothing.)
            let theirs = env.git_with_input(&repo, args, &good);
            assert_eq!(out.status.code(), Some(128));
            assert_eq!(
                (out.status.code(), stderr(&out)),
                (theirs.status.code(), stderr(&theirs)),
                "{} {args:?}",
                git.display()
            );
        }
    }
    let env = Env::new();
    let repo = env.init("repo", true);
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

/// Damage to a run of bytes (a pack's body, a delta's instructions).
#[derive(Debug, Clone, Copy)]
enum ByteDamage {
    FlipBit { at: usize, bit: u8 },
    SetByte { at: usize, value: u8 },
    Truncate { at: usize },
    Append { value: u8 },
}

impl ByteDamage {
    /// Damage number `seed`, at a place in `from..len`.
    fn pick(seed: u64, from: usize, len: usize) -> ByteDamage {
        let roll = noise(seed, 4);
        let at =
            from + u32::from_le_bytes([roll[0], roll[1], roll[2], roll[3]]) as usize % (len - from);
        match seed % 4 {
            0 => ByteDamage::FlipBit {
                at,
                bit: roll[1] % 8,
            },
            1 => ByteDamage::SetByte { at, value: roll[2] },
            2 => ByteDamage::Truncate { at },
            _ => ByteDamage::Append { value: roll[3] },
        }
    }

    fn apply(self, bytes: &mut Vec<u8>) {
        match self {
            ByteDamage::FlipBit { at, bit } => bytes[at] ^= 1 << bit,
            ByteDamage::SetByte { at, value } => bytes[at] = value,
            ByteDamage::Truncate { at } => bytes.truncate(at),
            ByteDamage::Append { value } => bytes.push(value),
        }
    }
}

/// How a pack git made is damaged; the trailer is recomputed afterwards, since a hostile
/// server can always send a valid one.
#[derive(Debug, Clone, Copy)]
enum PackDamage {
    /// Anywhere after the signature and version, up to the trailer.
    Body(ByteDamage),
    /// The object count, one off.
    Count { more: bool },
}

impl PackDamage {
    fn apply(self, good: &[u8]) -> Vec<u8> {
        let (body, _) = good.split_at(good.len() - 20);
        let mut pack = body.to_vec();
        match self {
            PackDamage::Body(damage) => damage.apply(&mut pack),
            PackDamage::Count { more } => {
                let count = u32::from_be_bytes(pack[8..12].try_into().unwrap());
                let count = if more { count + 1 } else { count - 1 };
                pack[8..12].copy_from_slice(&count.to_be_bytes());
            }
        }
        pack.extend_from_slice(&[0; 20]);
        fix_trailer(&mut pack);
        pack
    }
}

/// The .idx that `index-pack --stdin` wrote in `repo`, if its outcome `out` says it accepted
/// the pack. The pack directory is emptied for the next pack either way.
fn index_in(repo: &std::path::Path, out: &std::process::Output) -> Option<Vec<u8>> {
    let dir = repo.join("objects/pack");
    let idx = list_dir(&dir)
        .into_iter()
        .find(|name| name.ends_with(".idx"))
        .map(|name| std::fs::read(dir.join(name)).unwrap());
    for name in list_dir(&dir) {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    out.status
        .success()
        .then(|| idx.expect("an accepted pack has an .idx"))
}

/// A pack git made of a history whose files change a little from commit to commit, so that
/// most of its entries are deltas.
fn history_pack(env: &Env) -> Vec<u8> {
    let source = env.init("source", true);
    let mut history = FastImport::new();
    for version in 0..12 {
        history.commit(
            "main",
            &format!("version {version}\n"),
            &[
                ("a.txt", "100644", &text(version, 40)),
                ("dir/b.txt", "100644", &text(version / 3, 25)),
                ("dir/noise.bin", "100644", &noise(version as u64 / 4, 300)),
            ],
        );
    }
    env.fast_import(&source, history.finish());
    env.git_with_input(&source, &["pack-objects", "--revs", "--stdout"], b"main\n")
        .stdout
}

/// Two empty repositories that index the same packs, one with Sluice and one with git.
struct Judges {
    sluice: std::path::PathBuf,
    git: std::path::PathBuf,
    accepted: usize,
    refused: usize,
}

impl Judges {
    fn new(env: &Env) -> Judges {
        Judges {
            sluice: env.init("by-sluice", true),
            git: env.init("by-git", true),
            accepted: 0,
            refused: 0,
        }
    }

    /// Indexes `pack` with both: Sluice must accept it exactly when git does, writing the same
    /// .idx, and otherwise refuse it with 128, a message and nothing left behind.
    fn judge(&mut self, env: &Env, what: &dyn std::fmt::Debug, pack: &[u8]) {
        let ours = env.sluice(&self.sluice, &["index-pack", "--stdin"], pack);
        let theirs = env.git_with_input(&self.git, &["index-pack", "--stdin"], pack);
        let err = stderr(&ours);
        assert!(!err.contains("panicked"), "{what:?}: {err}");
        assert_says_each_cause_once(&err);
        if !ours.status.success() {
            let left = list_dir(&self.sluice.join("objects/pack"));
            assert!(left.is_empty(), "{what:?}: left behind {left:?}");
        }
        match (index_in(&self.sluice, &ours), index_in(&self.git, &theirs)) {
            (Some(ours_idx), Some(theirs_idx)) => {
                assert!(ours_idx == theirs_idx, "{what:?}: the .idx files differ");
                self.accepted += 1;
            }
            (None, None) => {
                assert_eq!(ours.status.code(), Some(128), "{what:?}: {err}");
                assert!(err.starts_with("fatal: "), "{what:?}: {err}");
                self.refused += 1;
            }
            (ours_idx, _) => panic!(
                "{what:?}: sluice {}, git {}\nsluice: {err}\ngit: {}",
                if ours_idx.is_some() {
                    "accepted"
                } else {
                    "refused"
                },
                if theirs.status.success() {
                    "accepted"
                } else {
                    "refused"
                },
                stderr(&theirs)
            ),
        }
    }
}

/// A pack git made, damaged in 160 seeded ways and each time given a valid trailer: Sluice
/// must judge every one as `git index-pack` does.
#[test]
fn damaged_git_packs_are_judged_as_git_judges_them() {
    for git in gits() {
        damaged_git_packs_judged_by(Env::with_git(git));
    }
}

fn damaged_git_packs_judged_by(env: Env) {
    let good = history_pack(&env);
    let mut judges = Judges::new(&env);
    for seed in 0..160 {
        let damage = match seed % 5 {
            4 => PackDamage::Count {
                more: seed % 2 == 0,
            },
            _ => PackDamage::Body(ByteDamage::pick(seed, 8, good.len() - 20)),
        };
        judges.judge(&env, &damage, &damage.apply(&good));
    }
    // The damage is meant to be refused nearly always; a run that refused nothing tested little.
    assert!(judges.refused > 100, "refused {}", judges.refused);
}

/// An entry of a pack read back for rebuilding: what it is, with its inflated data.
#[derive(Clone)]
enum Rebuilt {
    Whole(ObjectKind, Vec<u8>),
    /// A delta against the entry with this index.
    OfsDelta(usize, Vec<u8>),
    RefDelta(ObjectId, Vec<u8>),
}

/// The entries of a well-formed pack (git's), inflated with flate2 rather than Sluice's own
/// inflater.
fn read_entries(pack: &[u8]) -> Vec<Rebuilt> {
    let count = u32::from_be_bytes(pack[8..12].try_into().unwrap()) as usize;
    let (mut at, mut offsets, mut entries) = (12, Vec::new(), Vec::new());
    for _ in 0..count {
        let header = parse_entry_header(&pack[at..], at as u64, HashKind::Sha1).unwrap();
        let mut data = Vec::with_capacity(header.size as usize);
        let mut inflater = flate2::Decompress::new(true);
        inflater
            .decompress_vec(
                &pack[at + header.header_len..],
                &mut data,
                flate2::FlushDecompress::Finish,
            )
            .unwrap();
        assert_eq!(data.len() as u64, header.size);
        entries.push(match header.kind {
            EntryKind::Base(kind) => Rebuilt::Whole(kind, data),
            EntryKind::OfsDelta { distance } => {
                let base = at as u64 - distance;
                Rebuilt::OfsDelta(offsets.iter().position(|&o| o == base).unwrap(), data)
            }
            EntryKind::RefDelta { base } => Rebuilt::RefDelta(base, data),
        });
        offsets.push(at as u64);
        at += header.header_len + inflater.total_in() as usize;
    }
    entries
}

fn rebuild(entries: &[Rebuilt]) -> Vec<u8> {
    let mut builder = PackBuilder::new();
    for entry in entries {
        match entry {
            Rebuilt::Whole(kind, data) => builder.object(*kind, data).0,
            Rebuilt::OfsDelta(base, delta) => builder.ofs_delta(*base, delta),
            Rebuilt::RefDelta(base, delta) => builder.ref_delta(base, delta),
        };
    }
    builder.build()
}

/// The deltas of a pack git made, damaged one at a time in 160 seeded ways (bad opcodes, copies
/// out of the base, wrong base and result sizes, insertions past the end, or a valid but
/// different result): Sluice must judge every one as `git index-pack` does.
#[test]
fn damaged_deltas_are_judged_as_git_judges_them() {
    for git in gits() {
        damaged_deltas_judged_by(Env::with_git(git));
    }
}

fn damaged_deltas_judged_by(env: Env) {
    let entries = read_entries(&history_pack(&env));
    let deltas: Vec<usize> = (0..entries.len())
        .filter(|&i| !matches!(entries[i], Rebuilt::Whole(..)))
        .collect();
    assert!(deltas.len() > 10, "git made only {} deltas", deltas.len());
    let mut judges = Judges::new(&env);
    judges.judge(&env, &"the rebuilt pack, undamaged", &rebuild(&entries));
    assert_eq!(judges.accepted, 1);
    for seed in 0..160u64 {
        let which = deltas[noise(seed + 1000, 1)[0] as usize % deltas.len()];
        let mut damaged = entries.clone();
        let (Rebuilt::OfsDelta(_, delta) | Rebuilt::RefDelta(_, delta)) = &mut damaged[which]
        else {
            unreachable!("a delta was picked");
        };
        // The damage is to the instructions as inflated; they are compressed again with the
        // rest when the pack is rebuilt, so the zlib checksum and the entry's size are right.
        let damage = ByteDamage::pick(seed, 0, delta.len());
        damage.apply(delta);
        judges.judge(&env, &(which, damage), &rebuild(&damaged));
    }
    assert!(judges.refused > 80, "refused {}", judges.refused);
}

/// Packs where one object id is held by two entries: a ref-delta cycle that leads back to an
/// object stored whole, two whole copies of a ref-delta's base, a delta that rebuilds an
/// object stored whole, and two whole copies alone. git refuses the first two, naming the
/// ref-delta that would be resolved twice, and accepts the others; Sluice must judge each the
/// same way, with git's own message, and never write an index that lists a delta twice.
#[test]
fn objects_reached_twice_are_judged_as_git_judges_them() {
    for git in gits() {
        objects_reached_twice_judged_by(Env::with_git(git));
    }
}

fn objects_reached_twice_judged_by(env: Env) {
    let a = b"object A, stored whole and rebuilt by a delta\n".to_vec();
    let b = b"object B, a delta of A\n".to_vec();
    let insert_all =
        |from: &[u8], to: &[u8]| delta(from.len() as u64, to.len() as u64, &[Op::Insert(to)]);
    let id = |data: &[u8]| sluice_object::hash_object(HashKind::Sha1, ObjectKind::Blob, data);
    let (a_id, b_id) = (id(&a).unwrap(), id(&b).unwrap());

    let mut cycle = PackBuilder::new();
    cycle.object(ObjectKind::Blob, &a);
    cycle.ref_delta(&a_id, &insert_all(&a, &b));
    cycle.ref_delta(&b_id, &insert_all(&b, &a));
    let mut two_bases = PackBuilder::new();
    two_bases.object(ObjectKind::Blob, &a);
    two_bases.object(ObjectKind::Blob, &a);
    two_bases.ref_delta(&a_id, &insert_all(&a, &b));
    let mut rebuilt = PackBuilder::new();
    rebuilt.object(ObjectKind::Blob, &a);
    let (b_entry, _) = rebuilt.object(ObjectKind::Blob, &b);
    rebuilt.ofs_delta(b_entry, &insert_all(&b, &a));
    let mut two_copies = PackBuilder::new();
    two_copies.object(ObjectKind::Blob, &a);
    two_copies.object(ObjectKind::Blob, &a);

    let mut judges = Judges::new(&env);
    for (what, pack) in [
        ("ref-delta cycle back to a whole object", cycle.build()),
        ("two whole copies of a ref-delta's base", two_bases.build()),
        ("a delta rebuilding a whole object", rebuilt.build()),
        ("two whole copies", two_copies.build()),
    ] {
        let ours = env.sluice(&judges.sluice, &["index-pack", "--stdin"], &pack);
        let theirs = env.git_with_input(&judges.git, &["index-pack", "--stdin"], &pack);
        if !theirs.status.success() {
            assert_eq!(stderr(&ours), stderr(&theirs), "{what}");
        }
        let _ = (
            index_in(&judges.sluice, &ours),
            index_in(&judges.git, &theirs),
        );
        judges.judge(&env, &what, &pack);
    }
    assert_eq!((judges.accepted, judges.refused), (2, 2));
    env.git(&judges.sluice, &["fsck", "--strict"]);
}
