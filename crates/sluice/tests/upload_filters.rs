//! upload-pack grants object filters as git's settings say (`uploadpackfilter.allow`,
//! `uploadpackfilter.<filter>.allow`, `uploadpackfilter.tree.maxDepth`), with git's refusals
//! and git's reaction to a malformed value; `object:type=` packs what git's packs; filters git
//! computes and Sluice does not (`sparse:oid=`, a granted `combine:`) get a clear refusal.

use crate::util::{gits, stderr, Env, FastImport};

/// stderr's messages, sorted and once each: the client and the server write to it at once, so
/// their lines interleave by timing, even a "fatal: " prefix apart from the rest of its line;
/// and the client may die of the closed pipe before it repeats the server's error as "remote
/// error: ", so that repetition is folded into the server's own line.
fn lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = (text.lines())
        .flat_map(|line| line.split("fatal: "))
        .map(|part| part.trim().trim_start_matches("remote error: ").to_owned())
        .filter(|part| !part.is_empty())
        .collect();
    lines.sort();
    lines.dedup();
    lines
}

#[test]
fn filters_are_granted_and_refused_as_git_does() {
    let settings = [
        "uploadpackfilter.allow=false",
        "uploadpackfilter.blob:none.allow=false",
        "uploadpackfilter.tree.maxDepth=0",
        "uploadpackfilter.combine.allow=false",
        "uploadpackfilter.tree.maxdepth=x",
        "uploadpackfilter.tree.maxdepth=99999999999999999999",
        "uploadpackfilter.allow=maybe",
    ];
    let filters = [
        "blob:none",
        "blob:limit=10",
        "tree:1",
        "combine:blob:none+tree:2",
        "object:type=blob",
        "sparse:oid=HEAD:x",
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", true);
        let mut stream = FastImport::new();
        stream.commit(
            "main",
            "one",
            &[("a/b", "100644", b"b\n"), ("c", "100644", b"c\n")],
        );
        env.fast_import(&src, stream.finish());
        let sluice = env!("CARGO_BIN_EXE_sluice");
        let mut n = 0;
        for setting in settings {
            for filter in filters {
                for version in ["0", "2"] {
                    let mut outcomes = Vec::new();
                    for server in [git.display().to_string(), sluice.to_owned()] {
                        n += 1;
                        let upload_pack = format!(
                            "{server} -c uploadpack.allowFilter=true -c {setting} upload-pack"
                        );
                        let target = format!("c{n}");
                        let args = [
                            "-c",
                            &format!("protocol.version={version}"),
                            "clone",
                            "-q",
                            "--bare",
                            "--no-local",
                            &format!("--filter={filter}"),
                            "-u",
                            &upload_pack,
                            src.to_str().unwrap(),
                            &target,
                        ];
                        let out = env.git_with_input(env.path(), &args, b"");
                        // Success, or not: git's client is sometimes killed by the closed pipe.
                        outcomes.push((out.status.success(), lines(&stderr(&out))));
                    }
                    let what = format!("{} v{version} {setting} {filter}", git.display());
                    let computed = !filter.starts_with("sparse");
                    let (theirs, ours) = (outcomes[0].1.join("\n"), outcomes[1].1.join("\n"));
                    if theirs.contains("bad ") {
                        // A malformed setting: the same error and exit. How the client then
                        // words the hang-up depends on where each git version reads it.
                        assert_eq!(outcomes[1].0, outcomes[0].0, "{what}");
                        assert_eq!(outcomes[1].1[0], outcomes[0].1[0], "{what}");
                    } else if !computed && ours.contains("not supported by this server") {
                        // git computes it (or fails computing it); Sluice says it does not,
                        // where git's settings grant it.
                        assert!(!theirs.contains("not supported"), "{what}: {theirs}");
                        assert!(!outcomes[1].0, "{what}");
                    } else {
                        assert_eq!(outcomes[1], outcomes[0], "{what}");
                    }
                }
            }
        }
    }
}

/// `object:type=<type>`: the wanted objects (and what wanted tags point to) and every object of
/// that type, as git's upload-pack sends them.
#[test]
fn object_type_filters_send_what_gits_send() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", true);
        let mut stream = FastImport::new();
        stream.commit(
            "main",
            "one",
            &[("a/b", "100644", b"b\n"), ("c", "100644", b"c\n")],
        );
        stream.commit("main", "two", &[("a/b", "100644", b"b2\n")]);
        stream.commit("side", "side", &[("d", "100644", b"d\n")]);
        env.fast_import(&src, stream.finish());
        env.git(&src, &["tag", "-a", "-m", "v1", "v1", "main~1"]);
        let sluice = env!("CARGO_BIN_EXE_sluice");
        for kind in ["blob", "tree", "commit", "tag"] {
            let mut listed = Vec::new();
            for (s, server) in [git.display().to_string(), sluice.to_owned()]
                .iter()
                .enumerate()
            {
                let target = env.path().join(format!("{kind}-{s}"));
                let upload_pack = format!("{server} -c uploadpack.allowFilter=true upload-pack");
                let filter = format!("--filter=object:type={kind}");
                let args = [
                    "clone",
                    "-q",
                    "--bare",
                    "--no-local",
                    &filter,
                    "-u",
                    &upload_pack,
                    src.to_str().unwrap(),
                    target.to_str().unwrap(),
                ];
                let out = env.git_with_input(env.path(), &args, b"");
                assert!(out.status.success(), "{server}: {}", stderr(&out));
                let args = ["cat-file", "--batch-all-objects", "--batch-check"];
                listed.push(String::from_utf8(env.git(&target, &args)).unwrap());
            }
            assert_eq!(listed[1], listed[0], "{} object:type={kind}", git.display());
        }
    }
}
