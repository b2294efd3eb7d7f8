//! Responses held back to the end of a worker's round. When several connections have requests
//! ready at once, a connection about to write its response and go idle first lets the others
//! run, so the responses leave together and a client waiting on them is woken once for the
//! lot, not once per response; uvloop holds writes back to the end of its loop iteration for
//! the same reason. Where nothing else is ready (a single busy connection), holding back only
//! costs a round trip through the runtime, so it stops until a periodic probe finds company.

use std::cell::Cell;

/// While holding back is found of no use, one write in this many still probes whether other
/// connections have become busy.
const PROBE_EVERY: u32 = 16;

/// One worker's record of whether holding writes back pays.
pub(crate) struct WriteCoalescer {
    /// Requests the worker has started; a hold-back that saw none start was of no use.
    started: Cell<u64>,
    /// Whether the last hold-back saw other requests start.
    paying: Cell<bool>,
    /// Writes since the last probe, while holding back is not paying.
    since_probe: Cell<u32>,
}

impl Default for WriteCoalescer {
    fn default() -> Self {
        WriteCoalescer {
            started: Cell::new(0),
            paying: Cell::new(true),
            since_probe: Cell::new(0),
        }
    }
}

impl WriteCoalescer {
    /// A connection parsed a request head.
    pub(crate) fn request_started(&self) {
        self.started.set(self.started.get().wrapping_add(1));
    }

    /// Called by a connection that has responses to write and nothing more to read: returns
    /// once the worker's other ready connections have had their turn, or at once while that
    /// has not been paying.
    pub(crate) async fn hold_back(&self) {
        if !self.paying.get() {
            let since = self.since_probe.get() + 1;
            if since < PROBE_EVERY {
                self.since_probe.set(since);
                return;
            }
            self.since_probe.set(0);
        }
        let before = self.started.get();
        tokio::task::yield_now().await;
        self.paying.set(self.started.get() != before);
    }

    #[cfg(test)]
    fn is_paying(&self) -> bool {
        self.paying.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    fn run_local<F: std::future::Future>(f: F) -> F::Output {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        tokio::task::LocalSet::new().block_on(&runtime, f)
    }

    #[test]
    fn a_hold_back_lets_ready_connections_start_first_and_keeps_paying() {
        run_local(async {
            let writes = Rc::new(WriteCoalescer::default());
            let order = Rc::new(std::cell::RefCell::new(Vec::new()));
            let other = tokio::task::spawn_local({
                let (writes, order) = (writes.clone(), order.clone());
                async move {
                    writes.request_started();
                    order.borrow_mut().push("other started");
                }
            });
            writes.hold_back().await;
            order.borrow_mut().push("written");
            other.await.unwrap();
            assert_eq!(*order.borrow(), ["other started", "written"]);
            assert!(writes.is_paying());
        });
    }

    #[test]
    fn alone_it_stops_holding_back_and_probes_now_and_then() {
        run_local(async {
            let writes = WriteCoalescer::default();
            writes.hold_back().await;
            assert!(!writes.is_paying(), "no other request started");
            // While not paying, PROBE_EVERY - 1 writes go at once; the next one probes.
            for _ in 1..PROBE_EVERY {
                writes.hold_back().await;
                assert!(writes.since_probe.get() > 0);
            }
            let writes = Rc::new(writes);
            let probing = tokio::task::spawn_local({
                let writes = writes.clone();
                async move { writes.hold_back().await }
            });
            tokio::task::spawn_local({
                let writes = writes.clone();
                async move { writes.request_started() }
            });
            probing.await.unwrap();
            assert!(writes.is_paying(), "the probe saw another request start");
            assert_eq!(writes.since_probe.get(), 0);
        });
    }
}
