//! Handing memory back once a worker goes quiet.
//!
//! A worker's pools grow to the most connections it had active at once, and glibc's allocator
//! keeps the pages it has freed resident, so after a burst a process would stay at its
//! high-water mark. Once a worker has gone a whole tick with no connection activity, it empties
//! its pools and asks the allocator to release what it holds free (`malloc_trim`). That happens
//! once per quiet spell, never under load, and costs well under a millisecond for a heap of a
//! few megabytes.

use std::cell::Cell;

/// Tracks whether a worker has been busy, and trims once after each busy spell ends.
#[derive(Debug, Default)]
pub(crate) struct QuietTrim {
    active: Cell<bool>,
    trimmed: Cell<bool>,
}

impl QuietTrim {
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
        super::buffers::release_pools();
        release();
        release_free_memory();
        true
    }
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
