//! `sluice checkout` and `checkout-index` leave the same work tree and index as git, for every
//! combination of attributes and line-ending settings, for branch switches, and refuse every
//! tree git refuses without writing anything.

use crate::util::{noise, python, stderr, Env, FastImport};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A work tree's content: path → (kind, executable, bytes or link target). `.git` excluded.
fn snapshot(root: &Path) -> BTreeMap<String, (char, bool, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if relative == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(
                    relative,
                    ('l', false, target.into_os_string().into_encoded_bytes()),
                );
            } else if meta.is_dir() {
                out.insert(relative, ('d', false, Vec::new()));
                stack.push(path);
            } else {
                let exec = meta.permissions().mode() & 0o111 != 0;
                out.insert(relative, ('f', exec, std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

pub(crate) fn assert_same_trees(ours: &Path, theirs: &Path) {
    let (a, b) = (snapshot(ours), snapshot(theirs));
    let keys_a: Vec<&String> = a.keys().collect();
    let keys_b: Vec<&String> = b.keys().collect();
    assert_eq!(keys_a, keys_b, "different paths");
    for (path, value) in &a {
        assert!(
            value == &b[path],
            "{path} differs: {:?} vs {:?}",
            value,
            &b[path]
        );
    }
}

/// git's view of a work tree after a checkout: status and the staged entries.
pub(crate) fn git_view(env: &Env, repo: &Path) -> (String, String) {
    let status = String::from_utf8(env.git(repo, &["status", "--porcelain", "--ignored"])).unwrap();
    let staged = String::from_utf8(env.git(repo, &["ls-files", "-s"])).unwrap();
    (status, staged)
}

/// git's view by content alone. Files whose conversion does not round-trip (an expanded
/// `$Id: old $`, a smudge filter whose clean side is not its inverse) look modified to git
/// when their index entry is racily clean, which depends on the clock, for git's own
/// checkout too; after `--really-refresh` every file is judged by content.
fn git_content_view(env: &Env, repo: &Path) -> (String, String) {
    env.git(repo, &["read-tree", "HEAD"]);
    git_view(env, repo)
}

fn assert_clean(env: &Env, repo: &Path) {
    assert_eq!(String::from_utf8(env.git(repo, &["diff"])).unwrap(), "");
    let refresh = env
        .git_command(repo, &["update-index", "--refresh"])
        .output()
        .unwrap();
    assert!(
        refresh.status.success(),
        "refresh: {}",
        String::from_utf8_lossy(&refresh.stdout)
    );
    assert!(
        refresh.stdout.is_empty(),
        "refresh found work: {}",
        String::from_utf8_lossy(&refresh.stdout)
    );
}

/// `git clone -q -b <branch> <src> <dest>`, checked out by git.
fn git_clone(env: &Env, src: &Path, dest: &Path, branch: &str) {
    env.git(
        env.path(),
        &[
            "clone",
            "-q",
            "-b",
            branch,
            src.to_str().unwrap(),
            dest.to_str().unwrap(),
        ],
    );
}

/// Clones `src` twice with the same `-c` settings: once checked out by git, once by sluice.
pub(crate) fn clone_both(
    env: &Env,
    src: &Path,
    config: &[&str],
    branch: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let theirs = env
        .path()
        .join(format!("git-{}", config.join("-").replace(['=', '.'], "_")));
    let ours = env.path().join(format!(
        "sluice-{}",
        config.join("-").replace(['=', '.'], "_")
    ));
    let mut args = vec!["clone", "-q"];
    for c in config {
        args.push("-c");
        args.push(c);
    }
    let mut git_args = args.clone();
    git_args.extend([
        "-b",
        branch,
        src.to_str().unwrap(),
        theirs.to_str().unwrap(),
    ]);
    env.git(env.path(), &git_args);
    let mut sluice_args = args;
    sluice_args.extend([
        "--no-checkout",
        "-b",
        branch,
        src.to_str().unwrap(),
        ours.to_str().unwrap(),
    ]);
    env.git(env.path(), &sluice_args);
    // Local branches for every remote one, so that switches name them directly.
    for repo in [&theirs, &ours] {
        let remote = String::from_utf8(env.git(
            repo,
            &[
                "for-each-ref",
                "--format=%(refname:lstrip=3)",
                "refs/remotes/origin",
            ],
        ))
        .unwrap();
        for name in remote.lines().filter(|n| *n != "HEAD" && *n != branch) {
            env.git(repo, &["branch", "-q", name, &format!("origin/{name}")]);
        }
    }
    let out = env.sluice(&ours, &["checkout", branch], b"");
    assert!(out.status.success(), "sluice checkout: {}", stderr(&out));
    (ours, theirs)
}

fn tree_repo(env: &Env) -> std::path::PathBuf {
    let src = env.init("src", true);
    let mut fi = FastImport::new();
    let big = noise(9, 300_000);
    let gitlink = "1234567890123456789012345678901234567890";
    fi.commit(
        "main",
        "tree",
        &[
            ("README", "100644", b"hello\n"),
            ("empty", "100644", b""),
            ("bin/run.sh", "100755", b"#!/bin/sh\necho hi\n"),
            ("deep/a/b/c/d/e/f.txt", "100644", b"deep\n"),
            ("link-to-readme", "120000", b"README"),
            ("dangling", "120000", b"does/not/exist"),
            ("deep/a/rel", "120000", b"../../README"),
            ("big.bin", "100644", &big),
            ("a-b", "100644", b"sorts before a/\n"),
            ("a/x", "100644", b"in a\n"),
            ("sp ace/na\"me", "100644", b"odd names\n"),
        ],
    );
    // A gitlink: fast-import takes it as a commit id.
    let mut stream = fi.finish().to_vec();
    stream.extend_from_slice(format!("commit refs/heads/main\ncommitter C <c@example.com> 1700000999 +0000\ndata 3\nsub\nM 160000 {gitlink} sub/module\n\n").as_bytes());
    env.fast_import(&src, &stream);
    src
}

#[test]
fn fresh_checkout_matches_git() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let src = tree_repo(&env);
        let (ours, theirs) = clone_both(&env, &src, &[], "main");
        assert_same_trees(&ours, &theirs);
        assert_eq!(git_view(&env, &ours), git_view(&env, &theirs));
        assert_eq!(git_view(&env, &ours).0, "");
        assert_clean(&env, &ours);
        // The index git reads back has a valid cache tree and every entry git has.
        env.git(&ours, &["fsck", "--strict", "--no-dangling"]);
        let tree = String::from_utf8(env.git(&ours, &["write-tree"])).unwrap();
        let head_tree = String::from_utf8(env.git(&ours, &["rev-parse", "HEAD^{tree}"])).unwrap();
        assert_eq!(tree, head_tree);
    }
}

#[test]
fn big_blobs_are_streamed_to_the_same_files() {
    let env = Env::new();
    let src = tree_repo(&env);
    let (ours, theirs) = clone_both(&env, &src, &["core.bigFileThreshold=100k"], "main");
    assert_same_trees(&ours, &theirs);
    assert_eq!(git_view(&env, &ours), git_view(&env, &theirs));
    assert_clean(&env, &ours);
}

#[test]
fn symlinks_false_writes_links_as_files() {
    let env = Env::new();
    let src = tree_repo(&env);
    let (ours, theirs) = clone_both(&env, &src, &["core.symlinks=false"], "main");
    assert_same_trees(&ours, &theirs);
    assert_eq!(git_view(&env, &ours), git_view(&env, &theirs));
}

/// The attribute matrix: text × eol attributes on contents with LF, CRLF, mixed endings,
/// binary and UTF-16 data, plus ident, working-tree-encoding and filter drivers.
fn attribute_repo(env: &Env) -> std::path::PathBuf {
    let src = env.init("attrs", true);
    let contents: [(&str, &[u8]); 5] = [
        ("lf", b"one\ntwo\nthree\n"),
        ("crlf", b"one\r\ntwo\r\nthree\r\n"),
        ("mixed", b"one\ntwo\r\nthree\n"),
        ("binary", b"PNG\0\x01\x02\nmore\n"),
        ("utf16", b"\xff\xfeh\0i\0\n\0"),
    ];
    let texts = [
        "",
        "text",
        "text=auto",
        "-text",
        "crlf",
        "-crlf",
        "crlf=input",
    ];
    let eols = ["", "eol=lf", "eol=crlf"];
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut attributes = String::new();
    for (t, text) in texts.iter().enumerate() {
        for (e, eol) in eols.iter().enumerate() {
            let dir = format!("t{t}e{e}");
            attributes.push_str(&format!("{dir}/* {text} {eol}\n"));
            for (name, content) in contents {
                files.push((format!("{dir}/{name}"), content.to_vec()));
            }
        }
    }
    attributes.push_str("ident/* ident\nenc/* working-tree-encoding=UTF-16LE-BOM\nfilt/* filter=upper\nproc/* filter=rot\n");
    files.push((
        "ident/a.c".into(),
        b"/* $Id$ */\nint x; /* $Id: old $ */\n".to_vec(),
    ));
    files.push(("enc/u.txt".into(), "h\u{e9}llo\n".as_bytes().to_vec()));
    files.push(("filt/f.txt".into(), b"make me loud\n".to_vec()));
    files.push(("proc/p.txt".into(), b"rot me please\n".to_vec()));
    files.push(("plain/lf".into(), b"a\nb\n".to_vec()));
    files.push(("plain/crlf".into(), b"a\r\nb\r\n".to_vec()));
    files.push((".gitattributes".into(), attributes.into_bytes()));
    let refs: Vec<(&str, &str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), "100644", c.as_slice()))
        .collect();
    let mut fi = FastImport::new();
    fi.commit("main", "matrix", &refs);
    env.fast_import(&src, fi.finish());
    src
}

/// A long-running filter process (the protocol git-lfs speaks) that rot13s on smudge.
const ROT13_PROCESS: &str = r#"import sys, codecs
inp, out = sys.stdin.buffer, sys.stdout.buffer
def read_pkt():
    head = inp.read(4)
    if not head: return None
    n = int(head, 16)
    return b"" if n == 0 else inp.read(n - 4)
def read_list():
    items = []
    while True:
        p = read_pkt()
        if p is None: sys.exit(0)
        if p == b"": return items
        items.append(p)
def write(data): out.write(b"%04x" % (len(data) + 4) + data)
def flush(): out.write(b"0000"); out.flush()
read_list(); write(b"git-filter-server\n"); write(b"version=2\n"); flush()
read_list(); write(b"capability=clean\n"); write(b"capability=smudge\n"); flush()
while True:
    header = read_list()
    content = b""
    while True:
        p = read_pkt()
        if p is None: sys.exit(0)
        if p == b"": break
        content += p
    result = codecs.encode(content.decode(), "rot13").encode()
    write(b"status=success\n"); flush()
    write(result); flush()
    flush()
"#;

fn configure_filters(env: &Env) {
    let script = env.path().join("rot13.py");
    std::fs::write(&script, ROT13_PROCESS).unwrap();
    let home = env.path().join("home");
    env.git(
        &home,
        &["config", "--global", "filter.upper.smudge", "tr a-z A-Z"],
    );
    env.git(&home, &["config", "--global", "filter.upper.clean", "cat"]);
    env.git(
        &home,
        &[
            "config",
            "--global",
            "filter.rot.process",
            &format!("{} {}", python(), script.display()),
        ],
    );
    env.git(&home, &["config", "--global", "filter.rot.clean", "cat"]);
}

#[test]
fn attribute_matrix_matches_git() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        configure_filters(&env);
        let src = attribute_repo(&env);
        for config in [
            &["core.autocrlf=false"][..],
            &["core.autocrlf=true"],
            &["core.autocrlf=input"],
            &["core.eol=crlf"],
            &["core.autocrlf=false", "core.eol=lf"],
        ] {
            let (ours, theirs) = clone_both(&env, &src, config, "main");
            assert_same_trees(&ours, &theirs);
            assert_eq!(
                git_content_view(&env, &ours),
                git_content_view(&env, &theirs),
                "{config:?}"
            );
        }
    }
}

pub(crate) fn history_for_switch(env: &Env) -> std::path::PathBuf {
    let src = env.init("sw", true);
    let mut fi = FastImport::new();
    fi.commit(
        "one",
        "first",
        &[
            ("keep", "100644", b"same in both\n"),
            ("change", "100644", b"version one\n"),
            ("gone", "100644", b"removed later\n"),
            ("becomes-dir", "100644", b"a file first\n"),
            ("dir-becomes-file/x", "100644", b"in a dir\n"),
            ("mode", "100644", b"#!/bin/sh\n"),
            ("link", "120000", b"keep"),
            (".gitattributes", "100644", b"*.crlf text eol=crlf\n"),
            ("t.crlf", "100644", b"a\nb\n"),
        ],
    );
    let mut stream = fi.finish().to_vec();
    stream.extend_from_slice(b"reset refs/heads/two\nfrom refs/heads/one\n\n");
    let mut fi2 = FastImport::new();
    fi2.commit(
        "two",
        "second",
        &[
            ("change", "100644", b"version two\n"),
            ("new/file", "100644", b"added\n"),
            ("becomes-dir/inside", "100644", b"now a dir\n"),
            ("dir-becomes-file", "100644", b"now a file\n"),
            ("mode", "100755", b"#!/bin/sh\n"),
            ("link", "120000", b"change"),
            ("t.crlf", "100644", b"a\nb\nc\n"),
        ],
    );
    let second = String::from_utf8(fi2.finish().to_vec()).unwrap();
    // fast-import commits build on the branch tip: "two" starts from "one", deleting files.
    let second = second.replacen(
        "data 6\nsecond\n",
        "data 6\nsecond\nfrom refs/heads/one\nD gone\nD becomes-dir\nD dir-becomes-file/x\n",
        1,
    );
    stream.extend_from_slice(second.as_bytes());
    env.fast_import(&src, &stream);
    src
}

#[test]
fn branch_switch_matches_git() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let src = history_for_switch(&env);
        let (ours, theirs) = clone_both(&env, &src, &[], "one");
        for target in ["two", "one", "two"] {
            env.git(&theirs, &["checkout", "-q", target]);
            let out = env.sluice(&ours, &["checkout", target], b"");
            assert!(out.status.success(), "{}", stderr(&out));
            assert_same_trees(&ours, &theirs);
            assert_eq!(
                git_view(&env, &ours),
                git_view(&env, &theirs),
                "after switching to {target}"
            );
            assert_eq!(git_view(&env, &ours).0, "");
            assert_clean(&env, &ours);
            assert_eq!(
                env.git(&ours, &["symbolic-ref", "HEAD"]),
                env.git(&theirs, &["symbolic-ref", "HEAD"])
            );
        }
        // A detached checkout by id.
        let id = String::from_utf8(env.git(&ours, &["rev-parse", "one"])).unwrap();
        let out = env.sluice(&ours, &["checkout", id.trim()], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(env.git(&ours, &["rev-parse", "HEAD"]), id.as_bytes());
        assert_eq!(git_view(&env, &ours).0, "");
    }
}

/// Runs `checkout <target>` in both clones and checks that Sluice refuses it as git does:
/// exit code 1 and the same message.
pub(crate) fn assert_refused_as_git(env: &Env, ours: &Path, theirs: &Path, target: &str) {
    let theirs_out = env
        .git_command(theirs, &["checkout", target])
        .output()
        .unwrap();
    let ours_out = env.sluice(ours, &["checkout", target], b"");
    assert_eq!(ours_out.status.code(), theirs_out.status.code());
    assert_eq!(ours_out.status.code(), Some(1));
    assert_eq!(
        stderr(&ours_out),
        String::from_utf8_lossy(&theirs_out.stderr)
    );
}

#[test]
fn local_changes_are_protected_unless_forced() {
    let env = Env::new();
    let src = history_for_switch(&env);
    let (ours, theirs) = clone_both(&env, &src, &[], "one");
    for repo in [&ours, &theirs] {
        std::fs::write(repo.join("change"), "local edit\n").unwrap();
        std::fs::write(repo.join("keep"), "edit of an unchanged file\n").unwrap();
    }
    assert_refused_as_git(&env, &ours, &theirs, "two");
    assert_same_trees(&ours, &theirs);

    // An untracked file in the way.
    std::fs::write(ours.join("change"), "version one\n").unwrap();
    std::fs::write(theirs.join("change"), "version one\n").unwrap();
    for repo in [&ours, &theirs] {
        std::fs::create_dir_all(repo.join("new")).unwrap();
        std::fs::write(repo.join("new/file"), "untracked\n").unwrap();
    }
    assert_refused_as_git(&env, &ours, &theirs, "two");

    // -f discards everything, as git's does; an edit of an unchanged file is kept without -f.
    env.git(&theirs, &["checkout", "-q", "-f", "two"]);
    let out = env.sluice(&ours, &["checkout", "-f", "two"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_same_trees(&ours, &theirs);
    assert_eq!(git_view(&env, &ours), git_view(&env, &theirs));
}

#[test]
fn checkout_index_matches_git() {
    let env = Env::new();
    let src = tree_repo(&env);
    let (ours, theirs) = clone_both(&env, &src, &[], "main");
    env.git(&theirs, &["checkout-index", "-a", "--prefix=export/"]);
    let out = env.sluice(&ours, &["checkout-index", "-a", "--prefix=export/"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_same_trees(&ours.join("export"), &theirs.join("export"));
    // Unchanged files are left alone; without -f a changed one is too, with git's message
    // and exit code; with -f it is rewritten.
    for repo in [&ours, &theirs] {
        std::fs::write(repo.join("README"), "changed\n").unwrap();
    }
    let theirs_out = env
        .git_command(&theirs, &["checkout-index", "-a"])
        .output()
        .unwrap();
    let out = env.sluice(&ours, &["checkout-index", "-a"], b"");
    assert_eq!(out.status.code(), theirs_out.status.code());
    assert_eq!(stderr(&out), String::from_utf8_lossy(&theirs_out.stderr));
    assert!(stderr(&out).contains("README already exists"));
    assert_eq!(std::fs::read(ours.join("README")).unwrap(), b"changed\n");
    let missing = ["checkout-index", "README", "no-such-file"];
    let theirs_out = env.git_command(&theirs, &missing).output().unwrap();
    let out = env.sluice(&ours, &missing, b"");
    assert_eq!(out.status.code(), theirs_out.status.code());
    assert_eq!(stderr(&out), String::from_utf8_lossy(&theirs_out.stderr));
    let out = env.sluice(&ours, &["checkout-index", "-a", "-f"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(ours.join("README")).unwrap(), b"hello\n");
    assert_eq!(git_view(&env, &ours).0, "?? export/\n");
}

/// checkout-index's options beside git's: `-u` records the new files' stat data in the index
/// (and, as git, leaves the index as it was when a file failed), without it the index is not
/// written; `-n` writes only files that are there; `--stdin` (`-z`: NUL-separated) reads the
/// paths, refused beside `--all` or named files; `--ignore-skip-worktree-bits`. Compared: exit
/// code, stderr, whether the index file changed, and `git status` after.
#[test]
fn checkout_index_options_match_git() {
    let env = Env::new();
    let src = tree_repo(&env);
    let seed = env.path().join("seed");
    let (from, to) = (src.to_str().unwrap(), seed.to_str().unwrap());
    env.git(env.path(), &["clone", "-q", "-b", "main", from, to]);
    std::fs::write(seed.join("README"), "changed\n").unwrap();
    std::fs::remove_file(seed.join("empty")).unwrap();
    std::fs::remove_file(seed.join("a/x")).unwrap();
    let cases: [(&[&str], &[u8]); 10] = [
        (&["-a"], b""),
        (&["-u", "-a"], b""),
        (&["-u", "-a", "-f"], b""),
        (&["-u", "empty"], b""),
        (&["-n", "-a", "-f"], b""),
        (&["--stdin"], b"empty\na/x\n"),
        (&["-z", "--stdin", "-u"], b"empty\0a/x\0"),
        (&["-a", "--stdin"], b""),
        (&["--stdin", "README"], b""),
        (&["--ignore-skip-worktree-bits", "-a", "-f"], b""),
    ];
    for (args, input) in cases {
        let [theirs, ours] = [false, true].map(|sluice| {
            let repo = env.path().join(format!("index-{sluice}"));
            let _ = std::fs::remove_dir_all(&repo);
            crate::util::copy_tree(&seed, &repo);
            let before = std::fs::read(repo.join(".git/index")).unwrap();
            let all = [&["checkout-index"][..], args].concat();
            let command = match sluice {
                true => env.sluice_command(&repo, &all),
                false => env.git_command(&repo, &all),
            };
            let out = crate::util::run_with_input(command, input);
            let index_changed = std::fs::read(repo.join(".git/index")).unwrap() != before;
            let status = env.git(&repo, &["status", "--porcelain"]);
            let status = String::from_utf8(status).unwrap();
            (out.status.code(), stderr(&out), index_changed, status)
        });
        assert_eq!(ours, theirs, "{args:?}");
    }
}

/// One entry of a hand-made tree: mode, name, id.
type TreeLine<'a> = (&'a str, Vec<u8>, String);

/// Writes a tree object git's own tools would refuse to build, with `hash-object --literally`.
fn literal_tree(env: &Env, repo: &Path, entries: &[(&str, &[u8], &str)]) -> String {
    let mut data = Vec::new();
    for (mode, name, id) in entries {
        data.extend_from_slice(mode.as_bytes());
        data.push(b' ');
        data.extend_from_slice(name);
        data.push(0);
        let id = sluice_object::ObjectId::from_hex(sluice_object::HashKind::Sha1, id.as_bytes())
            .unwrap();
        data.extend_from_slice(id.as_bytes());
    }
    let out = env.git_with_input(
        repo,
        &["hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
        &data,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn hostile_trees_are_refused_and_nothing_is_written() {
    let env = Env::new();
    let repo = env.init("victim", false);
    let blob = String::from_utf8(
        env.git_with_input(&repo, &["hash-object", "-w", "--stdin"], b"payload\n")
            .stdout,
    )
    .unwrap();
    let blob = blob.trim();
    let outside = env.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let link = String::from_utf8(
        env.git_with_input(
            &repo,
            &["hash-object", "-w", "--stdin"],
            outside.to_str().unwrap().as_bytes(),
        )
        .stdout,
    )
    .unwrap();
    let link = link.trim();
    let inner = literal_tree(&env, &repo, &[("100644", b"config", blob)]);
    let file_tree = literal_tree(&env, &repo, &[("100644", b"file", blob)]);
    let cases: Vec<(&str, Vec<TreeLine>)> = vec![
        ("dot-dot", vec![("40000", b"..".to_vec(), inner.clone())]),
        ("dot", vec![("40000", b".".to_vec(), inner.clone())]),
        (
            "empty name",
            vec![("100644", b"".to_vec(), blob.to_owned())],
        ),
        (".git", vec![("40000", b".git".to_vec(), inner.clone())]),
        (".GIT", vec![("40000", b".GIT".to_vec(), inner.clone())]),
        ("git~1", vec![("40000", b"git~1".to_vec(), inner.clone())]),
        (
            ".git with space",
            vec![("40000", b".git ".to_vec(), inner.clone())],
        ),
        (
            ".git with dots",
            vec![("40000", b".git..".to_vec(), inner.clone())],
        ),
        (
            "HFS ignorable",
            vec![("40000", ".g\u{200c}it".as_bytes().to_vec(), inner.clone())],
        ),
        (
            "backslash",
            vec![("100644", b"a\\b".to_vec(), blob.to_owned())],
        ),
        (
            "nested .git",
            vec![(
                "40000",
                b"sub".to_vec(),
                literal_tree(&env, &repo, &[("40000", b".git", &inner)]),
            )],
        ),
        (
            "symlink then write through it",
            vec![
                ("120000", b"a".to_vec(), link.to_owned()),
                ("40000", b"a".to_vec(), file_tree.clone()),
            ],
        ),
        (
            "a name holding a slash, through a symlink",
            vec![
                ("120000", b"a".to_vec(), link.to_owned()),
                ("100644", b"a/file".to_vec(), blob.to_owned()),
            ],
        ),
        (
            "a name holding a slash, beside the same path in a subtree",
            vec![
                ("100644", b"sub/file".to_vec(), blob.to_owned()),
                ("40000", b"sub".to_vec(), file_tree.clone()),
            ],
        ),
        (
            "symlinked .gitmodules",
            vec![("120000", b".gitmodules".to_vec(), link.to_owned())],
        ),
        ("bad mode", vec![("100666", b"x".to_vec(), blob.to_owned())]),
    ];
    for (name, entries) in cases {
        let entries: Vec<(&str, &[u8], &str)> = entries
            .iter()
            .map(|(m, n, i)| (*m, n.as_slice(), i.as_str()))
            .collect();
        let tree = literal_tree(&env, &repo, &entries);
        let commit = String::from_utf8(
            env.git_with_input(&repo, &["commit-tree", &tree], b"hostile\n")
                .stdout,
        )
        .unwrap();
        let out = env.sluice(&repo, &["checkout", commit.trim()], b"");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(128), "{name}: {err}");
        assert!(err.starts_with("fatal: "), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        let written: Vec<String> = crate::util::list_dir(&repo)
            .into_iter()
            .filter(|n| n != ".git")
            .collect();
        assert!(written.is_empty(), "{name}: wrote {written:?}");
        assert!(
            crate::util::list_dir(&outside).is_empty(),
            "{name}: wrote outside the work tree"
        );
        assert!(
            !repo.join(".git/config.lock").exists() && !repo.join(".git/index").exists(),
            "{name}"
        );
    }
    env.git(&repo, &["fsck", "--no-dangling", "--connectivity-only"]);
}

#[test]
fn remote_branch_is_checked_out_as_a_new_tracking_branch() {
    let env = Env::new();
    let src = history_for_switch(&env);
    let ours = env.path().join("ours");
    let theirs = env.path().join("theirs");
    git_clone(&env, &src, &theirs, "one");
    git_clone(&env, &src, &ours, "one");
    let theirs_out = env
        .git_command(&theirs, &["checkout", "two"])
        .output()
        .unwrap();
    let ours_out = env.sluice(&ours, &["checkout", "two"], b"");
    assert!(ours_out.status.success(), "{}", stderr(&ours_out));
    assert_eq!(
        stderr(&ours_out),
        String::from_utf8_lossy(&theirs_out.stderr)
    );
    assert_eq!(ours_out.stdout, theirs_out.stdout);
    assert_same_trees(&ours, &theirs);
    let config = |repo: &Path| env.git(repo, &["config", "--get-regexp", "^branch\\."]);
    assert_eq!(config(&ours), config(&theirs));
    assert_eq!(
        env.git(&ours, &["symbolic-ref", "HEAD"]),
        b"refs/heads/two\n"
    );
    assert_eq!(git_view(&env, &ours).0, "");
}

/// Whether a remote's branch named alone is guessed: `--no-guess` and `checkout.guess=false`
/// say no (git's words for a name that is no path then), `--guess` yes again. Compared: exit
/// code, what each says, the branch settings and `HEAD`.
#[test]
fn guessing_a_remote_branch_follows_git() {
    let env = Env::new();
    let src = history_for_switch(&env);
    let cases: [&[&str]; 4] = [
        &["checkout", "--no-guess", "two"],
        &["-c", "checkout.guess=false", "checkout", "two"],
        &["-c", "checkout.guess=false", "checkout", "--guess", "two"],
        &["checkout", "--no-guess", "--guess", "two"],
    ];
    for (n, args) in cases.iter().enumerate() {
        let [theirs, ours] = [false, true].map(|sluice| {
            let repo = env.path().join(format!("guess-{n}-{sluice}"));
            git_clone(&env, &src, &repo, "one");
            let out = env.sluice_or_git(sluice, &repo, args);
            let config = env.git_with_input(&repo, &["config", "--get-regexp", "^branch\\."], b"");
            let head = env.git(&repo, &["symbolic-ref", "HEAD"]);
            (out.status.code(), stderr(&out), config.stdout, head)
        });
        assert_eq!(ours, theirs, "{args:?}");
    }
}

/// Clones `src` to `dest` without a checkout, then checks HEAD out with the library call
/// clone uses; returns its warnings.
fn library_checkout(env: &Env, src: &Path, dest: &Path, config: &[&str]) -> Vec<String> {
    let (src, dest_str) = (src.to_str().unwrap(), dest.to_str().unwrap());
    env.git(
        env.path(),
        &["clone", "-q", "--no-checkout", "-b", "main", src, dest_str],
    );
    for item in config {
        let (key, value) = item.split_once('=').unwrap();
        env.git(dest, &["config", key, value]);
    }
    let repo = sluice_repo::Repository::discover(dest).unwrap();
    let (_, head) = repo.refs().resolve("HEAD").unwrap();
    let tree = sluice_checkout::commit_tree(repo.objects(), &head.unwrap()).unwrap();
    let options = sluice_checkout::CheckoutOptions::from_config(repo.config()).unwrap();
    sluice_checkout::checkout_fresh(&repo, &tree, &options, &sluice_object::progress::Discard)
        .unwrap()
}

#[test]
fn fresh_checkout_library_call_matches_git_clone() {
    // The call clone uses: an empty work tree, no index yet.
    let env = Env::new();
    let src = tree_repo(&env);
    let theirs = env.path().join("theirs");
    let ours = env.path().join("ours");
    git_clone(&env, &src, &theirs, "main");
    let warnings = library_checkout(&env, &src, &ours, &[]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_same_trees(&ours, &theirs);
    assert_eq!(git_view(&env, &ours), git_view(&env, &theirs));
    assert_clean(&env, &ours);
}

#[test]
fn case_collisions_are_reported_like_git_clone() {
    let env = Env::new();
    let src = env.init("cases", true);
    let mut fi = FastImport::new();
    fi.commit(
        "main",
        "c",
        &[
            ("README", "100644", b"upper\n"),
            ("readme", "100644", b"lower\n"),
            ("x", "100644", b"x\n"),
        ],
    );
    env.fast_import(&src, fi.finish());
    let ours = env.path().join("ours");
    let warnings = library_checkout(&env, &src, &ours, &["core.ignorecase=true"]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("the following paths have collided"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[0].contains("'README'") && warnings[0].contains("'readme'"),
        "{}",
        warnings[0]
    );
}

#[test]
fn index_version_4_is_read() {
    let env = Env::new();
    let src = history_for_switch(&env);
    let (ours, theirs) = clone_both(&env, &src, &[], "one");
    for repo in [&ours, &theirs] {
        env.git(repo, &["update-index", "--index-version", "4"]);
    }
    env.git(&theirs, &["checkout", "-q", "two"]);
    let out = env.sluice(&ours, &["checkout", "two"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_same_trees(&ours, &theirs);
    assert_eq!(git_view(&env, &ours), git_view(&env, &theirs));
}
