//! `url.<base>.insteadOf` and `url.<base>.pushInsteadOf` (`git help config`): a URL that starts
//! with one of these values is used with that start replaced by `<base>`; when several match,
//! the longest wins. A fetch (and a clone) rewrites with `insteadOf`. A push goes to the
//! remote's `pushurl`s, rewritten with `insteadOf`; without any, to its `url`s rewritten with
//! `pushInsteadOf` where one matches (those alone, when any does), else with `insteadOf`.

use sluice_odb::config::Config;

/// The longest rewrite of `url` by `url.<base>.<key>`, if any matches.
fn rewrite(config: &Config, url: &str, key: &str) -> Option<String> {
    let mut best: Option<(usize, &str)> = None;
    for (base, prefix) in config.subsection_values("url", key) {
        // The first of equally long matches wins, as in git.
        if url.starts_with(prefix) && best.is_none_or(|(len, _)| prefix.len() > len) {
            best = Some((prefix.len(), base));
        }
    }
    best.map(|(len, base)| format!("{base}{}", &url[len..]))
}

/// `url` as a fetch uses it: rewritten by `insteadOf`.
pub fn fetch_url(config: &Config, url: &str) -> String {
    rewrite(config, url, "insteadof").unwrap_or_else(|| url.to_owned())
}

/// The URLs a push to a remote goes to: its `pushurls` (rewritten by `insteadOf`) if it has
/// any, else its `urls` rewritten by `pushInsteadOf` (only those that match, when any does)
/// or, when none does, by `insteadOf`.
pub fn push_urls(config: &Config, pushurls: &[&str], urls: &[&str]) -> Vec<String> {
    if !pushurls.is_empty() {
        return pushurls.iter().map(|url| fetch_url(config, url)).collect();
    }
    let pushed: Vec<String> = (urls.iter())
        .filter_map(|url| rewrite(config, url, "pushinsteadof"))
        .collect();
    match pushed.is_empty() {
        true => urls.iter().map(|url| fetch_url(config, url)).collect(),
        false => pushed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        let mut config = Config::default();
        config
            .parse(text, std::path::Path::new("test"))
            .expect("config");
        config
    }

    #[test]
    fn the_longest_match_wins_and_push_prefers_push_rewrites() {
        let config = config(
            "[url \"https://example.com/\"]\n\tinsteadOf = ex:\n\tinsteadOf = e:\n\
             [url \"ssh://git@example.com/mirror/\"]\n\tinsteadOf = ex:mirror/\n\
             [url \"ssh://git@example.com/\"]\n\tpushInsteadOf = https://example.com/\n",
        );
        assert_eq!(fetch_url(&config, "ex:a.git"), "https://example.com/a.git");
        assert_eq!(fetch_url(&config, "e:a.git"), "https://example.com/a.git");
        assert_eq!(
            fetch_url(&config, "ex:mirror/a.git"),
            "ssh://git@example.com/mirror/a.git"
        );
        assert_eq!(fetch_url(&config, "other:a.git"), "other:a.git");
        // A push rewrite applies to the URL as configured, not to its fetch rewrite.
        assert_eq!(
            push_urls(&config, &[], &["https://example.com/a.git", "ex:b.git"]),
            ["ssh://git@example.com/a.git"]
        );
        assert_eq!(
            push_urls(&config, &[], &["ex:b.git"]),
            ["https://example.com/b.git"]
        );
        assert_eq!(
            push_urls(&config, &["https://example.com/p.git"], &["ex:b.git"]),
            ["https://example.com/p.git"]
        );
        assert_eq!(
            push_urls(&config, &["ex:p.git"], &[]),
            ["https://example.com/p.git"]
        );
    }
}
