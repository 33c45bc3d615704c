//! What a client shows of band 2 (the server's progress and messages), as git shows it: each
//! line after `remote: `, a whole line at a time (a line split across packets waits for its
//! end), a non-empty one followed by what clears the rest of the screen line before its `\r`
//! or `\n`: `ESC [K` on a terminal, eight spaces elsewhere (a log keeps them).

/// Band 2's bytes, turned into the text to show.
#[derive(Debug)]
pub struct RemoteText {
    /// The start of a line whose end has not come yet.
    pending: Vec<u8>,
    suffix: &'static [u8],
}

impl RemoteText {
    /// For a terminal that understands `ESC [K` (`terminal`), or any other output.
    pub fn new(terminal: bool) -> RemoteText {
        RemoteText {
            pending: Vec::new(),
            suffix: if terminal { b"\x1b[K" } else { b"        " },
        }
    }

    /// The text to show for the lines `bytes` (the next of band 2) completes.
    pub fn lines(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        let Some(end) = self.pending.iter().rposition(|&b| b == b'\n' || b == b'\r') else {
            return out;
        };
        for line in self.pending[..=end].split_inclusive(|&b| b == b'\n' || b == b'\r') {
            let (content, terminator) = line.split_at(line.len() - 1);
            self.render(content, terminator, &mut out);
        }
        self.pending.drain(..=end);
        out
    }

    /// The text to show for a last line the server did not end, ended here.
    pub fn finish(&mut self) -> Vec<u8> {
        let pending = std::mem::take(&mut self.pending);
        let mut out = Vec::new();
        if !pending.is_empty() {
            self.render(&pending, b"\n", &mut out);
        }
        out
    }

    fn render(&self, content: &[u8], terminator: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(b"remote: ");
        out.extend_from_slice(content);
        if !content.is_empty() {
            out.extend_from_slice(self.suffix);
        }
        out.extend_from_slice(terminator);
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
        assert_eq!(text.finish(), b"remote: part        \n");
        assert_eq!(text.finish(), b"");
    }
}
