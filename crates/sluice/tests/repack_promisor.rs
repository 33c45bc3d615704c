//! `repack -a -d` in a partial clone, twinned with git's: the promisor packs (the clone's and
//! each lazy fetch's) become one promisor pack, the repository's own objects a pack of their
//! own, whatever is missing by design stays missing, and `fsck` finds nothing wrong.
//! Compared: exit code, and every pack's objects and markers (names aside).

use crate::repack_filter::packs_in;
use crate::util::{gits, Env};

#[test]
fn a_partial_clones_promisor_packs_become_one_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let up = env.init("up", false);
        for i in 0..4 {
            std::fs::write(up.join(format!("f{i}")), format!("{i}\n").repeat(30)).unwrap();
            env.git(&up, &["add", "."]);
            env.git(&up, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        env.git(&up, &["config", "uploadpack.allowFilter", "true"]);
        let url = format!("file://{}", up.display());
        let mut said = Vec::new();
        for (twin, sluice) in [("theirs", false), ("ours", true)] {
            let args = [
                "clone",
                "-q",
                "--no-local",
                "--filter=blob:none",
                &url,
                twin,
            ];
            env.git(env.path(), &args);
            let repo = env.path().join(twin);
            let mut text = String::new();
            // Right after the clone (its pack and the checkout's lazy fetch), then after a
            // commit of the repository's own.
            for round in 0..2 {
                if round == 1 {
                    std::fs::write(repo.join("mine"), "mine\n").unwrap();
                    env.git(&repo, &["add", "mine"]);
                    env.git(&repo, &["commit", "-q", "-m", "mine"]);
                }
                let out = env.sluice_or_git(sluice, &repo, &["repack", "-a", "-d", "-q"]);
                env.git(&repo, &["fsck", "--strict"]);
                let packs = packs_in(&env, &repo.join(".git/objects/pack"));
                text.push_str(&format!("{:?}\n{packs:?}\n", out.status.code()));
            }
            said.push(text);
        }
        assert_eq!(said[1], said[0], "{}", git.display());
    }
}
