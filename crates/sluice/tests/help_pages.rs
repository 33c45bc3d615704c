//! Help that matches behaviour: `--help`, the man pages and the shell completions come from the
//! same definitions, name what the commands do (`repack --write-midx -b` writes the multi-pack
//! bitmap; `serve` names `http.receivepack`), and are complete.

use crate::util::{stderr, stdout, Env};

#[test]
fn man_pages_and_completions_cover_every_command() {
    let env = Env::new();
    let dir = env.path().join("man");
    let out = env.sluice(env.path(), &["man", dir.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let help = stdout(&env.sluice(env.path(), &["--help"], b""));
    // Every command listed in --help has its page.
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    assert!(
        commands.contains(&"serve") && commands.contains(&"repack"),
        "{help}"
    );
    for command in &commands {
        let page = dir.join(format!("sluice-{command}.1"));
        let text = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{page:?}: {e}"));
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{page:?}");
    }
    let repack = std::fs::read_to_string(dir.join("sluice-repack.1")).unwrap();
    assert!(repack.contains("multi\\-pack bitmap"), "{repack}");
    let serve = stdout(&env.sluice(env.path(), &["serve", "--help"], b""));
    assert!(serve.contains("http.receivepack"), "{serve}");
    for shell in ["bash", "zsh", "fish"] {
        let out = env.sluice(env.path(), &["completions", shell], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        let script = stdout(&out);
        for command in &commands {
            assert!(
                script.contains(command),
                "{shell} completion lacks {command}"
            );
        }
    }
}
