//! `GIT_NAMESPACE` (gitnamespaces(7)): one repository holding several ref spaces, each under
//! `refs/namespaces/<name>/` (`a/b` nesting as `refs/namespaces/a/refs/namespaces/b/`). A
//! server in a namespace shows and takes only the refs under it, their names without the
//! prefix, and its `HEAD` is the namespace's.

/// A ref namespace, as its prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    prefix: String,
}

impl Namespace {
    /// The namespace `name` (`/`-separated, empty components skipped); `None` when it has no
    /// component, which is no namespace.
    pub fn new(name: &str) -> Option<Namespace> {
        let prefix: String = (name.split('/').filter(|c| !c.is_empty()))
            .map(|component| format!("refs/namespaces/{component}/"))
            .collect();
        (!prefix.is_empty()).then_some(Namespace { prefix })
    }

    /// The namespace `GIT_NAMESPACE` names, if any.
    pub fn from_env() -> Option<Namespace> {
        Self::new(&std::env::var("GIT_NAMESPACE").ok()?)
    }

    /// The full name of the ref a client calls `name` (`HEAD`, `refs/heads/main`).
    pub fn full(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The name a client sees for the full ref `full`; `None` outside the namespace.
    pub fn strip<'a>(&self, full: &'a str) -> Option<&'a str> {
        full.strip_prefix(&self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::Namespace;

    #[test]
    fn nested_names_nest_their_prefixes() {
        let ns = Namespace::new("a//b/").unwrap();
        assert_eq!(
            ns.full("refs/heads/main"),
            "refs/namespaces/a/refs/namespaces/b/refs/heads/main"
        );
        assert_eq!(ns.strip(&ns.full("HEAD")), Some("HEAD"));
        assert_eq!(ns.strip("refs/heads/main"), None);
        assert_eq!(Namespace::new("/"), None);
    }
}
