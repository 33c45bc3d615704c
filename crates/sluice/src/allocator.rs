//! How the process returns freed memory. glibc's allocator raises its mmap and trim thresholds
//! (up to 32 and 64 MiB) the first time a large block is freed; from then on the tables of a
//! big job are carved from the heap and stay resident once freed. `index-pack` of git/git's
//! pack held 99 MB where git holds 88, and 42 MB against 33 on rust-lang/cargo's; with the
//! thresholds fixed, 88 and 34. The trim threshold is 1 MiB rather than glibc's initial 128 KiB:
//! at 128 KiB the worker threads' heaps were handed back and faulted in again hundreds of times
//! (git/git: 82k page faults against 60k, 0.05 s more wall time, for 1 MB less).
//!
//! Only the commands that receive packs run so. A delta search allocates and frees buffers of
//! every size all the time: with the mmap threshold fixed at 128 KiB each larger one was a new
//! mapping, and `repack -adf` of rust-lang/cargo took 5.9 s (3.1 s of it in the kernel)
//! against 3.6 s.

/// Keeps glibc's thresholds fixed. Called before any thread starts.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn keep_thresholds_fixed() {
    // Setting the trim threshold turns off the adjustment of both thresholds (the mmap
    // threshold stays at 128 KiB). SAFETY: mallopt only changes allocator parameters and is called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
    }
}

/// Other allocators have no such adjustment.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn keep_thresholds_fixed() {}
