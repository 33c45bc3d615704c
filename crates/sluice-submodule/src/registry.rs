//! A superproject's submodules as `clone --recurse-submodules` (git's `submodule update --init
//! --recursive`) finds and registers them: each gitlink of the index, named and located by
//! `.gitmodules`; a relative URL resolved against the superproject's remote; the submodule's
//! repository kept in `<git-dir>/modules/<name>`, tied to its work tree by relative paths.

use crate::SubmoduleError;
use sluice_object::ObjectId;
use sluice_odb::config::{ConfigFile, ConfigKey};
use sluice_odb::Config;
use sluice_repo::Repository;
use std::path::{Component, Path, PathBuf};

/// A gitlink's mode in the index.
const GITLINK: u32 = 0o160000;

/// A submodule checked out in a superproject's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submodule {
    /// Its name in `.gitmodules` (its repository is `modules/<name>`).
    pub name: String,
    /// Where it is in the work tree, `/`-separated.
    pub path: String,
    /// Its URL as `.gitmodules` gives it.
    pub url: ModuleUrl,
    /// The commit the superproject records.
    pub commit: ObjectId,
    /// `submodule.<name>.fetchRecurseSubmodules` as `.gitmodules` gives it (the repository's
    /// configuration comes first: [`crate::recursion`]).
    pub fetch_recurse: Option<String>,
    /// `submodule.<name>.branch` as `.gitmodules` gives it: what `--remote` follows.
    pub branch: Option<String>,
}

/// A submodule's URL in `.gitmodules`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleUrl {
    /// As given.
    Given(String),
    /// None given.
    Missing,
    /// One a program would take for an option (`-…`): ignored, as git ignores it.
    OptionLike(String),
}

impl Submodule {
    /// The warning git gives on reading `.gitmodules`, for a URL it ignores.
    pub fn warning(&self) -> Option<String> {
        match &self.url {
            ModuleUrl::OptionLike(url) => Some(format!(
                "ignoring 'submodule.{}.url' which may be interpreted as a command-line option: {url}",
                self.name
            )),
            _ => None,
        }
    }
}

/// The submodules of `repo`'s index, in index order, with their names and URLs from the work
/// tree's `.gitmodules`. A gitlink `.gitmodules` does not name is named by its path; a URL
/// missing or ignored is refused when the submodule is registered, as git refuses it.
pub fn checked_out_submodules(repo: &Repository) -> Result<Vec<Submodule>, SubmoduleError> {
    let Some(work_tree) = repo.work_tree() else {
        return Ok(Vec::new());
    };
    let index_path = repo.index_path();
    let index_error = |source: Box<dyn std::error::Error + Send + Sync>| SubmoduleError::Index {
        path: index_path.clone(),
        source,
    };
    let data = match std::fs::read(&index_path) {
        Ok(data) => data,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(index_error(Box::new(e))),
    };
    let index =
        sluice_index::read_index(&data, repo.hash()).map_err(|e| index_error(Box::new(e)))?;
    let gitlinks: Vec<_> = (index.entries.iter())
        .filter(|entry| entry.mode == GITLINK)
        .collect();
    if gitlinks.is_empty() {
        return Ok(Vec::new());
    }
    let mut modules = Config::default();
    let file = work_tree.join(".gitmodules");
    if let Ok(text) = std::fs::read_to_string(&file) {
        modules.parse(&text, &file)?;
    }
    let named = modules.subsection_values("submodule", "path");
    let mut found = Vec::new();
    for entry in gitlinks {
        let path = String::from_utf8_lossy(&entry.path).into_owned();
        let name = (named.iter().rev())
            .find(|(_, at)| *at == path)
            .map_or_else(|| path.clone(), |(name, _)| (*name).to_owned());
        if !valid_name(&name) {
            return Err(SubmoduleError::SuspiciousName(name));
        }
        let url = match modules.get(&format!("submodule.{name}.url")) {
            None => ModuleUrl::Missing,
            Some(url) if url.starts_with('-') => ModuleUrl::OptionLike(url.to_owned()),
            Some(url) => ModuleUrl::Given(url.to_owned()),
        };
        let fetch_recurse = modules.get(&format!("submodule.{name}.fetchrecursesubmodules"));
        let branch = modules.get(&format!("submodule.{name}.branch"));
        found.push(Submodule {
            fetch_recurse: fetch_recurse.map(str::to_owned),
            branch: branch.map(str::to_owned),
            name,
            url,
            path,
            commit: entry.id,
        });
    }
    Ok(found)
}

/// A submodule with where its repository and its work tree are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The submodule.
    pub submodule: Submodule,
    /// Its repository: `modules/<name>` of the superproject's (common) git directory.
    pub git_dir: PathBuf,
    /// Its work tree: its path in the superproject's.
    pub work_tree: PathBuf,
}

impl Placed {
    /// Where `submodule` of `repo` is; `None` in a repository without a work tree.
    pub fn of(repo: &Repository, submodule: Submodule) -> Option<Placed> {
        Some(Placed {
            git_dir: repo.common_dir().join(modules_dir(&submodule.name)),
            work_tree: repo.work_tree()?.join(&submodule.path),
            submodule,
        })
    }

    /// Whether it is checked out: its repository there and its work tree tied to it.
    pub fn is_populated(&self) -> bool {
        self.git_dir.is_dir() && self.work_tree.join(".git").exists()
    }

    /// Of `wanted`, the commits its repository lacks (read afresh: a fetch adds packs).
    pub fn lacking(&self, wanted: &[ObjectId]) -> Result<Vec<ObjectId>, sluice_repo::RepoError> {
        let repo = Repository::open_git_dir(self.git_dir.clone(), Some(self.work_tree.clone()))?;
        let objects = repo.objects();
        Ok(wanted
            .iter()
            .filter(|id| !objects.contains(id))
            .copied()
            .collect())
    }
}

/// Whether `submodule` is active in `repo`, by git's rule: `submodule.<name>.active` when set,
/// else whether a `submodule.active` pathspec matches its path, else yes.
pub fn is_active(repo: &Repository, submodule: &Submodule) -> Result<bool, SubmoduleError> {
    let config = repo.config();
    if let Some(active) = config.get_bool(&format!("submodule.{}.active", submodule.name))? {
        return Ok(active);
    }
    let specs = config.get_all("submodule.active");
    if specs.is_empty() {
        return Ok(true);
    }
    let path = submodule.path.as_str();
    fn excluded(spec: &str) -> Option<&str> {
        [":(exclude)", ":!", ":^"]
            .iter()
            .find_map(|magic| spec.strip_prefix(magic))
    }
    let mut included = false;
    for spec in specs {
        match excluded(spec) {
            Some(spec) if pathspec_matches(spec, path) => return Ok(false),
            Some(_) => {}
            None => included |= pathspec_matches(spec, path),
        }
    }
    Ok(included)
}

/// Whether the pathspec `spec` matches `path`: `.` everything, a directory what is under it,
/// a glob by git's wildmatch.
fn pathspec_matches(spec: &str, path: &str) -> bool {
    let spec = spec.trim_end_matches('/');
    if spec == "." || spec.is_empty() {
        return true;
    }
    if path == spec
        || path
            .strip_prefix(spec)
            .is_some_and(|rest| rest.starts_with('/'))
    {
        return true;
    }
    spec.contains(['*', '?', '['])
        && sluice_index::wildmatch::wildmatch(spec.as_bytes(), path.as_bytes())
}

/// A repository a submodule may borrow objects from, as `submodule.alternateLocation=
/// superproject` looks for one: `modules/<name>/` of a repository the superproject borrows
/// from (its path written as git writes it, `/` at the end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleAlternate {
    /// It is a repository: the submodule's clone takes it as a `--reference`.
    Found(PathBuf),
    /// Nothing is there.
    Missing(PathBuf),
    /// Something is there, but no repository.
    NotARepository(PathBuf),
}

impl ModuleAlternate {
    /// Why it cannot be borrowed from, in git's words; `None` when it can.
    pub fn problem(&self) -> Option<String> {
        match self {
            ModuleAlternate::Found(_) => None,
            ModuleAlternate::Missing(path) => {
                Some(format!("path '{}' does not exist", path.display()))
            }
            ModuleAlternate::NotARepository(path) => Some(format!(
                "reference repository '{}' is not a local repository.",
                path.display()
            )),
        }
    }
}

/// For the submodule named `name`, `modules/<name>/` of every repository `repo` borrows from
/// (an alternate object directory `<repository>/objects`; others are no repository).
pub fn superproject_alternates(repo: &Repository, name: &str) -> Vec<ModuleAlternate> {
    let odb = repo.objects();
    (odb.alternates().iter())
        .filter_map(|alternate| {
            let dir = alternate.dir().to_str()?;
            let repository = dir.trim_end_matches('/').strip_suffix("/objects")?;
            let path = PathBuf::from(format!("{repository}/{}/", modules_dir(name).display()));
            Some(match std::fs::metadata(&path) {
                Err(_) => ModuleAlternate::Missing(path),
                Ok(_) if path.join("objects").is_dir() => ModuleAlternate::Found(path),
                Ok(_) => ModuleAlternate::NotARepository(path),
            })
        })
        .collect()
}

/// Passes `repo`'s `submodule.alternateLocation` and `submodule.alternateErrorStrategy` on to
/// the submodule repository just cloned at `git_dir`, as git does, so that its own submodules
/// borrow alike.
pub fn pass_on_alternates(repo: &Repository, git_dir: &Path) -> Result<(), SubmoduleError> {
    let keys = ["alternateLocation", "alternateErrorStrategy"];
    let settings: Vec<(&str, &str)> = (keys.iter())
        .filter_map(|&key| Some((key, repo.config().get(&format!("submodule.{key}"))?)))
        .collect();
    if settings.is_empty() {
        return Ok(());
    }
    let mut config = ConfigFile::of_repository(git_dir)?;
    for (key, value) in settings {
        config.set(&ConfigKey::new("submodule", None, key), value)?;
    }
    Ok(config.write()?)
}

/// Where the repository of the submodule named `name` is, under the superproject's git
/// directory: `modules/<name>`, joined as text as git joins it, so that a name beginning with
/// `/` stays inside (a path joined to an absolute one would be that one).
fn modules_dir(name: &str) -> PathBuf {
    PathBuf::from(format!("modules/{name}"))
}

/// git's rule for a submodule's name: no `..` component (it would leave `modules/`).
fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.split(['/', '\\']).any(|part| part == "..")
}

/// `url` as `submodule init` records it: a relative one (`./…`, `../…`) taken from `base`
/// (the superproject's remote URL, else its work tree), each `../` one component up.
pub fn absolute_url(url: &str, base: &str) -> String {
    if !(url.starts_with("./") || url.starts_with("../")) {
        return url.to_owned();
    }
    let mut base = base.trim_end_matches('/').to_owned();
    let mut rest = url;
    loop {
        if let Some(after) = rest.strip_prefix("./") {
            rest = after;
        } else if let Some(after) = rest.strip_prefix("../") {
            rest = after;
            // One component up: after the last `/`, or an scp-style `host:path`'s `:`.
            let cut = match (base.rfind('/'), base.rfind(':')) {
                (Some(slash), _) => slash,
                (None, Some(colon)) => colon + 1,
                (None, None) => 0,
            };
            base.truncate(cut);
        } else {
            break;
        }
    }
    let separator = match base.is_empty() || base.ends_with(':') {
        true => "",
        false => "/",
    };
    format!("{base}{separator}{rest}")
}

/// The URL a relative submodule URL of `repo` is taken from: its default remote's URL
/// (see [`default_remote`]), else its work tree.
pub fn url_base(repo: &Repository) -> String {
    let remote = default_remote(repo);
    match repo.config().get(&format!("remote.{remote}.url")) {
        Some(url) => url.to_owned(),
        None => (repo.work_tree())
            .map(|tree| tree.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

/// The remote a fetch that names none uses (see [`sluice_repo::upstream::default_remote`]).
pub fn default_remote(repo: &Repository) -> String {
    let branch = (repo.refs().resolve("HEAD").ok())
        .and_then(|(target, _)| target.strip_prefix("refs/heads/").map(str::to_owned));
    sluice_repo::upstream::default_remote(repo.config(), branch.as_deref())
}

/// Registers `submodule` in `repo`'s configuration as `submodule init` does: its URL (made
/// absolute) and, unless `submodule.active` already covers it, `active = true`. Returns the
/// URL recorded.
pub fn register(repo: &Repository, submodule: &Submodule) -> Result<String, SubmoduleError> {
    let ModuleUrl::Given(given) = &submodule.url else {
        return Err(SubmoduleError::NoUrl(submodule.path.clone()));
    };
    let url = absolute_url(given, &url_base(repo));
    let mut config = repo.config_file()?;
    let name = Some(submodule.name.as_str());
    if repo.config().get("submodule.active").is_none() {
        config.set(&ConfigKey::new("submodule", name, "active"), "true")?;
    }
    config.set(&ConfigKey::new("submodule", name, "url"), &url)?;
    config.write()?;
    Ok(url)
}

/// Ties the work tree `work_tree` and the repository `git_dir` of a submodule to each other
/// with relative paths, as git does: `<work_tree>/.git` says `gitdir: <path>`, and the
/// repository's `core.worktree` names the work tree.
pub fn connect(git_dir: &Path, work_tree: &Path) -> Result<(), SubmoduleError> {
    let write_error = |path: &Path| {
        let path = path.to_owned();
        move |source| SubmoduleError::Write { path, source }
    };
    // Real paths, as git takes them, so that `..` and links do not lengthen the way between.
    let git_dir = std::fs::canonicalize(git_dir).map_err(write_error(git_dir))?;
    let work_tree = std::fs::canonicalize(work_tree).map_err(write_error(work_tree))?;
    let dot_git = work_tree.join(".git");
    let to_git_dir = relative(&git_dir, &work_tree);
    let line = format!("gitdir: {}\n", to_git_dir.display());
    std::fs::write(&dot_git, line).map_err(write_error(&dot_git))?;
    let mut config = ConfigFile::of_repository(&git_dir)?;
    let to_work_tree = relative(&work_tree, &git_dir);
    let key = ConfigKey::new("core", None, "worktree");
    config.set(&key, &to_work_tree.to_string_lossy())?;
    Ok(config.write()?)
}

/// `to` from the directory `from`, both real paths.
fn relative(to: &Path, from: &Path) -> PathBuf {
    let to: Vec<Component<'_>> = to.components().collect();
    let from: Vec<Component<'_>> = from.components().collect();
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for part in &to[common..] {
        path.push(part);
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_urls_are_taken_from_the_remote() {
        assert_eq!(absolute_url("../lib", "/srv/super"), "/srv/lib");
        assert_eq!(absolute_url("../lib", "/srv/super/"), "/srv/lib");
        assert_eq!(absolute_url("./lib", "/srv/super"), "/srv/super/lib");
        assert_eq!(absolute_url("../../x", "https://h/a/b"), "https://h/x");
        assert_eq!(absolute_url("../x", "host:a"), "host:x");
        assert_eq!(absolute_url("https://h/x", "/srv/super"), "https://h/x");
    }

    #[test]
    fn paths_between_a_work_tree_and_its_repository() {
        let (git_dir, tree) = (Path::new("/r/.git/modules/a/b"), Path::new("/r/a/b"));
        assert_eq!(
            relative(git_dir, tree),
            PathBuf::from("../../.git/modules/a/b")
        );
        assert_eq!(relative(tree, git_dir), PathBuf::from("../../../../a/b"));
    }

    #[test]
    fn pathspecs_match_as_git_matches_them() {
        assert!(pathspec_matches(".", "a/b"));
        assert!(pathspec_matches("libs", "libs/lib"));
        assert!(pathspec_matches("libs/", "libs/lib"));
        assert!(!pathspec_matches("lib", "libs/lib"));
        assert!(pathspec_matches("libs/lib", "libs/lib"));
        assert!(pathspec_matches("*/inner*", "extra/inner2"));
        assert!(!pathspec_matches("extra", "libs/lib"));
    }

    #[test]
    fn a_name_beginning_with_a_slash_stays_under_modules() {
        let dir = Path::new("/r/.git").join(modules_dir("/etc"));
        assert!(dir.starts_with("/r/.git/modules"), "{}", dir.display());
    }

    #[test]
    fn names_that_leave_the_modules_directory_are_refused() {
        assert!(valid_name("libs/lib"));
        assert!(!valid_name("../evil"));
        assert!(!valid_name("a/../../b"));
    }
}
