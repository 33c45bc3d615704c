//! An I/O error in the words git prints: C's `strerror`, which Rust's text carries followed by
//! "(os error N)".

/// The system's words for `error` (`No such file or directory`), as `strerror` gives them.
pub fn system_words(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}
