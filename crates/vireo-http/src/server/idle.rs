//! A worker's idle connections: instead of a timer and a shutdown listener in every connection,
//! each connection has a slot here holding its waker and when it was last active. The worker's
//! tick closes the ones idle past the keep-alive timeout, and shutdown closes them all. A
//! connection costs a few bytes here and an index in its own state, which is what keeps an idle
//! keep-alive connection under a kilobyte.

use std::cell::RefCell;
use std::task::Waker;
use tokio::time::Instant;

#[derive(Debug)]
struct Slot {
    waker: Option<Waker>,
    last_active: Instant,
    /// Waiting for its next request (only these can expire).
    waiting: bool,
    /// Told to close: timed out, or the server is shutting down.
    expired: bool,
}

/// The slots of one worker's connections.
#[derive(Debug, Default)]
pub(crate) struct IdleRegistry {
    slots: RefCell<Vec<Option<Slot>>>,
    free: RefCell<Vec<usize>>,
}

impl IdleRegistry {
    /// A slot for a new connection.
    pub(crate) fn register(&self, now: Instant) -> usize {
        let slot = Some(Slot {
            waker: None,
            last_active: now,
            waiting: false,
            expired: false,
        });
        let mut slots = self.slots.borrow_mut();
        match self.free.borrow_mut().pop() {
            Some(index) => {
                slots[index] = slot;
                index
            }
            None => {
                slots.push(slot);
                slots.len() - 1
            }
        }
    }

    /// Free a closed connection's slot.
    pub(crate) fn unregister(&self, index: usize) {
        self.slots.borrow_mut()[index] = None;
        self.free.borrow_mut().push(index);
    }

    /// Record that the connection was last busy at `now`: it has answered what it had and goes
    /// back to waiting.
    pub(crate) fn touch(&self, index: usize, now: Instant) {
        if let Some(slot) = &mut self.slots.borrow_mut()[index] {
            slot.last_active = now;
        }
    }

    /// The connection waits for its next request; `true` if it should close instead.
    pub(crate) fn wait(&self, index: usize, waker: &Waker) -> bool {
        let mut slots = self.slots.borrow_mut();
        let Some(slot) = &mut slots[index] else {
            return true;
        };
        if slot.expired {
            return true;
        }
        slot.waiting = true;
        match &slot.waker {
            Some(known) if known.will_wake(waker) => {}
            _ => slot.waker = Some(waker.clone()),
        }
        false
    }

    /// The connection has input and is no longer waiting.
    pub(crate) fn resume(&self, index: usize) {
        if let Some(slot) = &mut self.slots.borrow_mut()[index] {
            slot.waiting = false;
            slot.expired = false;
        }
    }

    /// Close the waiting connections last active before `cutoff` (all of them if `None`).
    pub(crate) fn expire(&self, cutoff: Option<Instant>) {
        let wakers: Vec<Waker> = self
            .slots
            .borrow_mut()
            .iter_mut()
            .flatten()
            .filter(|slot| slot.waiting && cutoff.is_none_or(|c| slot.last_active < c))
            .filter_map(|slot| {
                slot.expired = true;
                slot.waker.clone()
            })
            .collect();
        // Woken after the borrow ends: a woken task may run and touch its slot.
        for waker in wakers {
            waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn only_waiting_connections_past_the_cutoff_expire() {
        let registry = IdleRegistry::default();
        let start = Instant::now();
        let old = registry.register(start);
        let fresh = registry.register(start + Duration::from_secs(10));
        let busy = registry.register(start);
        let waker = std::task::Waker::noop();
        assert!(!registry.wait(old, waker));
        assert!(!registry.wait(fresh, waker));
        registry.expire(Some(start + Duration::from_secs(5)));
        assert!(registry.wait(old, waker), "idle past the cutoff");
        assert!(!registry.wait(fresh, waker), "active since the cutoff");
        registry.resume(busy);
        registry.expire(None);
        assert!(
            registry.wait(fresh, waker),
            "shutdown expires every waiting one"
        );
        assert!(
            !registry.wait(busy, waker),
            "a busy one finishes its request first"
        );
        registry.unregister(old);
        assert_eq!(registry.register(start), old, "slots are reused");
    }
}
