//! `.gitattributes` (`gitattributes`): which attributes apply to a path. Sources, from lowest to
//! highest precedence: `core.attributesFile`, the root `.gitattributes`, those of deeper
//! directories, then `$GIT_DIR/info/attributes`; within a file, later lines win. Macros (the
//! built-in `binary`, and `[attr]` lines of top-level files) expand where they match.

use sluice_index::wildmatch::wildmatch;
use std::collections::HashMap;

/// The state of one attribute for a path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum State {
    /// Not mentioned.
    #[default]
    Unspecified,
    /// `attr`.
    Set,
    /// `-attr`.
    Unset,
    /// `attr=value`.
    Value(String),
}

impl State {
    /// The value, if the attribute has one.
    pub fn value(&self) -> Option<&str> {
        match self {
            State::Value(v) => Some(v),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
struct Assignment {
    name: String,
    state: State,
}

#[derive(Debug, Clone)]
struct Rule {
    pattern: Pattern,
    /// Match against the whole relative path (the pattern has a `/`) or the basename.
    anchored: bool,
    assignments: Vec<Assignment>,
    /// Every attribute the rule can set, macros expanded: a lookup skips rules that cannot
    /// touch what it asks for before matching their pattern (most `.gitattributes` lines set
    /// `diff` or `whitespace`, which checkout never reads).
    touches: Vec<String>,
}

/// A rule's pattern, sorted by how cheaply it can be matched: most lines of a
/// `.gitattributes` are `*.ext` or a plain name, which need no wildcard matcher (on git/git's
/// tree, matching was a fifth of a checkout's serial start).
#[derive(Debug, Clone)]
enum Pattern {
    /// No wildcard: the subject must equal it.
    Literal(Vec<u8>),
    /// `*` and then no wildcard, against a basename (which holds no `/` for `*` to stop at):
    /// the subject must end with the rest.
    Suffix(Vec<u8>),
    /// Anything else, for the wildcard matcher.
    Wild(Vec<u8>),
}

impl Pattern {
    fn new(pattern: &[u8], anchored: bool) -> Pattern {
        let wild = |b: &u8| matches!(b, b'*' | b'?' | b'[' | b'\\');
        match pattern.split_first() {
            _ if !pattern.iter().any(wild) => Pattern::Literal(pattern.to_vec()),
            Some((b'*', rest)) if !anchored && !rest.iter().any(wild) => {
                Pattern::Suffix(rest.to_vec())
            }
            _ => Pattern::Wild(pattern.to_vec()),
        }
    }

    fn matches(&self, subject: &[u8]) -> bool {
        match self {
            Pattern::Literal(literal) => subject == literal.as_slice(),
            Pattern::Suffix(suffix) => subject.ends_with(suffix),
            Pattern::Wild(pattern) => wildmatch(pattern, subject),
        }
    }
}

#[derive(Debug, Clone)]
struct File {
    /// The directory the file is in, relative to the work tree, with a trailing `/` (or empty).
    dir: Vec<u8>,
    rules: Vec<Rule>,
}

/// All attribute files of a checkout, ready for lookups.
#[derive(Debug, Clone, Default)]
pub struct Attributes {
    /// Lowest precedence first.
    files: Vec<File>,
    macros: HashMap<String, Vec<Assignment>>,
}

fn parse_assignment(word: &str) -> Option<Assignment> {
    let (name, state) = if let Some(name) = word.strip_prefix('-') {
        (name, State::Unset)
    } else if let Some(name) = word.strip_prefix('!') {
        (name, State::Unspecified)
    } else if let Some((name, value)) = word.split_once('=') {
        (name, State::Value(value.to_owned()))
    } else {
        (word, State::Set)
    };
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    {
        return None;
    }
    Some(Assignment {
        name: name.to_owned(),
        state,
    })
}

impl Attributes {
    /// An empty set, with the built-in `binary` macro.
    pub fn new() -> Self {
        let mut macros = HashMap::new();
        macros.insert(
            "binary".to_owned(),
            ["-diff", "-merge", "-text"]
                .iter()
                .filter_map(|w| parse_assignment(w))
                .collect(),
        );
        Attributes {
            files: Vec::new(),
            macros,
        }
    }

    /// Adds a file's text; `dir` is its directory relative to the work tree ("" for the root
    /// and for global and info files). Files must be added lowest precedence first; macros are
    /// honoured only in top-level files, as git does.
    pub fn add_file(&mut self, dir: &[u8], text: &[u8]) {
        let mut rules = Vec::new();
        let mut defines_macros = false;
        for line in text.split(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(line);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_ascii_whitespace();
            let Some(pattern) = words.next() else {
                continue;
            };
            if let Some(name) = pattern.strip_prefix("[attr]") {
                if dir.is_empty() {
                    let assignments = words.filter_map(parse_assignment).collect();
                    self.macros.insert(name.to_owned(), assignments);
                    defines_macros = true;
                }
                continue;
            }
            // Negative patterns are not allowed in attribute files; directory patterns match
            // no file.
            if pattern.starts_with('!') || pattern.ends_with('/') {
                continue;
            }
            let (pattern, anchored) = match pattern.strip_prefix('/') {
                Some(rest) => (rest, true),
                None => (pattern, pattern.contains('/')),
            };
            let assignments: Vec<Assignment> = words.filter_map(parse_assignment).collect();
            let mut touches = Vec::new();
            for assignment in &assignments {
                self.expand_names(&assignment.name, &mut touches, 0);
            }
            rules.push(Rule {
                pattern: Pattern::new(pattern.as_bytes(), anchored),
                anchored,
                assignments,
                touches,
            });
        }
        let mut dir = dir.to_vec();
        if !dir.is_empty() && !dir.ends_with(b"/") {
            dir.push(b'/');
        }
        self.files.push(File { dir, rules });
        if defines_macros {
            // A macro may expand names of rules read before it: recompute what each can touch.
            let mut files = std::mem::take(&mut self.files);
            for rule in files.iter_mut().flat_map(|f| f.rules.iter_mut()) {
                let mut touches = Vec::new();
                for assignment in &rule.assignments {
                    self.expand_names(&assignment.name, &mut touches, 0);
                }
                rule.touches = touches;
            }
            self.files = files;
        }
    }

    /// Whether any file has any rule (a checkout without attributes skips lookups).
    pub fn is_empty(&self) -> bool {
        self.files.iter().all(|f| f.rules.is_empty())
    }

    /// The states of `names` for `path`.
    pub fn lookup<const N: usize>(&self, path: &[u8], names: [&str; N]) -> [State; N] {
        self.select(names).lookup(path)
    }

    /// The rules that can set any of `names`, picked once for looking up many paths.
    pub fn select<'a, const N: usize>(&'a self, names: [&'a str; N]) -> Selection<'a, N> {
        let rules = self
            .files
            .iter()
            .flat_map(|file| {
                file.rules
                    .iter()
                    .map(move |rule| (file.dir.as_slice(), rule))
            })
            .filter(|(_, rule)| rule.touches.iter().any(|t| names.contains(&t.as_str())))
            .collect();
        Selection {
            attributes: self,
            names,
            rules,
        }
    }

    /// `name` and, if it is a macro, every attribute it sets.
    fn expand_names(&self, name: &str, out: &mut Vec<String>, depth: usize) {
        out.push(name.to_owned());
        if let Some(expansion) = self.macros.get(name) {
            if depth < 8 {
                for inner in expansion {
                    self.expand_names(&inner.name, out, depth + 1);
                }
            }
        }
    }

    fn apply<const N: usize>(
        &self,
        assignment: &Assignment,
        names: &[&str; N],
        out: &mut [State; N],
        depth: usize,
    ) {
        if let Some(expansion) = self.macros.get(&assignment.name) {
            if assignment.state == State::Set && depth < 8 {
                for inner in expansion {
                    self.apply(inner, names, out, depth + 1);
                }
            }
        }
        if let Some(i) = names.iter().position(|n| *n == assignment.name) {
            out[i] = assignment.state.clone();
        }
    }
}

/// The rules of [`Attributes`] that can set some attributes, in precedence order: a checkout
/// asks the same six of every file, so which rules matter is decided once, not per path.
#[derive(Debug)]
pub struct Selection<'a, const N: usize> {
    attributes: &'a Attributes,
    names: [&'a str; N],
    /// Each rule with the directory of its file.
    rules: Vec<(&'a [u8], &'a Rule)>,
}

impl<const N: usize> Selection<'_, N> {
    /// The states of the selected names for `path`.
    pub fn lookup(&self, path: &[u8]) -> [State; N] {
        let mut out: [State; N] = std::array::from_fn(|_| State::Unspecified);
        let basename = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
        for (dir, rule) in &self.rules {
            let Some(relative) = path.strip_prefix(*dir) else {
                continue;
            };
            let subject = if rule.anchored { relative } else { basename };
            if !rule.pattern.matches(subject) {
                continue;
            }
            for assignment in &rule.assignments {
                self.attributes.apply(assignment, &self.names, &mut out, 0);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcuts answer as the wildcard matcher would.
    #[test]
    fn pattern_shortcuts_agree_with_wildmatch() {
        let patterns = [
            "*.c", "*", "Makefile", "*.[ch]", "a?c", "*.tar.gz", "\\*x", "*x*", "",
        ];
        let subjects = [
            "a.c", "b.h", "Makefile", "abc", "x.tar.gz", "*x", "c", ".c", "", "a.cc",
        ];
        for pattern in patterns {
            for anchored in [false, true] {
                let shortcut = Pattern::new(pattern.as_bytes(), anchored);
                for subject in subjects {
                    assert_eq!(
                        shortcut.matches(subject.as_bytes()),
                        wildmatch(pattern.as_bytes(), subject.as_bytes()),
                        "{pattern} against {subject}"
                    );
                }
            }
        }
    }

    #[test]
    fn precedence_and_macros() {
        let mut attrs = Attributes::new();
        attrs.add_file(
            b"",
            b"*.txt text eol=crlf\n*.bin binary\n[attr]mine ident -text\n*.m mine\n",
        );
        attrs.add_file(b"sub", b"*.txt -text\nx/*.c filter=lfs\n");
        let [text, eol] = attrs.lookup(b"a.txt", ["text", "eol"]);
        assert_eq!((text, eol), (State::Set, State::Value("crlf".into())));
        let [text, eol] = attrs.lookup(b"sub/a.txt", ["text", "eol"]);
        assert_eq!((text, eol), (State::Unset, State::Value("crlf".into())));
        assert_eq!(attrs.lookup(b"d/p.bin", ["text"]), [State::Unset]);
        assert_eq!(
            attrs.lookup(b"q.m", ["ident", "text"]),
            [State::Set, State::Unset]
        );
        assert_eq!(
            attrs.lookup(b"sub/x/y.c", ["filter"]),
            [State::Value("lfs".into())]
        );
        assert_eq!(attrs.lookup(b"x/y.c", ["filter"]), [State::Unspecified]);
    }
}
