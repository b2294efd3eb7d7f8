//! The process's asyncio event loop, driven by the worker's Tokio runtime on the same thread.
//!
//! The loop is asyncio's selector loop whose selector never blocks (see `vireo/_loop.py`).
//! A task here waits for what could give the loop work, its selector's fd becoming readable,
//! its earliest timer, or handler code leaving callbacks ready, and then runs one iteration.

use crate::coroutine::InlineTask;
use crate::pyrefs::PyRefs;
use crate::ready::{next_wait, run_ready, LoopWaker};
use pyo3::prelude::*;
use std::cell::{Cell, RefCell};
use std::os::fd::{AsRawFd, RawFd};
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::Notify;

/// The loop as bound to this thread.
pub(crate) struct LoopState {
    /// `step(poll_io) -> (next_timeout, io_events)`: one loop iteration.
    step: Py<PyAny>,
    /// `loop._ready` and `loop._scheduled`, read to tell whether the loop has work.
    ready: Py<PyAny>,
    scheduled: Py<PyAny>,
    pub event_loop: Py<PyAny>,
    pub spawn: Py<PyAny>,
    /// `asyncio.Task`, which `spawn`'s common case makes natively (Python 3.11+, where it
    /// takes a context); `None` on 3.10.
    pub task_type: Option<Py<PyAny>>,
    /// asyncio's `_enter_task(loop, task)` and `_leave_task(loop, task)`.
    pub enter_task: Py<PyAny>,
    pub leave_task: Py<PyAny>,
    /// `Context.run` and `send_none`, to start coroutines in a request's context.
    pub context_run: Py<PyAny>,
    pub send_none: Py<PyAny>,
    /// A stand-in current task no handler kept, for the next inline start.
    pub spare_inline: Cell<Option<Py<InlineTask>>>,
    /// Notified when the loop has work; also by other threads, through `loop._engine_wake`.
    pub wake: Arc<Notify>,
    /// Notified (all waiters) after each iteration.
    pub turned: Notify,
    /// Iterations run so far, and whether the last one left no callback ready.
    pub turns: Cell<u64>,
    pub idle: Cell<bool>,
    /// Timers the loop had after its last iteration; more means a new one to wait for.
    scheduled_seen: Cell<usize>,
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<LoopState>>> = const { RefCell::new(None) };
}

/// The loop bound to this thread, if any.
pub(crate) fn current() -> Option<Rc<LoopState>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Forget this thread's loop (a test client's thread, when it ends).
pub(crate) fn uninstall() {
    CURRENT.with(|c| c.borrow_mut().take());
}

/// What `bind_loop()` returns: `(step, ready, scheduled, selector_fd, loop)`.
type Driven = (Py<PyAny>, Py<PyAny>, Py<PyAny>, Py<PyAny>, Py<PyAny>);

/// Bind the app's loop to this thread and start driving it, once per thread. Must run where
/// `spawn_local` works (a local runtime, as a worker's, or a `LocalSet`) with I/O and timers.
pub(crate) fn install(refs: &PyRefs) -> PyResult<Rc<LoopState>> {
    Python::attach(|py| {
        install_with(LoopRefs {
            bind_loop: refs.bind_loop.clone_ref(py),
            spawn: refs.spawn.clone_ref(py),
            context_run: refs.context_run.clone_ref(py),
            send_none: refs.send_none.clone_ref(py),
        })
    })
}

/// What driving a loop needs from the Python side (see [`PyRefs`] for each).
pub(crate) struct LoopRefs {
    pub bind_loop: Py<PyAny>,
    pub spawn: Py<PyAny>,
    pub context_run: Py<PyAny>,
    pub send_none: Py<PyAny>,
}

/// [`install`] for a server that is not an `App` (an ASGI application).
pub(crate) fn install_with(refs: LoopRefs) -> PyResult<Rc<LoopState>> {
    if let Some(state) = current() {
        return Ok(state);
    }
    let (state, fd) = Python::attach(|py| -> PyResult<_> {
        let bound = refs.bind_loop.call0(py)?;
        let (step, ready, scheduled, fd_owner, event_loop): Driven = bound.extract(py)?;
        let asyncio_tasks = py.import("asyncio.tasks")?;
        let fd: RawFd = fd_owner.call_method0(py, "fileno")?.extract(py)?;
        let wake = Arc::new(Notify::new());
        event_loop.setattr(py, "_engine_wake", LoopWaker(wake.clone()))?;
        let state = LoopState {
            step,
            ready,
            scheduled,
            event_loop,
            spawn: refs.spawn,
            task_type: if py.version_info() >= (3, 11) {
                Some(asyncio_tasks.getattr("Task")?.unbind())
            } else {
                None
            },
            enter_task: asyncio_tasks.getattr("_enter_task")?.unbind(),
            leave_task: asyncio_tasks.getattr("_leave_task")?.unbind(),
            context_run: refs.context_run,
            send_none: refs.send_none,
            spare_inline: Cell::new(None),
            wake,
            turned: Notify::new(),
            turns: Cell::new(0),
            idle: Cell::new(false),
            scheduled_seen: Cell::new(0),
        };
        Ok((
            state,
            SelectorFd {
                fd,
                _owner: fd_owner,
            },
        ))
    })?;
    // SAFETY: `fd` is a duplicate of the selector's fd that only `_owner` holds, closing it
    // when collected. `SelectorFd` keeps `_owner` alive and the AsyncFd owns the
    // `SelectorFd`, so the fd stays open and the same until the AsyncFd is dropped, which
    // deregisters it before dropping the owner.
    let afd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
    let state = Rc::new(state);
    CURRENT.with(|c| *c.borrow_mut() = Some(state.clone()));
    tokio::task::spawn_local(drive(state.clone(), afd));
    Ok(state)
}

impl LoopState {
    /// After Python ran on this thread: wake the driver if that code left work for the loop
    /// (a task created, a callback or timer scheduled).
    pub(crate) fn kick(&self, py: Python<'_>) {
        let ready = self.ready.bind(py).len().unwrap_or(0);
        let scheduled = self.scheduled.bind(py).len().unwrap_or(0);
        if ready > 0 || scheduled != self.scheduled_seen.get() {
            self.wake.notify_one();
        }
    }

    /// One loop iteration; returns how long the loop may sleep (`None`: until woken) and
    /// whether its selector reported I/O.
    fn step(&self, py: Python<'_>, poll_io: bool) -> (Option<Duration>, bool) {
        if !poll_io {
            match self.run_ready(py) {
                Ok(Some(next)) => return (next, false),
                Ok(None) => {}
                Err(error) => {
                    error.print(py);
                    return (None, false);
                }
            }
        }
        let outcome = self
            .step
            .call1(py, (poll_io,))
            .and_then(|r| r.extract::<(Option<f64>, usize)>(py));
        self.scheduled_seen
            .set(self.scheduled.bind(py).len().unwrap_or(0));
        match outcome {
            Ok((timeout, events)) => (timeout.map(crate::ready::timer_delay), events > 0),
            Err(error) => {
                error.print(py);
                (None, false)
            }
        }
    }

    /// An iteration with no I/O to poll, run from Rust when it only has ready callbacks to
    /// run (see [`run_ready`]); `None` when it must be asyncio's.
    fn run_ready(&self, py: Python<'_>) -> PyResult<Option<Option<Duration>>> {
        let event_loop = self.event_loop.bind(py);
        let scheduled = self.scheduled.bind(py);
        let Some(more_ready) = run_ready(event_loop, self.ready.bind(py), scheduled)? else {
            return Ok(None);
        };
        self.scheduled_seen.set(scheduled.len()?);
        next_wait(event_loop, more_ready, scheduled).map(Some)
    }
}

/// A duplicate of the loop selector's fd, and the Python object that owns and closes it.
struct SelectorFd {
    fd: RawFd,
    _owner: Py<PyAny>,
}

impl AsRawFd for SelectorFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

async fn drive(state: Rc<LoopState>, afd: AsyncFd<SelectorFd>) {
    loop {
        // Polled with a no-op waker only to learn whether Tokio has seen the fd readable.
        let readable = match afd.poll_read_ready(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(guard)) => Some(guard),
            _ => None,
        };
        let (next, io_seen) = Python::attach(|py| state.step(py, readable.is_some()));
        if let Some(mut guard) = readable {
            // Nothing left to read: wait for the next edge. Otherwise stay readable, so the
            // next iteration asks the selector again (its fds are level-triggered).
            if !io_seen {
                guard.clear_ready();
            }
        }
        state.turns.set(state.turns.get() + 1);
        state.idle.set(!next.is_some_and(|t| t.is_zero()));
        state.turned.notify_waiters();
        match next {
            Some(timeout) if timeout.is_zero() => tokio::task::yield_now().await,
            next => {
                let timer = async {
                    match next {
                        Some(timeout) => tokio::time::sleep(timeout).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = afd.readable() => {}
                    _ = timer => {}
                    _ = state.wake.notified() => {}
                }
            }
        }
    }
}
