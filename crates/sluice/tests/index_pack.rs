//! `sluice index-pack` writes the same `.idx` and `.rev` bytes as `git index-pack`, for packs
//! git makes and for unusual packs built by hand, with both installed gits as the oracle.

use crate::util::pack_builder::{append_delta, PackBuilder};
use crate::util::{gits, list_dir, noise, stderr, stdout, text, Env, FastImport};
use sluice_object::ObjectKind;
use std::path::Path;

/// Indexes `pack` with git and with sluice (file mode, then --stdin into a repository) and
/// requires identical files.
fn assert_same_as_git(pack: &[u8], git_args: &[&str], sluice_args: &[&str]) {
    same_as_git(pack, git_args, sluice_args, true)
}

/// `command` with `args`, whose leading `-c` settings go before it, as git takes them.
fn sluice_command<'a>(args: &[&'a str], command: &'a str) -> Vec<&'a str> {
    let mut settings = 0;
    while args.get(settings) == Some(&"-c") {
        settings += 2;
    }
    let mut all = args[..settings].to_vec();
    all.push(command);
    all.extend_from_slice(&args[settings..]);
    all
}

/// As [`assert_same_as_git`]; `verify` runs `git verify-pack`, which refuses duplicate objects.
fn same_as_git(pack: &[u8], git_args: &[&str], sluice_args: &[&str], verify: bool) {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let g = env.path().join("g");
        let s = env.path().join("s");
        std::fs::create_dir_all(&g).unwrap();
        std::fs::create_dir_all(&s).unwrap();
        std::fs::write(g.join("x.pack"), pack).unwrap();
        std::fs::write(s.join("x.pack"), pack).unwrap();
        let mut args = vec!["index-pack", "--rev-index"];
        args.extend_from_slice(git_args);
        args.push("x.pack");
        let git_hash = env.git(&g, &args);

        let mut args = sluice_command(sluice_args, "index-pack");
        args.push("x.pack");
        let out = env.sluice(&s, &args, b"");
        assert!(out.status.success(), "sluice failed: {}", stderr(&out));
        assert_eq!(out.stdout, git_hash, "printed pack hash");
        for ext in ["idx", "rev"] {
            let ours = std::fs::read(s.join(format!("x.{ext}"))).unwrap();
            let theirs = std::fs::read(g.join(format!("x.{ext}"))).unwrap();
            assert!(ours == theirs, ".{ext} differs from {}'s", git.display());
        }
        if verify {
            env.git(&s, &["verify-pack", "x.idx"]);
        }

        // --stdin inside a repository lands the same files under their final names.
        let repo = env.init("repo", true);
        let mut args = sluice_command(sluice_args, "index-pack");
        args.push("--stdin");
        let out = env.sluice(&repo, &args, pack);
        assert!(
            out.status.success(),
            "sluice --stdin failed: {}",
            stderr(&out)
        );
        let hash = String::from_utf8(git_hash.clone()).unwrap();
        assert_eq!(stdout(&out), format!("pack\t{hash}"));
        let name = format!("pack-{}", hash.trim());
        let dir = repo.join("objects/pack");
        assert_eq!(
            list_dir(&dir),
            vec![
                format!("{name}.idx"),
                format!("{name}.pack"),
                format!("{name}.rev")
            ]
        );
        assert_eq!(
            std::fs::read(dir.join(format!("{name}.idx"))).unwrap(),
            std::fs::read(g.join("x.idx")).unwrap()
        );
        assert_eq!(
            std::fs::read(dir.join(format!("{name}.pack"))).unwrap(),
            pack
        );
    }
}

/// A repository with text files that change over `commits` commits, an executable, a symlink,
/// an empty blob, an empty-tree commit, incompressible blobs and tags.
fn history_repo(env: &Env, commits: usize) -> std::path::PathBuf {
    let repo = env.init("src", true);
    let mut fi = FastImport::new();
    let empty = fi.commit("empty", "empty tree", &[]);
    fi.tag("v-empty", empty);
    for i in 0..commits {
        let a = text(i, 120);
        let b = text(i / 3, 80);
        let big = noise(i as u64 / 10, 3000);
        let files: Vec<(&str, &str, &[u8])> = vec![
            ("a.txt", "100644", &a),
            ("dir/b.txt", "100644", &b),
            ("bin/tool", "100755", &b),
            ("link", "120000", b"a.txt"),
            ("empty", "100644", b""),
            ("noise.bin", "100644", &big),
        ];
        let mark = fi.commit("main", &format!("commit {i}"), &files);
        if i % 10 == 0 {
            fi.tag(&format!("v{i}"), mark);
        }
    }
    env.fast_import(&repo, fi.finish());
    repo
}

fn pack_objects(env: &Env, repo: &Path, args: &[&str]) -> Vec<u8> {
    let mut all = vec!["pack-objects", "--revs", "--all", "--stdout", "-q"];
    all.extend_from_slice(args);
    let out = env.git_with_input(repo, &all, b"");
    assert!(out.status.success(), "{}", stderr(&out));
    out.stdout
}

#[test]
fn ofs_delta_pack_matches_git() {
    let env = Env::new();
    let repo = history_repo(&env, 60);
    let pack = pack_objects(&env, &repo, &["--delta-base-offset"]);
    assert_same_as_git(&pack, &[], &[]);
}

#[test]
fn ref_delta_pack_matches_git() {
    let env = Env::new();
    let repo = history_repo(&env, 60);
    // Without --delta-base-offset, pack-objects writes every delta as a ref-delta.
    let pack = pack_objects(&env, &repo, &[]);
    assert_same_as_git(&pack, &[], &["--threads=1"]);
}

#[test]
fn deep_delta_chains_match_git() {
    // A chain 3,000 deltas deep, each against the entry before it: pack-objects chooses bases
    // for size, not depth, so only a pack built by hand promises the depth.
    let mut data = text(0, 10);
    let mut builder = PackBuilder::new();
    let (mut previous, _) = builder.object(ObjectKind::Blob, &data);
    for i in 0..3000 {
        let line = format!("line {i}\n");
        let d = append_delta(&data, line.as_bytes());
        data.extend_from_slice(line.as_bytes());
        previous = builder.ofs_delta(previous, &d);
    }
    let pack = builder.build();
    assert_same_as_git(&pack, &[], &["--threads=2"]);
    let env = Env::new();
    std::fs::write(env.path().join("p.pack"), &pack).unwrap();
    env.git(env.path(), &["index-pack", "p.pack"]);
    let listing = env.sluice(env.path(), &["verify-pack", "-s", "p.idx"], b"");
    assert!(
        stdout(&listing).contains("chain length = 3000: 1 object"),
        "{}",
        stdout(&listing)
    );
}

#[test]
fn git_made_deep_pack_matches_git() {
    let env = Env::new();
    let repo = env.init("deep", true);
    let mut fi = FastImport::new();
    for i in 0..1500 {
        let content = text(i, 60);
        fi.commit("main", "c", &[("f", "100644", &content)]);
    }
    env.fast_import(&repo, fi.finish());
    let pack = pack_objects(
        &env,
        &repo,
        &["--delta-base-offset", "--no-reuse-delta", "--depth=4095"],
    );
    assert_same_as_git(&pack, &[], &["--threads=2"]);
}

/// Trees of 400 entries, one entry's id changing per commit: same-sized tree deltas that copy a
/// prefix in place, whose hashes resume from their base's saved states.
#[test]
fn trees_changed_in_place_match_git() {
    let env = Env::new();
    let repo = env.init("wide", true);
    let names: Vec<String> = (0..400).map(|i| format!("dir/file-{i:04}")).collect();
    let mut fi = FastImport::new();
    let first: Vec<Vec<u8>> = (0..names.len()).map(|i| text(i, 2)).collect();
    let files: Vec<(&str, &str, &[u8])> = names
        .iter()
        .zip(&first)
        .map(|(name, content)| (name.as_str(), "100644", content.as_slice()))
        .collect();
    fi.commit("main", "all", &files);
    for i in 0..120 {
        let content = text(1000 + i, 2);
        let name = &names[(i * 37) % names.len()];
        fi.commit("main", "one", &[(name.as_str(), "100644", &content)]);
    }
    env.fast_import(&repo, fi.finish());
    let ofs = pack_objects(&env, &repo, &["--delta-base-offset"]);
    assert_same_as_git(&ofs, &[], &[]);
    let refs = pack_objects(&env, &repo, &[]);
    assert_same_as_git(&refs, &[], &["--threads=2"]);
}

#[test]
fn base_with_twenty_thousand_children_matches_git() {
    let base_data = text(0, 40);
    let mut builder = PackBuilder::new();
    let (base, _) = builder.object(ObjectKind::Blob, &base_data);
    for i in 0..20_000 {
        builder.ofs_delta(
            base,
            &append_delta(&base_data, format!("child {i}\n").as_bytes()),
        );
    }
    assert_same_as_git(&builder.build(), &[], &[]);
}

#[test]
fn ref_deltas_before_their_bases_and_duplicates_match_git() {
    let base_data = text(1, 30);
    let base_id =
        sluice_object::hash_object(sluice_object::HashKind::Sha1, ObjectKind::Blob, &base_data)
            .unwrap();
    let mut builder = PackBuilder::new();
    // A ref-delta whose base comes later in the pack; then another object twice (a duplicate,
    // which git accepts unless a ref-delta names it) and an ofs-delta against the second copy.
    builder.ref_delta(&base_id, &append_delta(&base_data, b"forward\n"));
    builder.object(ObjectKind::Blob, &base_data);
    let twice = text(2, 30);
    builder.object(ObjectKind::Blob, &twice);
    let (second, _) = builder.object(ObjectKind::Blob, &twice);
    builder.ofs_delta(second, &append_delta(&twice, b"after the duplicate\n"));
    builder.object(ObjectKind::Blob, b"");
    builder.object(ObjectKind::Tree, b"");
    let pack = builder.build();
    same_as_git(&pack, &[], &[], false);

    // verify-pack refuses duplicates, as git's does.
    let env = Env::new();
    std::fs::write(env.path().join("d.pack"), &pack).unwrap();
    env.git(env.path(), &["index-pack", "d.pack"]);
    let out = env.sluice(env.path(), &["verify-pack", "d.idx"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("appears twice in the pack"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn big_blobs_over_threshold_match_git() {
    let env = Env::new();
    let repo = env.init("big", true);
    let mut fi = FastImport::new();
    for i in 0..3 {
        let blob = noise(i, 300_000);
        let mut textual = text(i as usize, 9000);
        textual.extend_from_slice(&noise(7, 1000));
        fi.commit(
            "main",
            "c",
            &[("noise", "100644", &blob), ("text", "100644", &textual)],
        );
    }
    env.fast_import(&repo, fi.finish());
    let pack = pack_objects(&env, &repo, &["--delta-base-offset"]);
    assert_same_as_git(&pack, &[], &["-c", "core.bigFileThreshold=100k"]);
}

#[test]
fn large_offset_table_matches_git() {
    // --index-version=2,<offset> moves offsets above <offset> into the 64-bit table: the layout
    // of a pack past 2 GiB, tested without writing one.
    let env = Env::new();
    let repo = history_repo(&env, 20);
    let pack = pack_objects(&env, &repo, &["--delta-base-offset"]);
    assert_same_as_git(
        &pack,
        &["--index-version=2,0x400"],
        &["--index-version=2,0x400"],
    );
    assert_same_as_git(&pack, &["--index-version=1"], &["--index-version=1"]);
}

#[test]
fn keep_and_output_names_follow_git() {
    let env = Env::new();
    let src = history_repo(&env, 5);
    let pack = pack_objects(&env, &src, &[]);
    let repo = env.init("dst", false);
    let out = env.sluice(
        &repo,
        &["index-pack", "--stdin", "--keep=fetched by test"],
        &pack,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let line = stdout(&out);
    let hash = line
        .strip_prefix("keep\t")
        .expect("keep line")
        .trim()
        .to_owned();
    let keep = repo.join(format!(".git/objects/pack/pack-{hash}.keep"));
    assert_eq!(std::fs::read_to_string(keep).unwrap(), "fetched by test\n");
    env.git(&repo, &["fsck", "--strict", "--no-dangling"]);

    // --no-rev-index and pack.writeReverseIndex=false write no .rev.
    let dir = env.path().join("norev");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("p.pack"), &pack).unwrap();
    let out = env.sluice(&dir, &["index-pack", "--no-rev-index", "p.pack"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(list_dir(&dir), vec!["p.idx", "p.pack"]);
    std::fs::remove_file(dir.join("p.idx")).unwrap();
    let out = env.sluice(
        &dir,
        &[
            "-c",
            "pack.writeReverseIndex=false",
            "index-pack",
            "-o",
            "q.idx",
            "p.pack",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(list_dir(&dir), vec!["p.pack", "q.idx"]);
}

/// A pack indexed where it lies: the files written beside it (the `.rev` named after the
/// index, `--keep` and `--promisor` marks, a refused index name), the words for a pack that is
/// not there, and `-v`'s last progress lines (no throughput for a file) are git's (2.47: a
/// reverse index by default).
#[test]
fn a_pack_indexed_in_place_gets_the_files_gits_gets() {
    let git = crate::util::git_bin();
    let env = Env::with_git(git);
    let src = history_repo(&env, 5);
    let pack = pack_objects(&env, &src, &[]);
    let cases: [&[&str]; 7] = [
        &["-o", "x.idx", "p.pack"],
        &["--rev-index", "-o", "sub/y.idx", "p.pack"],
        &["-o", "foo", "p.pack"],
        &["--keep=kept here", "p.pack"],
        &["--promisor=from origin", "--no-rev-index", "p.pack"],
        &["nonexist.pack"],
        &["-v", "p.pack"],
    ];
    for args in cases {
        let [ours, theirs] = [true, false].map(|sluice| {
            let dir = env.path().join(format!("in-place-{sluice}"));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            std::fs::write(dir.join("p.pack"), &pack).unwrap();
            let all = [&["index-pack"][..], args].concat();
            let out = env.sluice_or_git(sluice, &dir, &all);
            // Progress redraws its line as often as it likes: the last of each phase is kept.
            let said = stderr(&out);
            let said: Vec<String> = (said.lines())
                .map(|line| line.rsplit('\r').next().unwrap_or(line).to_owned())
                .collect();
            let mut files: Vec<String> = Vec::new();
            for sub in ["", "sub"] {
                for name in list_dir(&dir.join(sub)) {
                    let text = std::fs::read_to_string(dir.join(sub).join(&name));
                    let marks = name.ends_with(".keep") || name.ends_with(".promisor");
                    let text = text.ok().filter(|_| marks).unwrap_or_default();
                    files.push(format!("{sub}/{name} {text:?}"));
                }
            }
            (out.status.code(), stdout(&out), said, files)
        });
        assert_eq!(ours, theirs, "{args:?}");
    }
}

#[test]
fn received_pack_is_a_complete_repository() {
    let env = Env::new();
    let src = history_repo(&env, 30);
    let pack = pack_objects(&env, &src, &["--delta-base-offset"]);
    let repo = env.init("dst", true);
    let out = env.sluice(&repo, &["index-pack", "--stdin", "-v", "--progress"], &pack);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("Receiving objects: 100%"), "{err}");
    assert!(err.contains("Resolving deltas: 100%"), "{err}");
    // Point refs at the received history and let git check everything.
    let refs = env.git(&src, &["for-each-ref", "--format=%(objectname) %(refname)"]);
    for line in String::from_utf8(refs).unwrap().lines() {
        let (id, name) = line.split_once(' ').unwrap();
        env.git(&repo, &["update-ref", name, id]);
    }
    env.git(&repo, &["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn large_pack_scanned_in_two_halves_matches_git() {
    // Packs of 32 MiB and more are scanned from both ends at once; deltas in the second half
    // point at bases in the first, by offset and by id.
    let mut builder = PackBuilder::new();
    let mut bases = Vec::new();
    for i in 0..400u64 {
        let blob = noise(i, 100_000);
        let (index, id) = builder.object(ObjectKind::Blob, &blob);
        if i < 8 {
            bases.push((index, id, blob));
        }
        let (base_index, base_id, base_data) = &bases[(i % 8) as usize];
        builder.ofs_delta(
            *base_index,
            &append_delta(base_data, format!("ofs {i}\n").as_bytes()),
        );
        builder.ref_delta(
            base_id,
            &append_delta(base_data, format!("ref {i}\n").as_bytes()),
        );
    }
    let pack = builder.build();
    assert!(pack.len() > 36 << 20, "above the 32 MiB split threshold");
    assert_same_as_git(&pack, &[], &["--threads=2"]);

    // Damage in the second half: the two-thread scan falls back and reports exactly what the
    // one-thread scan reports.
    let env = Env::new();
    let mut bad = pack.clone();
    let at = builder.offset_of(999) as usize + 30;
    bad[at] ^= 0xff;
    crate::util::pack_builder::fix_trailer(&mut bad);
    std::fs::write(env.path().join("bad.pack"), &bad).unwrap();
    let one = env.sluice(env.path(), &["index-pack", "--threads=1", "bad.pack"], b"");
    let two = env.sluice(env.path(), &["index-pack", "--threads=2", "bad.pack"], b"");
    assert_eq!(one.status.code(), Some(128), "{}", stderr(&one));
    assert_eq!(stderr(&one), stderr(&two));
    assert!(
        stderr(&one).contains(&format!("offset {}", builder.offset_of(999))),
        "{}",
        stderr(&one)
    );
    assert_eq!(list_dir(env.path()), vec!["bad.pack", "home"]);
}
