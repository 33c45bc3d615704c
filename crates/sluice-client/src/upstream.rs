//! Where a branch stands against its upstream (`branch.<name>.remote` and `.merge`, the merged
//! ref tracked here as `remote.<remote>.fetch` maps it), and git's words for it (as git's
//! remote.c words them for checkout and status).

use sluice_repo::Repository;

/// How the branch compares with its upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// The same commit.
    UpToDate,
    /// This many commits the upstream lacks.
    Ahead(usize),
    /// This many commits the branch lacks (a fast-forward away).
    Behind(usize),
    /// Commits on both sides: (the branch's, the upstream's).
    Diverged(usize, usize),
    /// The upstream's tracking ref is gone.
    Gone,
}

/// A branch's upstream as git names it (`origin/main`, or `main` for a local one) and where
/// the branch stands against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// The upstream's short name.
    pub shown: String,
    /// Where the branch stands.
    pub standing: Standing,
}

impl Upstream {
    /// git's words for where a branch stands against its upstream, with the hints of
    /// `advice.statusHints` (the diverged one as git 2.47 words it).
    pub fn report(&self, hints: bool) -> String {
        let base = &self.shown;
        let commits = |n: usize| if n == 1 { "commit" } else { "commits" };
        let (report, hint) = match self.standing {
            Standing::Gone => (
                format!("Your branch is based on '{base}', but the upstream is gone.\n"),
                "  (use \"git branch --unset-upstream\" to fixup)\n",
            ),
            Standing::UpToDate => (format!("Your branch is up to date with '{base}'.\n"), ""),
            Standing::Ahead(n) => (
                format!("Your branch is ahead of '{base}' by {n} {}.\n", commits(n)),
                "  (use \"git push\" to publish your local commits)\n",
            ),
            Standing::Behind(n) => (
                format!(
                    "Your branch is behind '{base}' by {n} {}, and can be fast-forwarded.\n",
                    commits(n)
                ),
                "  (use \"git pull\" to update your local branch)\n",
            ),
            Standing::Diverged(ours, theirs) => (
                format!(
                    "Your branch and '{base}' have diverged,\nand have {ours} and {theirs} different {} each, respectively.\n",
                    commits(ours + theirs)
                ),
                "  (use \"git pull\" if you want to integrate the remote branch with yours)\n",
            ),
        };
        match hints {
            true => report + hint,
            false => report,
        }
    }
}

/// The upstream of the local branch `branch` (its short name) and where the branch stands,
/// or `None` when it has no upstream or the count cannot be made.
pub fn standing(repo: &Repository, branch: &str) -> Option<Upstream> {
    let (remote, merge) = sluice_repo::upstream::of(repo.config(), branch)?;
    let tracking = sluice_repo::upstream::tracked_as(repo, remote, merge)?;
    let shown = ["refs/heads/", "refs/remotes/", "refs/"]
        .iter()
        .find_map(|prefix| tracking.strip_prefix(prefix))
        .unwrap_or(&tracking)
        .to_owned();
    let refs = repo.refs();
    let ours = refs.resolve(&format!("refs/heads/{branch}")).ok()?.1?;
    let Some(theirs) = refs.resolve(&tracking).ok().and_then(|(_, id)| id) else {
        let standing = Standing::Gone;
        return Some(Upstream { shown, standing });
    };
    let standing = match sluice_graph::ancestry::ahead_behind(repo.objects(), &ours, &theirs)? {
        (0, 0) => Standing::UpToDate,
        (ahead, 0) => Standing::Ahead(ahead),
        (0, behind) => Standing::Behind(behind),
        (ahead, behind) => Standing::Diverged(ahead, behind),
    };
    Some(Upstream { shown, standing })
}
