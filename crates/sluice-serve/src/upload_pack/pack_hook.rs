//! `uploadpack.packObjectsHook`: hosts plug their pack caches in where upload-pack would run
//! `git pack-objects`. The hook runs through the shell with git's pack-objects command line
//! after it (`<hook> git pack-objects --revs --thin --stdout ...`), reads the revisions on
//! stdin as git's upload-pack writes them, and its stdout is the pack and its stderr the
//! progress. As git, the setting counts only from protected configuration (system, global,
//! command line), never from the served repository's own: a repository must not be able to
//! run commands on the server that serves it.

use super::Request;
use crate::ServeError;
use sluice_graph::ObjectFilter;
use sluice_object::{IdSet, ObjectId};
use sluice_odb::Config;
use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// The hook protected configuration names, if any.
pub(super) fn configured() -> Result<Option<String>, ServeError> {
    let protected = Config::load(None)?;
    Ok(protected
        .get("uploadpack.packobjectshook")
        .filter(|hook| !hook.is_empty())
        .map(str::to_owned))
}

/// pack-objects' arguments for `request`, as git's upload-pack gives them.
fn arguments(request: &Request, shallow: &IdSet) -> Vec<String> {
    let mut args = vec!["git"];
    // A shallow request's boundary is given on stdin; the repository's own shallow file
    // must not cut the walk as well.
    if !shallow.is_empty() {
        args.extend(["--shallow-file", ""]);
    }
    args.extend(["pack-objects", "--revs"]);
    args.extend(request.thin.then_some("--thin"));
    args.push("--stdout");
    args.extend((!shallow.is_empty()).then_some("--shallow"));
    args.extend((!request.no_progress).then_some("--progress"));
    args.extend(request.ofs_delta.then_some("--delta-base-offset"));
    args.extend(request.include_tag.then_some("--include-tag"));
    let mut args: Vec<String> = args.into_iter().map(str::to_owned).collect();
    if request.filter != ObjectFilter::None {
        args.push(format!("--filter={}", request.filter));
    }
    args
}

/// What pack-objects reads: the shallow boundary, the wants, `--not`, the haves.
fn revisions(request: &Request, shallow: &IdSet) -> String {
    let mut shallow: Vec<&ObjectId> = shallow.iter().collect();
    shallow.sort_unstable();
    let mut text = String::new();
    for id in shallow {
        text.push_str(&format!("--shallow {id}\n"));
    }
    // Each want once, in the order asked, as git's list of wanted objects holds them.
    let mut seen = IdSet::default();
    for id in request.wants.iter().filter(|id| seen.insert(**id)) {
        text.push_str(&format!("{id}\n"));
    }
    text.push_str("--not\n");
    for id in &request.haves {
        text.push_str(&format!("{id}\n"));
    }
    text.push('\n');
    text
}

/// Runs `hook` for `request` in `git_dir`: the pack goes to `pack`, the hook's stderr to
/// `progress` as it comes.
pub(super) fn run(
    hook: &str,
    git_dir: &std::path::Path,
    request: &Request,
    shallow: &IdSet,
    pack: &mut dyn Write,
    progress: &mut (dyn FnMut(&[u8]) + Send),
) -> Result<(), ServeError> {
    let failed = |source| ServeError::PackHook {
        hook: hook.to_owned(),
        source,
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("{hook} \"$@\""))
        .arg(hook)
        .args(arguments(request, shallow))
        .current_dir(git_dir)
        .env("GIT_DIR", git_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(failed)?;
    let input = revisions(request, shallow);
    let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        return Err(failed(std::io::Error::other("no pipes to the hook")));
    };
    let copied = std::thread::scope(|scope| {
        scope.spawn(move || {
            // A hook that stops reading early says so by its exit status.
            let _ = stdin.write_all(input.as_bytes());
        });
        scope.spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n @ 1..) = stderr.read(&mut buf) {
                progress(&buf[..n]);
            }
        });
        std::io::copy(&mut stdout, pack)
    });
    let status = child.wait().map_err(failed)?;
    copied.map_err(failed)?;
    if !status.success() {
        return Err(ServeError::PackHookFailed {
            hook: hook.to_owned(),
        });
    }
    Ok(())
}
