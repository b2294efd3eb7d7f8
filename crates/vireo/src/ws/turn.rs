//! Whose turn it is to write a frame on a connection: the senders of one WebSocket all run on
//! its worker thread, so a flag and a list of waiting tasks do what an async mutex would,
//! with no atomics and a waiting future of two words.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::task::{Poll, Waker};

#[derive(Default)]
pub(super) struct Turn {
    taken: Cell<bool>,
    waiting: RefCell<Vec<Waker>>,
}

/// Holds the turn until dropped.
pub(super) struct Held<'a>(&'a Turn);

impl Turn {
    /// Wait for the turn.
    pub(super) async fn take(&self) -> Held<'_> {
        poll_fn(|cx| {
            if !self.taken.replace(true) {
                return Poll::Ready(());
            }
            let mut waiting = self.waiting.borrow_mut();
            if !waiting.iter().any(|w| w.will_wake(cx.waker())) {
                waiting.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .await;
        Held(self)
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.taken.set(false);
        // Every waiter looks again; the first one polled takes the turn.
        for waker in self.0.waiting.take() {
            waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[tokio::test(flavor = "current_thread")]
    async fn one_holder_at_a_time_and_waiters_get_their_turn() {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let turn = Rc::new(Turn::default());
                let order = Rc::new(RefCell::new(Vec::new()));
                let held = turn.take().await;
                let mut tasks = Vec::new();
                for i in 0..3 {
                    let (turn, order) = (turn.clone(), order.clone());
                    tasks.push(tokio::task::spawn_local(async move {
                        let _held = turn.take().await;
                        order.borrow_mut().push((i, "in"));
                        tokio::task::yield_now().await;
                        order.borrow_mut().push((i, "out"));
                    }));
                }
                tokio::task::yield_now().await;
                assert!(
                    order.borrow().is_empty(),
                    "nobody enters while the turn is held"
                );
                drop(held);
                for task in tasks {
                    task.await.unwrap();
                }
                let order = order.borrow();
                assert_eq!(order.len(), 6);
                for pair in order.chunks(2) {
                    assert_eq!((pair[0].0, pair[0].1, pair[1].1), (pair[1].0, "in", "out"));
                }
            })
            .await;
    }
}
