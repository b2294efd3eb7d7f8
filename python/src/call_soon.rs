//! `call_soon` for the worker's event loop, set on the loop itself so it is found before the
//! class's method: a callback becomes a native `Handle` on the loop's ready queue with no
//! Python frame, and the step a new task schedules for itself can be kept for its starter to
//! run at once (see `task_start`). A closed loop, or one in debug mode, gets asyncio's own.

use crate::handle::Handle;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::{intern, PyTraverseError, PyVisit};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct CallSoon {
    event_loop: Py<PyAny>,
    /// The loop's `_ready.append`.
    append: Py<PyAny>,
    /// `asyncio.BaseEventLoop.call_soon`, called with the loop first.
    asyncio_call_soon: Py<PyAny>,
    /// Neither closed nor in debug mode: the native path may serve.
    fast: AtomicBool,
    /// The next call is a new task's first step, to be kept rather than queued.
    keep: AtomicBool,
    /// `(callback, context)` of the step kept.
    kept: Mutex<Option<(Py<PyAny>, Py<PyAny>)>>,
}

#[pymethods]
impl CallSoon {
    /// `CallSoon(loop)`: what the loop's `call_soon` attribute is set to.
    #[new]
    fn new(event_loop: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = event_loop.py();
        let base = py.import("asyncio")?.getattr("BaseEventLoop")?;
        let debug = event_loop.call_method0("get_debug")?.is_truthy()?;
        let closed = event_loop.call_method0("is_closed")?.is_truthy()?;
        Ok(CallSoon {
            event_loop: event_loop.clone().unbind(),
            append: event_loop.getattr("_ready")?.getattr("append")?.unbind(),
            asyncio_call_soon: base.getattr("call_soon")?.unbind(),
            fast: AtomicBool::new(!debug && !closed),
            keep: AtomicBool::new(false),
            kept: Mutex::new(None),
        })
    }

    #[pyo3(signature = (callback, *args, context=None))]
    fn __call__(
        &self,
        py: Python<'_>,
        callback: Bound<'_, PyAny>,
        args: Bound<'_, PyTuple>,
        context: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if self.keep.swap(false, Ordering::Relaxed) {
            let context = context.map_or_else(|| py.None(), Bound::unbind);
            *self.lock() = Some((callback.unbind(), context));
            return Ok(py.None());
        }
        if !self.fast.load(Ordering::Relaxed) {
            let mut call = vec![self.event_loop.bind(py).clone(), callback];
            call.extend(args.iter());
            let kwargs = PyDict::new(py);
            kwargs.set_item(intern!(py, "context"), context)?;
            return self
                .asyncio_call_soon
                .call(py, PyTuple::new(py, call)?, Some(&kwargs));
        }
        let handle = Handle::new(&callback, &args, self.event_loop.clone_ref(py), context)?;
        let handle = Py::new(py, handle)?.into_any();
        self.append.call1(py, (handle.clone_ref(py),))?;
        Ok(handle)
    }

    /// Whether the native path serves; set false when the loop closes or enters debug mode.
    #[setter]
    fn set_fast(&self, fast: bool) {
        self.fast.store(fast, Ordering::Relaxed);
    }

    /// Keep the next callback, the step of the task about to be made, for `take_kept`.
    pub(crate) fn keep_next(&self) {
        self.keep.store(true, Ordering::Relaxed);
    }

    /// The `(callback, context)` kept since `keep_next`, or `None`; stops keeping either way.
    pub(crate) fn take_kept(&self) -> Option<(Py<PyAny>, Py<PyAny>)> {
        self.keep.store(false, Ordering::Relaxed);
        self.lock().take()
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.event_loop)?;
        visit.call(&self.append)?;
        visit.call(&self.asyncio_call_soon)?;
        if let Ok(kept) = self.kept.try_lock() {
            if let Some((callback, context)) = kept.as_ref() {
                visit.call(callback)?;
                visit.call(context)?;
            }
        }
        Ok(())
    }
}

impl CallSoon {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Py<PyAny>, Py<PyAny>)>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }
}
