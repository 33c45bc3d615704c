//! `sluice fetch` moves refs as `git fetch` does: refspecs given on the command line (with and
//! without a destination, globs, `+`, `^` exclusions, `tag <name>`), fast-forward checks and
//! `--force`, tags that would be clobbered, `--no-tags`, `--prune` (which spares tags fetched
//! only by `--tags`), the checked-out branch protected, a missing remote ref refused. Both start from
//! the same `git clone`; after each step the exit code, every ref, `FETCH_HEAD` and the
//! `[rejected]` lines must be git's.

use crate::upload_pack::{fsck, refs, served_source};
use crate::util::{gits, list_dir, stderr, stdout, text, Env};
use std::path::Path;

/// What a fetch left: its exit code, the refs, FETCH_HEAD and the lines about refused updates.
/// After a fatal error git has emptied FETCH_HEAD, where Sluice leaves the repository as it
/// was: FETCH_HEAD is compared only when the fetch got as far as updating refs.
fn outcome(env: &Env, repo: &Path, out: &std::process::Output) -> String {
    let fetch_head = match out.status.code() {
        Some(0 | 1) => std::fs::read_to_string(repo.join(".git/FETCH_HEAD")).unwrap_or_default(),
        _ => "(not compared)".into(),
    };
    let rejected: Vec<String> = stderr(out)
        .lines()
        .filter(|l| l.contains("[rejected]") || l.contains("[tag update]"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    format!(
        "exit {:?}\n{}\nFETCH_HEAD:\n{}\nrejected: {rejected:?}",
        out.status.code(),
        refs(env, repo),
        fetch_head,
    )
}

#[test]
fn fetch_refspecs_and_fast_forward_checks_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (src, url, upload) = served_source(&env, &git);
        let (ours, theirs) = (env.path().join("ours"), env.path().join("theirs"));
        for repo in [&ours, &theirs] {
            env.git(env.path(), &["clone", "-q", &url, repo.to_str().unwrap()]);
        }
        let topic_tip = String::from_utf8(env.git(&src, &["rev-parse", "topic"])).unwrap();
        // (what the server does first, the fetch's arguments, what git must say)
        let all_branches = "refs/heads/*:refs/remotes/origin/*";
        let steps: [(&[&str], &[&str], Option<&str>); 23] = [
            (&[], &["origin", "main:refs/heads/copy"], None),
            (&[], &["origin", "topic:refs/heads/topic-copy"], None),
            (&[], &["origin", "main"], None),
            (
                &["update-ref", "refs/heads/topic", "refs/heads/topic~1"],
                &["origin", "topic:refs/heads/topic-copy"],
                Some("non-fast-forward"),
            ),
            (&[], &["origin", "+topic:refs/heads/topic-copy"], None),
            (
                &[],
                &["--force", "origin", "main:refs/heads/topic-copy"],
                None,
            ),
            (&["tag", "-f", "v1.0", topic_tip.trim()], &["origin"], None),
            (
                &[],
                &["--tags", "origin"],
                Some("would clobber existing tag"),
            ),
            (&[], &["--tags", "--force", "origin"], None),
            (&[], &["origin", "refs/heads/*:refs/mirror/*"], None),
            (
                &[],
                &[
                    "origin",
                    "^refs/heads/topic",
                    "refs/heads/*:refs/negative/*",
                ],
                None,
            ),
            (&["tag", "late", "main"], &["--no-tags", "origin"], None),
            (&[], &["origin", "tag", "late"], None),
            (
                &["update-ref", "-d", "refs/heads/topic"],
                &["--prune", "origin"],
                None,
            ),
            (
                &["tag", "-d", "late"],
                &["--prune", "--tags", "origin"],
                None,
            ),
            // A branch renamed into a directory of its old name: pruning makes the room.
            (&["branch", "nest", "main"], &["origin"], None),
            (
                &["branch", "-m", "nest", "nest/leaf"],
                &["--prune", "origin"],
                None,
            ),
            // --atomic: a branch to prune, a new one and a refused one move nothing, and
            // FETCH_HEAD is emptied; without the refusal everything moves.
            (&["branch", "doomed", "main"], &["origin"], None),
            (&["branch", "-D", "doomed"], &["origin", "main"], None),
            (&["branch", "fresh", "main"], &["origin", "main"], None),
            (
                &["update-ref", "refs/heads/main", "refs/heads/main~1"],
                &["--atomic", "--prune", "origin", all_branches],
                Some("non-fast-forward"),
            ),
            (
                &[],
                &["--atomic", "--prune", "origin", &format!("+{all_branches}")],
                None,
            ),
            (
                &[],
                &["origin", "nosuch"],
                Some("couldn't find remote ref nosuch"),
            ),
        ];
        for (server, args, says) in steps {
            if !server.is_empty() {
                env.git(&src, server);
            }
            let mut seen = Vec::new();
            let fetch_head = std::fs::read(ours.join(".git/FETCH_HEAD")).unwrap_or_default();
            for (repo, sluice) in [(&ours, true), (&theirs, false)] {
                let mut all = vec!["fetch", upload.as_str()];
                all.extend_from_slice(args);
                let out = env.sluice_or_git(sluice, repo, &all);
                let message = stderr(&out);
                assert!(!message.contains("panicked"), "{message}");
                if let Some(says) = says {
                    assert!(message.contains(says), "{sluice} {args:?}: {message}");
                }
                if sluice && out.status.code() == Some(128) {
                    let now = std::fs::read(ours.join(".git/FETCH_HEAD")).unwrap_or_default();
                    assert!(now == fetch_head, "{args:?}: FETCH_HEAD changed");
                }
                seen.push(outcome(&env, repo, &out));
            }
            assert_eq!(seen[0], seen[1], "{} fetch {args:?}", git.display());
        }
        // The branch checked out is not fetched into, and nothing moves.
        let mut codes = Vec::new();
        for (repo, sluice) in [(&ours, true), (&theirs, false)] {
            let all = ["fetch", upload.as_str(), "origin", "main:main"];
            let out = env.sluice_or_git(sluice, repo, &all);
            assert!(
                stderr(&out).contains("refusing to fetch into branch 'refs/heads/main'"),
                "{sluice}: {}",
                stderr(&out)
            );
            codes.push(out.status.code());
        }
        assert_eq!(codes[0], codes[1]);
        assert_eq!(refs(&env, &ours), refs(&env, &theirs));
        fsck(&env, &ours);
    }
}

/// Shallow histories changed by `sluice fetch` as `git fetch` changes them: deepened by a
/// number of commits, cut at a date or at what a remote ref reaches, made whole; each step in
/// a twin of git's, compared by the shallow file, the refs and the commits there.
#[test]
fn shallow_fetches_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (_, url, upload) = served_source(&env, &git);
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            let twins = [
                env.path().join(format!("ours-{protocol}")),
                env.path().join(format!("theirs-{protocol}")),
            ];
            for repo in &twins {
                env.git(
                    env.path(),
                    &["clone", "-q", "--depth=1", &url, repo.to_str().unwrap()],
                );
            }
            // The source's commits are a minute apart from 2023-11-14 22:13:20 UTC.
            let steps: [&[&str]; 5] = [
                &["--deepen=2"],
                &["--shallow-since=2023-11-14 22:18:00 +0000"],
                &["--shallow-exclude=v0.5"],
                &["--depth=2"],
                &["--unshallow"],
            ];
            for step in steps {
                let mut seen = Vec::new();
                for (repo, sluice) in [(&twins[0], true), (&twins[1], false)] {
                    let mut args = vec!["-c", protocol, "fetch", "-q", upload.as_str()];
                    args.extend_from_slice(step);
                    let out = env.sluice_or_git(sluice, repo, &args);
                    assert!(out.status.success(), "{sluice} {args:?}: {}", stderr(&out));
                    let shallow =
                        std::fs::read_to_string(repo.join(".git/shallow")).unwrap_or_default();
                    let commits = env.git(repo, &["rev-list", "--all"]);
                    seen.push((shallow, refs(&env, repo), commits));
                }
                assert_eq!(seen[0], seen[1], "{} {protocol} {step:?}", git.display());
            }
            fsck(&env, &twins[0]);
        }
    }
}

/// Everything a fetch into a new repository left, and what it said: exit code, messages, refs,
/// FETCH_HEAD, the shallow file and every reflog's subjects.
fn fetched_state(env: &Env, repo: &Path, out: &std::process::Output) -> String {
    let read =
        |name: &str| std::fs::read_to_string(repo.join(".git").join(name)).unwrap_or_default();
    let mut state = format!(
        "exit {:?}\n{}\n{}\nFETCH_HEAD:\n{}shallow:\n{}",
        out.status.code(),
        stderr(out),
        refs(env, repo),
        read("FETCH_HEAD"),
        read("shallow"),
    );
    let names = env.git(repo, &["for-each-ref", "--format=%(refname)"]);
    for name in String::from_utf8(names).unwrap().lines() {
        let log = env.git_with_input(repo, &["reflog", "show", "--format=%gs", name], b"");
        state.push_str(&format!("{name}: {}", String::from_utf8_lossy(&log.stdout)));
    }
    state
}

#[test]
fn fetches_by_id_and_their_reports_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (src, url, upload) = served_source(&env, &git);
        let rev = |name: &str| String::from_utf8(env.git(&src, &["rev-parse", name])).unwrap();
        let (main, below) = (rev("main"), rev("main~1"));
        let (main, below) = (main.trim(), below.trim());
        let tip = format!("+{main}:refs/remotes/origin/main");
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            // (what is fetched): by id as CI checkouts do, by an id no ref points at (v0
            // refuses it), without a destination (no tags followed), with one (tags that
            // point at what is fetched come first, the others after), the defaults.
            let fetches: [&[&str]; 7] = [
                &[
                    "--no-tags",
                    "--prune",
                    "--no-recurse-submodules",
                    "--depth=1",
                    "origin",
                    &tip,
                ],
                &["origin", below],
                &["origin", "main"],
                &["origin", "topic:refs/heads/t"],
                &["origin"],
                &["origin", "refs/tags/v1.0"],
                &["--recurse-submodules=on-demand", "origin"],
            ];
            for fetch in fetches {
                let mut states = Vec::new();
                for (who, sluice) in [("ours", true), ("theirs", false)] {
                    let repo = env.path().join(format!("{who}-{}", states.len() + 1));
                    let _ = std::fs::remove_dir_all(&repo);
                    env.git(env.path(), &["init", "-q", repo.to_str().unwrap()]);
                    env.git(&repo, &["remote", "add", "origin", &url]);
                    let mut args = vec!["-c", protocol, "fetch", upload.as_str()];
                    args.extend(fetch);
                    let out = env.sluice_or_git(sluice, &repo, &args);
                    states.push(fetched_state(&env, &repo, &out));
                }
                assert_eq!(states[0], states[1], "{protocol} fetch {fetch:?}");
            }
        }
        // --prune says what it deleted before what it updated.
        env.git(&src, &["branch", "gone", "topic"]);
        let (ours, theirs) = (
            env.path().join("pruned-ours"),
            env.path().join("pruned-theirs"),
        );
        for repo in [&ours, &theirs] {
            env.git(env.path(), &["clone", "-q", &url, repo.to_str().unwrap()]);
        }
        env.git(&src, &["branch", "-D", "gone"]);
        // And a fast-forward of main, so that there is an update to say after the deletion.
        let more = env.git(
            &src,
            &["commit-tree", "-m", "more", "-p", main, "main^{tree}"],
        );
        let more = String::from_utf8(more).unwrap();
        env.git(&src, &["update-ref", "refs/heads/main", more.trim()]);
        let args = ["fetch", "--prune", upload.as_str()];
        let out = env.sluice(&ours, &args, b"");
        let theirs_out = env.git_with_input(&theirs, &args, b"");
        assert_eq!(stderr(&out), stderr(&theirs_out));
        assert_eq!(refs(&env, &ours), refs(&env, &theirs));
        fsck(&env, &ours);
    }
}

/// The settings git reads for a fetch and the options that fetch several remotes or change what
/// it writes: `fetch.prune`, `remote.<name>.prune` and `--no-prune`; `--prune-tags` and
/// `fetch.pruneTags` for a remote and for a URL; `remote.<name>.tagOpt`; `-v`, `--dry-run`,
/// `--append`, `--no-write-fetch-head`, `--update-head-ok`; `--all` (with
/// `remote.<name>.skipFetchAll` and a remote that fails), `--multiple`, groups
/// (`remotes.<group>`); refs listed in the refspecs' order; FETCH_HEAD for a remote-tracking
/// ref and for a relative path; refspecs that meet on one local ref or name a ref twice; a short
/// name of both a branch and a tag; `--porcelain`; `fetch.output`; bad values of settings that
/// decide nothing in the fetch at hand. Each fetch runs in twin repositories, one by
/// git; compared: exit code, stdout, stderr, refs, FETCH_HEAD and every reflog.
#[test]
fn fetch_settings_and_many_remotes_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (src, url, _) = served_source(&env, &git);
        env.git(&src, &["update-ref", "refs/remotes/up/main", "main"]);
        // A short name both a branch and a tag have: the tag is the one it names.
        env.git(&src, &["branch", "twin-name", "topic"]);
        env.git(&src, &["tag", "twin-name", "main"]);
        let upload = format!("{} upload-pack", git.display());
        let relative = format!("../{}", src.file_name().unwrap().to_str().unwrap());
        // `--porcelain` came with git 2.41.
        let help = env.git_with_input(env.path(), &["fetch", "-h"], b"");
        let porcelain = String::from_utf8_lossy(&help.stdout).contains("--porcelain");
        // (settings as `key=value`, the fetch's arguments)
        let cases: [(&[&str], &[&str]); 50] = [
            (&["fetch.prune=true"], &["origin"]),
            (
                &["fetch.prune=true", "remote.origin.prune=false"],
                &["origin"],
            ),
            (&["fetch.prune=true"], &["--no-prune", "origin"]),
            (&[], &["--prune", "--prune-tags", "origin"]),
            (&["fetch.pruneTags=true"], &["--prune", "origin"]),
            (&[], &["--prune", "--prune-tags", &url]),
            (&["remote.origin.tagOpt=--tags"], &["-v", "origin"]),
            (&[], &["-v", "--dry-run", "--prune", "origin", "topic"]),
            (&[], &["--append", "origin", "main"]),
            (&[], &["--no-write-fetch-head", "origin", "topic:refs/t"]),
            (&[], &["origin", "main:main"]),
            (&[], &["--update-head-ok", "origin", "main:main"]),
            (&[], &["--all", "-v"]),
            (&[], &["--all", "-k", "-4", "-v"]),
            (&["remote.origin.skipFetchAll=true"], &["--all", "--prune"]),
            (&["remote.bad.url=/nonexistent"], &["--all", "--no-tags"]),
            (&["remotes.both=up origin"], &["both"]),
            (&[], &["--multiple", "-q", "up", "origin"]),
            // `--multiple` runs a fetch per remote even for one, and naming none is the usual
            // fetch; what git refuses where it runs one per remote.
            (&[], &["--multiple", "up"]),
            (&[], &["--multiple", "-v"]),
            (&[], &["--all", "--atomic"]),
            (&[], &["--multiple", "--negotiate-only", "up", "origin"]),
            (
                &[],
                &["origin", "refs/remotes/up/main", "refs/tags/*:refs/tags/*"],
            ),
            (&[], &["origin", "topic:refs/t", "main"]),
            (&[], &[&relative, "main"]),
            // Refs that land on the same local ref, or are named twice.
            (&[], &["origin", "main", "main"]),
            (&[], &["origin", "main:refs/x", "main", "main:refs/x"]),
            (
                &[],
                &[
                    "origin",
                    "main:refs/remotes/origin/main",
                    "refs/heads/*:refs/remotes/origin/*",
                ],
            ),
            (&[], &["origin", "main:refs/y", "topic:refs/y"]),
            (&[], &["origin", "main:refs/remotes/origin/topic", "topic"]),
            (&[], &["origin", "twin-name", "twin-name:refs/heads/got"]),
            // Which updates are logged: every one, or only where a reflog is.
            (
                &["core.logAllRefUpdates=always"],
                &["origin", "+topic:refs/tags/stale", "main:refs/x"],
            ),
            (
                &["core.logAllRefUpdates=false"],
                &[
                    "origin",
                    "+topic:refs/remotes/origin/gone",
                    "main:refs/heads/fresh",
                ],
            ),
            // For scripts.
            (&[], &["--porcelain", "--prune", "--prune-tags", "origin"]),
            (
                &[],
                &["--porcelain", "-v", "origin", "topic", "main:refs/t"],
            ),
            (&[], &["--porcelain", "-q", "origin"]),
            (&[], &["--porcelain", "--all"]),
            (
                &[],
                &[
                    "--porcelain",
                    "--dry-run",
                    "origin",
                    "+main:refs/tags/stale",
                ],
            ),
            (&[], &["--porcelain", "origin", "topic:refs/tags/stale"]),
            (&[], &["--porcelain", "--recurse-submodules", "origin"]),
            // `fetch.output`: the names' shared part starred, or a value git refuses.
            (&["fetch.output=compact"], &["--prune", "origin"]),
            (
                &["fetch.output=Compact"],
                &[
                    "origin",
                    "main:refs/x/main",
                    "+refs/*:refs/mirror/*",
                    "topic",
                ],
            ),
            (&["fetch.output=compact"], &["origin", "main:main/sub"]),
            (&["fetch.output=bogus"], &["origin"]),
            (&["fetch.output=bogus"], &["--porcelain", "origin"]),
            // Settings read (and refused) whether or not they decide anything.
            (&["fetch.negotiationAlgorithm=bogus"], &["origin"]),
            (
                &["fetch.negotiationAlgorithm=noop"],
                &["origin", "topic:refs/t"],
            ),
            (&["fetch.negotiationAlgorithm=Skipping"], &["-v", "origin"]),
            (&["fetch.pruneTags=bogus"], &["origin"]),
            (&["remote.origin.pruneTags=bogus"], &["origin"]),
        ];
        for (settings, args) in cases {
            if args.contains(&"--porcelain") && !porcelain {
                continue;
            }
            let mut seen = Vec::new();
            // One directory in turn, as messages name it.
            let repo = env.path().join("twin");
            for sluice in [true, false] {
                let _ = std::fs::remove_dir_all(&repo);
                env.git(env.path(), &["init", "-q", repo.to_str().unwrap()]);
                env.git(&repo, &["symbolic-ref", "HEAD", "refs/heads/main"]);
                for remote in ["origin", "up"] {
                    env.git(&repo, &["remote", "add", remote, &url]);
                    env.git(
                        &repo,
                        &["config", &format!("remote.{remote}.uploadpack"), &upload],
                    );
                }
                env.git(&repo, &["fetch", "-q", "origin"]);
                // A branch and a tag the remote does not have, for pruning to find.
                env.git(
                    &repo,
                    &["update-ref", "refs/remotes/origin/gone", "origin/main"],
                );
                env.git(&repo, &["update-ref", "refs/tags/stale", "origin/main"]);
                for setting in settings {
                    let (key, value) = setting.split_once('=').unwrap();
                    env.git(&repo, &["config", key, value]);
                }
                // git empties FETCH_HEAD before a fatal error, where Sluice leaves it as it was:
                // only an appended one starts out with content.
                if !args.contains(&"--append") {
                    std::fs::remove_file(repo.join(".git/FETCH_HEAD")).unwrap();
                }
                let mut all = vec!["fetch"];
                all.extend_from_slice(args);
                let out = env.sluice_or_git(sluice, &repo, &all);
                let state = fetched_state(&env, &repo, &out);
                seen.push(format!("stdout:\n{}{state}", stdout(&out)));
            }
            assert_eq!(
                seen[0],
                seen[1],
                "{} {settings:?} fetch {args:?}",
                git.display()
            );
        }
    }
}

/// What a repository holds and how git would read it as a partial clone: its config file, the
/// refs, the ids in promisor packs, the ids stored loose, and the objects it is missing.
fn partial_state(env: &Env, repo: &Path) -> String {
    let git_dir = repo.join(".git");
    let pack_dir = git_dir.join("objects/pack");
    let mut promised = Vec::new();
    for name in list_dir(&pack_dir)
        .iter()
        .filter(|n| n.ends_with(".promisor"))
    {
        let idx = pack_dir.join(name.replace(".promisor", ".idx"));
        let listed = env.git_with_input(repo, &["show-index"], &std::fs::read(idx).unwrap());
        promised.extend(
            stdout(&listed)
                .lines()
                .map(|l| l.split(' ').nth(1).unwrap().to_owned()),
        );
    }
    promised.sort();
    let mut loose = Vec::new();
    for dir in list_dir(&git_dir.join("objects"))
        .iter()
        .filter(|d| d.len() == 2)
    {
        for rest in list_dir(&git_dir.join("objects").join(dir)) {
            loose.push(format!("{dir}{rest}"));
        }
    }
    loose.sort();
    let listed = env.git(repo, &["rev-list", "--objects", "--all", "--missing=print"]);
    let missing: Vec<String> = String::from_utf8(listed)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('?'))
        .map(str::to_owned)
        .collect();
    format!(
        "config:\n{}\n{}\npromised: {promised:?}\nloose: {loose:?}\nmissing: {missing:?}",
        std::fs::read_to_string(git_dir.join("config")).unwrap(),
        refs(env, repo),
    )
}

/// `fetch --filter` makes a full clone partial as git does: the remote becomes a promisor
/// remote with that filter as its default (a filter it has already stays), the pack is a
/// promisor pack, later fetches keep to the default unless `--no-filter`, a URL is registered
/// by itself; bad specs and `--filter` over several remotes are refused in git's words. Each
/// step fetches a new commit into a twin of git's and compares what both hold.
#[test]
fn partial_fetches_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (src, url, _) = served_source(&env, &git);
        env.git(&src, &["config", "uploadpack.allowFilter", "true"]);
        let work = env.path().join("work");
        env.git(env.path(), &["clone", "-q", &url, work.to_str().unwrap()]);
        let upload = format!("--upload-pack={} upload-pack", git.display());
        let twins = [env.path().join("ours"), env.path().join("theirs")];
        for repo in &twins {
            env.git(env.path(), &["clone", "-q", &url, repo.to_str().unwrap()]);
            env.git(repo, &["remote", "add", "up", &url]);
        }
        let steps: [&[&str]; 7] = [
            &["--filter=blob:none", "origin"],
            &["--filter=blob:limit=1k", "origin"],
            &["origin"],
            &["--no-filter", "origin"],
            &["--filter=blob:limit=2k", &url],
            &["--filter=bogus", "origin"],
            &["--all", "--filter=blob:none"],
        ];
        for (n, step) in steps.iter().enumerate() {
            // A new commit with a small and a large file, for each filter to leave out or not.
            std::fs::write(work.join("small"), format!("step {n}\n")).unwrap();
            std::fs::write(work.join("large"), text(n, 200)).unwrap();
            env.git(&work, &["add", "small", "large"]);
            env.git(&work, &["commit", "-q", "-m", &format!("step {n}")]);
            env.git(&work, &["push", "-q", "origin", "HEAD:main"]);
            let mut seen = Vec::new();
            for (repo, sluice) in [(&twins[0], true), (&twins[1], false)] {
                let mut args = vec!["fetch", "-q", upload.as_str()];
                args.extend_from_slice(step);
                let out = env.sluice_or_git(sluice, repo, &args);
                seen.push(format!(
                    "exit {:?}\n{}\n{}",
                    out.status.code(),
                    stderr(&out),
                    partial_state(&env, repo)
                ));
            }
            assert_eq!(seen[0], seen[1], "{} fetch {step:?}", git.display());
        }
        fsck(&env, &twins[0]);
        // git fetches what the filters left out, from the promisor remote recorded.
        env.git(&twins[0], &["log", "-p", "origin/main"]);
    }
}

/// Every directory and file under `refs/` and `logs/`: where git removes the directories a
/// deleted ref leaves empty, Sluice must too.
fn ref_files(repo: &Path) -> Vec<String> {
    let git_dir = repo.join(".git");
    let mut found = Vec::new();
    let mut stack = vec![git_dir.join("refs"), git_dir.join("logs")];
    while let Some(dir) = stack.pop() {
        for name in list_dir(&dir) {
            let path = dir.join(&name);
            found.push(path.strip_prefix(&git_dir).unwrap().display().to_string());
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Refs whose names collide as files and directories (`a` and `a/b`), packed and loose: a
/// fetch that cannot create one says why, still moves the others and exits 1; `--prune`
/// makes the room, in either direction, and leaves no empty directory behind; `--atomic`
/// moves nothing. The report and FETCH_HEAD list the current branch's upstream first, as git
/// does, though `a/b` sorts before `main`. Compared with git after each step: exit code,
/// stderr, refs, FETCH_HEAD and the files under `refs/` and `logs/`.
#[test]
fn ref_name_conflicts_and_report_order_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        env.git(&src, &["commit", "-q", "--allow-empty", "-m", "first"]);
        for branch in ["a", "z"] {
            env.git(&src, &["branch", branch]);
        }
        let url = format!("file://{}", src.display());
        let (ours, theirs) = (env.path().join("ours"), env.path().join("theirs"));
        for repo in [&ours, &theirs] {
            env.git(env.path(), &["clone", "-q", &url, repo.to_str().unwrap()]);
        }
        // (what the server does first, the fetch's arguments)
        let steps: [(&[&[&str]], &[&str]); 9] = [
            // `a` (packed here) is in the way of `a/b`; main and z still move.
            (
                &[
                    &["branch", "-D", "a"],
                    &["branch", "a/b"],
                    &["commit", "-q", "--allow-empty", "-m", "second"],
                    &["branch", "-f", "z"],
                ],
                &[],
            ),
            (&[], &["-q"]),
            (&[], &["--atomic"]),
            (&[], &["--prune"]),
            // The same with `c` loose.
            (&[&["branch", "c"]], &[]),
            (&[&["branch", "-D", "c"], &["branch", "c/d"]], &[]),
            (&[], &["--prune"]),
            // And back: the loose `c/d` pruned, its directory goes, and `c` takes its place.
            (&[&["branch", "-D", "c/d"], &["branch", "c"]], &["--prune"]),
            (&[&["branch", "-D", "a/b"], &["branch", "a"]], &["--prune"]),
        ];
        for (server, args) in steps {
            for command in server {
                env.git(&src, command);
            }
            let mut all = vec!["fetch"];
            all.extend_from_slice(args);
            let outs = [
                env.sluice_or_git(true, &ours, &all),
                env.sluice_or_git(false, &theirs, &all),
            ];
            // git 2.39 gives the advice on pruning only when the ref in the way is loose;
            // later versions give it always, as Sluice does.
            let advice = "error: some local refs could not be updated; try running\n 'git remote prune origin' to remove any old, conflicting branches\n";
            let git_advises = stderr(&outs[1]).contains(advice);
            let mut seen = Vec::new();
            for (repo, out) in [&ours, &theirs].into_iter().zip(&outs) {
                let mut said = stderr(out);
                assert!(!said.contains("panicked"), "{said}");
                if args.contains(&"--atomic") && said.contains("cannot lock") {
                    // git crashes here (2.47: "BUG: … abort called on a closed reference
                    // transaction", 2.39: exit 254) after saying the same; Sluice exits 1.
                    // Both move nothing.
                    assert!(repo != &ours || out.status.code() == Some(1), "{said}");
                    seen.push(refs(&env, repo));
                    continue;
                }
                if !git_advises {
                    said = said.replace(advice, "");
                }
                let fetch_head = std::fs::read_to_string(repo.join(".git/FETCH_HEAD"));
                // Where an update failed, git 2.39 leaves the ref in the way loose as well as
                // packed: the files are compared only where every ref moved.
                let files = match out.status.success() {
                    true => ref_files(repo),
                    false => Vec::new(),
                };
                seen.push(format!(
                    "exit {:?}\n{said}\n{}\nFETCH_HEAD:\n{}\n{files:?}",
                    out.status.code(),
                    refs(&env, repo),
                    fetch_head.unwrap_or_default(),
                ));
            }
            assert_eq!(seen[0], seen[1], "{} fetch {args:?}", git.display());
        }
        fsck(&env, &ours);
    }
}

/// `--set-upstream` (one branch, none, several, a tag, a branch with a destination, a URL, the
/// remote's HEAD, `branch.autoSetupRebase`, a detached HEAD), `--stdin` (a line per refspec,
/// an empty one for HEAD, `tag <name>` refused) and `--refetch` (everything the refs reach is
/// fetched again, no haves offered), each in twin repositories, one by git. Compared: exit
/// code, stderr, the config file, refs and FETCH_HEAD; for `--refetch`, the objects of the
/// pack received.
#[test]
fn set_upstream_stdin_and_refetch_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (_, url, upload) = served_source(&env, &git);
        let (ours, theirs) = (env.path().join("ours"), env.path().join("theirs"));
        for repo in [&ours, &theirs] {
            env.git(env.path(), &["clone", "-q", &url, repo.to_str().unwrap()]);
        }
        let detach: &[&str] = &["checkout", "-q", "--detach"];
        // (what the twins do first, settings, the fetch's arguments, its stdin)
        let steps: [(&[&str], &str, &[&str], &str); 11] = [
            (&[], "", &["--set-upstream", "origin", "topic"], ""),
            (&[], "", &["--set-upstream", "origin"], ""),
            (&[], "", &["--set-upstream", "origin", "topic", "main"], ""),
            (&[], "", &["--set-upstream", "origin", "v1.0"], ""),
            (&[], "", &["--set-upstream", "origin", "main:refs/q"], ""),
            (&[], "", &["-q", "--set-upstream", &url, "topic"], ""),
            (
                &[],
                "branch.autoSetupRebase=always",
                &["--set-upstream", "origin", "HEAD"],
                "",
            ),
            (&[], "", &["--stdin", "origin"], "main:refs/x\n\ntopic\n"),
            (&[], "", &["--stdin", "origin", "main"], "tag v1.0\n"),
            (detach, "", &["--set-upstream", "origin", "topic"], ""),
            // Repacked without deltas first, so that the pack received, the server's, is not
            // the one already here by name. git would repack in the background after a
            // refetch, where Sluice runs no maintenance.
            (
                &["repack", "-q", "-a", "-d", "-f", "--window=0"],
                "transfer.unpackLimit=1",
                &["--refetch", "--no-auto-maintenance", "origin"],
                "",
            ),
        ];
        for (before, setting, args, input) in steps {
            let mut seen = Vec::new();
            for (repo, sluice) in [(&ours, true), (&theirs, false)] {
                if !before.is_empty() {
                    env.git(repo, before);
                }
                let packs_before = list_dir(&repo.join(".git/objects/pack"));
                let mut all = vec!["-c", setting, "fetch", upload.as_str()];
                if setting.is_empty() {
                    all.drain(..2);
                }
                all.extend_from_slice(args);
                let command = env.sluice_or_git_command(sluice, repo, &all);
                let out = crate::util::run_with_input(command, input.as_bytes());
                let said = stderr(&out);
                assert!(!said.contains("panicked"), "{said}");
                let config = std::fs::read_to_string(repo.join(".git/config")).unwrap();
                let fetch_head = std::fs::read_to_string(repo.join(".git/FETCH_HEAD"));
                let mut received = Vec::new();
                for pack in list_dir(&repo.join(".git/objects/pack")) {
                    if pack.ends_with(".idx") && !packs_before.contains(&pack) {
                        let idx = repo.join(".git/objects/pack").join(&pack);
                        let out = env.git_with_input(
                            repo,
                            &["show-index"],
                            &std::fs::read(&idx).unwrap(),
                        );
                        let mut ids: Vec<String> = stdout(&out)
                            .lines()
                            .map(|l| l.split(' ').nth(1).unwrap_or_default().to_owned())
                            .collect();
                        ids.sort();
                        received.push(ids.join(" "));
                    }
                }
                if args.contains(&"--refetch") {
                    assert!(received.len() == 1, "{sluice}: no pack received: {said}");
                }
                // HEAD may be detached: listed with the refs.
                let refs = env.git(repo, &["for-each-ref", "--format=%(objectname) %(refname)"]);
                let head = std::fs::read_to_string(repo.join(".git/HEAD")).unwrap();
                seen.push(format!(
                    "exit {:?}\n{said}\n{config}\n{}HEAD {head}\nFETCH_HEAD:\n{}\nreceived: {received:?}",
                    out.status.code(),
                    String::from_utf8_lossy(&refs),
                    fetch_head.unwrap_or_default(),
                ));
            }
            assert_eq!(seen[0], seen[1], "{} fetch {args:?}", git.display());
        }
        fsck(&env, &ours);
    }
}

/// A branch holds commits only: an annotated tag fetched into `refs/heads/` is refused as
/// git's fetch refuses it (the same error, report and exit code), and the branch is not made.
#[test]
fn a_tag_fetched_into_a_branch_is_refused_as_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["commit", "-q", "--allow-empty", "-m", "one"]);
        env.git(&src, &["tag", "-a", "-m", "tagged", "v1"]);
        let mut said = Vec::new();
        for (sluice, name) in [(false, "theirs"), (true, "ours")] {
            env.git(env.path(), &["clone", "-q", "src", name]);
            let dir = env.path().join(name);
            let args = ["fetch", "origin", "refs/tags/v1:refs/heads/x"];
            let out = env.sluice_or_git(sluice, &dir, &args);
            said.push((out.status.code(), stderr(&out)));
            let branch =
                env.git_with_input(&dir, &["rev-parse", "--verify", "-q", "refs/heads/x"], b"");
            assert!(!branch.status.success(), "{name}: the branch was made");
            env.git(&dir, &["fsck", "--strict"]);
        }
        assert_eq!(said[1], said[0], "{git:?}");
    }
}

/// A repository whose only remote is not `origin` fetches from it and pushes to it when the
/// command names none, as git does (the branch names no remote); with a second remote, both
/// fall back to `origin`, which is none: the fetch fetches nothing, empties FETCH_HEAD and
/// succeeds, the push fails, as git's.
#[test]
fn the_only_remote_is_the_default_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (src, _, _) = served_source(&env, &git);
        let mut seen = Vec::new();
        for sluice in [true, false] {
            let (repo, bare) = (env.path().join("twin"), env.path().join("twin.git"));
            for dir in [&repo, &bare] {
                let _ = std::fs::remove_dir_all(dir);
            }
            let bare_str = bare.to_str().unwrap();
            env.git(
                env.path(),
                &["clone", "-q", "--bare", src.to_str().unwrap(), bare_str],
            );
            env.git(
                env.path(),
                &["init", "-q", "-b", "work", repo.to_str().unwrap()],
            );
            env.git(&repo, &["remote", "add", "upstream", bare_str]);
            let fetched = env.sluice_or_git(sluice, &repo, &["fetch"]);
            let mut state = fetched_state(&env, &repo, &fetched);
            env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "work"]);
            let push = ["-c", "push.default=current", "push"];
            let pushed = env.sluice_or_git(sluice, &repo, &push);
            state += &format!("push: {:?}\n{}", pushed.status.code(), refs(&env, &bare));
            env.git(&repo, &["remote", "add", "other", bare_str]);
            for args in [&["fetch"][..], &push] {
                let out = env.sluice_or_git(sluice, &repo, args);
                let fetch_head = std::fs::read_to_string(repo.join(".git/FETCH_HEAD"));
                let fetch_head = fetch_head.unwrap_or_default();
                state += &format!(
                    "{args:?} with two: {:?} {fetch_head:?}\n",
                    out.status.code()
                );
            }
            seen.push(state);
        }
        assert_eq!(seen[0], seen[1], "{}", git.display());
    }
}

/// Tags followed into new history: a fetch writes each once; a dry run writes none and, as
/// git's second pass finds them still new, says each twice, as git does.
#[test]
fn followed_tags_are_said_as_git_says_them() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (src, url, _) = served_source(&env, &git);
        let rounds: [&[&str]; 3] = [
            &["fetch", "-v", "--dry-run", "origin"],
            &["fetch", "--dry-run", "origin"],
            &["fetch", "-v", "origin"],
        ];
        for (round, args) in rounds.into_iter().enumerate() {
            let twins = [true, false].map(|sluice| {
                let repo = env.path().join(format!("twin-{round}-{sluice}"));
                env.git(env.path(), &["clone", "-q", &url, repo.to_str().unwrap()]);
                repo
            });
            // History the clones have not seen, with tags into it.
            let name = format!("round-{round}");
            let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
            let tree = text(env.git(&src, &["rev-parse", "HEAD^{tree}"]));
            let commit = ["commit-tree", tree.trim(), "-p", "HEAD", "-m", &name];
            let commit = text(env.git(&src, &commit));
            env.git(&src, &["update-ref", "HEAD", commit.trim()]);
            env.git(
                &src,
                &["tag", "-a", "-m", &name, &format!("annotated-{round}")],
            );
            env.git(&src, &["tag", &format!("light-{round}")]);
            let [ours, theirs] = [0, 1].map(|i| {
                let out = env.sluice_or_git(i == 0, &twins[i], args);
                format!("{}{}", stdout(&out), fetched_state(&env, &twins[i], &out))
            });
            assert_eq!(ours, theirs, "{args:?} with {}", git.display());
        }
    }
}

/// A branch the remote rewrote: reported as a forced update where its move is checked (the
/// default, `fetch.showForcedUpdates`, `--show-forced-updates`), taken as a fast-forward where
/// it is not, with git's warning unless `advice.fetchShowForcedUpdates` is off, as git does;
/// a branch of the command line without `+` is refused only when checked.
#[test]
fn forced_updates_are_checked_or_not_as_git_says() {
    let cases: [(&[&str], &[&str]); 6] = [
        (&[], &["origin"]),
        (&[], &["--no-show-forced-updates", "origin"]),
        (&["fetch.showForcedUpdates=false"], &["origin"]),
        (
            &["fetch.showForcedUpdates=false"],
            &["--show-forced-updates", "origin"],
        ),
        (
            &["advice.fetchShowForcedUpdates=false"],
            &["--no-show-forced-updates", "origin"],
        ),
        (
            &[],
            &["--no-show-forced-updates", "origin", "main:refs/heads/copy"],
        ),
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (src, url, _) = served_source(&env, &git);
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap().trim().to_owned();
        let before = text(env.git(&src, &["rev-parse", "main"]));
        for (round, (settings, args)) in cases.into_iter().enumerate() {
            env.git(&src, &["update-ref", "refs/heads/main", &before]);
            let twins = [true, false].map(|sluice| {
                let repo = env.path().join(format!("forced-{round}-{sluice}"));
                env.git(env.path(), &["clone", "-q", &url, repo.to_str().unwrap()]);
                env.git(&repo, &["branch", "copy", "origin/main"]);
                for setting in settings {
                    let (key, value) = setting.split_once('=').unwrap();
                    env.git(&repo, &["config", key, value]);
                }
                repo
            });
            // The remote rewrites main: a commit on its parent, not on it.
            let tree = text(env.git(&src, &["rev-parse", "main^{tree}"]));
            let message = format!("rewritten {round}");
            let args_new = ["commit-tree", &tree, "-p", "main~1", "-m", &message];
            let rewritten = text(env.git(&src, &args_new));
            env.git(&src, &["update-ref", "refs/heads/main", &rewritten]);
            let all = [&["fetch"][..], args].concat();
            let [ours, theirs] = [0, 1].map(|i| {
                let out = env.sluice_or_git(i == 0, &twins[i], &all);
                format!("{}{}", stdout(&out), fetched_state(&env, &twins[i], &out))
            });
            assert_eq!(ours, theirs, "{settings:?} {args:?} with {}", git.display());
        }
        env.git(&src, &["update-ref", "refs/heads/main", &before]);
    }
}
