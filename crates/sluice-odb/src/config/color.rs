//! Colour values of the configuration (`color.<slot>`, git-config's "color" type): up to two
//! colours (foreground, then background) and attributes, in any order, turned into the ANSI
//! escape sequence git writes for them: attributes first in the order of their codes, then the
//! foreground, then the background (`red bold` and `bold red` are both `ESC[1;31m`).

/// Why a colour value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid color value: {0}")]
pub struct BadColor(pub String);

/// The reset sequence written after a coloured word.
pub const RESET: &str = "\x1b[m";

/// One colour of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Color {
    /// `normal`: leave the colour as it is (writes nothing).
    Normal,
    /// `default`: the terminal's own colour.
    Default,
    /// One of the eight basic colours, `bright` or not.
    Basic { index: u8, bright: bool },
    /// 0-255.
    Indexed(u8),
    /// `#rrggbb`.
    Rgb(u8, u8, u8),
}

fn parse_one(word: &str) -> Option<Color> {
    const NAMES: [&str; 8] = [
        "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
    ];
    let lower = word.to_ascii_lowercase();
    match lower.as_str() {
        "normal" => return Some(Color::Normal),
        "default" => return Some(Color::Default),
        _ => {}
    }
    let (name, bright) = match lower.strip_prefix("bright") {
        Some(rest) => (rest, true),
        None => (lower.as_str(), false),
    };
    if let Some(index) = NAMES.iter().position(|n| *n == name) {
        return Some(Color::Basic {
            index: index as u8,
            bright,
        });
    }
    if let Some(hex) = word.strip_prefix('#').filter(|h| h.len() == 6) {
        let byte = |at: usize| u8::from_str_radix(&hex[at..at + 2], 16).ok();
        return Some(Color::Rgb(byte(0)?, byte(2)?, byte(4)?));
    }
    // A number: -1 is "normal", 0-255 an indexed colour.
    match word.parse::<i32>().ok()? {
        -1 => Some(Color::Normal),
        n @ 0..=255 => Some(Color::Indexed(n as u8)),
        _ => None,
    }
}

/// The SGR code of an attribute word (`bold`, `no-ul`, …).
fn attribute(word: &str) -> Option<u8> {
    let lower = word.to_ascii_lowercase();
    let (name, negated) = match lower.strip_prefix("no") {
        Some(rest) => (rest.strip_prefix('-').unwrap_or(rest), true),
        None => (lower.as_str(), false),
    };
    let code = match name {
        "bold" => 1,
        "dim" => 2,
        "italic" => 3,
        "ul" => 4,
        "blink" => 5,
        "reverse" => 7,
        "strike" => 9,
        _ => return None,
    };
    // Bold and dim are both turned off by 22.
    Some(match (negated, code) {
        (false, code) => code,
        (true, 1) => 22,
        (true, code) => 20 + code,
    })
}

/// The SGR parameters of `color` as a foreground (or background).
fn sgr(color: Color, background: bool) -> Option<String> {
    let layer = if background { 4 } else { 3 };
    Some(match color {
        Color::Normal => return None,
        Color::Default => format!("{layer}9"),
        Color::Basic {
            index,
            bright: false,
        } => format!("{layer}{index}"),
        Color::Basic {
            index,
            bright: true,
        } => format!("{}", if background { 100 } else { 90 } + u32::from(index)),
        Color::Indexed(n) => format!("{layer}8;5;{n}"),
        Color::Rgb(r, g, b) => format!("{layer}8;2;{r};{g};{b}"),
    })
}

/// The escape sequence of a colour value: empty for `normal` (or nothing given), `ESC[m` for
/// `reset`.
pub fn parse(value: &str) -> Result<String, BadColor> {
    let bad = || BadColor(value.to_owned());
    if value.trim().eq_ignore_ascii_case("reset") {
        return Ok(RESET.to_owned());
    }
    let (mut colors, mut attributes) = (Vec::new(), Vec::new());
    for word in value.split_ascii_whitespace() {
        if let Some(color) = parse_one(word) {
            if colors.len() == 2 {
                return Err(bad());
            }
            colors.push(color);
        } else if let Some(code) = attribute(word) {
            attributes.push(code);
        } else {
            return Err(bad());
        }
    }
    attributes.sort_unstable();
    attributes.dedup();
    let mut parts: Vec<String> = attributes.iter().map(u8::to_string).collect();
    parts.extend(colors.first().and_then(|&c| sgr(c, false)));
    parts.extend(colors.get(1).and_then(|&c| sgr(c, true)));
    Ok(match parts.is_empty() {
        true => String::new(),
        false => format!("\x1b[{}m", parts.join(";")),
    })
}
