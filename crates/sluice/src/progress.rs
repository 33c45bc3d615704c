//! Renders library progress on stderr as git does: "Receiving objects:  45% (x/y), 1.2 MiB |
//! 3.4 MiB/s", then ", done." A ticker thread redraws a few times a second, so the hot path of
//! a worker is one atomic addition.

use sluice_object::progress::Progress;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When to show progress, from `-q`, `-v`, `--progress` and whether stderr is a terminal.
pub fn enabled(requested: bool, forced: bool) -> bool {
    forced || (requested && std::io::stderr().is_terminal())
}

#[derive(Default)]
struct Phase {
    title: String,
    total: Option<u64>,
    started: Option<Instant>,
    last_line: String,
    active: bool,
}

struct Shared {
    count: AtomicU64,
    bytes: AtomicU64,
    phase: Mutex<Phase>,
    stop: AtomicBool,
}

/// Progress on stderr, or nothing when disabled. With `SLUICE_TRACE_PERFORMANCE` set, each
/// phase's wall time is printed when it ends (as git's `GIT_TRACE_PERFORMANCE` does for
/// commands), whether or not progress is shown.
pub struct TerminalProgress {
    shared: Option<Arc<Shared>>,
    trace: Option<Mutex<(String, Instant)>>,
}

impl TerminalProgress {
    /// Progress that renders when `enabled`.
    pub fn new(enabled: bool) -> Self {
        let trace = std::env::var_os("SLUICE_TRACE_PERFORMANCE")
            .filter(|v| !v.is_empty() && v != "0")
            .map(|_| Mutex::new((String::new(), Instant::now())));
        if !enabled {
            return TerminalProgress {
                shared: None,
                trace,
            };
        }
        let shared = Arc::new(Shared {
            count: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            phase: Mutex::new(Phase::default()),
            stop: AtomicBool::new(false),
        });
        let ticker = Arc::clone(&shared);
        std::thread::spawn(move || {
            while !ticker.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                ticker.draw(false);
            }
        });
        TerminalProgress {
            shared: Some(shared),
            trace,
        }
    }
}

impl Drop for TerminalProgress {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            shared.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// Sizes as git prints them: bytes, KiB, MiB, GiB with two decimals.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size {
            let whole = bytes / size;
            let hundredths = (bytes % size) * 100 / size;
            return format!("{whole}.{hundredths:02} {unit}");
        }
    }
    if bytes == 1 {
        "1 byte".into()
    } else {
        format!("{bytes} bytes")
    }
}

impl Shared {
    fn line(&self, phase: &Phase) -> String {
        let count = self.count.load(Ordering::Relaxed);
        let bytes = self.bytes.load(Ordering::Relaxed);
        let mut line = match phase.total {
            Some(total) if total > 0 => {
                let percent = count.min(total) * 100 / total;
                format!("{}: {percent:3}% ({count}/{total})", phase.title)
            }
            _ => format!("{}: {count}", phase.title),
        };
        if bytes > 0 {
            let elapsed = phase.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
            let rate = if elapsed > 0.0 {
                (bytes as f64 / elapsed) as u64
            } else {
                0
            };
            line.push_str(&format!(
                ", {} | {}/s",
                human_bytes(bytes),
                human_bytes(rate)
            ));
        }
        line
    }

    fn draw(&self, done: bool) {
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        if !phase.active {
            return;
        }
        let line = self.line(&phase);
        if !done && line == phase.last_line {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = if done {
            write!(err, "\r{line}, done.\n")
        } else {
            write!(err, "\r{line}")
        };
        let _ = err.flush();
        phase.last_line = line;
        if done {
            phase.active = false;
        }
    }
}

impl Progress for TerminalProgress {
    fn phase(&self, title: &str, total: Option<u64>) {
        if let Some(trace) = &self.trace {
            *trace.lock().unwrap_or_else(|e| e.into_inner()) = (title.to_owned(), Instant::now());
        }
        let Some(shared) = &self.shared else { return };
        shared.count.store(0, Ordering::Relaxed);
        shared.bytes.store(0, Ordering::Relaxed);
        let mut phase = shared.phase.lock().unwrap_or_else(|e| e.into_inner());
        *phase = Phase {
            title: title.to_owned(),
            total,
            started: Some(Instant::now()),
            last_line: String::new(),
            active: true,
        };
    }

    fn add(&self, count: u64) {
        if let Some(shared) = &self.shared {
            shared.count.fetch_add(count, Ordering::Relaxed);
        }
    }

    fn add_bytes(&self, bytes: u64) {
        if let Some(shared) = &self.shared {
            shared.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    fn finish(&self) {
        if let Some(shared) = &self.shared {
            shared.draw(true);
        }
        if let Some(trace) = &self.trace {
            let (title, start) = &*trace.lock().unwrap_or_else(|e| e.into_inner());
            eprintln!(
                "trace: performance: {:.3} s: {title}",
                start.elapsed().as_secs_f64()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn sizes_read_like_git() {
        assert_eq!(human_bytes(0), "0 bytes");
        assert_eq!(human_bytes(1), "1 byte");
        assert_eq!(human_bytes(1536), "1.50 KiB");
        assert_eq!(human_bytes(5 << 20), "5.00 MiB");
    }
}
