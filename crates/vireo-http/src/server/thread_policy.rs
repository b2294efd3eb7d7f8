//! Blocking-pool threads that yield to the worker (`Server::batch_blocking_threads`).
//!
//! Under Linux's default policy a thread that is woken preempts the one that woke it. A worker
//! handing a request to the pool is then switched out at once, before it has read its other
//! ready connections, and the pool threads, handing a lock such as Python's GIL to each other,
//! switch back and forth on every handoff. Under `SCHED_BATCH` a woken thread waits for the
//! running one to block or use up its slice, so work reaches the pool in batches.

use std::io;

/// Put the calling thread under `SCHED_BATCH` (same priority, no wake-up preemption).
#[cfg(target_os = "linux")]
pub(crate) fn yield_on_wake() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid `sched_param` that outlives the call, which only reads it;
    // pid 0 names the calling thread, whose policy is all that changes.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Elsewhere the threads keep the default policy.
#[cfg(not(target_os = "linux"))]
pub(crate) fn yield_on_wake() -> io::Result<()> {
    Ok(())
}
