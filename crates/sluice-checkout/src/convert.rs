//! Converting a blob for the work tree, in git's order (`convert.c`): `ident` expansion, then
//! line endings, then `working-tree-encoding`; an external smudge filter runs last (see
//! [`crate::filter`]). Which conversions apply follows from the attributes and
//! `core.autocrlf` / `core.eol` exactly as git decides it.

use crate::attributes::{Attributes, Selection, State};
use sluice_object::ObjectId;

/// `core.autocrlf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AutoCrlf {
    /// false (the default).
    #[default]
    False,
    /// true: LF in the repository, CRLF in the work tree.
    True,
    /// input: LF in both.
    Input,
}

/// `core.eol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CoreEol {
    /// Unset or `native` (LF on the platforms Sluice runs on).
    #[default]
    Native,
    /// lf.
    Lf,
    /// crlf.
    Crlf,
}

/// The repository-wide settings conversion depends on.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConvertConfig {
    /// `core.autocrlf`.
    pub autocrlf: AutoCrlf,
    /// `core.eol`.
    pub eol: CoreEol,
}

/// git's `crlf_action` once attributes and configuration are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CrlfAction {
    Binary,
    TextInput,
    TextCrlf,
    Auto,
    AutoInput,
    AutoCrlf,
}

/// What to do to one path's content on its way to the work tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conversion {
    /// Write CRLF line endings (subject to the auto rules when `auto`).
    crlf: bool,
    /// `text=auto`-style: convert only files that look like text with LF-only endings.
    auto: bool,
    /// Expand `$Id$`.
    pub ident: bool,
    /// Encode from UTF-8 into this encoding.
    pub encoding: Option<String>,
    /// The `filter` driver name.
    pub filter: Option<String>,
}

/// The attributes conversion reads.
pub const ATTRIBUTES: [&str; 6] = [
    "text",
    "crlf",
    "eol",
    "ident",
    "filter",
    "working-tree-encoding",
];

/// Decides the conversion of each path of a checkout (see [`Conversion::planner`]).
#[derive(Debug)]
pub struct Planner<'a> {
    /// The rules that matter, or `None` when nothing can convert any file.
    selection: Option<Selection<'a, 6>>,
    config: ConvertConfig,
}

impl Planner<'_> {
    /// Decides the conversion of `path`.
    pub fn for_path(&self, path: &[u8]) -> Conversion {
        let Some(selection) = &self.selection else {
            return Conversion::default();
        };
        let [text, crlf, eol, ident, filter, encoding] = selection.lookup(path);
        Conversion::from_states(&text, &crlf, &eol, &ident, &filter, &encoding, self.config)
    }
}

impl Conversion {
    /// Whether the content passes through unchanged (no attribute or setting applies).
    pub fn is_identity(&self) -> bool {
        !self.crlf && !self.ident && self.encoding.is_none() && self.filter.is_none()
    }

    /// Decides conversions under `attributes` and `config`, path after path.
    pub fn planner(attributes: &Attributes, config: ConvertConfig) -> Planner<'_> {
        let plain = attributes.is_empty()
            && config.autocrlf == AutoCrlf::False
            && config.eol != CoreEol::Crlf;
        Planner {
            selection: (!plain).then(|| attributes.select(ATTRIBUTES)),
            config,
        }
    }

    fn from_states(
        text: &State,
        crlf: &State,
        eol: &State,
        ident: &State,
        filter: &State,
        encoding: &State,
        config: ConvertConfig,
    ) -> Conversion {
        let from_text_attr = |state: &State| match state {
            State::Set => Some(Some(CrlfAction::TextInput)), // "text": decided below
            State::Unset => Some(Some(CrlfAction::Binary)),
            State::Value(v) if v == "input" => Some(Some(CrlfAction::TextInput)),
            State::Value(v) if v == "auto" => Some(Some(CrlfAction::Auto)),
            _ => None,
        };
        // `text` wins over the legacy `crlf`; a plain "text"/"crlf" is remembered as `is_text`.
        let mut is_text;
        let mut action = match from_text_attr(text) {
            Some(a) => {
                is_text = *text == State::Set;
                a
            }
            None => {
                let a = from_text_attr(crlf).flatten();
                is_text = *crlf == State::Set;
                a
            }
        };
        if is_text {
            action = None; // resolved with the eol attribute and configuration below
        }
        if action != Some(CrlfAction::Binary) {
            match (eol.value(), action) {
                (Some("lf"), Some(CrlfAction::Auto)) => action = Some(CrlfAction::AutoInput),
                (Some("crlf"), Some(CrlfAction::Auto)) => action = Some(CrlfAction::AutoCrlf),
                (Some("lf"), _) => {
                    action = Some(CrlfAction::TextInput);
                    is_text = false;
                }
                (Some("crlf"), _) => {
                    action = Some(CrlfAction::TextCrlf);
                    is_text = false;
                }
                _ => {}
            }
        }
        let eol_is_crlf = match config.autocrlf {
            AutoCrlf::True => true,
            AutoCrlf::Input => false,
            AutoCrlf::False => config.eol == CoreEol::Crlf,
        };
        let action = match action {
            _ if is_text => {
                if eol_is_crlf {
                    CrlfAction::TextCrlf
                } else {
                    CrlfAction::TextInput
                }
            }
            Some(a) => a,
            None => match config.autocrlf {
                AutoCrlf::False => CrlfAction::Binary,
                AutoCrlf::True => CrlfAction::AutoCrlf,
                AutoCrlf::Input => CrlfAction::AutoInput,
            },
        };
        let (crlf, auto) = match action {
            CrlfAction::Binary | CrlfAction::TextInput | CrlfAction::AutoInput => (false, false),
            CrlfAction::TextCrlf => (true, false),
            CrlfAction::AutoCrlf => (true, true),
            CrlfAction::Auto => (eol_is_crlf, true),
        };
        let encoding = encoding
            .value()
            .filter(|e| !e.eq_ignore_ascii_case("utf-8") && !e.eq_ignore_ascii_case("utf8"))
            .map(str::to_owned);
        Conversion {
            crlf,
            auto,
            ident: *ident == State::Set,
            encoding,
            filter: filter.value().map(str::to_owned),
        }
    }

    /// Applies ident, line-ending and encoding conversion to `data`, the blob `id`.
    pub fn apply(&self, data: Vec<u8>, id: &ObjectId) -> Result<Vec<u8>, ConvertError> {
        let mut data = data;
        if self.ident {
            data = expand_ident(&data, id);
        }
        if self.crlf {
            data = lf_to_crlf(data, self.auto);
        }
        if let Some(encoding) = &self.encoding {
            data = encode(&data, encoding)?;
        }
        Ok(data)
    }
}

/// Why content could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// An encoding Sluice cannot write.
    #[error("failed to encode to '{0}': unsupported encoding")]
    UnsupportedEncoding(String),
    /// Content that is not valid UTF-8 cannot be re-encoded.
    #[error("failed to encode to '{0}': content is not valid UTF-8")]
    NotUtf8(String),
}

/// git's `gather_stats`.
#[derive(Default)]
struct TextStats {
    nul: usize,
    lonecr: usize,
    lonelf: usize,
    crlf: usize,
    printable: usize,
    nonprintable: usize,
}

fn gather_stats(data: &[u8]) -> TextStats {
    let mut s = TextStats::default();
    let mut i = 0;
    while i < data.len() {
        let c = data[i];
        match c {
            b'\r' => {
                if data.get(i + 1) == Some(&b'\n') {
                    s.crlf += 1;
                    i += 1;
                } else {
                    s.lonecr += 1;
                }
            }
            b'\n' => s.lonelf += 1,
            127 => s.nonprintable += 1,
            8 | 9 | 27 | 12 => s.printable += 1,
            0 => {
                s.nul += 1;
                s.nonprintable += 1;
            }
            c if c < 32 => s.nonprintable += 1,
            _ => s.printable += 1,
        }
        i += 1;
    }
    // A trailing ^Z (DOS end of file) does not make a file binary.
    if data.last() == Some(&0x1a) {
        s.nonprintable = s.nonprintable.saturating_sub(1);
    }
    s
}

fn lf_to_crlf(data: Vec<u8>, auto: bool) -> Vec<u8> {
    let stats = gather_stats(&data);
    if stats.lonelf == 0 {
        return data;
    }
    if auto {
        let binary =
            stats.lonecr > 0 || stats.nul > 0 || (stats.printable >> 7) < stats.nonprintable;
        if stats.lonecr > 0 || stats.crlf > 0 || binary {
            return data;
        }
    }
    let mut out = Vec::with_capacity(data.len() + stats.lonelf);
    for (i, &b) in data.iter().enumerate() {
        if b == b'\n' && (i == 0 || data[i - 1] != b'\r') {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// Replaces `$Id$` and `$Id: … $` (on one line) with `$Id: <blob id> $`.
fn expand_ident(data: &[u8], id: &ObjectId) -> Vec<u8> {
    let replacement = format!("Id: {id} $");
    let mut out = Vec::with_capacity(data.len() + 64);
    let mut rest = data;
    while let Some(dollar) = rest.iter().position(|&b| b == b'$') {
        out.extend_from_slice(&rest[..=dollar]);
        rest = &rest[dollar + 1..];
        if rest.len() < 3 || &rest[..2] != b"Id" {
            continue;
        }
        match rest[2] {
            b'$' => rest = &rest[3..],
            b':' => {
                let Some(end) = rest[3..].iter().position(|&b| b == b'$') else {
                    break;
                };
                if rest[3..3 + end].contains(&b'\n') {
                    continue;
                }
                rest = &rest[3 + end + 1..];
            }
            _ => continue,
        }
        out.extend_from_slice(replacement.as_bytes());
    }
    out.extend_from_slice(rest);
    out
}

/// Encodes UTF-8 content into the UTF-16 or UTF-32 families (the working-tree encodings git
/// users need in practice: Windows tools write UTF-16).
fn encode(data: &[u8], encoding: &str) -> Result<Vec<u8>, ConvertError> {
    let text = std::str::from_utf8(data).map_err(|_| ConvertError::NotUtf8(encoding.to_owned()))?;
    let upper = encoding.to_ascii_uppercase().replace('_', "-");
    let (unit, big_endian, bom) = match upper.as_str() {
        "UTF-16" | "UTF16" => (16, true, true),
        "UTF-16BE" | "UTF16BE" => (16, true, false),
        "UTF-16LE" | "UTF16LE" => (16, false, false),
        "UTF-16LE-BOM" => (16, false, true),
        "UTF-16BE-BOM" => (16, true, true),
        "UTF-32" | "UTF32" => (32, true, true),
        "UTF-32BE" | "UTF32BE" => (32, true, false),
        "UTF-32LE" | "UTF32LE" => (32, false, false),
        _ => return Err(ConvertError::UnsupportedEncoding(encoding.to_owned())),
    };
    let mut out = Vec::with_capacity(data.len() * if unit == 16 { 2 } else { 4 } + 4);
    let mut push = |value: u32| {
        if unit == 16 {
            let v = value as u16;
            out.extend_from_slice(&if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            });
        } else {
            out.extend_from_slice(&if big_endian {
                value.to_be_bytes()
            } else {
                value.to_le_bytes()
            });
        }
    };
    if bom {
        push(0xfeff);
    }
    for c in text.chars() {
        if unit == 16 {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                push(u32::from(*u));
            }
        } else {
            push(c as u32);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_object::HashKind;

    #[test]
    fn eol_rules() {
        assert_eq!(
            lf_to_crlf(b"a\nb\r\nc\n".to_vec(), false),
            b"a\r\nb\r\nc\r\n"
        );
        assert_eq!(lf_to_crlf(b"a\nb\r\nc\n".to_vec(), true), b"a\nb\r\nc\n");
        assert_eq!(lf_to_crlf(b"a\0\n".to_vec(), true), b"a\0\n");
        assert_eq!(lf_to_crlf(b"a\nb\n".to_vec(), true), b"a\r\nb\r\n");
    }

    #[test]
    fn ident_expansion() {
        let id = HashKind::Sha1.null_id();
        let zeros = "0".repeat(40);
        let out = expand_ident(b"x $Id$ y $Id: old $ z $Id\n$", &id);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("x $Id: {zeros} $ y $Id: {zeros} $ z $Id\n$")
        );
    }

    #[test]
    fn utf16() {
        assert_eq!(
            encode("hi\n".as_bytes(), "UTF-16LE").unwrap(),
            b"h\0i\0\n\0"
        );
        assert_eq!(
            encode("hi".as_bytes(), "UTF-16LE-BOM").unwrap(),
            b"\xff\xfeh\0i\0"
        );
        assert!(encode(b"x", "EBCDIC-XYZ").is_err());
    }
}
