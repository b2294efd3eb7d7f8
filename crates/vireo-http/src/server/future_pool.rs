//! Pooled memory for the futures of busy connections.
//!
//! A connection's task holds only what an idle connection needs (the socket and a few words);
//! the state of serving requests, which includes the service's own future and is many times
//! larger, lives in a block taken from its worker's pool when bytes arrive and given back as
//! soon as the connection is idle again. Thousands of idle connections then cost a small task
//! each, while a worker keeps only as many blocks as it has connections busy at once.
//!
//! Written by hand because the futures are not `Send` (they borrow the worker) and their type
//! cannot be named: `Pin<Box<dyn Future>>` would allocate for every burst of requests, and the
//! reusable boxes that exist (`tokio_util::sync::ReusableBoxFuture`) are per owner and require
//! `Send`.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll};

/// Blocks kept for reuse. A worker needs one per connection busy at the same moment.
const MAX_POOLED_BLOCKS: usize = 256;

/// Free blocks of one layout: every future placed here has the same type, so the layout is
/// fixed by the first one.
#[derive(Debug, Default)]
pub(crate) struct FuturePool {
    layout: std::cell::Cell<Option<Layout>>,
    free: RefCell<Vec<NonNull<u8>>>,
}

impl FuturePool {
    /// Place the future `make` returns in a pooled block. Taking a constructor rather than a
    /// future lets the compiler build the future in the block instead of copying it there.
    #[inline(always)]
    pub(crate) fn place<F: Future>(&self, make: impl FnOnce() -> F) -> PooledFuture<'_, F> {
        let layout = Layout::new::<F>();
        assert!(layout.size() > 0, "a connection future is never zero-sized");
        if self.layout.get() != Some(layout) {
            // Blocks of another layout cannot hold this future.
            self.release();
            self.layout.set(Some(layout));
        }
        let pooled = self.free.borrow_mut().pop();
        let block = pooled.unwrap_or_else(|| {
            // SAFETY: the layout has a non-zero size (asserted above).
            let raw = unsafe { alloc(layout) };
            NonNull::new(raw).unwrap_or_else(|| handle_alloc_error(layout))
        });
        let slot = block.cast::<F>();
        // SAFETY: `slot` is valid for writes of `F`: it was allocated with `F`'s layout, here or
        // by an earlier `place` of the same layout, and nothing else uses it (a block is either
        // in `free` or owned by exactly one `PooledFuture`).
        unsafe { slot.as_ptr().write(make()) };
        PooledFuture { slot, pool: self }
    }

    fn give_back(&self, block: NonNull<u8>, layout: Layout) {
        let mut free = self.free.borrow_mut();
        if free.len() < MAX_POOLED_BLOCKS && self.layout.get() == Some(layout) {
            free.push(block);
        } else {
            // SAFETY: the block was allocated with `layout` and is no longer used.
            unsafe { dealloc(block.as_ptr(), layout) };
        }
    }

    /// Free every pooled block (when the worker goes quiet, and when it ends).
    pub(crate) fn release(&self) {
        let Some(layout) = self.layout.get() else {
            return;
        };
        for block in self.free.borrow_mut().drain(..) {
            // SAFETY: every block in `free` was allocated with `layout` and is unused.
            unsafe { dealloc(block.as_ptr(), layout) };
        }
    }
}

impl Drop for FuturePool {
    fn drop(&mut self) {
        self.release();
    }
}

/// A future living in a block of a [`FuturePool`]; dropping it drops the future in place and
/// returns the block.
pub(crate) struct PooledFuture<'p, F: Future> {
    slot: NonNull<F>,
    pool: &'p FuturePool,
}

impl<F: Future> Future for PooledFuture<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `slot` holds an initialised `F` until `drop` below, and the `F` never moves:
        // the block is not reused or freed before the `F` is dropped in place, which is what
        // pinning requires.
        let future = unsafe { Pin::new_unchecked(&mut *self.slot.as_ptr()) };
        future.poll(cx)
    }
}

impl<F: Future> Drop for PooledFuture<'_, F> {
    fn drop(&mut self) {
        // SAFETY: `slot` holds an initialised `F` that nothing else refers to; after this it is
        // treated as raw memory only.
        unsafe { std::ptr::drop_in_place(self.slot.as_ptr()) };
        self.pool.give_back(self.slot.cast(), Layout::new::<F>());
    }
}

#[cfg(test)]
mod tests {
    use super::FuturePool;
    use std::future::Future;
    use std::rc::Rc;
    use std::task::{Context, Poll, Waker};

    fn poll_once<F: Future>(future: F) -> Poll<F::Output> {
        let mut future = std::pin::pin!(future);
        future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
    }

    async fn counting(guard: Rc<()>, value: u32) -> u32 {
        let _guard = guard;
        value
    }

    #[test]
    fn blocks_are_reused_and_futures_dropped_in_place() {
        let pool = FuturePool::default();
        let dropped = Rc::new(());
        let first = pool.place(|| counting(dropped.clone(), 7));
        let block = first.slot.cast::<u8>();
        assert_eq!(poll_once(first), Poll::Ready(7));
        assert_eq!(Rc::strong_count(&dropped), 1, "the future was dropped");
        assert_eq!(pool.free.borrow().as_slice(), &[block], "its block is back");
        let second = pool.place(|| counting(dropped.clone(), 8));
        assert_eq!(second.slot.cast::<u8>(), block, "the same block again");
        assert!(pool.free.borrow().is_empty());
        assert_eq!(poll_once(second), Poll::Ready(8));
    }

    #[test]
    fn a_future_of_another_layout_never_gets_a_block_of_the_first() {
        let pool = FuturePool::default();
        drop(pool.place(|| counting(Rc::new(()), 1)));
        assert_eq!(pool.free.borrow().len(), 1);
        let big = pool.place(|| async { [1u8; 4096].iter().map(|&b| u32::from(b)).sum::<u32>() });
        assert!(
            pool.free.borrow().is_empty(),
            "the smaller block was freed, not reused"
        );
        assert_eq!(poll_once(big), Poll::Ready(4096));
    }

    #[test]
    fn a_future_dropped_before_completion_is_dropped_in_place() {
        let pool = FuturePool::default();
        let dropped = Rc::new(());
        let guard = dropped.clone();
        let pending = pool.place(|| async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        });
        assert_eq!(Rc::strong_count(&dropped), 2);
        drop(pending);
        assert_eq!(Rc::strong_count(&dropped), 1);
        pool.release();
        assert!(pool.free.borrow().is_empty());
    }
}
