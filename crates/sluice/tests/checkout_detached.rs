//! Checking out a commit that is no branch (`two~1`, `one^0`, a full id) detaches `HEAD` there
//! as git does: the same work tree, `HEAD` and messages on standard error, git's advice when
//! leaving a branch, "Previous HEAD position was" when leaving a detached `HEAD`; `-` and
//! `@{-1}` go back to where the last checkout came from.

use crate::checkout::{clone_both, git_view, history_for_switch};
use crate::util::{stderr, Env};

#[test]
fn detached_checkouts_say_what_git_says() {
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let src = history_for_switch(&env);
        let (ours, theirs) = clone_both(&env, &src, &[], "one");
        let two = String::from_utf8(env.git(&theirs, &["rev-parse", "two"])).unwrap();
        for target in [
            "two~1",
            "two",
            "one^0",
            two.trim(),
            "one",
            "-",
            "-",
            "@{-1}",
        ] {
            let said = env
                .git_command(&theirs, &["checkout", target])
                .output()
                .unwrap();
            let out = env.sluice(&ours, &["checkout", target], b"");
            assert_eq!(
                out.status.code(),
                said.status.code(),
                "{target} with {git:?}"
            );
            assert_eq!(
                stderr(&out),
                String::from_utf8_lossy(&said.stderr),
                "{target} with {git:?}"
            );
            assert_eq!(
                env.git(&ours, &["rev-parse", "HEAD"]),
                env.git(&theirs, &["rev-parse", "HEAD"]),
                "{target}"
            );
            assert_eq!(git_view(&env, &ours), git_view(&env, &theirs), "{target}");
        }
    }
}
