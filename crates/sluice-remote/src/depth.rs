//! The depth options of `fetch` and `clone` (`--depth`, `--deepen`, `--unshallow`), read and
//! checked as git reads and checks them, in git's order and words.

/// git's depth for "everything" (`--unshallow`), the largest its `int` holds.
pub const INFINITE_DEPTH: u32 = 0x7fff_ffff;

/// Why the depth options are refused, in git's words (git dies with 128 on each).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DepthError {
    /// `--depth` whose leading number is not 1 or more.
    #[error("depth {0} is not a positive number")]
    NotPositive(String),
    /// `--depth` with more than a number in it (`1abc`).
    #[error("transport: invalid depth option '{0}'")]
    Invalid(String),
    /// `--deepen` below zero.
    #[error("negative depth in --deepen is not supported")]
    NegativeDeepen,
    /// `--deepen` with `--depth`.
    #[error("options '--deepen' and '--depth' cannot be used together")]
    DeepenWithDepth,
    /// `--unshallow` with `--depth` (or `--deepen`).
    #[error("options '--depth' and '--unshallow' cannot be used together")]
    DepthWithUnshallow,
    /// `--unshallow` in a repository whose history is whole.
    #[error("--unshallow on a complete repository does not make sense")]
    UnshallowComplete,
}

/// How far a fetch cuts or extends history, from its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FetchDepth {
    /// The depth to ask for, if any.
    pub depth: Option<u32>,
    /// `--deepen`: counted from the current shallow boundary.
    pub relative: bool,
}

/// `--depth` as git takes it: its leading number must be 1 or more (git's `atoi` check),
/// then the whole text must be a number (decimal, or `0x` hex, or `0` octal, as `strtol`
/// reads it). A depth beyond git's largest is everything.
pub fn parse_depth(text: &str) -> Result<u32, DepthError> {
    if leading_number(text) < 1 {
        return Err(DepthError::NotPositive(text.to_owned()));
    }
    let value = whole_number(text).ok_or_else(|| DepthError::Invalid(text.to_owned()))?;
    match u32::try_from(value) {
        Ok(depth) if depth > 0 => Ok(depth.min(INFINITE_DEPTH)),
        // What passed the leading check and reads smaller (`010` is 8 to strtol, 10 to atoi).
        Ok(_) | Err(_) if value < 1 => Err(DepthError::NotPositive(text.to_owned())),
        _ => Ok(INFINITE_DEPTH),
    }
}

/// A fetch's `--depth`, `--deepen` (0 is none, as in git) and `--unshallow` (in a repository
/// that is `shallow` or not), checked in git's order: `--deepen`'s sign, `--deepen` with
/// `--depth`, `--unshallow` with either or in a whole repository, then the depth itself.
pub fn fetch_depth(
    depth: Option<&str>,
    deepen: Option<i64>,
    (unshallow, shallow): (bool, bool),
) -> Result<FetchDepth, DepthError> {
    let mut given = depth.map(str::to_owned);
    let mut relative = false;
    if let Some(n) = deepen.filter(|n| *n != 0) {
        if n < 0 {
            return Err(DepthError::NegativeDeepen);
        }
        if given.is_some() {
            return Err(DepthError::DeepenWithDepth);
        }
        given = Some(n.to_string());
        relative = true;
    }
    if unshallow {
        if given.is_some() {
            return Err(DepthError::DepthWithUnshallow);
        }
        if !shallow {
            return Err(DepthError::UnshallowComplete);
        }
        return Ok(FetchDepth {
            depth: Some(INFINITE_DEPTH),
            relative: false,
        });
    }
    Ok(FetchDepth {
        depth: given.as_deref().map(parse_depth).transpose()?,
        relative,
    })
}

/// C's blanks, which `atoi` and `strtol` skip first.
fn skip_blanks(text: &str) -> &str {
    text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c'])
}

/// The sign and what follows it.
fn signed(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// What C's `atoi` makes of `text`: the decimal digits after blanks and a sign, the rest
/// ignored, as an `int` (a value past `long` saturates, then is cut to `int`, as glibc's).
fn leading_number(text: &str) -> i64 {
    let (negative, digits) = signed(skip_blanks(text));
    let magnitude = (digits.bytes().take_while(u8::is_ascii_digit)).fold(0i64, |n, b| {
        n.saturating_mul(10).saturating_add(i64::from(b - b'0'))
    });
    let value = if negative { -magnitude } else { magnitude };
    i64::from(value as i32)
}

/// What C's `strtol(text, &end, 0)` reads when it reads all of `text`; `None` when something
/// follows the number (or there is none). Saturates as strtol does.
fn whole_number(text: &str) -> Option<i64> {
    let (negative, rest) = signed(skip_blanks(text));
    let (radix, digits) = if let Some(hex) = rest.strip_prefix("0x").or(rest.strip_prefix("0X")) {
        (16, hex)
    } else if rest.len() > 1 && rest.starts_with('0') {
        (8, &rest[1..])
    } else {
        (10, rest)
    };
    if digits.is_empty() {
        return None;
    }
    let mut magnitude = 0i64;
    for c in digits.chars() {
        let digit = c.to_digit(radix)?;
        magnitude = magnitude
            .saturating_mul(i64::from(radix))
            .saturating_add(i64::from(digit));
    }
    Some(if negative { -magnitude } else { magnitude })
}
