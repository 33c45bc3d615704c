//! A request body that is sent whole when it is small and streamed when it is not, as git's
//! `http.postBuffer` decides: a body that fits is sent with its `Content-Length` (which CGI
//! servers such as git http-backend behind a simple web server need), a larger one in chunks
//! as it is produced, never held.

use std::io::{self, PipeReader, PipeWriter, Read, Write};
use std::sync::mpsc::{Receiver, Sender};

/// How the body reaches the request: whole, or its first bytes and the rest as they come.
pub(super) enum Body {
    Whole(Vec<u8>),
    Streamed(io::Chain<io::Cursor<Vec<u8>>, PipeReader>),
}

/// The producer's side: holds up to `limit` bytes, then opens a pipe and says so.
pub(super) struct SpillWriter {
    held: Vec<u8>,
    limit: usize,
    pipe: Option<PipeWriter>,
    start: Option<Sender<Body>>,
}

impl SpillWriter {
    /// A writer and where the body will be announced.
    pub(super) fn new(limit: usize) -> (SpillWriter, Receiver<Body>) {
        let (start, started) = std::sync::mpsc::channel();
        let writer = SpillWriter {
            held: Vec::new(),
            limit,
            pipe: None,
            start: Some(start),
        };
        (writer, started)
    }

    /// The producer is done: a body that never spilled is announced whole.
    pub(super) fn finish(mut self) -> io::Result<()> {
        if let (None, Some(start)) = (&self.pipe, self.start.take()) {
            let _ = start.send(Body::Whole(std::mem::take(&mut self.held)));
        }
        Ok(())
    }
}

impl Write for SpillWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if let Some(pipe) = &mut self.pipe {
            return pipe.write(data);
        }
        if self.held.len() + data.len() <= self.limit {
            self.held.extend_from_slice(data);
            return Ok(data.len());
        }
        let (reader, writer) = io::pipe()?;
        let held = io::Cursor::new(std::mem::take(&mut self.held));
        let start = self
            .start
            .take()
            .ok_or_else(|| io::Error::other("body announced twice"))?;
        start
            .send(Body::Streamed(held.chain(reader)))
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        self.pipe = Some(writer);
        self.write(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.pipe {
            Some(pipe) => pipe.flush(),
            None => Ok(()),
        }
    }
}
