//! How many ASGI or WSGI app calls are running: each counts from its request until the later of
//! its answer and the end of the app's own task, since an ASGI app may go on streaming, or run
//! background tasks, after the engine has its answer. `--limit-concurrency` and a graceful
//! shutdown go by this count.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

#[derive(Default)]
pub(crate) struct RunningCalls {
    count: AtomicUsize,
    /// Set once something waits for the count to reach zero; until then no end is announced.
    watched: AtomicBool,
    ended: Notify,
}

impl RunningCalls {
    /// Count one more call, until the guard is dropped; also returns how many ran before it.
    pub(crate) fn start(self: &Arc<Self>) -> (Running, usize) {
        let before = self.count.fetch_add(1, Ordering::SeqCst);
        (Running(self.clone()), before)
    }

    /// Resolves once no call is running.
    pub(crate) async fn all_ended(&self) {
        self.watched.store(true, Ordering::SeqCst);
        loop {
            let ended = self.ended.notified();
            let mut ended = std::pin::pin!(ended);
            ended.as_mut().enable();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            ended.await;
        }
    }
}

/// One running call, counted until dropped.
pub(crate) struct Running(Arc<RunningCalls>);

impl Drop for Running {
    fn drop(&mut self) {
        let calls = &self.0;
        if calls.count.fetch_sub(1, Ordering::SeqCst) == 1 && calls.watched.load(Ordering::SeqCst) {
            calls.ended.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn all_ended_waits_for_the_last_running_call() {
        let calls = Arc::new(RunningCalls::default());
        let (first, before) = calls.start();
        assert_eq!(before, 0);
        let (second, before) = calls.start();
        assert_eq!(before, 1);
        let mut waiting = std::pin::pin!(calls.all_ended());
        assert!(poll_once(waiting.as_mut()).is_pending());
        drop(first);
        assert!(poll_once(waiting.as_mut()).is_pending());
        drop(second);
        assert!(poll_once(waiting.as_mut()).is_ready());
    }
}
