//! Push refspecs (`[+]<src>[:<dst>]`, `:<dst>` to delete, `:` for matching branches, patterns
//! with one `*`, `^<ref>` to leave out the remote refs it names or matches) and how git pairs
//! them with local and remote refs: a source is any name or
//! expression of this repository ([`resolve_source`], which `--force-with-lease=<ref>:<expect>`
//! reads its expected value with too), a short destination is found among the remote's refs
//! or given the prefix of its source. `--prune` and `--follow-tags` add to what is paired;
//! negative refspecs take away from all of it.

use super::PushError;
use sluice_object::{ObjectId, ObjectKind};
use sluice_remote::RemoteRef;
use sluice_repo::{RefTarget, Repository};

/// One push refspec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushRefspec {
    /// `^`: no update of a remote ref `src` names (or matches, a pattern) is made, whatever
    /// the other refspecs pair with it.
    pub negative: bool,
    /// `+`: the update may lose history.
    pub force: bool,
    /// What is pushed; `None` deletes the destination.
    pub src: Option<String>,
    /// Where it goes; `None` takes the source's name.
    pub dst: Option<String>,
}

impl PushRefspec {
    /// Reads a refspec as `git push` does.
    pub fn parse(text: &str) -> Result<PushRefspec, PushError> {
        let invalid = || PushError::InvalidRefspec(text.to_owned());
        if let Some(name) = text.strip_prefix('^') {
            // One side only, and a name or a pattern of one `*`.
            if name.is_empty() || name.contains(':') || name.matches('*').count() > 1 {
                return Err(invalid());
            }
            return Ok(PushRefspec {
                negative: true,
                force: false,
                src: Some(name.to_owned()),
                dst: None,
            });
        }
        let (force, rest) = match text.strip_prefix('+') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (src, dst) = match rest.split_once(':') {
            Some((src, dst)) => (src, Some(dst)),
            None => (rest, None),
        };
        // `@` alone is another name of HEAD, as git reads refspecs.
        let src = match src {
            "@" => "HEAD",
            src => src,
        };
        let stars = |s: &str| s.matches('*').count();
        if stars(src) > 1 || dst.is_some_and(|d| stars(d) != stars(src)) {
            return Err(invalid());
        }
        if dst.is_some_and(|d| !d.is_empty() && !valid_name(d)) {
            return Err(invalid());
        }
        // A source alone, or a pattern, must look like a ref; an expression (`main~1`,
        // `@{u}`) is a source only with a destination, as git reads push refspecs.
        if !src.is_empty() && (dst.is_none() || src.contains('*')) && !valid_name(src) {
            return Err(invalid());
        }
        // `<src>:` names no destination: git refuses it for a push (a fetch takes it); an
        // empty refspec (or `+` alone) names nothing at all.
        if !src.is_empty() && dst == Some("") || src.is_empty() && dst.is_none() {
            return Err(invalid());
        }
        Ok(PushRefspec {
            negative: false,
            force,
            src: (!src.is_empty()).then(|| src.to_owned()),
            dst: dst.filter(|d| !d.is_empty()).map(str::to_owned),
        })
    }

    /// `:` (or `+:`): every branch that exists on both sides.
    fn is_matching(&self) -> bool {
        self.src.is_none() && self.dst.is_none()
    }

    fn is_pattern(&self) -> bool {
        self.src.as_deref().is_some_and(|s| s.contains('*'))
    }
}

fn valid_name(name: &str) -> bool {
    sluice_repo::refs::is_valid_ref_name(&name.replacen('*', "x", 1))
}

/// One ref update to offer the server, before its status is known.
#[derive(Debug, Clone)]
pub(crate) struct Paired {
    /// What is pushed (`None`: the destination is deleted).
    pub(crate) src: Option<Source>,
    /// The remote ref's full name.
    pub(crate) dst: String,
    pub(crate) force: bool,
}

/// Pairs `specs` with the local refs and the remote's `advertised` refs, in the order of the
/// specs, each destination once (the first spec naming it wins).
fn pair(
    repo: &Repository,
    specs: &[PushRefspec],
    advertised: &[RemoteRef],
) -> Result<Vec<Paired>, PushError> {
    let mut local = repo.refs().list()?;
    // git lists symbolic refs with the value they resolve to: a mirror pushes `origin/HEAD`.
    for (name, _) in repo.refs().list_symbolic() {
        if let Ok((_, Some(id))) = repo.refs().resolve(&name) {
            local.push((name, id));
        }
    }
    local.sort();
    let mut paired: Vec<Paired> = Vec::new();
    let mut add = |p: Paired| {
        if !paired.iter().any(|q| q.dst == p.dst) {
            paired.push(p);
        }
    };
    for spec in specs.iter().filter(|spec| !spec.negative) {
        if spec.is_matching() {
            for (name, id) in &local {
                if name.starts_with("refs/heads/") && advertised.iter().any(|r| &r.name == name) {
                    add(ref_source(name, *id, name, spec.force));
                }
            }
        } else if spec.is_pattern() {
            let src = spec.src.as_deref().unwrap_or_default();
            let dst = spec.dst.as_deref().unwrap_or(src);
            for (name, id) in &local {
                if let Some(star) = glob_match(src, name) {
                    add(ref_source(
                        name,
                        *id,
                        &dst.replacen('*', &star, 1),
                        spec.force,
                    ));
                }
            }
        } else {
            add(explicit(repo, spec, advertised)?);
        }
    }
    Ok(paired)
}

fn ref_source(name: &str, id: ObjectId, dst: &str, force: bool) -> Paired {
    Paired {
        src: Some(Source {
            shown: name.to_owned(),
            ref_name: Some(name.to_owned()),
            id,
        }),
        dst: dst.to_owned(),
        force,
    }
}

/// Every update a push asks for, in the order git pairs them: `specs` with the local refs and
/// the remote's `advertised` ones ([`pair`]); with `prune`, the deletions of what patterns
/// cover and this side lacks; with `follow_tags`, the annotated tags of the history pushed;
/// then what a negative refspec names left out of all of them.
pub(crate) fn pair_all(
    repo: &Repository,
    specs: &[PushRefspec],
    advertised: &[RemoteRef],
    (prune, follow_tags): (bool, bool),
) -> Result<Vec<Paired>, PushError> {
    let mut paired = pair(repo, specs, advertised)?;
    if prune {
        paired.extend(pruned(specs, &paired, advertised));
    }
    if follow_tags {
        paired.extend(followed_tags(repo, &paired, advertised)?);
    }
    leave_out_negated(specs, &mut paired);
    Ok(paired)
}

/// `--prune`: the remote refs a pattern's destination covers with no local ref behind them.
fn pruned(specs: &[PushRefspec], paired: &[Paired], advertised: &[RemoteRef]) -> Vec<Paired> {
    let mut deleted = Vec::new();
    let patterns = (specs.iter()).filter(|s| !s.negative);
    for spec in patterns.filter(|s| s.src.as_deref().is_some_and(|s| s.contains('*'))) {
        let src = spec.src.as_deref().unwrap_or_default();
        let dst = spec.dst.as_deref().unwrap_or(src);
        let Some((before, after)) = dst.split_once('*') else {
            continue;
        };
        for remote in advertised {
            let covered = remote
                .name
                .strip_prefix(before)
                .and_then(|rest| rest.strip_suffix(after))
                .is_some();
            let kept = paired.iter().any(|p| p.dst == remote.name);
            if covered && !kept && !deleted.iter().any(|d: &Paired| d.dst == remote.name) {
                deleted.push(Paired {
                    src: None,
                    dst: remote.name.clone(),
                    force: spec.force,
                });
            }
        }
    }
    deleted
}

/// `--follow-tags`: annotated tags here, missing on the remote, whose commits the push sends
/// or the remote has.
fn followed_tags(
    repo: &Repository,
    paired: &[Paired],
    advertised: &[RemoteRef],
) -> Result<Vec<Paired>, PushError> {
    let pushed: Vec<_> = (paired.iter())
        .filter_map(|p| p.src.as_ref().map(|s| s.id))
        .filter_map(|id| repo.objects().peel_to_commit(id))
        .collect();
    let mut tags = Vec::new();
    for (name, id) in repo.refs().list()? {
        let taken = paired.iter().any(|p| p.dst == name);
        if !name.starts_with("refs/tags/") || taken || advertised.iter().any(|r| r.name == name) {
            continue;
        }
        let annotated = matches!(repo.objects().read(&id), Ok(Some((ObjectKind::Tag, _))));
        let Some(commit) = annotated
            .then(|| repo.objects().peel_to_commit(id))
            .flatten()
        else {
            continue;
        };
        let odb = repo.objects();
        if pushed
            .iter()
            .any(|tip| sluice_graph::ancestry::is_ancestor(odb, &commit, tip))
        {
            tags.push(Paired {
                src: Some(Source {
                    shown: name.clone(),
                    ref_name: Some(name.clone()),
                    id,
                }),
                dst: name,
                force: false,
            });
        }
    }
    Ok(tags)
}

/// Leaves out of `paired` every update of a remote ref a negative refspec among `specs` names
/// or matches, as git does once the others are paired, pruned and tags followed.
fn leave_out_negated(specs: &[PushRefspec], paired: &mut Vec<Paired>) {
    let negated = |dst: &str| {
        (specs.iter().filter(|spec| spec.negative)).any(|spec| {
            let name = spec.src.as_deref().unwrap_or_default();
            match spec.is_pattern() {
                true => glob_match(name, dst).is_some(),
                false => name == dst,
            }
        })
    };
    paired.retain(|p| !negated(&p.dst));
}

/// What `*` stands for where `pattern` matches `name`.
fn glob_match(pattern: &str, name: &str) -> Option<String> {
    let (before, after) = pattern.split_once('*')?;
    let rest = name.strip_prefix(before)?.strip_suffix(after)?;
    Some(rest.to_owned())
}

/// One explicit refspec: its source resolved, its destination named in full.
fn explicit(
    repo: &Repository,
    spec: &PushRefspec,
    advertised: &[RemoteRef],
) -> Result<Paired, PushError> {
    let src = match &spec.src {
        None => None,
        Some(text) => {
            Some(resolve_source(repo, text).ok_or_else(|| PushError::NoSource(text.clone()))?)
        }
    };
    let dst = match (&spec.dst, &src) {
        (Some(dst), _) => destination(dst, src.as_ref(), advertised)?,
        (None, Some(src)) => match &src.ref_name {
            Some(name) => branch_behind(repo, name)?,
            None => return Err(PushError::NotAFullRefname(src.shown.clone())),
        },
        (None, None) => unreachable!("a matching refspec is paired elsewhere"),
    };
    Ok(Paired {
        src,
        dst,
        force: spec.force,
    })
}

/// The destination a source ref given alone pushes to: its own name, or where it is a
/// symbolic ref, the branch it names (a symbolic ref to anything else is refused, as git).
fn branch_behind(repo: &Repository, name: &str) -> Result<String, PushError> {
    match repo.refs().read(name) {
        Ok(Some(RefTarget::Symbolic(target))) if target.starts_with("refs/heads/") => Ok(target),
        Ok(Some(RefTarget::Symbolic(_))) => Err(PushError::NotABranch(name.to_owned())),
        _ => Ok(name.to_owned()),
    }
}

/// A destination's full name: a remote ref it names by git's rules for short names, else the
/// name itself under `refs/`, else the source's kind of ref with the name.
fn destination(
    dst: &str,
    src: Option<&Source>,
    advertised: &[RemoteRef],
) -> Result<String, PushError> {
    let places = ["", "refs/", "refs/tags/", "refs/heads/", "refs/remotes/"];
    let on_remote = places.iter().find_map(|place| {
        let full = format!("{place}{dst}");
        (full.starts_with("refs/") && advertised.iter().any(|r| r.name == full)).then_some(full)
    });
    if let Some(full) = on_remote {
        return Ok(full);
    }
    if dst.starts_with("refs/") {
        return Ok(dst.to_owned());
    }
    let guessed = src.and_then(|s| s.ref_name.as_deref()).and_then(|name| {
        ["refs/heads/", "refs/tags/"]
            .into_iter()
            .find(|p| name.starts_with(p))
    });
    match (guessed, src) {
        (Some(prefix), _) => Ok(format!("{prefix}{dst}")),
        (None, None) => Err(PushError::NoRemoteRef(dst.to_owned())),
        (None, Some(_)) => Err(PushError::NotAFullRefname(dst.to_owned())),
    }
}

/// A resolved source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Source {
    /// How the report names it: the ref's full name, or the expression as given.
    pub(crate) shown: String,
    /// The ref it names, if it names one: a branch for `HEAD` on one.
    pub(crate) ref_name: Option<String>,
    /// The object pushed.
    pub(crate) id: ObjectId,
}

/// Resolves the source `expression`: a local ref found by git's rules for short names (`main`,
/// `v1`, `refs/heads/main`, `HEAD`), or any revision ([`sluice_repo::revision`]); `None` when
/// it names nothing here. `HEAD` on a branch names that
/// branch's ref, as git's push reports it.
pub(crate) fn resolve_source(repo: &Repository, expression: &str) -> Option<Source> {
    let split = expression.find(['~', '^']).unwrap_or(expression.len());
    let base = &expression[..split];
    if base == "HEAD" && split == expression.len() {
        let branch = match repo.refs().read("HEAD").ok()? {
            Some(RefTarget::Symbolic(branch)) => Some(branch),
            _ => None,
        };
        let (_, id) = repo.refs().resolve("HEAD").ok()?;
        return Some(Source {
            shown: "HEAD".to_owned(),
            ref_name: branch,
            id: id?,
        });
    }
    let resolved = match base {
        "@" => format!("HEAD{}", &expression[split..]),
        _ => expression.to_owned(),
    };
    let named = sluice_repo::revision::resolve(repo, &resolved)?;
    // A ref is matched by its name as written; `@{u}`, `@{push}` or `@{-1}` lead to a ref,
    // but git pushes them as the objects they name, shown as written.
    let ref_name = named.ref_name.filter(|_| !expression.contains("@{"));
    Some(Source {
        shown: ref_name.clone().unwrap_or_else(|| expression.to_owned()),
        ref_name,
        id: named.id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refspecs_read_as_git_reads_them() {
        let spec = |t: &str| PushRefspec::parse(t).unwrap();
        assert_eq!(
            spec("+HEAD~1:refs/heads/x"),
            PushRefspec {
                negative: false,
                force: true,
                src: Some("HEAD~1".into()),
                dst: Some("refs/heads/x".into())
            }
        );
        assert_eq!(spec(":gone").src, None);
        assert!(spec(":").is_matching());
        assert!(spec("refs/heads/*:refs/heads/*").is_pattern());
        assert!(PushRefspec::parse("a*:b").is_err());
        assert!(PushRefspec::parse("a:b..c").is_err());
        assert!(spec("^refs/heads/w*").negative);
        assert!(PushRefspec::parse("^a:b").is_err());
        assert_eq!(
            glob_match("refs/heads/*", "refs/heads/a/b").as_deref(),
            Some("a/b")
        );
    }
}
