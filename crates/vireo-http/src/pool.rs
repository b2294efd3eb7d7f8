//! Per-thread pools of reusable objects, kept only on a server's worker threads.
//!
//! Workers take request heads, read states, write buffers and response parts from their own
//! pools and give them back when done, so serving a request allocates nothing once warm.

use std::cell::{Cell, RefCell};
use std::thread::LocalKey;

/// Objects kept per pool. Enough for every connection that is active at once in practice; more
/// would only hold memory after a burst.
const POOL_SIZE: usize = 1024;

thread_local! {
    static ON_WORKER: Cell<bool> = const { Cell::new(false) };
}

/// Mark this thread as a worker: its pools keep what is given back.
pub(crate) fn mark_worker_thread() {
    ON_WORKER.with(|flag| flag.set(true));
}

/// Whether this thread is one of a server's workers. Per-thread pools keep objects only on
/// workers: a request or response dropped on a blocking-pool thread is freed instead, since
/// nothing on that thread would take it again. For code built on the engine that pools
/// objects the same way.
#[doc(hidden)]
pub fn on_worker_thread() -> bool {
    ON_WORKER.try_with(Cell::get).unwrap_or(false)
}

/// An object from `pool`, or a new one from `make` if it is empty.
pub(crate) fn take_from<T>(
    pool: &'static LocalKey<RefCell<Vec<T>>>,
    make: impl FnOnce() -> T,
) -> T {
    pool.try_with(|p| p.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_else(make)
}

/// Give `item` back to `pool` on a worker thread, or free it anywhere else.
pub(crate) fn give_to<T>(pool: &'static LocalKey<RefCell<Vec<T>>>, item: T) {
    if !on_worker_thread() {
        return;
    }
    // During thread teardown the pool may be gone; the item is then simply freed.
    let _ = pool.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.len() < POOL_SIZE {
            p.push(item);
        }
    });
}

/// Free everything `pool` holds.
pub(crate) fn empty<T>(pool: &'static LocalKey<RefCell<Vec<T>>>) {
    let _ = pool.try_with(|p| std::mem::take(&mut *p.borrow_mut()));
}
