//! `push --porcelain` in each case a push meets, as git's: a new branch, up to date, a
//! rejected non-fast-forward, a deletion, a deletion of a ref the remote does not have (refused
//! before anything is sent), `-v --dry-run`; stdout, stderr, exit code and the remote's refs.

use crate::util::{gits, stderr, Env};

#[test]
fn porcelain_pushes_report_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = env.init("work", false);
        env.git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
        env.git(&work, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let runs: [&[&str]; 8] = [
            &["push", "--porcelain", "origin", "HEAD:main"],
            &["push", "--porcelain", "origin", "HEAD:main"],
            &["push", "--porcelain", "origin", "HEAD~1:main"],
            &["push", "--porcelain", "origin", ":gone"],
            &["push", "--porcelain", "origin", ":nonexistent"],
            &[
                "push",
                "--porcelain",
                "origin",
                ":nonexistent",
                "HEAD:other",
            ],
            &["push", "origin", ":nonexistent"],
            &[
                "push",
                "--porcelain",
                "-v",
                "--dry-run",
                "origin",
                "HEAD:newb",
            ],
        ];
        let server = env.path().join("server.git");
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let _ = std::fs::remove_dir_all(&server);
            env.git(
                env.path(),
                &["init", "-q", "--bare", server.to_str().unwrap()],
            );
            let _ = std::process::Command::new("git")
                .args(["-C"])
                .arg(&work)
                .args(["remote", "remove", "origin"])
                .output();
            env.git(
                &work,
                &["remote", "add", "origin", server.to_str().unwrap()],
            );
            env.git(&work, &["push", "-q", "origin", "HEAD~1:refs/heads/gone"]);
            let mut said = Vec::new();
            for args in runs {
                let out = env.sluice_or_git(sluice, &work, args);
                let refs = String::from_utf8(env.git(&server, &["for-each-ref"])).unwrap();
                let stdout = String::from_utf8(out.stdout.clone()).unwrap();
                // The non-fast-forward advice is worded one way by git 2.39 and another by
                // 2.47 (Sluice gives the later one): hints aside, the rest is compared.
                let said_err: String = (stderr(&out).lines())
                    .filter(|l| !l.starts_with("hint:"))
                    .map(|l| format!("{l}\n"))
                    .collect();
                said.push((out.status.code(), stdout, said_err, refs));
            }
            seen.push(said);
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}
