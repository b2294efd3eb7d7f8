//! Spreading connections evenly over the workers.
//!
//! Every worker accepts from the same listening socket. Left alone, that loads them unevenly:
//! the worker that wakes first drains the whole backlog of a burst. Per-worker `SO_REUSEPORT` sockets are no better, since the kernel spreads by a hash
//! of the addresses, blind to how loaded each worker is. So each worker counts its open
//! connections here, and a worker that accepts a connection while another worker holds fewer
//! hands the socket to that one through its mailbox. The counts stay within one of each other,
//! and a connection is handed over at most once, before it has been read from.

pub(crate) use super::listener::Handoff;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

/// A worker's receiving end of its mailbox.
pub(crate) type Mailbox = UnboundedReceiver<Handoff>;

/// Open connections per worker, and each worker's mailbox for connections handed to it.
#[derive(Debug)]
pub(crate) struct Balancer {
    open: Box<[AtomicUsize]>,
    mailboxes: Box<[UnboundedSender<Handoff>]>,
}

impl Balancer {
    /// A balancer for `workers` workers, and each worker's receiving end of its mailbox.
    pub(crate) fn new(workers: usize) -> (Arc<Self>, Vec<Mailbox>) {
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..workers).map(|_| unbounded_channel()).unzip();
        let balancer = Balancer {
            open: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            mailboxes: senders.into(),
        };
        (Arc::new(balancer), receivers)
    }

    /// Connections worker `worker` has open, counting those handed to it and not yet served.
    pub(crate) fn workers(&self) -> usize {
        self.open.len()
    }

    pub(crate) fn open(&self, worker: usize) -> usize {
        self.open[worker].load(Ordering::Relaxed)
    }

    pub(crate) fn opened(&self, worker: usize) {
        self.open[worker].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn closed(&self, worker: usize) {
        self.open[worker].fetch_sub(1, Ordering::Relaxed);
    }

    /// Which worker should serve a connection worker `me` has just accepted: `me`, unless
    /// another worker below `cap` holds fewer connections, in which case the least loaded.
    pub(crate) fn pick(&self, me: usize, cap: usize) -> usize {
        let mut best = me;
        let mut fewest = self.open(me);
        for worker in 0..self.open.len() {
            let open = self.open(worker);
            if open < fewest && open < cap {
                best = worker;
                fewest = open;
            }
        }
        best
    }

    /// Hand a connection to worker `to`, counting it as that worker's at once so the next
    /// choice sees it. Gives the connection back if that worker has already stopped.
    pub(crate) fn hand_off(&self, to: usize, connection: Handoff) -> Result<(), Handoff> {
        self.opened(to);
        self.mailboxes[to].send(connection).map_err(|returned| {
            self.closed(to);
            returned.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Balancer, Handoff};

    #[test]
    fn picks_the_least_loaded_worker_under_the_cap() {
        let (balancer, _mailboxes) = Balancer::new(3);
        assert_eq!(balancer.pick(0, 10), 0, "all equal: keep it");
        balancer.opened(0);
        balancer.opened(0);
        balancer.opened(1);
        assert_eq!(balancer.pick(0, 10), 2, "worker 2 holds none");
        balancer.opened(2);
        assert_eq!(
            balancer.pick(0, 10),
            1,
            "1 and 2 hold one each; the first found wins"
        );
        assert_eq!(
            balancer.pick(1, 10),
            1,
            "a tie with the accepting worker keeps it"
        );
        assert_eq!(
            balancer.pick(0, 1),
            0,
            "workers at the cap are never picked"
        );
        balancer.closed(0);
        balancer.closed(0);
        assert_eq!(balancer.open(0), 0);
    }

    #[test]
    fn a_handoff_counts_at_once_and_is_returned_when_the_worker_is_gone() {
        let (balancer, mut mailboxes) = Balancer::new(2);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(addr).unwrap();
        let (stream, remote) = listener.accept().unwrap();
        balancer.hand_off(1, Handoff::Tcp(stream, remote)).unwrap();
        assert_eq!(balancer.open(1), 1);
        let received = mailboxes[1].try_recv().unwrap();
        assert!(matches!(&received, Handoff::Tcp(_, from) if *from == remote));
        drop(mailboxes.pop());
        let returned = balancer.hand_off(1, received);
        assert!(
            returned.is_err(),
            "a stopped worker's mailbox gives the connection back"
        );
        assert_eq!(balancer.open(1), 1, "the failed handoff is not counted");
        drop(client);
    }
}
