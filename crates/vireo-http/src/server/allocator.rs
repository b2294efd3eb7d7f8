//! Fitting glibc's allocator to how the server uses threads, when the program asks for it
//! (`Server::tune_allocator`).
//!
//! glibc gives threads their own malloc arenas, up to eight per core, so every blocking-pool
//! thread would keep an arena of its own resident. Workers allocate little and mostly from
//! glibc's per-thread cache, which takes no arena lock, so several can share an arena. The
//! memory this saves is measured in docs/DEPLOYMENT.md.

/// Workers that share one malloc arena.
const WORKERS_PER_ARENA: usize = 4;

/// Cap glibc's malloc arenas at one per four workers, unless the environment already sets
/// `MALLOC_ARENA_MAX` (the operator's choice wins). Process-wide, and only ever raised: a
/// second server in the same process with more workers lifts the cap.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn limit_malloc_arenas(workers: usize) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CAP: AtomicUsize = AtomicUsize::new(0);
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    let cap = workers.div_ceil(WORKERS_PER_ARENA).max(1);
    if CAP.fetch_max(cap, Ordering::Relaxed) >= cap {
        return;
    }
    let cap = libc::c_int::try_from(cap).unwrap_or(libc::c_int::MAX);
    // SAFETY: mallopt only sets a tuning parameter of glibc's allocator under its own lock;
    // it takes no pointers and may be called at any time from any thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, cap);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn limit_malloc_arenas(_workers: usize) {}
