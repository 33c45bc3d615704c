//! fsck on arrival: `index-pack --strict` / `--fsck-objects` with git's checks, message ids and
//! severities, and `fetch.fsckObjects` / `transfer.fsckObjects` for fetch and clone. Every bad
//! object is made with git (`hash-object --literally`) and judged by git and by Sluice side by
//! side: same exit code, same messages; and Sluice leaves no file behind.

use crate::util::{gits, list_dir, stderr, Env};
use std::path::Path;

/// Writes an object of `kind` with `data` into `repo` as git would never make it; its id.
fn literally(env: &Env, repo: &Path, kind: &str, data: &[u8]) -> String {
    let args = ["hash-object", "-t", kind, "--literally", "-w", "--stdin"];
    let out = env.git_with_input(repo, &args, data);
    assert!(out.status.success(), "hash-object: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn raw(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// A tree of `(mode, name, id)` entries, in the order given.
fn tree(entries: &[(&str, &str, &str)]) -> Vec<u8> {
    let mut data = Vec::new();
    for (mode, name, id) in entries {
        data.extend_from_slice(format!("{mode} {name}\0").as_bytes());
        data.extend_from_slice(&raw(id));
    }
    data
}

/// The bad objects: a name, and what to pack (the object first, then what it refers to).
fn cases(env: &Env, repo: &Path) -> Vec<(&'static str, Vec<String>)> {
    let blob = literally(env, repo, "blob", b"hi\n");
    let empty = literally(env, repo, "tree", b"");
    let commit = |env: &Env, text: String| literally(env, repo, "commit", text.as_bytes());
    let tag = |env: &Env, text: String| literally(env, repo, "tag", text.as_bytes());
    let ident = "A <a> 1 +0000";
    let with_author =
        |author: &str| format!("tree {empty}\nauthor {author}\ncommitter {ident}\n\nm\n");
    let special = |name: &str, content: &[u8]| {
        let blob = literally(env, repo, "blob", content);
        let tree = literally(env, repo, "tree", &tree(&[("100644", name, &blob)]));
        vec![tree, blob]
    };
    let one_tree =
        |entries: &[(&str, &str, &str)]| vec![literally(env, repo, "tree", &tree(entries))];
    vec![
        ("zero-padded mode", one_tree(&[("040000", "d", &empty)])),
        ("dotgit", one_tree(&[("100644", ".GIT", &blob)])),
        ("ntfs short dotgit", one_tree(&[("100644", "git~1", &blob)])),
        ("hfs dotgit", one_tree(&[("100644", ".g\u{200c}it", &blob)])),
        ("dotdot", one_tree(&[("100644", "..", &blob)])),
        ("full path", one_tree(&[("100644", "a/b", &blob)])),
        ("null id", one_tree(&[("100644", "a", &"0".repeat(40))])),
        (
            "unsorted",
            one_tree(&[("100644", "b", &blob), ("100644", "a", &blob)]),
        ),
        (
            "duplicate",
            one_tree(&[("40000", "a", &empty), ("100644", "a", &blob)]),
        ),
        ("group-writable mode", one_tree(&[("100664", "a", &blob)])),
        (
            "gitmodules symlink",
            one_tree(&[("120000", ".gitmodules", &blob)]),
        ),
        (
            "gitignore symlink",
            one_tree(&[("120000", ".gitignore", &blob)]),
        ),
        ("bad email", vec![commit(env, with_author("A <a 1 +0000"))]),
        ("no name", vec![commit(env, with_author("<a> 1 +0000"))]),
        (
            "zero-padded date",
            vec![commit(env, with_author("A <a> 01 +0000"))],
        ),
        (
            "date overflow",
            vec![commit(env, with_author("A <a> 99999999999999999999 +0000"))],
        ),
        (
            "bad time zone",
            vec![commit(env, with_author("A <a> 1 +00x0"))],
        ),
        (
            "no author",
            vec![commit(
                env,
                format!("tree {empty}\ncommitter {ident}\n\nm\n"),
            )],
        ),
        (
            "two authors",
            vec![commit(
                env,
                format!("tree {empty}\nauthor {ident}\nauthor {ident}\ncommitter {ident}\n\nm\n"),
            )],
        ),
        (
            "NUL in header",
            vec![commit(
                env,
                format!("tree {empty}\nauthor {ident}\ncommitter {ident}\0\n\nm\n"),
            )],
        ),
        (
            "unterminated",
            vec![commit(
                env,
                format!("tree {empty}\nauthor {ident}\ncommitter {ident}"),
            )],
        ),
        (
            "NUL in body",
            vec![commit(
                env,
                format!("tree {empty}\nauthor {ident}\ncommitter {ident}\n\nm\0\n"),
            )],
        ),
        (
            "no tagger",
            vec![tag(env, format!("object {blob}\ntype blob\ntag t\n\nm\n"))],
        ),
        (
            "bad tag name",
            vec![tag(
                env,
                format!("object {blob}\ntype blob\ntag a..b\ntagger {ident}\n\nm\n"),
            )],
        ),
        (
            "submodule url option",
            special(
                ".gitmodules",
                b"[submodule \"a\"]\n\tpath = a\n\turl = -evil\n",
            ),
        ),
        (
            "submodule path option",
            special(
                ".gitmodules",
                b"[submodule \"a\"]\n\tpath = -a\n\turl = https://h/x\n",
            ),
        ),
        (
            "submodule update command",
            special(
                ".gitmodules",
                b"[submodule \"a\"]\n\tpath = a\n\turl = https://h/x\n\tupdate = !rm x\n",
            ),
        ),
        (
            "submodule name escape",
            special(
                ".gitmodules",
                b"[submodule \"../a\"]\n\tpath = a\n\turl = https://h/x\n",
            ),
        ),
        (
            "attributes line",
            special(".gitattributes", "a".repeat(3000).as_bytes()),
        ),
        (
            "tree as gitmodules",
            one_tree(&[("40000", ".gitmodules", &empty)])
                .into_iter()
                .chain([empty.clone()])
                .collect(),
        ),
        ("good", vec![commit(env, with_author(ident))]),
    ]
    .into_iter()
    // Everything the bad objects refer to comes along, so that --strict finds it all.
    .map(|(case, mut ids)| {
        ids.extend([blob.clone(), empty.clone()]);
        ids.dedup();
        (case, ids)
    })
    .collect()
}

/// Runs `index-pack --stdin <flags>` on `pack` in a new repository: exit code and stderr, and
/// the files left in `objects/pack` (git's failed runs leave a `tmp_pack_*`, not counted).
fn index(
    env: &Env,
    sluice: bool,
    name: &str,
    flags: &[&str],
    pack: &[u8],
) -> (Option<i32>, String, Vec<String>) {
    let repo = env.init(name, true);
    let mut args = vec!["index-pack", "--stdin"];
    args.extend_from_slice(flags);
    let out = crate::util::run_with_input(env.sluice_or_git_command(sluice, &repo, &args), pack);
    let left: Vec<String> = list_dir(&repo.join("objects/pack"))
        .into_iter()
        .filter(|name| !name.starts_with("tmp_pack_") && !name.ends_with(".rev"))
        .collect();
    (out.status.code(), stderr(&out), left)
}

#[test]
fn index_pack_judges_objects_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", true);
        let skip = env.path().join("skip");
        for (n, (case, ids)) in cases(&env, &src).into_iter().enumerate() {
            let list = ids.join("\n") + "\n";
            let out =
                env.git_with_input(&src, &["pack-objects", "-q", "--stdout"], list.as_bytes());
            let pack = out.stdout;
            std::fs::write(&skip, format!("# refused\n{}\n", ids[0])).unwrap();
            let skip_list = format!("--strict=skiplist={}", skip.display());
            let runs: [&[&str]; 6] = [
                &["--fsck-objects"],
                &["--strict"],
                &["--strict=zeroPaddedFilemode=ignore,HASDOTGIT=warn,badEmail=warn"],
                &["--strict=badFilemode=error,missingTaggerEntry=error"],
                &[&skip_list],
                &["--strict=noSuchMessage=error"],
            ];
            for (r, flags) in runs.iter().enumerate() {
                let theirs = index(&env, false, &format!("g{n}-{r}"), flags, &pack);
                let ours = index(&env, true, &format!("s{n}-{r}"), flags, &pack);
                assert_eq!(
                    ours.0,
                    theirs.0,
                    "{} {case} {flags:?}: exit code; ours: {}",
                    git.display(),
                    ours.1
                );
                assert_eq!(
                    ours.1,
                    theirs.1,
                    "{} {case} {flags:?}: messages",
                    git.display()
                );
                // A refused pack leaves nothing (git's leaves a tmp_pack, and after a late
                // refusal, of a `.gitmodules` that is no blob, even the pack and its index).
                match theirs.0 {
                    Some(0) => assert_eq!(ours.2, theirs.2, "{case} {flags:?}: files"),
                    _ => assert!(ours.2.is_empty(), "{case} {flags:?}: left {:?}", ours.2),
                }
            }
        }
    }
}

/// Refs of a repository, as git lists them.
fn refs(env: &Env, repo: &Path) -> String {
    String::from_utf8(env.git(repo, &["for-each-ref"])).unwrap()
}

/// `transfer.fsckObjects` / `fetch.fsckObjects` make clone and fetch refuse a pack with a bad
/// object as git's do: the clone leaves no directory, the fetch moves no ref and keeps no
/// file; `fetch.fsck.<msg-id>` and `fetch.fsck.skipList` let it in, as git.
#[test]
fn clone_and_fetch_judge_objects_when_asked_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        std::fs::write(src.join("f"), "one\n").unwrap();
        env.git(&src, &["add", "f"]);
        env.git(&src, &["commit", "-q", "-m", "one"]);
        let url = format!("file://{}", src.display());
        for name in ["g", "s"] {
            env.git(env.path(), &["clone", "-q", &url, name]);
        }
        // A commit whose tree has a zero-padded mode: a warning to git, refused when strict.
        let blob = literally(&env, &src, "blob", b"one\n");
        let empty = literally(&env, &src, "tree", b"");
        let bad_tree = tree(&[("040000", "d", &empty), ("100644", "f", &blob)]);
        let bad_tree = literally(&env, &src, "tree", &bad_tree);
        let bad = env.git(&src, &["commit-tree", &bad_tree, "-p", "HEAD", "-m", "bad"]);
        let bad = String::from_utf8(bad).unwrap();
        env.git(&src, &["update-ref", "refs/heads/main", bad.trim()]);
        let skip = env.path().join("skip");
        std::fs::write(&skip, format!("{bad_tree}\n")).unwrap();
        let skip = format!("fetch.fsck.skipList={}", skip.display());
        // git's fetch reads fetch.fsck.*, not fsck.* (which is `git fsck`'s): neither does ours.
        let fsck_only = [
            "-c",
            "fetch.fsckObjects=true",
            "-c",
            "fsck.zeroPaddedFilemode=ignore",
        ];
        let settings: [(&[&str], bool); 5] = [
            (&["-c", "transfer.fsckObjects=true"], false),
            (&fsck_only, false),
            (&["-c", "fetch.fsckObjects=true"], false),
            (
                &[
                    "-c",
                    "transfer.fsckObjects=true",
                    "-c",
                    "fetch.fsck.zeroPaddedFilemode=ignore",
                ],
                true,
            ),
            (&["-c", "fetch.fsckObjects=true", "-c", &skip], true),
        ];
        for (n, (settings, passes)) in settings.iter().enumerate() {
            let mut outcomes = Vec::new();
            for sluice in [false, true] {
                let side = if sluice { "s" } else { "g" };
                let target = format!("clone-{side}{n}");
                let mut args = settings.to_vec();
                args.extend(["clone", "-q", &url, &target]);
                let cloned = env.sluice_or_git(sluice, env.path(), &args);
                let clone_dir = env.path().join(&target);
                let clone_refs = clone_dir.exists().then(|| refs(&env, &clone_dir));

                let repo = env.path().join(side);
                let packs = list_dir(&repo.join(".git/objects/pack"));
                let mut args = settings.to_vec();
                args.extend(["fetch", "-q", "origin"]);
                let fetched = env.sluice_or_git(sluice, &repo, &args);
                let after = refs(&env, &repo);
                if fetched.status.success() {
                    // Back to where it was, for the next settings.
                    env.git(&repo, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
                } else if sluice {
                    // git's failed fetch leaves a tmp_pack behind; Sluice's leaves nothing.
                    let left = list_dir(&repo.join(".git/objects/pack"));
                    assert_eq!(left, packs, "a refused fetch kept files");
                }
                let said = stderr(&cloned) + &stderr(&fetched);
                if sluice && !passes {
                    assert!(said.contains("zeroPaddedFilemode"), "{said}");
                }
                outcomes.push((
                    cloned.status.code(),
                    clone_refs,
                    fetched.status.code(),
                    after,
                ));
            }
            assert_eq!(outcomes[1], outcomes[0], "{} {settings:?}", git.display());
            assert_eq!(outcomes[0].0 == Some(0), *passes, "{settings:?}");
        }
    }
}

/// What fsck finds that does not refuse the pack (an `info` message, such as a group-writable
/// mode) lets the clone and the fetch through, and is said as git says it.
#[test]
fn clone_and_fetch_say_what_fsck_lets_through_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        let blob = literally(&env, &src, "blob", b"one\n");
        let odd = literally(&env, &src, "tree", &tree(&[("100664", "f", &blob)]));
        let commit = env.git(&src, &["commit-tree", &odd, "-m", "odd"]);
        env.git(
            &src,
            &[
                "update-ref",
                "refs/heads/main",
                String::from_utf8(commit).unwrap().trim(),
            ],
        );
        env.git(&src, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        let url = format!("file://{}", src.display());
        let mut said = Vec::new();
        for sluice in [false, true] {
            let target = format!("c-{sluice}");
            let args = [
                "-c",
                "transfer.fsckObjects=true",
                "clone",
                "-q",
                "-n",
                &url,
                &target,
            ];
            let out = env.sluice_or_git(sluice, env.path(), &args);
            let warnings: Vec<String> = stderr(&out)
                .lines()
                .filter(|line| line.starts_with("warning: object"))
                .map(str::to_owned)
                .collect();
            said.push((out.status.code(), warnings));
        }
        assert_eq!(said[1], said[0], "{}", git.display());
        assert_eq!(said[0].1.len(), 1, "git warned once");
    }
}
