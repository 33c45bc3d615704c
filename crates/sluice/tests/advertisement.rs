//! What upload-pack's advertisement says beside the refs, as git's says it under the same
//! settings.

use crate::upload_pack::source;
use crate::util::{gits, run_with_input, Env};

/// The `session-id=` values of an advertisement, each as its shape: every hexadecimal digit
/// made `x`, so that git's and Sluice's ids compare although their times and processes differ.
fn session_id_shapes(advertisement: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(advertisement).replace('\0', " ");
    text.match_indices("session-id=")
        .map(|(at, _)| {
            let value = text[at..].split([' ', '\n']).next().unwrap();
            value
                .chars()
                .map(|c| if c.is_ascii_hexdigit() { 'x' } else { c })
                .collect()
        })
        .collect()
}

/// `transfer.advertiseSID`: a `session-id=` capability in v0 and v2 exactly when git's has
/// one, in the shape of git's (`<UTC time>Z-H<host>-P<process>`).
#[test]
fn transfer_advertise_sid_names_the_session_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let repo = source(&env);
        let path = repo.to_str().unwrap();
        for setting in ["false", "true"] {
            env.git(&repo, &["config", "transfer.advertiseSID", setting]);
            for protocol in ["", "version=2"] {
                let shapes: Vec<Vec<String>> = [false, true]
                    .into_iter()
                    .map(|sluice| {
                        let args = ["upload-pack", path];
                        let mut command = env.sluice_or_git_command(sluice, env.path(), &args);
                        command.env("GIT_PROTOCOL", protocol);
                        session_id_shapes(&run_with_input(command, b"0000").stdout)
                    })
                    .collect();
                let case = format!("advertiseSID={setting} {protocol:?}");
                assert_eq!(
                    shapes[0].len(),
                    usize::from(setting == "true"),
                    "git, {case}"
                );
                assert_eq!(shapes[1], shapes[0], "{case}");
            }
        }
    }
}
