//! The coroutine an `asyncio.Task` runs to carry a handler on after its first suspension, or
//! to run an ASGI app's call.
//!
//! It is a coroutine to asyncio (`send`, `throw`, `close`, `__await__`), written natively so
//! that it costs no Python frame of its own and no `StopIteration` to end: the Task steps it
//! through `tp_iternext`, which ends by returning nothing, and it hands the outcome to its
//! [`Completion`] without a Python call.

use crate::coroutine::{exception_from, send_value, throw_into, thrown, Completion};
use pyo3::exceptions::{
    PyGeneratorExit, PyKeyboardInterrupt, PyRuntimeError, PyStopIteration, PySystemExit,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::iterator::PySendResult;
use pyo3::types::{PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};
use std::sync::{Mutex, OnceLock};

/// `types.CoroutineType`: what `await` sends into as it is, without asking for `__await__`.
static COROUTINE_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `Resume(coro, first, completion)`: goes on with `coro`, which has yielded `first` (`None`
/// for a bare `yield`, such as `asyncio.sleep(0)`'s), and hands what it finally returns or
/// raises to `completion`. The Task's first step passes `first` to the Task, so the Task
/// waits for it as if the coroutine had yielded it then; a bare `yield` asked for one loop
/// turn, which the Task's first step is, so that step goes on with the coroutine at once.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Resume {
    /// The coroutine (or iterator an awaitable gave); set once made.
    coro: OnceLock<Py<PyAny>>,
    completion: Py<Completion>,
    state: Mutex<State>,
}

enum State {
    /// Not stepped yet; holds what the coroutine yielded before the Task existed.
    Fresh(Option<Py<PyAny>>),
    /// Not stepped yet, and the coroutine not made: the first step calls `call(*args)`, in
    /// the Task's context and as its step, and awaits what that returns.
    Call(Py<PyAny>, Py<PyTuple>),
    Running,
    /// The outcome went to the completion.
    Finished,
}

impl Resume {
    /// Goes on with the awaitable that `call(*args)` returns, called by the Task's first step.
    pub(crate) fn calling(call: Py<PyAny>, args: Py<PyTuple>, completion: Py<Completion>) -> Self {
        Resume {
            coro: OnceLock::new(),
            completion,
            state: Mutex::new(State::Call(call, args)),
        }
    }

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
            State::Call(call, args) => {
                let coro = match call.bind(py).call1(args.bind(py)) {
                    Ok(awaitable) => awaitable_iter(awaitable),
                    Err(error) => Err(error),
                };
                let sent = coro.and_then(|coro| {
                    let sent = send_value(&coro, value);
                    let _ = self.coro.set(coro.clone().unbind());
                    sent
                });
                self.settle(py, sent)
            }
            State::Fresh(None) | State::Running => match self.coro.get() {
                Some(coro) => self.settle(py, send_value(coro.bind(py), value)),
                None => Ok(None),
            },
            State::Finished => {
                self.take_state(State::Finished);
                Err(reused())
            }
        }
    }
}

/// What `await awaitable` sends into: a coroutine itself, anything else its `__await__()`.
fn awaitable_iter(awaitable: Bound<'_, PyAny>) -> PyResult<Bound<'_, PyAny>> {
    let py = awaitable.py();
    let coroutine_type = COROUTINE_TYPE.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("types")?
                .getattr("CoroutineType")?
                .cast_into::<PyType>()?
                .unbind(),
        )
    })?;
    if awaitable.get_type().is(coroutine_type.bind(py)) {
        return Ok(awaitable);
    }
    awaitable.call_method0(pyo3::intern!(py, "__await__"))
}

/// What a coroutine raises when stepped again after it finished.
fn reused() -> PyErr {
    PyRuntimeError::new_err("cannot reuse already awaited coroutine")
}

/// A method's way to say a coroutine returned: `StopIteration` with the value `None`.
fn returned(py: Python<'_>) -> PyErr {
    PyStopIteration::new_err(py.None())
}

#[pymethods]
impl Resume {
    #[new]
    pub(crate) fn new(
        coro: Py<PyAny>,
        first: Option<Py<PyAny>>,
        completion: Py<Completion>,
    ) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(coro);
        Resume {
            coro: cell,
            completion,
            state: Mutex::new(State::Fresh(first)),
        }
    }

    fn __await__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// What it holds, for the cycle collector: a Task that never finishes holds its `Resume`,
    /// which holds the completion, which holds the Task.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(self.coro.get())?;
        visit.call(&self.completion)?;
        // A state locked elsewhere is being used, and so is not garbage.
        if let Ok(state) = self.state.try_lock() {
            match &*state {
                State::Fresh(first) => visit.call(first)?,
                State::Call(call, args) => {
                    visit.call(call)?;
                    visit.call(args)?;
                }
                State::Running | State::Finished => {}
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        self.take_state(State::Finished);
    }

    /// The coroutine's own name, code, frame and awaited object (`cr_*`), so that a Task's
    /// `repr`, `get_stack()` and `print_stack()` show the handler or app it carries on.
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let forwarded = matches!(name, "__name__" | "__qualname__") || name.starts_with("cr_");
        match self.coro.get() {
            Some(coro) if forwarded => coro.getattr(py, name),
            _ => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "'Resume' object has no attribute {name:?}"
            ))),
        }
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// How the Task steps it: `None` (no error set) says it returned.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.step(py, py.None().bind(py))
    }

    fn send(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.step(py, value)?.ok_or_else(|| returned(py))
    }

    /// Raise the exception (a Task's cancellation) where the coroutine waits.
    #[pyo3(signature = (*args))]
    fn throw(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let coro = match (self.take_state(State::Running), self.coro.get()) {
            (State::Fresh(_) | State::Running, Some(coro)) => coro.bind(py),
            // Thrown into after it finished: refused, as a coroutine refuses it.
            (State::Finished, _) => {
                self.take_state(State::Finished);
                return Err(exception_from(args).map_or_else(|refused| refused, |_| reused()));
            }
            // Thrown into before the call made the coroutine: raised here, and that exception
            // (or what refused the arguments) is the outcome.
            _ => {
                self.take_state(State::Finished);
                let error = thrown(args);
                self.completion.get().fail(py, error.clone_ref(py));
                return Err(error);
            }
        };
        let sent = throw_into(coro, args);
        self.settle(py, sent)?.ok_or_else(|| returned(py))
    }

    /// Close the coroutine; its outcome is a `GeneratorExit`.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let error = match (self.take_state(State::Finished), self.coro.get()) {
            (State::Finished, _) => return Ok(()),
            (State::Fresh(_) | State::Running, Some(coro)) => {
                match coro.bind(py).call_method0(pyo3::intern!(py, "close")) {
                    Ok(_) => PyGeneratorExit::new_err(()),
                    Err(error) => error,
                }
            }
            _ => PyGeneratorExit::new_err(()),
        };
        self.completion.get().fail(py, error);
        Ok(())
    }
}
