//! `Handle`: a callback the worker's event loop will run, scheduled by its `call_soon`.
//!
//! It does what asyncio's pure-Python `Handle` does (run the callback in its context, send an
//! exception to the loop's exception handler, be cancelled), without the Python frames that
//! class costs per callback, a few dozen of which a framework's request schedules.

use pyo3::exceptions::{PyKeyboardInterrupt, PySystemExit};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

/// `contextvars.Context.run`, called with `(context, callback, *args)`.
static CONTEXT_RUN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `contextvars.copy_context`, for a callback scheduled without a context.
static COPY_CONTEXT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `asyncio.format_helpers._format_callback_source`, for messages and `repr`.
static FORMAT_CALLBACK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn context_run(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    CONTEXT_RUN
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("contextvars")?
                    .getattr("Context")?
                    .getattr("run")?
                    .unbind(),
            )
        })
        .map(|f| f.bind(py))
}

fn copy_context(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    COPY_CONTEXT
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("contextvars")?.getattr("copy_context")?.unbind())
        })?
        .bind(py)
        .call0()
}

/// How asyncio describes the callback of a `(context, callback, *args)` tuple, for messages
/// and `repr`.
fn describe<'py>(call: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
    let py = call.py();
    FORMAT_CALLBACK
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("asyncio.format_helpers")?
                    .getattr("_format_callback_source")?
                    .unbind(),
            )
        })?
        .bind(py)
        .call1((call.get_item(1)?, call.get_slice(2, call.len())))
}

/// A callback for the loop's next iteration, as `loop.call_soon` returns it: `cancel()`,
/// `cancelled()`, `get_context()`; the loop reads `_cancelled` and calls `_run()`.
#[pyclass(module = "vireo._vireo")]
pub(crate) struct Handle {
    /// `(context, callback, *args)`, what `Context.run` is called with; `None` once cancelled,
    /// so a cancelled handle keeps nothing alive.
    call: Option<Py<PyTuple>>,
    context: Py<PyAny>,
    event_loop: Py<PyAny>,
    cancelled: bool,
}

#[pymethods]
impl Handle {
    /// `Handle(callback, args, loop, context=None)`, as asyncio's; without a context the
    /// callback runs in a copy of the current one.
    #[new]
    #[pyo3(signature = (callback, args, event_loop, context=None))]
    pub(crate) fn new(
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        event_loop: Py<PyAny>,
        context: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = callback.py();
        let context = match context {
            Some(context) if !context.is_none() => context,
            _ => copy_context(py)?,
        };
        let mut call = Vec::with_capacity(args.len() + 2);
        call.push(context.clone());
        call.push(callback.clone());
        call.extend(args.iter());
        Ok(Handle {
            call: Some(PyTuple::new(py, call)?.unbind()),
            context: context.unbind(),
            event_loop,
            cancelled: false,
        })
    }

    /// Run the callback in its context. An exception goes to the loop's exception handler,
    /// as asyncio's handles send it; `SystemExit` and `KeyboardInterrupt` propagate.
    pub(crate) fn _run(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let Some(call) = slf.borrow().call.as_ref().map(|c| c.clone_ref(py)) else {
            return Ok(());
        };
        let call = call.into_bound(py);
        let Err(error) = context_run(py)?.call1(&call) else {
            return Ok(());
        };
        if error.is_instance_of::<PySystemExit>(py)
            || error.is_instance_of::<PyKeyboardInterrupt>(py)
        {
            return Err(error);
        }
        let source = describe(&call)?;
        let context = PyDict::new(py);
        context.set_item("message", format!("Exception in callback {source}"))?;
        context.set_item("exception", error.value(py))?;
        context.set_item("handle", slf)?;
        let event_loop = slf.borrow().event_loop.clone_ref(py);
        event_loop.call_method1(py, "call_exception_handler", (context,))?;
        Ok(())
    }

    /// Keep the callback from running; it is let go at once.
    fn cancel(&mut self) {
        self.cancelled = true;
        self.call = None;
    }

    fn cancelled(&self) -> bool {
        self.cancelled
    }

    #[getter(_cancelled)]
    fn cancelled_flag(&self) -> bool {
        self.cancelled
    }

    fn get_context(&self, py: Python<'_>) -> Py<PyAny> {
        self.context.clone_ref(py)
    }

    #[getter(_context)]
    fn context_attr(&self, py: Python<'_>) -> Py<PyAny> {
        self.context.clone_ref(py)
    }

    #[getter(_loop)]
    fn loop_attr(&self, py: Python<'_>) -> Py<PyAny> {
        self.event_loop.clone_ref(py)
    }

    /// The callback, `None` once cancelled (as asyncio's `_callback`).
    #[getter(_callback)]
    fn callback_attr(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.call
            .as_ref()
            .map(|call| Ok(call.bind(py).get_item(1)?.unbind()))
            .transpose()
    }

    /// The callback's arguments, `None` once cancelled (as asyncio's `_args`).
    #[getter(_args)]
    fn args_attr(&self, py: Python<'_>) -> Option<Py<PyTuple>> {
        self.call.as_ref().map(|call| {
            let call = call.bind(py);
            call.get_slice(2, call.len()).unbind()
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let Some(call) = &self.call else {
            return Ok("<Handle cancelled>".to_owned());
        };
        Ok(format!("<Handle {}>", describe(call.bind(py))?))
    }
}
