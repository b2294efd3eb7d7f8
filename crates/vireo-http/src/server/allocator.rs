//! Fitting glibc's allocator to how the server uses threads.
//!
//! glibc gives threads their own malloc arenas, up to eight per core. Every blocking-pool
//! thread (up to 64 by default) then allocates in an arena of its own, a few small values per
//! call, and each arena keeps hundreds of KiB resident: `malloc_trim` returns free pages inside
//! a thread arena but not the free space at its top, which only frees in that arena give back.
//! Measured with `conformance/memory.py` (1,000,000 mixed requests, 2 workers, RSS after the
//! 100,000th request and after the last, both after the load pauses): 16 arenas, 4.8 → 7.3 MiB;
//! capped at 3 arenas, 4.3 → 5.0 MiB; at 2, 4.2 → 4.6 MiB; at 1, 4.0 → 4.4 MiB (within 10%),
//! with the same throughput. The engine allocates nothing per request, and what handlers
//! allocate is mostly served by glibc's per-thread cache, which takes no arena lock, so several
//! workers can share an arena; one per four workers keeps the lock uncontended on larger
//! machines, where this could not be measured.

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
