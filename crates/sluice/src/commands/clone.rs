//! `sluice clone`: a new repository from another, as `git clone` makes it: the pack with its
//! indexes, the remote's branches as `refs/remotes/origin/*` and its tags in `packed-refs`,
//! `origin`'s configuration, the default branch checked out. This version reaches local paths
//! and `file://` URLs over protocol v2; a failure removes what it created.

use super::fetch_pack::receive_wanted;
use super::Context;
use crate::progress::TerminalProgress;
use anyhow::{anyhow, bail, Context as _};
use clap::Args;
use sluice_checkout::{checkout_fresh, commit_tree, CheckoutOptions};
use sluice_fetch::{Connection, RemoteRef};
use sluice_odb::{append_section, RefTarget};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `git clone`'s arguments (those this version supports).
#[derive(Debug, Args)]
pub struct CloneArgs {
    /// Make a bare repository.
    #[arg(long)]
    bare: bool,
    /// Do not check out HEAD.
    #[arg(short = 'n', long)]
    no_checkout: bool,
    /// Check out this branch instead of the remote's HEAD.
    #[arg(short = 'b', long, value_name = "name")]
    branch: Option<String>,
    /// No messages, no progress.
    #[arg(short, long)]
    quiet: bool,
    /// The command that runs upload-pack on the other side.
    #[arg(
        short = 'u',
        long,
        value_name = "command",
        default_value = "git-upload-pack"
    )]
    upload_pack: String,
    /// The repository to clone: a path or a `file://` URL.
    #[arg(value_name = "repository")]
    repository: String,
    /// The new directory (by default named after the repository). Not named `directory`:
    /// that is the global `-C`.
    #[arg(value_name = "directory")]
    into: Option<PathBuf>,
}

/// The directory git would name after `repository`: its last component without `.git`.
fn humanish(repository: &str, bare: bool) -> String {
    let trimmed = repository.trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/.git").unwrap_or(trimmed);
    let last = trimmed.rsplit(['/', ':']).next().unwrap_or(trimmed);
    let name = last.strip_suffix(".git").unwrap_or(last);
    if bare {
        format!("{name}.git")
    } else {
        name.to_owned()
    }
}

/// Removes what a failed clone created, unless it succeeded.
struct Cleanup {
    path: PathBuf,
    /// The directory existed (empty) before: empty it rather than remove it.
    existed: bool,
    armed: bool,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if self.existed {
            if let Ok(entries) = std::fs::read_dir(&self.path) {
                for entry in entries.flatten() {
                    let path = entry.path();
                    let _ = if path.is_dir() {
                        std::fs::remove_dir_all(&path)
                    } else {
                        std::fs::remove_file(&path)
                    };
                }
            }
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Runs clone.
pub fn run(args: CloneArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let local = args
        .repository
        .strip_prefix("file://")
        .unwrap_or(&args.repository);
    let source = std::path::absolute(context.cwd.join(local))?;
    // git records a local path as the absolute path, a URL as given.
    let url = if args.repository.starts_with("file://") {
        args.repository.clone()
    } else {
        source.to_string_lossy().trim_end_matches('/').to_owned()
    };
    let directory = args
        .into
        .clone()
        .unwrap_or_else(|| PathBuf::from(humanish(&args.repository, args.bare)));
    let target = context.cwd.join(&directory);
    let existed = target.exists();
    if existed && std::fs::read_dir(&target).map_or(true, |mut d| d.next().is_some()) {
        bail!(
            "destination path '{}' already exists and is not an empty directory.",
            directory.display()
        );
    }
    if !args.quiet {
        let what = if args.bare { "bare repository" } else { "" };
        let into = if what.is_empty() {
            String::new()
        } else {
            format!("{what} ")
        };
        eprintln!("Cloning into {into}'{}'...", directory.display());
    }
    let mut cleanup = Cleanup {
        path: target.clone(),
        existed,
        armed: true,
    };
    let git_dir = if args.bare {
        target.clone()
    } else {
        target.join(".git")
    };
    init(&git_dir, args.bare)?;
    let work_tree = (!args.bare).then(|| target.clone());
    let repo = context.open_git_dir(git_dir.clone(), work_tree.clone())?;

    let mut connection = Connection::local(&source, &args.upload_pack)?;
    let advertised = connection.ls_refs(&["HEAD", "refs/heads/", "refs/tags/"])?;
    let branches: Vec<&RemoteRef> = advertised
        .iter()
        .filter(|r| r.name.starts_with("refs/heads/"))
        .collect();
    let tags: Vec<&RemoteRef> = advertised
        .iter()
        .filter(|r| r.name.starts_with("refs/tags/"))
        .collect();
    let head = advertised.iter().find(|r| r.name == "HEAD");
    let default_branch = match &args.branch {
        Some(name) => {
            let full = format!("refs/heads/{name}");
            if !branches.iter().any(|b| b.name == full) {
                bail!("Remote branch {name} not found in upstream origin");
            }
            Some(full)
        }
        None => head.and_then(|h| h.symref_target.clone()),
    };
    let wants: Vec<_> = branches.iter().chain(&tags).map(|r| r.id).collect();
    if !wants.is_empty() {
        let show_progress = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
        receive_wanted(
            &mut connection,
            &repo,
            wants,
            show_progress,
            show_progress,
            None,
        )?;
    }
    connection.finish()?;
    // The new pack is there now: open again to see it.
    let repo = context.open_git_dir(git_dir.clone(), work_tree)?;

    write_refs(&git_dir, &branches, &tags, args.bare)?;
    let config_path = git_dir.join("config");
    if args.bare {
        append_section(&config_path, "remote", Some("origin"), &[("url", &url)])?;
    } else {
        append_section(
            &config_path,
            "remote",
            Some("origin"),
            &[
                ("url", &url),
                ("fetch", "+refs/heads/*:refs/remotes/origin/*"),
            ],
        )?;
    }
    let checkout = match &default_branch {
        Some(branch) => {
            let short = branch.trim_start_matches("refs/heads/");
            repo.refs()
                .write("HEAD", &RefTarget::Symbolic(branch.clone()))?;
            let id = branches
                .iter()
                .find(|b| &b.name == branch)
                .map(|b| b.id)
                .ok_or_else(|| {
                    anyhow!("the remote HEAD points to {branch}, which it does not have")
                })?;
            if !args.bare {
                repo.refs().write(branch, &RefTarget::Id(id))?;
                // origin/HEAD follows the remote's HEAD, whichever branch is checked out.
                if let Some(remote_head) = head.and_then(|h| h.symref_target.as_deref()) {
                    let remote_short = remote_head.trim_start_matches("refs/heads/");
                    repo.refs().write(
                        "refs/remotes/origin/HEAD",
                        &RefTarget::Symbolic(format!("refs/remotes/origin/{remote_short}")),
                    )?;
                }
                append_section(
                    &config_path,
                    "branch",
                    Some(short),
                    &[("remote", "origin"), ("merge", branch)],
                )?;
            }
            Some(id)
        }
        None => None,
    };
    if let (Some(id), false, false) = (checkout, args.bare, args.no_checkout) {
        let tree = commit_tree(repo.objects(), &id)?;
        let options = CheckoutOptions::from_config(repo.config())?;
        let progress = TerminalProgress::new(crate::progress::enabled(!args.quiet, false));
        for warning in checkout_fresh(&repo, &tree, &options, &progress)? {
            eprintln!("warning: {warning}");
        }
    }
    cleanup.armed = false;
    Ok(ExitCode::SUCCESS)
}

/// An empty repository: the directories, `HEAD` and `core` settings `git init` writes.
fn init(git_dir: &Path, bare: bool) -> anyhow::Result<()> {
    for dir in ["objects/pack", "objects/info", "refs/heads", "refs/tags"] {
        std::fs::create_dir_all(git_dir.join(dir))
            .with_context(|| format!("cannot create '{}'", git_dir.join(dir).display()))?;
    }
    std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/master\n")?;
    let bare_value = if bare { "true" } else { "false" };
    let mut core = vec![
        ("repositoryformatversion", "0"),
        ("filemode", "true"),
        ("bare", bare_value),
    ];
    if !bare {
        core.push(("logallrefupdates", "true"));
    }
    append_section(&git_dir.join("config"), "core", None, &core)?;
    Ok(())
}

/// `packed-refs` as git clone writes it: the branches (as remote-tracking refs unless bare)
/// and the tags, sorted, each annotated tag followed by what it peels to.
fn write_refs(
    git_dir: &Path,
    branches: &[&RemoteRef],
    tags: &[&RemoteRef],
    bare: bool,
) -> anyhow::Result<()> {
    let mut lines: Vec<(String, &RemoteRef)> = branches
        .iter()
        .map(|b| {
            let name = if bare {
                b.name.clone()
            } else {
                format!(
                    "refs/remotes/origin/{}",
                    b.name.trim_start_matches("refs/heads/")
                )
            };
            (name, *b)
        })
        .chain(tags.iter().map(|t| (t.name.clone(), *t)))
        .collect();
    lines.sort_by(|a, b| a.0.cmp(&b.0));
    let mut text = String::from("# pack-refs with: peeled fully-peeled sorted \n");
    for (name, remote) in lines {
        text.push_str(&format!("{} {name}\n", remote.id));
        if let Some(peeled) = remote.peeled {
            text.push_str(&format!("^{peeled}\n"));
        }
    }
    sluice_odb::write_locked(&git_dir.join("packed-refs"), text.as_bytes(), false)?;
    Ok(())
}
