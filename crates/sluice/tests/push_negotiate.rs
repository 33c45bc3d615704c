//! `push.negotiate`: a push first negotiates over upload-pack, so that history the server holds
//! without advertising it (here under a ref `receive.hideRefs` hides) is not sent again; a
//! negotiation that fails (protocol v0) is reported and the push goes on, as git's. Twins
//! compared after each step, and the objects each push sent counted by the server's
//! `pre-receive` hook, in the quarantine where they arrive.

use crate::push::{compare, twins};
use crate::util::{gits, script, Env};

/// A `pre-receive` hook that appends to `received` how many objects arrived with the push.
const COUNTING_HOOK: &str = r#"#!/bin/sh
n=0
for idx in "$GIT_OBJECT_DIRECTORY"/pack/*.idx; do
    [ -f "$idx" ] && n=$((n + $(git show-index < "$idx" | wc -l)))
done
loose=$(find "$GIT_OBJECT_DIRECTORY" -type f ! -path '*/pack/*' | wc -l)
echo "$n packed, $loose loose" >> received
cat >/dev/null
"#;

#[test]
fn push_negotiate_leaves_out_what_the_server_has_as_gits_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        for side in &sides {
            let (work, server) = (side.join("work"), side.join("server.git"));
            env.git(&server, &["config", "receive.unpackLimit", "1"]);
            std::fs::create_dir_all(server.join("hooks")).unwrap();
            script(&server.join("hooks/pre-receive"), COUNTING_HOOK);
            env.git(&work, &["push", "-q", "origin", "main"]);
            // The server gets a commit under a ref it does not advertise to pushers.
            std::fs::write(work.join("hidden"), "hidden history\n".repeat(50)).unwrap();
            env.git(&work, &["add", "hidden"]);
            env.git(&work, &["commit", "-q", "-m", "hidden"]);
            env.git(&work, &["push", "-q", "origin", "HEAD:refs/hidden/one"]);
            env.git(&server, &["config", "receive.hideRefs", "refs/hidden"]);
        }
        let steps: Vec<Vec<&str>> = vec![
            vec!["!commit", "next"],
            vec!["!git", "config", "push.negotiate", "true"],
            // Not thin: the server's index-pack would add the bases of deltas against what it
            // has to the pack counted (Sluice finds a delta git does not).
            vec!["--no-thin", "origin", "main"],
        ];
        compare(&env, &git, &sides, &steps);
        let received = sides
            .each_ref()
            .map(|side| std::fs::read_to_string(side.join("server.git/received")).unwrap());
        assert_eq!(
            received[1],
            received[0],
            "{}: objects received",
            git.display()
        );
        // Protocol v0 cannot negotiate: git's warning, and the push goes on.
        let steps: Vec<Vec<&str>> = vec![
            vec!["!git", "config", "protocol.version", "0"],
            vec!["!commit", "after"],
            vec!["origin", "main"],
        ];
        compare(&env, &git, &sides, &steps);
    }
}
