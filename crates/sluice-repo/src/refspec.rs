//! Fetch refspecs (`[+]<src>[:<dst>]`, one `*` on each side, `^<src>` to exclude), as
//! `remote.<name>.fetch` and the command line give them.

/// A refspec git would refuse.
#[derive(Debug, thiserror::Error)]
#[error("invalid refspec '{0}'")]
pub struct InvalidRefspec(
    /// The refspec as given.
    pub String,
);

/// Why the command line's refspecs cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CommandLineError {
    /// A refspec git would refuse.
    #[error(transparent)]
    Invalid(#[from] InvalidRefspec),
    /// `tag` as the last word.
    #[error("You need to specify a tag name.")]
    NoTagName,
}

/// The refspecs of a command line, where `tag <name>` stands for
/// `refs/tags/<name>:refs/tags/<name>`, as in git.
pub fn command_line(words: &[String]) -> Result<Vec<Refspec>, CommandLineError> {
    let mut specs = Vec::new();
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if word == "tag" {
            let name = words.next().ok_or(CommandLineError::NoTagName)?;
            specs.push(Refspec::parse(&format!(
                "refs/tags/{name}:refs/tags/{name}"
            ))?);
        } else {
            specs.push(Refspec::parse(word)?);
        }
    }
    Ok(specs)
}

/// The refspecs of `--stdin`'s text, a line each; `tag <name>` is not taken there, as in git,
/// and a carriage return stays part of its refspec.
pub fn lines(text: &str) -> Result<Vec<Refspec>, InvalidRefspec> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n').map(Refspec::parse).collect()
}

/// Where a short name in a refspec's source is looked for, as git looks.
const SHORT_NAME_PLACES: [&str; 5] = ["", "refs/", "refs/tags/", "refs/heads/", "refs/remotes/"];

/// One refspec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refspec {
    /// `+`: update the destination even when it does not fast-forward.
    pub force: bool,
    /// `^`: the refs the source matches are left out.
    pub negative: bool,
    /// The remote side: a ref name, a short name, or a pattern with one `*`.
    pub src: String,
    /// The local side, if any.
    pub dst: Option<String>,
}

impl Refspec {
    /// Reads a refspec as git does, refusing what git refuses.
    pub fn parse(text: &str) -> Result<Refspec, InvalidRefspec> {
        let (negative, rest) = match text.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (force, rest) = match rest.strip_prefix('+') {
            Some(rest) => (true, rest),
            None => (false, rest),
        };
        let (src, dst) = match rest.split_once(':') {
            Some((src, dst)) => (src, (!dst.is_empty()).then(|| dst.to_owned())),
            None => (rest, None),
        };
        // An empty source is the remote's HEAD (`git fetch origin :refs/x`), as in git.
        let src = match (src.is_empty(), negative) {
            (true, false) => "HEAD",
            _ => src,
        };
        let stars = |s: &str| s.matches('*').count();
        // Each side a ref name, or a pattern that is one with its `*` filled in.
        let bad_name = |s: &str| !crate::refs::is_valid_ref_name(&s.replacen('*', "x", 1));
        if src.is_empty()
            || bad_name(src)
            || dst.as_deref().is_some_and(bad_name)
            || stars(src) > 1
            || dst.as_deref().is_some_and(|d| stars(d) != stars(src))
            || (negative && dst.is_some())
            // A pattern fetches into a pattern: git refuses one with nowhere to go.
            || (!negative && stars(src) == 1 && dst.is_none())
        {
            return Err(InvalidRefspec(text.to_owned()));
        }
        Ok(Refspec {
            force,
            negative,
            src: src.to_owned(),
            dst,
        })
    }

    /// Whether `name` (a full remote ref name) matches the source side; a pattern's `*`
    /// matches what is returned, a plain name matches itself in full or as a short name
    /// (`main` for `refs/heads/main`, `v1` for `refs/tags/v1`).
    pub fn matches(&self, name: &str) -> Option<String> {
        match self.src.split_once('*') {
            Some((before, after)) => name
                .strip_prefix(before)
                .and_then(|rest| rest.strip_suffix(after))
                .map(str::to_owned),
            None => SHORT_NAME_PLACES
                .iter()
                .any(|place| name.strip_prefix(place) == Some(self.src.as_str()))
                .then(String::new),
        }
    }

    /// Of `refs`, the one a plain source names best: the first place in git's order for a
    /// short name (`refs/tags/` before `refs/heads/`) where one of them is found.
    pub fn best_match<'r, T>(
        &self,
        refs: impl Iterator<Item = &'r T> + Clone,
        name: impl Fn(&T) -> &str,
    ) -> Option<&'r T> {
        SHORT_NAME_PLACES.iter().find_map(|place| {
            refs.clone()
                .find(|r| name(r).strip_prefix(place) == Some(self.src.as_str()))
        })
    }

    /// The prefixes of the remote refs the source can match, for ls-refs' `ref-prefix`.
    pub fn ref_prefixes(&self) -> Vec<String> {
        match self.src.split_once('*') {
            Some((before, _)) => vec![before.to_owned()],
            None => SHORT_NAME_PLACES
                .iter()
                .map(|place| format!("{place}{}", self.src))
                .collect(),
        }
    }

    /// The local name for a remote ref the source matched with `star`. A pattern's is used as
    /// it expands; a plain name is completed as git completes it: `heads/`, `tags/` and
    /// `remotes/` go under `refs/`, any other short name is a branch (`main` is
    /// `refs/heads/main`).
    pub fn destination(&self, star: &str) -> Option<String> {
        let dst = self.dst.as_ref()?;
        if !self.is_exact() {
            return Some(dst.replacen('*', star, 1));
        }
        let under_refs = ["heads/", "tags/", "remotes/"];
        Some(if dst.starts_with("refs/") {
            dst.clone()
        } else if under_refs.iter().any(|p| dst.starts_with(p)) {
            format!("refs/{dst}")
        } else {
            format!("refs/heads/{dst}")
        })
    }

    /// Whether the source names exactly one ref rather than a pattern.
    pub fn is_exact(&self) -> bool {
        !self.src.contains('*')
    }

    /// The refs this side keeps for the pattern's destination (for `--prune`): the remote
    /// name that would map to `local`, if the destination matches it.
    pub fn source_for(&self, local: &str) -> Option<String> {
        let dst = self.dst.as_deref()?;
        let (before, after) = dst.split_once('*')?;
        let star = local.strip_prefix(before)?.strip_suffix(after)?;
        Some(self.src.replacen('*', star, 1))
    }
}

#[cfg(test)]
mod tests {
    use super::Refspec;

    #[test]
    fn patterns_map_and_bad_specs_are_refused() {
        let spec = Refspec::parse("+refs/heads/*:refs/remotes/origin/*").unwrap();
        assert!(spec.force);
        let star = spec.matches("refs/heads/a/b").unwrap();
        assert_eq!(spec.destination(&star).unwrap(), "refs/remotes/origin/a/b");
        assert_eq!(
            spec.source_for("refs/remotes/origin/x").unwrap(),
            "refs/heads/x"
        );
        assert!(spec.matches("refs/tags/v1").is_none());
        let exact = Refspec::parse("main").unwrap();
        assert!(exact.matches("refs/heads/main").is_some());
        assert!(exact.dst.is_none());
        for (short, full) in [
            ("main", "refs/heads/main"),
            ("tags/v1", "refs/tags/v1"),
            ("remotes/o/x", "refs/remotes/o/x"),
            ("refs/x", "refs/x"),
        ] {
            let spec = Refspec::parse(&format!("topic:{short}")).unwrap();
            assert_eq!(spec.destination("").unwrap(), full);
        }
        for bad in ["a*:b", "a*b*:c*", "^a:b", "tag v1", "main:a..b", "^"] {
            assert!(Refspec::parse(bad).is_err(), "{bad}");
        }
        // An empty source is the remote's HEAD, as in git.
        for head in ["", ":refs/x", "+"] {
            assert_eq!(Refspec::parse(head).unwrap().src, "HEAD", "{head}");
        }
    }
}
