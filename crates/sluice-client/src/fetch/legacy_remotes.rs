//! Remotes named the ways that came before `remote.<name>.*` (`gitrepository-layout`):
//! `.git/remotes/<name>` (`URL:` and `Pull:` lines) and `.git/branches/<name>` (one
//! `<url>[#<branch>]` line, fetching that branch, by default the default branch name, into
//! `refs/heads/<name>`). git still reads them when the configuration names no such remote.

use sluice_odb::Config;
use std::path::Path;

/// A remote from one of those files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyRemote {
    /// Where to fetch from.
    pub url: String,
    /// Its fetch refspecs.
    pub fetch: Vec<String>,
}

/// The remote `name` as `.git/remotes/<name>`, else `.git/branches/<name>`, defines it.
pub fn read(common_dir: &Path, name: &str, config: &Config) -> Option<LegacyRemote> {
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return None;
    }
    if let Ok(text) = std::fs::read_to_string(common_dir.join("remotes").join(name)) {
        let value = |line: &str, key: &str| {
            line.strip_prefix(key)
                .map(|rest| rest.trim().to_owned())
                .filter(|rest| !rest.is_empty())
        };
        let url = text.lines().find_map(|line| value(line, "URL:"))?;
        let fetch = text
            .lines()
            .filter_map(|line| value(line, "Pull:"))
            .collect();
        return Some(LegacyRemote { url, fetch });
    }
    let text = std::fs::read_to_string(common_dir.join("branches").join(name)).ok()?;
    let line = text.lines().next()?.trim();
    let (url, branch) = match line.split_once('#') {
        Some((url, branch)) => (url, branch.to_owned()),
        None => (
            line,
            config
                .get("init.defaultbranch")
                .unwrap_or("master")
                .to_owned(),
        ),
    };
    Some(LegacyRemote {
        url: url.to_owned(),
        fetch: vec![format!("refs/heads/{branch}:refs/heads/{name}")],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_files_name_a_remote() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("remotes")).unwrap();
        std::fs::create_dir_all(dir.path().join("branches")).unwrap();
        std::fs::write(
            dir.path().join("remotes/r"),
            "URL: /x\nPull: refs/heads/a:refs/heads/b\nPush: refs/heads/c\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("branches/b"), "/y#topic\n").unwrap();
        std::fs::write(dir.path().join("branches/c"), "/z\n").unwrap();
        let config = Config::default();
        let remote = read(dir.path(), "r", &config).unwrap();
        assert_eq!(remote.url, "/x");
        assert_eq!(remote.fetch, ["refs/heads/a:refs/heads/b"]);
        let branch = read(dir.path(), "b", &config).unwrap();
        assert_eq!(branch.fetch, ["refs/heads/topic:refs/heads/b"]);
        assert_eq!(
            read(dir.path(), "c", &config).unwrap().fetch,
            ["refs/heads/master:refs/heads/c"]
        );
        assert_eq!(read(dir.path(), "none", &config), None);
    }
}
