//! A reader that can give up when its source stays silent too long. A pipe cannot time out a
//! read by itself, so a thread reads ahead into a small queue and the caller waits on the
//! queue with a deadline; this also overlaps the server's writes with the caller's work.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

const CHUNK: usize = 64 * 1024;
/// Chunks read ahead: enough to keep the pipe drained while the indexer is busy, bounded so a
/// fast server cannot fill memory.
const QUEUE: usize = 16;

/// Reads from a thread-fed queue, failing after `timeout` without data.
pub(crate) struct IdleTimeout {
    chunks: Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    taken: usize,
    timeout: Option<Duration>,
    ended: bool,
}

impl IdleTimeout {
    /// Starts reading `source` on its own thread.
    pub(crate) fn new<R: Read + Send + 'static>(
        mut source: R,
        timeout: Option<Duration>,
    ) -> IdleTimeout {
        let (sender, chunks) = mpsc::sync_channel(QUEUE);
        std::thread::spawn(move || loop {
            let mut chunk = vec![0; CHUNK];
            match source.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    chunk.truncate(n);
                    if sender.send(Ok(chunk)).is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = sender.send(Err(e));
                    break;
                }
            }
        });
        IdleTimeout {
            chunks,
            current: Vec::new(),
            taken: 0,
            timeout,
            ended: false,
        }
    }
}

impl Read for IdleTimeout {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.taken == self.current.len() {
            if self.ended {
                return Ok(0);
            }
            let next = match self.timeout {
                Some(timeout) => self.chunks.recv_timeout(timeout),
                None => self
                    .chunks
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected),
            };
            match next {
                Ok(chunk) => {
                    self.current = chunk?;
                    self.taken = 0;
                }
                Err(RecvTimeoutError::Disconnected) => self.ended = true,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "the server sent nothing for {} seconds",
                            self.timeout.unwrap_or_default().as_secs()
                        ),
                    ))
                }
            }
        }
        let n = buf.len().min(self.current.len() - self.taken);
        buf[..n].copy_from_slice(&self.current[self.taken..self.taken + n]);
        self.taken += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::IdleTimeout;
    use std::io::Read;
    use std::time::Duration;

    #[test]
    fn data_passes_and_silence_times_out() {
        let mut all = Vec::new();
        IdleTimeout::new(&b"hello"[..], Some(Duration::from_secs(5)))
            .read_to_end(&mut all)
            .unwrap();
        assert_eq!(all, b"hello");

        struct Silent;
        impl Read for Silent {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                std::thread::sleep(Duration::from_secs(3));
                Ok(0)
            }
        }
        let error = IdleTimeout::new(Silent, Some(Duration::from_millis(100)))
            .read(&mut [0; 4])
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
    }
}
