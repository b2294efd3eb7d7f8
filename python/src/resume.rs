//! The coroutine an `asyncio.Task` runs to carry a handler on after its first suspension.
//!
//! It is a coroutine to asyncio (`send`, `throw`, `close`, `__await__`), written natively so
//! that a suspended request costs no Python frame of its own and no `StopIteration` to end:
//! the Task steps it through `tp_iternext`, which ends by returning nothing.

use crate::coroutine::{send_value, Completion};
use pyo3::exceptions::{PyGeneratorExit, PyKeyboardInterrupt, PyStopIteration, PySystemExit};
use pyo3::prelude::*;
use pyo3::types::iterator::PySendResult;
use pyo3::types::PyTuple;
use std::sync::Mutex;

/// `Resume(coro, first, completion)`: goes on with `coro`, which has yielded `first` (`None`
/// for a bare `yield`, such as `asyncio.sleep(0)`'s), and hands what it finally returns or
/// raises to `completion`. The Task's first step passes `first` to the Task, so the Task
/// waits for it as if the coroutine had yielded it then; a bare `yield` asked for one loop
/// turn, which the Task's first step is, so that step goes on with the coroutine at once.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Resume {
    coro: Py<PyAny>,
    completion: Py<Completion>,
    state: Mutex<State>,
}

enum State {
    /// Not stepped yet; holds what the coroutine yielded before the Task existed.
    Fresh(Option<Py<PyAny>>),
    Running,
    /// The outcome went to the completion.
    Finished,
}

impl Resume {
    fn take_state(&self, next: State) -> State {
        std::mem::replace(
            &mut *self.state.lock().unwrap_or_else(|e| e.into_inner()),
            next,
        )
    }

    /// The step's answer to the Task: what the coroutine yielded, or `None` once it is done,
    /// its outcome handed on. An exception is swallowed once handed on, except the two that
    /// stop the process.
    fn settle(
        &self,
        py: Python<'_>,
        sent: PyResult<PySendResult<'_>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        match sent {
            Ok(PySendResult::Next(yielded)) => Ok(Some(yielded.unbind())),
            Ok(PySendResult::Return(value)) => {
                self.take_state(State::Finished);
                self.completion.get().resolve(py, value.unbind());
                Ok(None)
            }
            Err(error) => {
                self.take_state(State::Finished);
                let fatal = error.is_instance_of::<PyKeyboardInterrupt>(py)
                    || error.is_instance_of::<PySystemExit>(py);
                let kept = fatal.then(|| error.clone_ref(py));
                self.completion.get().fail(py, error);
                kept.map_or(Ok(None), Err)
            }
        }
    }

    /// One step with `value` sent in: the first hands the Task what was yielded before it.
    fn step(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
        match self.take_state(State::Running) {
            State::Fresh(Some(first)) => Ok(Some(first)),
            State::Fresh(None) | State::Running => {
                self.settle(py, send_value(self.coro.bind(py), value))
            }
            State::Finished => {
                self.take_state(State::Finished);
                Ok(None)
            }
        }
    }
}

/// A method's way to say a coroutine returned.
fn returned() -> PyErr {
    PyStopIteration::new_err(())
}

#[pymethods]
impl Resume {
    #[new]
    pub(crate) fn new(
        coro: Py<PyAny>,
        first: Option<Py<PyAny>>,
        completion: Py<Completion>,
    ) -> Self {
        Resume {
            coro,
            completion,
            state: Mutex::new(State::Fresh(first)),
        }
    }

    fn __await__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// How the Task steps it: `None` (no error set) says it returned.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.step(py, py.None().bind(py))
    }

    fn send(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.step(py, value)?.ok_or_else(returned)
    }

    /// Raise the exception (a Task's cancellation) where the coroutine waits.
    #[pyo3(signature = (*args))]
    fn throw(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        if matches!(self.take_state(State::Running), State::Finished) {
            self.take_state(State::Finished);
            let error = args.get_item(0)?;
            return Err(
                match error.is_instance_of::<pyo3::exceptions::PyBaseException>() {
                    true => PyErr::from_value(error),
                    false => PyErr::from_value(error.call0()?),
                },
            );
        }
        let sent = match self.coro.bind(py).call_method1("throw", args) {
            Ok(yielded) => Ok(PySendResult::Next(yielded)),
            Err(error) if error.is_instance_of::<PyStopIteration>(py) => {
                let value = error.value(py).getattr("value")?;
                Ok(PySendResult::Return(value))
            }
            Err(error) => Err(error),
        };
        self.settle(py, sent)?.ok_or_else(returned)
    }

    /// Close the coroutine; its outcome is a `GeneratorExit`.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        if matches!(self.take_state(State::Finished), State::Finished) {
            return Ok(());
        }
        let error = match self.coro.bind(py).call_method0("close") {
            Ok(_) => PyGeneratorExit::new_err(()),
            Err(error) => error,
        };
        self.completion.get().fail(py, error);
        Ok(())
    }
}
