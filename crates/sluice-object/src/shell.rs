//! Text for the POSIX shell, through which git runs the commands a user configures (filter
//! drivers, `--upload-pack`) and in whose quoting it passes `-c` settings on
//! (`GIT_CONFIG_PARAMETERS`).

/// `text` as one single-quoted word: every `'` inside is written `'\''`.
///
/// ```
/// assert_eq!(sluice_object::shell::quote("it's"), r"'it'\''s'");
/// ```
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
