//! What `call_next` gives for an async handler that suspended in its first step: an awaitable
//! that hands the middleware's task what the handler yielded, goes on with the handler, and
//! ends with its rendered response, with no Python frame of its own.

use crate::coroutine::{send_value, throw_into};
use crate::errors::handled_error;
use crate::file_range::RangeAsk;
use crate::middleware::Rendered;
use crate::render::render;
use crate::request::Request;
use crate::stream::Pull;
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use pyo3::types::iterator::PySendResult;
use pyo3::types::PyTuple;
use pyo3::{PyTraverseError, PyVisit};
use std::sync::Mutex;

#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct AwaitHandler {
    coro: Py<PyAny>,
    /// What the handler yielded in its first step, for the task's first step to take.
    first: Mutex<Option<Py<PyAny>>>,
    request: Py<Request>,
}

impl AwaitHandler {
    pub(crate) fn new(coro: Py<PyAny>, first: Py<PyAny>, request: Py<Request>) -> Self {
        AwaitHandler {
            coro,
            first: Mutex::new(Some(first)),
            request,
        }
    }

    fn take_first(&self) -> Option<Py<PyAny>> {
        self.first.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// What the handler yielded, for the task; or, once it is done, `StopIteration` with its
    /// rendered response. HTTP errors become responses; any other exception is raised.
    fn answer(&self, py: Python<'_>, sent: PyResult<PySendResult<'_>>) -> PyResult<Py<PyAny>> {
        let request = self.request.get();
        let response = match sent {
            Ok(PySendResult::Next(yielded)) => return Ok(yielded.unbind()),
            Ok(PySendResult::Return(value)) => {
                let range = || RangeAsk::of(&request.parts.head);
                let (status, app) = (request.route.status, &request.app);
                render(&value, status, Pull::Worker, app, &range)?
            }
            Err(error) if request.app.raise_http_errors => return Err(error),
            Err(error) => match handled_error(py, &error, &request.app) {
                Some(response) => response,
                None => return Err(error),
            },
        };
        let rendered = Bound::new(py, Rendered::new(response))?.into_any().unbind();
        // The value itself, not in a tuple: a tuple would be taken as the exception's arguments.
        Err(PyStopIteration::new_err(rendered))
    }

    fn step(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Some(first) = self.take_first() {
            return Ok(first);
        }
        self.answer(py, send_value(self.coro.bind(py), value))
    }
}

#[pymethods]
impl AwaitHandler {
    fn __await__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// What it holds, for the cycle collector: the middleware's task holds it while the
    /// handler's coroutine may hold that task.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.coro)?;
        visit.call(&self.request)?;
        // A lock held elsewhere means it is in use, and so not garbage.
        if let Ok(first) = self.first.try_lock() {
            visit.call(&*first)?;
        }
        Ok(())
    }

    fn __clear__(&self) {
        self.take_first();
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.step(py, py.None().bind(py))
    }

    fn send(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.step(py, value)
    }

    /// Raise the exception (a cancellation) where the handler waits.
    #[pyo3(signature = (*args))]
    fn throw(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        self.take_first();
        self.answer(py, throw_into(self.coro.bind(py), args))
    }

    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.take_first();
        self.coro
            .bind(py)
            .call_method0(pyo3::intern!(py, "close"))
            .map(drop)
    }
}
