//! What a client shows of band 2 (the server's progress and messages), as git shows it: each
//! line after `remote: `, written when its end (`\n` or `\r`) comes, a non-empty line followed
//! by what clears the rest of the screen line: `ESC [K` on a terminal, eight spaces elsewhere (a
//! log keeps them); a last line the server leaves open ends with no suffix. With colours
//! (`color.remote`), a keyword that starts a piece (after any blanks), as a whole word in any
//! case, is coloured: `hint`, `warning`, `success`, `error`.
//!
//! Like git, each packet's pieces are taken on their own: a line split across two packets has
//! its second piece coloured as if it started a line, and a piece is judged without the bytes of
//! the next packet (git's receive-pack relays hook output 128 bytes at a time, so a keyword cut
//! by that boundary is not coloured, by git or here).

/// The escape sequences that colour each keyword, and the one that ends a colour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Highlight {
    /// `hint`'s colour.
    pub hint: String,
    /// `warning`'s colour.
    pub warning: String,
    /// `success`'s colour.
    pub success: String,
    /// `error`'s colour.
    pub error: String,
    /// What follows a coloured keyword.
    pub reset: String,
}

/// Band 2's bytes, turned into the text to show.
#[derive(Debug)]
pub struct RemoteText {
    /// The line begun by earlier packets, as it will be shown (`remote: ` and its pieces).
    pending: Vec<u8>,
    suffix: &'static [u8],
    highlight: Option<Highlight>,
}

impl RemoteText {
    /// For a terminal that understands `ESC [K` (`terminal`), or any other output.
    pub fn new(terminal: bool) -> RemoteText {
        RemoteText {
            pending: Vec::new(),
            suffix: if terminal { b"\x1b[K" } else { b"        " },
            highlight: None,
        }
    }

    /// The same, colouring the keywords that start lines.
    pub fn highlighted(mut self, highlight: Highlight) -> RemoteText {
        self.highlight = Some(highlight);
        self
    }

    /// The text to show for the lines `packet` (the next packet of band 2) completes.
    pub fn lines(&mut self, packet: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut rest = packet;
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let piece = &rest[..end];
            // A line begun in an earlier packet and ended at this one's start still gets the
            // suffix, to clear what was there.
            if piece.is_empty() && !self.pending.is_empty() {
                self.pending.extend_from_slice(self.suffix);
            }
            self.start_line();
            if !piece.is_empty() {
                self.add_piece(piece);
                self.pending.extend_from_slice(self.suffix);
            }
            self.pending.push(rest[end]);
            out.append(&mut self.pending);
            rest = &rest[end + 1..];
        }
        if !rest.is_empty() {
            self.start_line();
            self.add_piece(rest);
        }
        out
    }

    /// The text to show for a last line the server did not end, ended here (with no suffix,
    /// as git ends it).
    pub fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.pending);
        if !out.is_empty() {
            out.push(b'\n');
        }
        out
    }

    fn start_line(&mut self) {
        if self.pending.is_empty() {
            self.pending.extend_from_slice(b"remote: ");
        }
    }

    fn add_piece(&mut self, piece: &[u8]) {
        match &self.highlight {
            Some(highlight) => colour(highlight, piece, &mut self.pending),
            None => self.pending.extend_from_slice(piece),
        }
    }
}

/// `content` with the keyword that starts it (after blanks, a whole word, any case) coloured.
fn colour(highlight: &Highlight, content: &[u8], out: &mut Vec<u8>) {
    let blanks = content
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    let (lead, rest) = content.split_at(blanks);
    out.extend_from_slice(lead);
    let keywords = [
        ("hint", &highlight.hint),
        ("warning", &highlight.warning),
        ("success", &highlight.success),
        ("error", &highlight.error),
    ];
    let found = keywords.iter().find(|(word, _)| {
        let len = word.len();
        rest.len() >= len
            && rest[..len].eq_ignore_ascii_case(word.as_bytes())
            && rest.get(len).is_none_or(|b| !b.is_ascii_alphanumeric())
    });
    match found {
        Some((word, color)) => {
            let (keyword, after) = rest.split_at(word.len());
            out.extend_from_slice(color.as_bytes());
            out.extend_from_slice(keyword);
            out.extend_from_slice(highlight.reset.as_bytes());
            out.extend_from_slice(after);
        }
        None => out.extend_from_slice(rest),
    }
}

#[cfg(test)]
mod tests {
    use super::RemoteText;

    #[test]
    fn lines_wait_for_their_end_and_get_the_suffix() {
        let mut text = RemoteText::new(false);
        assert_eq!(text.lines(b"Counting: 1"), b"");
        assert_eq!(
            text.lines(b"0%\rdone\n\npart"),
            b"remote: Counting: 10%        \rremote: done        \nremote: \n"
        );
        assert_eq!(text.finish(), b"remote: part\n");
        assert_eq!(text.finish(), b"");
        // Ended by the next packet: the suffix comes before the end all the same.
        assert_eq!(text.lines(b"Total 3"), b"");
        assert_eq!(text.lines(b"\n"), b"remote: Total 3        \n");
    }
}
