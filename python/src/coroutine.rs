//! Starting a coroutine inline, and handing it to the loop only if it suspends.

use crate::event_loop::LoopState;
use crate::resume::Resume;
use crate::task_start::task_name;
use pyo3::exceptions::{PyBaseException, PyRuntimeError, PyStopIteration, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::iterator::PySendResult;
use pyo3::types::PyIterator;
use pyo3::types::{PyDict, PyTraceback, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use tokio::sync::oneshot;

/// What the coroutine finally returned or raised.
pub(crate) type Outcome = PyResult<Py<PyAny>>;

pub(crate) enum Started<'py> {
    /// It returned without suspending.
    Done(Bound<'py, PyAny>),
    /// It suspended; a task on the loop continues it and completes the receiver through the
    /// completion.
    Pending(oneshot::Receiver<Outcome>, Py<Completion>),
}

/// `coro.send(None)` without raising `StopIteration` for a return.
fn send<'py>(coro: &Bound<'py, PyAny>) -> PyResult<PySendResult<'py>> {
    send_value(coro, coro.py().None().bind(coro.py()))
}

/// `coro.send(value)` without raising `StopIteration` for a return.
pub(crate) fn send_value<'py>(
    coro: &Bound<'py, PyAny>,
    value: &Bound<'py, PyAny>,
) -> PyResult<PySendResult<'py>> {
    // SAFETY: this only types the pointer for `send`, which calls `PyIter_Send`. That accepts
    // any object: coroutines through their `am_send` slot, anything else by calling its `send`
    // method. No other `PyIterator` method is used on it.
    let iter = unsafe { coro.cast_unchecked::<PyIterator>() };
    iter.send(value)
}

/// `coro.throw(*args)` as a send's result: what it yielded next, or what it returned. An
/// iterator without `throw` gets the exception raised where it was awaited, as `await` does.
pub(crate) fn throw_into<'py>(
    coro: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
) -> PyResult<PySendResult<'py>> {
    let py = coro.py();
    let Ok(throw) = coro.getattr(intern!(py, "throw")) else {
        return Err(thrown(args));
    };
    match throw.call1(args) {
        Ok(yielded) => Ok(PySendResult::Next(yielded)),
        Err(error) if error.is_instance_of::<PyStopIteration>(py) => Ok(PySendResult::Return(
            error.value(py).getattr(intern!(py, "value"))?,
        )),
        Err(error) => Err(error),
    }
}

/// The exception `throw(type[, value[, traceback]])` raises, built as a coroutine's `throw`
/// builds it; arguments it would refuse give the `TypeError` it would raise instead.
pub(crate) fn thrown(args: &Bound<'_, PyTuple>) -> PyErr {
    exception_from(args).unwrap_or_else(|refused| refused)
}

/// The exception `throw(*args)` raises, or the `TypeError` that refuses the arguments.
pub(crate) fn exception_from(args: &Bound<'_, PyTuple>) -> PyResult<PyErr> {
    let py = args.py();
    if args.is_empty() {
        return Err(PyTypeError::new_err(
            "throw expected at least 1 argument, got 0",
        ));
    }
    if args.len() > 3 {
        return Err(PyTypeError::new_err(format!(
            "throw expected at most 3 arguments, got {}",
            args.len()
        )));
    }
    let kind = args.get_item(0)?;
    let value = args.get_item(1).ok().filter(|v| !v.is_none());
    let traceback = args.get_item(2).ok().filter(|t| !t.is_none());
    if let Some(tb) = &traceback {
        if !tb.is_instance_of::<PyTraceback>() {
            return Err(PyTypeError::new_err(
                "throw() third argument must be a traceback object",
            ));
        }
    }
    let is_class = kind
        .cast::<PyType>()
        .is_ok_and(|t| t.is_subclass_of::<PyBaseException>().unwrap_or(false));
    let exception = if is_class {
        match value {
            Some(value) if value.is_instance(&kind)? => value,
            Some(value) => match value.cast::<PyTuple>() {
                Ok(args) => kind.call1(args)?,
                Err(_) => kind.call1((value,))?,
            },
            None => kind.call0()?,
        }
    } else if kind.is_instance_of::<PyBaseException>() {
        if value.is_some() {
            return Err(PyTypeError::new_err(
                "instance exception may not have a separate value",
            ));
        }
        kind
    } else {
        return Err(PyTypeError::new_err(format!(
            "exceptions must be classes or instances deriving from BaseException, not {}",
            kind.get_type().name()?
        )));
    };
    if let Some(tb) = traceback {
        exception.call_method1(intern!(py, "with_traceback"), (tb,))?;
    }
    Ok(PyErr::from_value(exception))
}

/// `send_none(coro) -> (returned, value)`: starts a coroutine from inside `Context.run`.
#[pyfunction]
pub(crate) fn send_none<'py>(coro: &Bound<'py, PyAny>) -> PyResult<(bool, Bound<'py, PyAny>)> {
    Ok(match send(coro)? {
        PySendResult::Return(value) => (true, value),
        PySendResult::Next(yielded) => (false, yielded),
    })
}

/// Run `coro` to its first suspension, in `context` if given. If it returns, that is the
/// answer with no loop round trip; if it yields, a task on the loop takes over from the value
/// it yielded (in the same context). While it runs inline, an [`InlineTask`] is asyncio's
/// current task.
pub(crate) fn start<'py>(
    coro: &Bound<'py, PyAny>,
    state: &LoopState,
    context: Option<&Bound<'py, PyAny>>,
) -> PyResult<Started<'py>> {
    let py = coro.py();
    let inline = match state.spare_inline.take() {
        Some(spare) => spare.into_bound(py),
        None => Bound::new(py, InlineTask::new())?,
    };
    *lock(&inline.get().coro) = Some(coro.clone().unbind());
    let event_loop = state.event_loop.bind(py);
    state.enter_task.call1(py, (event_loop, &inline))?;
    let sent = match context {
        None => send(coro),
        Some(ctx) => state
            .context_run
            .bind(py)
            .call1((ctx, state.send_none.bind(py), coro))
            .and_then(|r| r.extract::<(bool, Bound<'py, PyAny>)>())
            .map(|(returned, value)| match returned {
                true => PySendResult::Return(value),
                false => PySendResult::Next(value),
            }),
    };
    state.leave_task.call1(py, (event_loop, &inline))?;
    match sent? {
        PySendResult::Return(value) => {
            // Kept for the next request unless the handler used it (and so may hold it).
            if !inline.get().touched.load(Ordering::Relaxed) {
                inline.get().reset();
                state.spare_inline.set(Some(inline.unbind()));
            }
            Ok(Started::Done(value))
        }
        PySendResult::Next(yielded) => {
            let (completion, rx) = Completion::channel(py)?;
            let task = spawn(state, coro, yielded, &completion, context)?.unbind();
            inline.get().continued_by(task.bind(py))?;
            *lock(&completion.get().task) = Some(task);
            state.wake.notify_one();
            Ok(Started::Pending(rx, completion.unbind()))
        }
    }
}

/// Tasks [`spawn`] has made in this process, for their names.
static SPAWNED: AtomicU64 = AtomicU64::new(0);

/// The task that carries `coro` on from its first suspension (`yielded`), made as
/// `vireo._loop.make_spawn`'s `spawn` makes it: natively when the loop has no task factory,
/// by `spawn` itself otherwise (and on Python 3.10).
fn spawn<'py>(
    state: &LoopState,
    coro: &Bound<'py, PyAny>,
    yielded: Bound<'py, PyAny>,
    completion: &Bound<'py, Completion>,
    context: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = coro.py();
    let event_loop = state.event_loop.bind(py);
    let task_type = match &state.task_type {
        Some(task_type) if event_loop.getattr(intern!(py, "_task_factory"))?.is_none() => task_type,
        _ => {
            return state
                .spawn
                .bind(py)
                .call1((coro, yielded, completion, context))
        }
    };
    let first = (!yielded.is_none()).then(|| yielded.unbind());
    let resume = Bound::new(
        py,
        Resume::new(coro.clone().unbind(), first, completion.clone().unbind()),
    )?;
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "loop"), event_loop)?;
    let n = SPAWNED.fetch_add(1, Ordering::Relaxed) + 1;
    kwargs.set_item(intern!(py, "name"), task_name(py, "vireo-handler-", n))?;
    // The task goes on in the context the first step ran in, so that a context variable's
    // token from before the suspension can still reset it.
    if let Some(context) = context {
        kwargs.set_item(intern!(py, "context"), context)?;
    }
    task_type.bind(py).call((resume,), Some(&kwargs))
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

/// What to do with an outcome whose receiver is gone (its request was dropped).
pub(crate) type Orphan = Box<dyn FnOnce(Python<'_>, Outcome) + Send>;

/// Where the [`Resume`] a task runs hands a coroutine's outcome. It also holds the task until
/// then, since the loop keeps only weak references to tasks.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Completion {
    tx: Mutex<Option<oneshot::Sender<Outcome>>>,
    task: Mutex<Option<Py<PyAny>>>,
    orphan: Mutex<Option<Orphan>>,
}

impl Completion {
    /// A completion and the receiver of its outcome.
    pub(crate) fn channel(
        py: Python<'_>,
    ) -> PyResult<(Bound<'_, Completion>, oneshot::Receiver<Outcome>)> {
        let (tx, rx) = oneshot::channel();
        let completion = Bound::new(
            py,
            Completion {
                tx: Mutex::new(Some(tx)),
                task: Mutex::new(None),
                orphan: Mutex::new(None),
            },
        )?;
        Ok((completion, rx))
    }

    /// Keep `task` alive until the outcome comes (unless it already came).
    pub(crate) fn hold(&self, task: Py<PyAny>) {
        let pending = lock(&self.tx).is_some();
        if pending {
            *lock(&self.task) = Some(task);
        }
    }

    /// If the receiver is dropped before the outcome comes (the client left), `orphan` gets
    /// the outcome instead: what the request would have done with it still happens.
    /// Once the outcome has come, `orphan` is dropped at once.
    pub(crate) fn when_orphaned(&self, orphan: Orphan) {
        let pending = lock(&self.tx).is_some();
        if pending {
            *lock(&self.orphan) = Some(orphan);
        }
    }

    /// Cancel the task continuing the coroutine, if it still runs.
    pub(crate) fn cancel(&self, py: Python<'_>) -> PyResult<()> {
        let task = lock(&self.task).as_ref().map(|t| t.clone_ref(py));
        if let Some(task) = task {
            task.call_method0(py, "cancel")?;
        }
        Ok(())
    }

    /// Hand on what the coroutine returned.
    pub(crate) fn resolve(&self, py: Python<'_>, value: Py<PyAny>) {
        self.complete(py, Ok(value));
    }

    /// Hand on the exception the coroutine ended with.
    pub(crate) fn fail(&self, py: Python<'_>, error: PyErr) {
        self.complete(py, Err(error));
    }

    fn complete(&self, py: Python<'_>, outcome: Outcome) {
        let tx = lock(&self.tx).take();
        if let Some(tx) = tx {
            if let Err(outcome) = tx.send(outcome) {
                let orphan = lock(&self.orphan).take();
                if let Some(orphan) = orphan {
                    orphan(py, outcome);
                }
            }
        }
        lock(&self.orphan).take();
        lock(&self.task).take();
    }
}

#[pymethods]
impl Completion {
    /// The task it holds, for the cycle collector (the task's coroutine holds the completion).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // A lock held elsewhere means the completion is in use, and so not garbage.
        if let Ok(task) = self.task.try_lock() {
            visit.call(&*task)?;
        }
        Ok(())
    }

    /// Let go of the task; the outcome's receiver then sees the sender dropped.
    fn __clear__(&self) {
        lock(&self.task).take();
    }
}

/// asyncio's current task while a coroutine runs inline, before any Task exists for it, so
/// `asyncio.timeout()`, `wait_for` and task groups entered there work. If the coroutine
/// suspends, the Task that continues it takes over: what was asked of this object before is
/// passed on, and everything after goes to that Task.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct InlineTask {
    coro: Mutex<Option<Py<PyAny>>>,
    task: Mutex<Option<Py<PyAny>>>,
    /// Cancellations asked for while inline (`cancel()` and `uncancel()` count as on a Task).
    cancelling: Mutex<(u32, Option<Py<PyAny>>)>,
    /// Set by any use; a used stand-in is never reused.
    touched: AtomicBool,
}

impl InlineTask {
    fn new() -> Self {
        InlineTask {
            coro: Mutex::new(None),
            task: Mutex::new(None),
            cancelling: Mutex::new((0, None)),
            touched: AtomicBool::new(false),
        }
    }

    /// Forget the coroutine it stood in for, to stand in for another.
    fn reset(&self) {
        lock(&self.coro).take();
        *lock(&self.cancelling) = (0, None);
    }

    fn task(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.touched.store(true, Ordering::Relaxed);
        lock(&self.task).as_ref().map(|t| t.clone_ref(py))
    }

    /// The Task continuing the coroutine; a cancellation asked for inline is passed on.
    fn continued_by(&self, task: &Bound<'_, PyAny>) -> PyResult<()> {
        *lock(&self.task) = Some(task.clone().unbind());
        let (count, message) = std::mem::take(&mut *lock(&self.cancelling));
        if count > 0 {
            task.call_method1("cancel", (message,))?;
        }
        Ok(())
    }
}

#[pymethods]
impl InlineTask {
    /// What it holds, for the cycle collector; a lock held elsewhere means it is in use.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(coro) = self.coro.try_lock() {
            visit.call(&*coro)?;
        }
        if let Ok(task) = self.task.try_lock() {
            visit.call(&*task)?;
        }
        if let Ok(cancelling) = self.cancelling.try_lock() {
            visit.call(&cancelling.1)?;
        }
        Ok(())
    }

    fn __clear__(&self) {
        lock(&self.coro).take();
        lock(&self.task).take();
        lock(&self.cancelling).1.take();
    }

    #[pyo3(signature = (msg=None))]
    fn cancel(&self, py: Python<'_>, msg: Option<Py<PyAny>>) -> PyResult<bool> {
        if let Some(task) = self.task(py) {
            return task.call_method1(py, "cancel", (msg,))?.extract(py);
        }
        let mut cancelling = lock(&self.cancelling);
        cancelling.0 += 1;
        cancelling.1 = msg;
        Ok(true)
    }

    fn uncancel(&self, py: Python<'_>) -> PyResult<u32> {
        if let Some(task) = self.task(py) {
            return task.call_method0(py, "uncancel")?.extract(py);
        }
        let mut cancelling = lock(&self.cancelling);
        cancelling.0 = cancelling.0.saturating_sub(1);
        Ok(cancelling.0)
    }

    fn cancelling(&self, py: Python<'_>) -> PyResult<u32> {
        match self.task(py) {
            Some(task) => task.call_method0(py, "cancelling")?.extract(py),
            None => Ok(lock(&self.cancelling).0),
        }
    }

    fn done(&self, py: Python<'_>) -> PyResult<bool> {
        match self.task(py) {
            Some(task) => task.call_method0(py, "done")?.extract(py),
            None => Ok(false),
        }
    }

    fn cancelled(&self, py: Python<'_>) -> PyResult<bool> {
        match self.task(py) {
            Some(task) => task.call_method0(py, "cancelled")?.extract(py),
            None => Ok(false),
        }
    }

    fn get_coro(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.touched.store(true, Ordering::Relaxed);
        lock(&self.coro).as_ref().map(|c| c.clone_ref(py))
    }

    fn get_name(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.task(py) {
            Some(task) => task.call_method0(py, "get_name"),
            None => Ok(pyo3::types::PyString::new(py, "vireo-inline")
                .into_any()
                .unbind()),
        }
    }

    /// Anything else is the continuing Task's, once there is one.
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        match self.task(py) {
            Some(task) => task.getattr(py, name),
            None => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "'InlineTask' has no attribute {name:?} before the handler first suspends"
            ))),
        }
    }
}
