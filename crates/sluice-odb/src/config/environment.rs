//! The configuration given on the command line, as git hands it to every configuration read
//! and to the programs it starts: `GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_<n>` and
//! `GIT_CONFIG_VALUE_<n>` (read first), then `GIT_CONFIG_PARAMETERS`, where `-c` and
//! `--config-env` settings are single-quoted for the shell, `'key'='value'` (`'key'=` for a
//! key given alone) or, as older gits wrote them, `'key=value'`.

use super::ConfigError;
use sluice_object::shell::quote;

/// A setting given on the command line: a key, and its value unless given alone (true).
pub type Parameter = (String, Option<String>);

/// Every setting the environment gives, in the order git applies them; a key git would refuse
/// is refused with git's words.
pub fn parameters() -> Result<Vec<Parameter>, ConfigError> {
    let mut out = counted()?;
    if let Some(text) = std::env::var_os("GIT_CONFIG_PARAMETERS") {
        out.extend(parse_list(&text.to_string_lossy())?);
    }
    for (key, _) in &out {
        super::ConfigKey::parse(key)?;
    }
    Ok(out)
}

/// `GIT_CONFIG_COUNT` pairs, refused as git refuses them: a count that is no number, a key
/// or a value missing.
fn counted() -> Result<Vec<Parameter>, ConfigError> {
    let Some(count) = std::env::var_os("GIT_CONFIG_COUNT") else {
        return Ok(Vec::new());
    };
    let bogus = || ConfigError::Environment("bogus count in GIT_CONFIG_COUNT".to_owned());
    let count = count.to_str().ok_or_else(bogus)?;
    // git's strtoul: an empty count is none.
    let count: u32 = match count {
        "" => 0,
        digits => digits.parse().map_err(|_| bogus())?,
    };
    let missing =
        |what: &str, name: &str| ConfigError::Environment(format!("missing {what} {name}"));
    (0..count)
        .map(|i| {
            let (key, value) = (
                format!("GIT_CONFIG_KEY_{i}"),
                format!("GIT_CONFIG_VALUE_{i}"),
            );
            let k = std::env::var(&key).map_err(|_| missing("config key", &key))?;
            let v = std::env::var(&value).map_err(|_| missing("config value", &value))?;
            Ok((k, Some(v)))
        })
        .collect()
}

/// `GIT_CONFIG_PARAMETERS`: whitespace-separated items, each `'key'='value'`, `'key'=` or
/// `'key=value'`; within an item, text is single-quoted or a backslash-escaped character.
pub fn parse_list(text: &str) -> Result<Vec<Parameter>, ConfigError> {
    let bogus = || ConfigError::Environment("bogus format in GIT_CONFIG_PARAMETERS".to_owned());
    let mut chars = text.chars().peekable();
    let mut out = Vec::new();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(out);
        }
        let word = dequote(&mut chars).ok_or_else(bogus)?;
        if chars.next_if_eq(&'=').is_some() {
            // The newer form: the value follows, unless the key was given alone.
            let value = match chars.peek() {
                None => None,
                Some(c) if c.is_whitespace() => None,
                Some(_) => Some(dequote(&mut chars).ok_or_else(bogus)?),
            };
            out.push((word, value));
        } else {
            out.push(match word.split_once('=') {
                Some((key, value)) => (key.to_owned(), Some(value.to_owned())),
                None => (word, None),
            });
        }
    }
}

/// One shell word of single-quoted pieces and escaped characters, up to whitespace or an
/// unquoted `=`; `None` for a quote never closed.
fn dequote(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<String> {
    let mut word = String::new();
    while let Some(&c) = chars.peek() {
        match c {
            '\'' => {
                chars.next();
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                chars.next();
                word.push(chars.next()?);
            }
            '=' => break,
            c if c.is_whitespace() => break,
            c => {
                chars.next();
                word.push(c);
            }
        }
    }
    Some(word)
}

/// `GIT_CONFIG_PARAMETERS` with the `-c` settings `items` appended (`key=value`, or `key`
/// alone for true), written as git writes them. A setting git would refuse is refused here.
pub fn with_parameters(existing: &str, items: &[String]) -> Result<String, ConfigError> {
    let mut params = existing.to_owned();
    for item in items {
        super::Config::default().set_parameter(item)?;
        if !params.is_empty() {
            params.push(' ');
        }
        match item.split_once('=') {
            Some((key, value)) => params.push_str(&format!("{}={}", quote(key), quote(value))),
            None => params.push_str(&format!("{}=", quote(item))),
        }
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_and_keys_given_alone_are_read_as_git_writes_them() {
        let text = r"'a.b'='1' 'x.y'= 'old.form=x y' 'alias.p'=''\!'echo it'\''s' 'lone.key'";
        let parsed = parse_list(text).unwrap();
        let expected = [
            ("a.b", Some("1")),
            ("x.y", None),
            ("old.form", Some("x y")),
            ("alias.p", Some("!echo it's")),
            ("lone.key", None),
        ];
        let expected: Vec<Parameter> = (expected.iter())
            .map(|(k, v)| (k.to_string(), v.map(str::to_owned)))
            .collect();
        assert_eq!(parsed, expected);
        assert!(parse_list("'never closed").is_err());
        let written = with_parameters("", &["a.b=1".into(), "x.y".into()]).unwrap();
        assert_eq!(parse_list(&written).unwrap(), expected[..2].to_vec());
    }
}
