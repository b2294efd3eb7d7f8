//! Starting a coroutine inline, and handing it to the loop only if it suspends.

use crate::event_loop::LoopState;
use pyo3::exceptions::{PyBaseException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::iterator::PySendResult;
use pyo3::types::PyIterator;
use std::sync::Mutex;
use tokio::sync::oneshot;

/// What the coroutine finally returned or raised.
pub(crate) type Outcome = PyResult<Py<PyAny>>;

pub(crate) enum Started<'py> {
    /// It returned without suspending.
    Done(Bound<'py, PyAny>),
    /// It suspended; a task on the loop continues it and completes this.
    Pending(oneshot::Receiver<Outcome>),
}

/// Run `coro` to its first suspension. If it returns, that is the answer with no loop round
/// trip; if it yields, a task on the loop takes over from the value it yielded.
pub(crate) fn start<'py>(coro: &Bound<'py, PyAny>, state: &LoopState) -> PyResult<Started<'py>> {
    let py = coro.py();
    // SAFETY: this only types the pointer for `send`, which calls `PyIter_Send`. That accepts
    // any object: coroutines through their `am_send` slot, anything else by calling its `send`
    // method. No other `PyIterator` method is used on it.
    let iter = unsafe { coro.cast_unchecked::<PyIterator>() };
    match iter.send(py.None().bind(py))? {
        PySendResult::Return(value) => Ok(Started::Done(value)),
        PySendResult::Next(yielded) => {
            let (tx, rx) = oneshot::channel();
            let completion = Bound::new(
                py,
                Completion {
                    tx: Mutex::new(Some(tx)),
                    task: Mutex::new(None),
                },
            )?;
            let task = state.spawn.call1(py, (coro, yielded, &completion))?;
            *lock(&completion.get().task) = Some(task);
            state.wake.notify_one();
            Ok(Started::Pending(rx))
        }
    }
}

/// Wait for a suspended coroutine's outcome.
pub(crate) async fn finish(rx: oneshot::Receiver<Outcome>) -> Outcome {
    rx.await.unwrap_or_else(|_| {
        Err(PyRuntimeError::new_err(
            "the task running the coroutine ended without an outcome",
        ))
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Called by the task that continues a suspended coroutine, with its outcome. It also holds
/// the task until then, since the loop keeps only weak references to tasks.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Completion {
    tx: Mutex<Option<oneshot::Sender<Outcome>>>,
    task: Mutex<Option<Py<PyAny>>>,
}

impl Completion {
    fn complete(&self, outcome: Outcome) {
        if let Some(tx) = lock(&self.tx).take() {
            // The request may be gone (its client left); the outcome is then dropped.
            let _ = tx.send(outcome);
        }
        lock(&self.task).take();
    }
}

#[pymethods]
impl Completion {
    fn resolve(&self, value: Py<PyAny>) {
        self.complete(Ok(value));
    }

    fn reject(&self, error: Bound<'_, PyBaseException>) {
        self.complete(Err(PyErr::from_value(error.into_any())));
    }
}
