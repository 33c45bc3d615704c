//! The sizes progress says, as git says them: index-pack counts every byte of the pack (the
//! trailer too), unpack-objects every byte but the trailer, and both print KiB and MiB
//! rounded as git's (1024 bytes stay bytes). `index-pack -v`, `unpack-objects` at a terminal,
//! and a fetch's small pack unpacked at a terminal, beside git's.

use crate::util::terminal::on_terminal;
use crate::util::{gits, stderr, Env};
use std::path::Path;
use std::process::Command;

#[test]
fn progress_sizes_are_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let source = env.init("source", false);
        for i in 0..40 {
            let lines: String = (0..i * 7).map(|n| format!("{n} of {i}\n")).collect();
            std::fs::write(source.join(format!("f{}", i % 5)), lines).unwrap();
            env.git(&source, &["add", "."]);
            env.git(&source, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        env.git(&source, &["repack", "-q", "-a", "-d"]);
        let pack_dir = source.join(".git/objects/pack");
        let pack = (crate::util::list_dir(&pack_dir).into_iter())
            .find(|name| name.ends_with(".pack"))
            .map(|name| pack_dir.join(name))
            .unwrap();
        let mut said = Vec::new();
        for sluice in [false, true] {
            let repo = env.init(&format!("into-{sluice}"), false);
            let input = std::fs::read(&pack).unwrap();
            let args = ["index-pack", "--stdin", "-v"];
            let command = env.sluice_or_git_command(sluice, &repo, &args);
            let out = crate::util::run_with_input(command, &input);
            assert!(out.status.success(), "{}", stderr(&out));
            let mut sizes = sizes(&stderr(&out));
            let command = env.sluice_or_git_command(sluice, &repo, &["unpack-objects"]);
            sizes.extend(self::sizes(&on_terminal(&reading(&command, &pack)).1));
            let fetched = env.init(&format!("fetched-{sluice}"), false);
            let url = source.to_str().unwrap();
            let args = [
                "-c",
                "fetch.unpackLimit=1000",
                "fetch",
                "--progress",
                url,
                "HEAD",
            ];
            let command = env.sluice_or_git_command(sluice, &fetched, &args);
            sizes.extend(self::sizes(&on_terminal(&command).1));
            said.push(sizes);
        }
        assert_eq!(said[0].len(), 3, "{:?}", said[0]);
        assert_eq!(said[1], said[0], "{}", git.display());
    }
}

/// `command` with `file` on its standard input (through a shell, so that it still runs at
/// the terminal `on_terminal` gives it).
fn reading(command: &Command, file: &Path) -> Command {
    let mut shell = Command::new("sh");
    shell.arg("-c").arg("exec \"$@\" < \"$INPUT\"").arg("sh");
    shell.arg(command.get_program()).args(command.get_args());
    shell.env("INPUT", file);
    if let Some(dir) = command.get_current_dir() {
        shell.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => shell.env(key, value),
            None => shell.env_remove(key),
        };
    }
    shell
}

/// The final lines of the receiving and unpacking phases in `text`, their throughput left
/// out (it follows the clock).
fn sizes(text: &str) -> Vec<String> {
    (text.split(['\r', '\n']))
        .filter(|line| {
            (line.starts_with("Receiving objects") || line.starts_with("Unpacking objects"))
                && line.trim_end().ends_with("done.")
        })
        .map(|line| line.split(" | ").next().unwrap_or(line).to_owned())
        .collect()
}
