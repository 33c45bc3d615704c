//! git's gc with Sluice standing in for the `repack` it runs (`-d -l` and `-A
//! --unpack-unreachable=<date>` or `--cruft --cruft-expiration=<date>`, `-f --depth --window`
//! for `--aggressive`, `--keep-pack` for `--keep-largest-pack`): the same refs and objects,
//! loose and packed, as with git's own repack, and fsck finds them whole.

use crate::pack_objects::held_with_and_without;
use crate::util::{gits, Env};

#[test]
fn gits_gc_runs_with_sluices_repack() {
    let commands: [&[&str]; 5] = [
        &["-c", "gc.cruftPacks=false", "gc", "-q"],
        &["-c", "gc.cruftPacks=true", "gc", "-q"],
        &["gc", "-q", "--aggressive"],
        &["gc", "-q", "--keep-largest-pack"],
        &["gc", "-q", "--prune=now"],
    ];
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let exec = crate::util::stand_in(&env, &["repack"]);
        let seed = env.init("seed", false);
        for i in 0..8 {
            let text: String = (0..30 + i)
                .map(|l| format!("line {l} {}\n", i % 2))
                .collect();
            std::fs::write(seed.join(format!("f{}", i % 3)), text).unwrap();
            env.git(&seed, &["add", "."]);
            env.git(&seed, &["commit", "-q", "-m", &format!("c{i}")]);
            if i == 4 {
                env.git(&seed, &["repack", "-q"]);
            }
        }
        // Something no ref reaches, packed and loose.
        let lone = env.git_with_input(&seed, &["hash-object", "-w", "--stdin"], b"lone\n");
        assert!(lone.status.success());
        env.git(&seed, &["repack", "-q"]);
        let loose = env.git_with_input(&seed, &["hash-object", "-w", "--stdin"], b"loose\n");
        assert!(loose.status.success());
        for command in commands {
            let seen = held_with_and_without(&env, (&seed, &exec), command);
            assert_eq!(seen[1], seen[0], "{command:?} with {}", git_bin.display());
        }
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(calls.contains("repack"), "{calls}");
    }
}
