//! `maintenance start` and `stop` twinned with git's, through git's own test variable
//! (`GIT_TEST_MAINT_SCHEDULER`) so that the machine's scheduler is never touched: stand-ins for
//! `crontab` (a table in a file) and `systemctl` record what they are asked. Compared: exit
//! code, stderr, the calls, the crontab (the user's own lines kept), the systemd units (against
//! git 2.47's form; 2.39 wrote one template timer), the user's and the repository's config.

use crate::util::{gits, Env};
use std::path::Path;

/// `text` with what differs between git and Sluice by design made alike: the program and its
/// global options before `for-each-repo`, the random minute, the temporary file's name, the
/// twin's directory.
fn normalized(text: &str, twin: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut line = line.replace(twin, "<twin>").replace(" --keep-going", "");
        if let (Some(start), Some(end)) = (line.find('"'), line.find(" for-each-repo")) {
            line.replace_range(start..end, "<program>");
        }
        if let Some(rest) = line.strip_prefix(|c: char| c.is_ascii_digit()) {
            line = format!("M{}", rest.trim_start_matches(|c: char| c.is_ascii_digit()));
        }
        if let Some(at) = line.rfind(":00") {
            if line.starts_with("OnCalendar=") && at >= 3 {
                line.replace_range(at - 2..at, "MM");
            }
        }
        if let Some(at) = line.find("git_cron_edit_tmp") {
            line.truncate(at);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Everything a scheduling command leaves: its exit code and stderr, the calls, the crontab,
/// each unit file, the user's and the repository's config.
fn state(env: &Env, twin: &str, out: &std::process::Output, units: bool) -> String {
    let home = env.path().join(format!("home-{twin}"));
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    let mut text = format!(
        "{:?}\n{}calls:\n{}crontab:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        read(&env.path().join(format!("calls-{twin}"))),
        read(&env.path().join(format!("crontab-{twin}"))),
    );
    let dir = home.join(".config/systemd/user");
    if units {
        for name in crate::util::list_dir(&dir) {
            text.push_str(&format!("{name}:\n{}", read(&dir.join(&name))));
        }
    }
    text.push_str(&read(&home.join(".gitconfig")));
    text.push_str(&read(&env.path().join(twin).join(".git/config")));
    normalized(&text, twin)
}

#[test]
fn start_and_stop_schedule_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let version = String::from_utf8(env.git(env.path(), &["version"])).unwrap();
        // 2.39 wrote one template timer; the unit files are compared with 2.47's form.
        let units = !version.contains(" 2.39.");
        let crontab = env.path().join("crontab.sh");
        crate::util::script(
            &crontab,
            "#!/bin/sh\necho \"crontab $*\" >> \"$CALLS\"\n\
             if [ \"$1\" = -l ]; then cat \"$TABLE\" 2>/dev/null; exit 0; fi\ncp \"$1\" \"$TABLE\"\n",
        );
        let systemctl = env.path().join("systemctl.sh");
        crate::util::script(
            &systemctl,
            "#!/bin/sh\necho \"systemctl $*\" >> \"$CALLS\"\n",
        );
        let both = format!(
            "crontab:{},systemctl:{}",
            crontab.display(),
            systemctl.display()
        );
        let cron_only = format!("crontab:{}", crontab.display());
        for twin in ["theirs", "ours"] {
            env.init(twin, false);
            std::fs::create_dir(env.path().join(format!("home-{twin}"))).unwrap();
            let table = "MAILTO=someone\n0 5 * * * nightly-backup\n";
            std::fs::write(env.path().join(format!("crontab-{twin}")), table).unwrap();
        }
        let steps: [(&[&str], &str); 8] = [
            (&["start", "--scheduler=crontab"], &cron_only),
            (&["start"], &both),
            (&["stop"], &both),
            (&["start", "--scheduler=crontab"], &both),
            (&["start", "--scheduler=launchctl"], &both),
            (&["stop"], &cron_only),
            (&["start", "--scheduler=bogus"], &both),
            (&["start"], ""),
        ];
        for (args, schedulers) in steps {
            let mut said = Vec::new();
            for (twin, sluice) in [("theirs", false), ("ours", true)] {
                let _ = std::fs::remove_file(env.path().join(format!("calls-{twin}")));
                let repo = env.path().join(twin);
                let home = env.path().join(format!("home-{twin}"));
                let all = [&["maintenance"][..], args].concat();
                let mut command = env.sluice_or_git_command(sluice, &repo, &all);
                command
                    .env("HOME", &home)
                    .env_remove("XDG_CONFIG_HOME")
                    .env_remove("GIT_CONFIG_GLOBAL")
                    .env("GIT_TEST_MAINT_SCHEDULER", schedulers)
                    .env("CALLS", env.path().join(format!("calls-{twin}")))
                    .env("TABLE", env.path().join(format!("crontab-{twin}")));
                let out = crate::util::run_with_input(command, b"");
                said.push(state(&env, twin, &out, units));
            }
            assert_eq!(said[1], said[0], "{} {args:?} {schedulers}", git.display());
        }
    }
}

/// `for-each-repo --config=<key> [--keep-going] <command>`: the command in each repository
/// the setting lists, in order; a failure ends the run (its exit code) unless `--keep-going`
/// (then 1 at the end). Compared with git's, each running its own `pack-refs --all`.
#[test]
fn for_each_repo_runs_in_every_listed_repository_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let version = String::from_utf8(env.git(env.path(), &["version"])).unwrap();
        // git 2.39 has no `--keep-going` (later versions do).
        let keep_going_too: &[bool] = match version.contains(" 2.39.") {
            true => &[false],
            false => &[false, true],
        };
        let mut outcomes = Vec::new();
        for (twin, sluice) in [("theirs", false), ("ours", true)] {
            let root = env.path().join(twin);
            std::fs::create_dir(&root).unwrap();
            let mut said = String::new();
            for &keep_going in keep_going_too {
                let mut config = String::from("[maintenance]\n");
                for name in ["a", "missing", "b"] {
                    let repo = root.join(format!("{name}-{keep_going}"));
                    if name != "missing" {
                        env.git(&root, &["init", "-q", repo.to_str().unwrap()]);
                        env.git(&repo, &["commit", "-q", "--allow-empty", "-m", name]);
                    }
                    config.push_str(&format!("\trepo = {}\n", repo.display()));
                }
                let file = root.join(format!("list-{keep_going}"));
                std::fs::write(&file, config).unwrap();
                let mut args = vec!["for-each-repo", "--config=maintenance.repo"];
                if keep_going {
                    args.push("--keep-going");
                }
                args.extend(["pack-refs", "--all"]);
                let mut command = env.sluice_or_git_command(sluice, &root, &args);
                command.env("GIT_CONFIG_GLOBAL", &file);
                let out = crate::util::run_with_input(command, b"");
                said.push_str(&format!("{:?}\n", out.status.code()));
                for name in ["a", "b"] {
                    let packed = root.join(format!("{name}-{keep_going}/.git/packed-refs"));
                    said.push_str(&format!("{name}: {}\n", packed.exists()));
                }
            }
            outcomes.push(said);
        }
        assert_eq!(outcomes[1], outcomes[0], "{}", git.display());
    }
}

/// The random minute is made alike whatever it is, 0 included (git and Sluice each pick one).
#[test]
fn every_minute_is_normalized_alike() {
    for (a, b) in [
        ("OnCalendar=Mon 0:00:00", "OnCalendar=Mon 0:13:00"),
        (
            "OnCalendar=*-*-* 1..23:00:00",
            "OnCalendar=*-*-* 1..23:59:00",
        ),
        (
            "OnCalendar=Tue..Sun *-*-* 0:10:00",
            "OnCalendar=Tue..Sun *-*-* 0:00:00",
        ),
        ("0 1-23 * * * x", "47 1-23 * * * x"),
    ] {
        assert_eq!(normalized(a, "twin"), normalized(b, "twin"));
    }
}
