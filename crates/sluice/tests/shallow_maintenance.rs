//! Maintenance in a shallow clone (`--depth`), twinned with git 2.39 and 2.47: every command
//! walks history down to the cut the `shallow` file names, as git does, rather than failing on
//! the parents the clone lacks (Sluice's repack, gc, prune, pack-objects and multi-pack-index
//! bitmap all died with "missing commit" there), and a shallow repository gets no commit-graph,
//! as git writes none. Compared: exit code, what each repository holds (every object a ref, a
//! reflog or the index reaches, and the files of `objects/info`), and git's fsck.

use crate::util::{copy_tree, gits, list_dir, stderr, stdout, Env};
use std::path::Path;

const COMMANDS: [&[&str]; 10] = [
    &["repack", "-a", "-d", "-q"],
    &["repack", "-a", "-d", "-b", "-q"],
    &["repack", "-q"],
    &["gc", "-q"],
    &["gc", "-q", "--aggressive", "--prune=now"],
    &["prune"],
    &["commit-graph", "write", "--reachable"],
    &["repack", "-d", "-q", "-b", "--write-midx", "--geometric=2"],
    &["multi-pack-index", "write", "--bitmap"],
    &[
        "maintenance",
        "run",
        "--task=commit-graph",
        "--task=incremental-repack",
    ],
];

#[test]
fn maintenance_in_a_shallow_clone_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let up = env.init("up", false);
        for i in 0..5 {
            std::fs::write(up.join("f"), format!("{i}\n").repeat(30 + i)).unwrap();
            env.git(&up, &["add", "f"]);
            env.git(&up, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        let url = format!("file://{}", up.display());
        env.git(env.path(), &["clone", "-q", "--depth=2", &url, "shallow"]);
        let seed = env.path().join("shallow");
        for i in 0..3 {
            std::fs::write(seed.join(format!("mine{i}")), format!("{i}\n")).unwrap();
            env.git(&seed, &["add", "."]);
            env.git(&seed, &["commit", "-q", "-m", &format!("mine{i}")]);
            env.git(&seed, &["repack", "-q", "-d"]);
        }
        std::fs::write(seed.join("staged"), "staged\n").unwrap();
        env.git(&seed, &["add", "staged"]);
        for command in COMMANDS {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("twin-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                copy_tree(&seed, &repo);
                let out = env.sluice_or_git(sluice, &repo, command);
                assert!(
                    out.status.success(),
                    "{command:?} sluice {sluice}: {}",
                    stderr(&out)
                );
                let fsck = env.git_with_input(&repo, &["fsck", "--strict"], b"");
                assert!(fsck.status.success(), "{command:?}: {}", stderr(&fsck));
                seen.push(held(&env, &repo));
            }
            assert_eq!(seen[1], seen[0], "{command:?} with {}", git.display());
        }
    }
}

/// What `repo` holds: every object its refs, reflogs and index reach, its shallow cut, and
/// which kinds of file `objects/info` has.
fn held(env: &Env, repo: &Path) -> String {
    let args = [
        "rev-list",
        "--objects",
        "--all",
        "--reflog",
        "--indexed-objects",
    ];
    let mut objects: Vec<String> = (stdout(&env.git_with_input(repo, &args, b"")).lines())
        .map(str::to_owned)
        .collect();
    objects.sort();
    let shallow = std::fs::read_to_string(repo.join(".git/shallow")).unwrap_or_default();
    let mut info: Vec<String> = list_dir(&repo.join(".git/objects/info"));
    info.retain(|name| name.starts_with("commit-graph"));
    format!("{}\nshallow {shallow}\ninfo {info:?}", objects.join("\n"))
}
