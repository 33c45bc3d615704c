//! `url.<base>.insteadOf` and `url.<base>.pushInsteadOf` as git applies them: a clone reaches
//! the rewritten URL and records the one given; fetches of a remote and of a URL rewrite with
//! `insteadOf`; pushes rewrite a remote's URLs and a command line's URL with `pushInsteadOf`
//! first, and `pushurl`s with `insteadOf` only; the `pre-push` hook is told the URL pushed to.
//! Twins, one per tool, each with its own servers; after each step the exit code, output
//! (the twin's directory named alike), refs of the work repository and of both servers, and
//! `remote.origin.url` must be git's.

use crate::util::{gits, script, Env};
use std::path::Path;

/// What one step left, with the side's own directory written `<side>`.
fn state(env: &Env, side: &Path, out: &std::process::Output) -> String {
    let refs = |repo: &Path| String::from_utf8(env.git(repo, &["for-each-ref"])).unwrap();
    let work = side.join("work");
    let mut state = format!(
        "exit {:?}\nstdout {}\nstderr {}\nsrc {}\nside {}\n",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        refs(&side.join("src.git")),
        refs(&side.join("side-src.git")),
    );
    if work.exists() {
        let url = env.git_with_input(&work, &["config", "remote.origin.url"], b"");
        let fetch_head = std::fs::read_to_string(work.join(".git/FETCH_HEAD")).unwrap_or_default();
        state += &format!(
            "work {}\nurl {}\nFETCH_HEAD {fetch_head}",
            refs(&work),
            String::from_utf8_lossy(&url.stdout)
        );
    }
    state.replace(side.to_str().unwrap(), "<side>")
}

#[test]
fn url_rewrites_apply_to_clones_fetches_and_pushes_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = env.init("seed", false);
        std::fs::write(seed.join("f"), "one\n").unwrap();
        env.git(&seed, &["add", "f"]);
        env.git(&seed, &["commit", "-q", "-m", "one"]);
        env.git(&seed, &["branch", "-M", "main"]);
        let sides = ["theirs", "ours"].map(|name| {
            let side = env.path().join(name);
            std::fs::create_dir(&side).unwrap();
            for server in ["src.git", "side-src.git"] {
                env.git(&side, &["init", "-q", "--bare", server]);
            }
            let src = side.join("src.git");
            env.git(&seed, &["push", "-q", src.to_str().unwrap(), "main"]);
            side
        });
        let fetch_base = |side: &Path| format!("url.file://{}/.insteadOf", side.display());
        let push_base = |side: &Path| format!("url.file://{}/side-.pushInsteadOf", side.display());
        // Each step's words: a command run in the work repository (in the side's directory
        // before there is one), or a change made alike on both sides (`!`).
        let steps = [
            // The server's HEAD names a branch it has not: git warns, `-q` or not.
            "-c @fetch=lab: clone -q lab:src.git unborn",
            "!head",
            "-c @fetch=lab: clone -q lab:src.git work",
            "!config",
            "!advance",
            "fetch origin",
            "fetch lab:src.git main",
            "push origin main:refs/heads/pushed",
            "push lab:src.git main:refs/heads/by-url",
            "!pushurl",
            "push origin main:refs/heads/by-pushurl",
        ];
        for step in steps {
            let step: Vec<&str> = step.split(' ').collect();
            if step[0] == "!advance" {
                std::fs::write(seed.join("f"), "two\n").unwrap();
                env.git(&seed, &["commit", "-q", "-a", "-m", "two"]);
                for side in &sides {
                    let src = side.join("src.git");
                    env.git(&seed, &["push", "-q", src.to_str().unwrap(), "main"]);
                }
                continue;
            }
            let mut said = Vec::new();
            for (sluice, side) in [(false, &sides[0]), (true, &sides[1])] {
                let work = side.join("work");
                match step[0] {
                    "!config" => {
                        let fetch = fetch_base(side);
                        env.git(&work, &["config", &fetch, "lab:"]);
                        env.git(&work, &["config", &push_base(side), "lab:"]);
                        let hooks = work.join(".git/hooks");
                        std::fs::create_dir_all(&hooks).unwrap();
                        let hook = hooks.join("pre-push");
                        script(
                            &hook,
                            "#!/bin/sh\necho \"pre-push $1 $2\" >&2\ncat >/dev/null\n",
                        );
                        continue;
                    }
                    "!head" => {
                        let src = side.join("src.git");
                        env.git(&src, &["symbolic-ref", "HEAD", "refs/heads/main"]);
                        continue;
                    }
                    "!pushurl" => {
                        env.git(&work, &["config", "remote.origin.pushurl", "lab:src.git"]);
                        continue;
                    }
                    _ => {}
                }
                let args: Vec<String> = (step.iter())
                    .map(|arg| match arg.strip_prefix("@fetch=") {
                        Some(value) => format!("{}={value}", fetch_base(side)),
                        None => arg.to_string(),
                    })
                    .collect();
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let cwd = if work.exists() { work } else { side.clone() };
                let out = env.sluice_or_git(sluice, &cwd, &args);
                said.push(state(&env, side, &out));
            }
            if let [theirs, ours] = &said[..] {
                assert_eq!(ours, theirs, "{} {step:?}", git.display());
            }
        }
        // Where each push went: pushInsteadOf for a remote's url and a URL, insteadOf for a
        // pushurl.
        let refs = |repo: &str| String::from_utf8(env.git(&sides[1].join(repo), &["for-each-ref"]));
        let (side, src) = (refs("side-src.git").unwrap(), refs("src.git").unwrap());
        assert!(side.contains("refs/heads/pushed") && side.contains("refs/heads/by-url"));
        assert!(src.contains("refs/heads/by-pushurl") && !src.contains("refs/heads/pushed"));
    }
}
