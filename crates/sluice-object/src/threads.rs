//! How many worker threads a setting asks for, bounded: `pack.threads`, `--threads` and
//! `checkout.workers` are read from configuration and command lines, where a mistaken (or
//! hostile) value in the billions would otherwise start threads until the system gives out.

/// The most worker threads any pool starts; beyond it threads only contend.
pub const MAX_WORKERS: usize = 256;

/// The threads of this machine (1 where it cannot be told).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `asked` threads, 0 meaning one a core, never more than [`MAX_WORKERS`].
pub fn workers(asked: usize) -> usize {
    match asked {
        0 => cores(),
        n => n,
    }
    .min(MAX_WORKERS)
}
