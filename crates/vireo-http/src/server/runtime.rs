//! Each worker's Tokio runtime: a local current-thread runtime, so connection futures need not
//! be `Send` and tasks are scheduled by the runtime itself, with no `LocalSet` in between. A
//! local runtime stays on the thread that built it, so each worker builds its own, and the
//! server waits for every one before any worker accepts.

use super::{thread_policy, BLOCKING_THREAD_KEEP_ALIVE};
use std::io;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use tokio::runtime::{Builder, LocalOptions, LocalRuntime};

/// How each worker's runtime is built.
#[derive(Clone, Copy)]
pub(super) struct Settings {
    /// The worker's share of the blocking pool.
    pub(super) blocking_threads: usize,
    /// Blocking threads under `SCHED_BATCH` (`Server::batch_blocking_threads`).
    pub(super) batch_blocking_threads: bool,
}

fn build(settings: Settings) -> io::Result<LocalRuntime> {
    let mut builder = Builder::new_current_thread();
    builder
        .enable_all()
        .max_blocking_threads(settings.blocking_threads)
        .thread_keep_alive(BLOCKING_THREAD_KEEP_ALIVE);
    if settings.batch_blocking_threads {
        // A current-thread runtime starts no thread but its blocking pool's.
        builder.on_thread_start(|| {
            if let Err(error) = thread_policy::yield_on_wake() {
                tracing::debug!(%error, "blocking thread keeps the default policy");
            }
        });
    }
    builder.build_local(LocalOptions::default())
}

/// The server's side of one worker's start: whether its runtime was built, and the word to go.
pub(super) struct Start {
    built: Receiver<io::Result<()>>,
    go: SyncSender<()>,
}

/// The worker's side: build the runtime, report, and wait for the word.
pub(super) struct Gate {
    built: SyncSender<io::Result<()>>,
    go: Receiver<()>,
}

/// A linked [`Start`] and [`Gate`] for one worker.
pub(super) fn start_gate() -> (Start, Gate) {
    let (built_tx, built_rx) = sync_channel(1);
    let (go_tx, go_rx) = sync_channel(1);
    (
        Start {
            built: built_rx,
            go: go_tx,
        },
        Gate {
            built: built_tx,
            go: go_rx,
        },
    )
}

impl Start {
    /// Wait for the worker's runtime: its build error, if it failed.
    pub(super) fn built(&self) -> io::Result<()> {
        self.built
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("a worker thread ended while starting")))
    }

    /// Let the worker serve. A `Start` dropped without this lets it end without serving.
    pub(super) fn go(self) {
        let _ = self.go.send(());
    }
}

impl Gate {
    /// Build the runtime and report it; then the runtime, once the server says go, or `None`
    /// if the build failed or the server gave up starting.
    pub(super) fn build_then_wait(self, settings: Settings) -> Option<LocalRuntime> {
        let runtime = match build(settings) {
            Ok(runtime) => {
                let _ = self.built.send(Ok(()));
                runtime
            }
            Err(error) => {
                let _ = self.built.send(Err(error));
                return None;
            }
        };
        self.go.recv().ok().map(|()| runtime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            blocking_threads: 1,
            batch_blocking_threads: false,
        }
    }

    #[test]
    fn a_worker_serves_only_after_the_word_to_go() {
        let (start, gate) = start_gate();
        let worker = std::thread::spawn(move || gate.build_then_wait(settings()).is_some());
        start.built().unwrap();
        start.go();
        assert!(worker.join().unwrap());
    }

    #[test]
    fn a_start_given_up_lets_the_worker_end_without_a_runtime() {
        let (start, gate) = start_gate();
        let worker = std::thread::spawn(move || gate.build_then_wait(settings()).is_some());
        start.built().unwrap();
        drop(start);
        assert!(!worker.join().unwrap());
    }

    #[test]
    fn a_worker_that_ends_while_starting_is_an_error() {
        let (start, gate) = start_gate();
        drop(gate);
        let error = start.built().unwrap_err();
        assert!(
            error.to_string().contains("ended while starting"),
            "{error}"
        );
    }

    #[test]
    fn local_tasks_run_on_the_built_runtime() {
        let runtime = build(settings()).unwrap();
        let answer = runtime.block_on(async { tokio::task::spawn_local(async { 42 }).await });
        assert_eq!(answer.unwrap(), 42);
    }
}
