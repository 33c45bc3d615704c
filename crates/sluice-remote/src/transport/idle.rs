//! A reader that can give up when its source stays silent too long. A pipe cannot time out a
//! read by itself, so a thread reads ahead into a small queue and the caller waits on the
//! queue with a deadline; this also overlaps the server's writes with the caller's work.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// Bytes asked of the source per read: a quarter of the widened pipe from a spawned server, so a
/// full pipe is drained in four reads rather than sixteen.
const CHUNK: usize = 256 * 1024;
/// Chunks read ahead: enough to keep the pipe drained while the indexer is busy, bounded so a
/// fast server cannot fill memory.
const QUEUE: usize = 16;

/// A buffer read into, and how many of its bytes the read filled.
type Filled = (Vec<u8>, usize);

/// Reads from a thread-fed queue, failing after `timeout` without data.
pub(crate) struct IdleTimeout {
    chunks: Receiver<io::Result<Filled>>,
    /// Buffers read out go back to the reading thread, which reads into them again without
    /// clearing them: zeroing a fresh 64 KiB for every read was a seventh of that thread's
    /// time on a large clone.
    spent: Sender<Vec<u8>>,
    current: Vec<u8>,
    filled: usize,
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
        let (spent, recycled) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || loop {
            let mut chunk = recycled.try_recv().unwrap_or_else(|_| vec![0; CHUNK]);
            match source.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    if sender.send(Ok((chunk, n))).is_err() {
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
            spent,
            current: Vec::new(),
            filled: 0,
            taken: 0,
            timeout,
            ended: false,
        }
    }
}

impl Read for IdleTimeout {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.taken == self.filled {
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
                    let (chunk, filled) = chunk?;
                    let spent = std::mem::replace(&mut self.current, chunk);
                    if !spent.is_empty() {
                        let _ = self.spent.send(spent);
                    }
                    self.filled = filled;
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
        let n = buf.len().min(self.filled - self.taken);
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
