//! Handing memory back once a worker goes quiet.
//!
//! A worker's pools grow to the most connections it had active at once, and glibc's allocator
//! keeps the pages it has freed resident, so after a burst a process would stay at its
//! high-water mark. Once a worker has gone a whole tick with no connection activity, it empties
//! its pools and, when the server was asked to tune the allocator, asks it to release what it
//! holds free (`malloc_trim`). That happens once per quiet spell, never under load.

use std::cell::{Cell, RefCell};

thread_local! {
    /// What code above the engine asked to run on this thread when it goes quiet.
    static QUIET_HOOKS: RefCell<Vec<fn()>> = const { RefCell::new(Vec::new()) };
}

/// Have `release` called on this worker thread each time it goes quiet (a whole tick with no
/// connection activity), before the allocator is asked to give free memory back: for code
/// built on the engine that pools objects per thread, as the engine does, to free them. Call
/// it from a worker thread (from a service); registering the same function again does
/// nothing.
#[doc(hidden)]
pub fn release_when_quiet(release: fn()) {
    QUIET_HOOKS.with(|hooks| {
        let mut hooks = hooks.borrow_mut();
        if !hooks
            .iter()
            .any(|&hook| std::ptr::fn_addr_eq(hook, release))
        {
            hooks.push(release);
        }
    });
}

fn run_quiet_hooks() {
    // Copied out first, so a hook may register another without a double borrow.
    let hooks = QUIET_HOOKS.with(|hooks| hooks.borrow().clone());
    for hook in hooks {
        hook();
    }
}

/// Tracks whether a worker has been busy, and trims once after each busy spell ends.
#[derive(Debug, Default)]
pub(crate) struct QuietTrim {
    active: Cell<bool>,
    trimmed: Cell<bool>,
    /// Whether to ask the allocator itself to give free pages back, a process-wide act.
    trim_allocator: bool,
}

impl QuietTrim {
    pub(crate) fn new(trim_allocator: bool) -> Self {
        QuietTrim {
            trim_allocator,
            ..QuietTrim::default()
        }
    }

    /// Note that a connection did something (was accepted, or had bytes to read).
    pub(crate) fn mark_active(&self) {
        self.active.set(true);
    }

    /// Called once per tick: releases memory (the thread's pools, whatever `release` frees,
    /// then the allocator's free pages) when the tick that just ended saw no activity and
    /// nothing has been released since the last activity. Returns whether it released.
    pub(crate) fn on_tick(&self, release: impl FnOnce()) -> bool {
        if self.active.replace(false) {
            self.trimmed.set(false);
            return false;
        }
        if self.trimmed.replace(true) {
            return false;
        }
        release_pools();
        release();
        run_quiet_hooks();
        if self.trim_allocator {
            release_free_memory();
        }
        true
    }
}

/// Free everything this thread's pools hold, so that objects made for the busiest moment do not
/// stay allocated after the load is gone; the next burst refills the pools.
fn release_pools() {
    crate::body::release_pooled_read_states();
    super::write_buffers::release_pooled_write_buffers();
    crate::head::release_pooled_heads();
    crate::response::release_pooled_responses();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release_free_memory() {
    // SAFETY: malloc_trim only walks glibc's own arenas under their locks; it takes no pointers
    // from us and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}

#[cfg(test)]
mod tests {
    use super::QuietTrim;

    #[test]
    fn registered_hooks_run_once_each_when_quiet() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        fn hook() {
            RUNS.fetch_add(1, Ordering::SeqCst);
        }
        super::release_when_quiet(hook);
        super::release_when_quiet(hook);
        let trim = QuietTrim::default();
        trim.mark_active();
        assert!(!trim.on_tick(|| {}));
        assert_eq!(RUNS.load(Ordering::SeqCst), 0, "not while active");
        assert!(trim.on_tick(|| {}));
        assert_eq!(RUNS.load(Ordering::SeqCst), 1, "registered twice, run once");
    }

    #[test]
    fn trims_once_per_quiet_spell_and_never_while_active() {
        let trim = QuietTrim::default();
        trim.mark_active();
        assert!(!trim.on_tick(|| {}), "a busy tick must not trim");
        assert!(trim.on_tick(|| {}), "the first quiet tick trims");
        assert!(
            !trim.on_tick(|| {}),
            "a second quiet tick has nothing new to trim"
        );
        trim.mark_active();
        assert!(!trim.on_tick(|| {}));
        assert!(
            trim.on_tick(|| {}),
            "quiet again after activity: trims again"
        );
    }
}
