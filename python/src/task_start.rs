//! Each ASGI request's app call, started as an asyncio task whose first step runs before the
//! call returns. Native code does what `vireo._loop.make_task_starter` does in the common
//! case, and hands the rest to it: an app's own task factory, a start from inside another
//! task's step, and Python 3.10.

use crate::call_soon::CallSoon;
use crate::coroutine::Completion;
use crate::resume::Resume;
use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// `run_app(app, scope, receive, send, completion)`: the coroutine of an ASGI request's task.
/// Its first step calls `app(scope, receive, send)` and awaits it; the outcome goes to
/// `completion`.
#[pyfunction]
pub(crate) fn run_app(
    py: Python<'_>,
    app: Py<PyAny>,
    scope: Py<PyAny>,
    receive: Py<PyAny>,
    send: Py<PyAny>,
    completion: Py<Completion>,
) -> PyResult<Resume> {
    let args = PyTuple::new(py, [scope, receive, send])?.unbind();
    Ok(Resume::calling(app, args, completion))
}

/// `{prefix}N`, written on the stack: asyncio's own `Task-N` is formatted by a slow generic path.
pub(crate) fn task_name<'py>(py: Python<'py>, prefix: &str, n: u64) -> Bound<'py, PyString> {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n);
    let mut name = [0u8; 64];
    let len = prefix.len() + digits.len();
    let Some(name) = name.get_mut(..len) else {
        return PyString::new(py, &format!("{prefix}{digits}"));
    };
    name[..prefix.len()].copy_from_slice(prefix.as_bytes());
    name[prefix.len()..].copy_from_slice(digits.as_bytes());
    PyString::new(py, std::str::from_utf8(name).unwrap_or(prefix))
}

pub(crate) struct TaskStarter {
    /// `vireo._loop`'s starter with [`run_app`] bound: the path for every case handled there.
    fallback: Py<PyAny>,
    event_loop: Py<PyAny>,
    task_type: Py<PyAny>,
    copy_context: Py<PyAny>,
    context_run: Py<PyAny>,
    current_tasks: Py<PyAny>,
    /// Tasks started here so far, for their names.
    started: AtomicU64,
    /// The loop's own `call_soon`, which keeps the first step of the task being made.
    call_soon: Py<CallSoon>,
    /// How this Python starts a task's first step at once: `None` on 3.10, where only the
    /// fallback knows.
    first_step: Option<FirstStep>,
    /// The keyword arguments of the `Task`s made here: the loop (and `eager_start`) set once,
    /// the context and name replaced for each. `Task` only reads them.
    task_kwargs: Py<PyDict>,
    /// A call is using `task_kwargs`: one that comes meanwhile (from another thread, or from
    /// Python code the `Task` runs) uses a copy, so no call's arguments change under it.
    task_kwargs_in_use: AtomicBool,
}

/// Lends a starter's `task_kwargs` for one call.
struct LentKwargs<'a>(&'a AtomicBool);

impl Drop for LentKwargs<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[derive(Clone, Copy)]
enum FirstStep {
    /// Python 3.12+: `Task(..., eager_start=True)`.
    Eager,
    /// Python 3.11: the loop keeps the step the new task schedules, and it is run here.
    Kept,
}

impl TaskStarter {
    pub(crate) fn new(
        py: Python<'_>,
        fallback: Py<PyAny>,
        event_loop: Py<PyAny>,
        context_run: Py<PyAny>,
    ) -> PyResult<Self> {
        let tasks = py.import("asyncio.tasks")?;
        let first_step = if py.version_info() >= (3, 12) {
            Some(FirstStep::Eager)
        } else if py.version_info() >= (3, 11) {
            Some(FirstStep::Kept)
        } else {
            None
        };
        let call_soon = event_loop
            .bind(py)
            .getattr("call_soon")?
            .cast_into::<CallSoon>()?
            .unbind();
        let task_kwargs = PyDict::new(py);
        task_kwargs.set_item(intern!(py, "loop"), &event_loop)?;
        task_kwargs.set_item(intern!(py, "context"), py.None())?;
        task_kwargs.set_item(intern!(py, "name"), py.None())?;
        if let Some(FirstStep::Eager) = first_step {
            task_kwargs.set_item(intern!(py, "eager_start"), true)?;
        }
        Ok(TaskStarter {
            fallback,
            event_loop,
            task_type: tasks.getattr("Task")?.unbind(),
            copy_context: py.import("contextvars")?.getattr("copy_context")?.unbind(),
            context_run,
            current_tasks: tasks.getattr("_current_tasks")?.unbind(),
            started: AtomicU64::new(0),
            call_soon,
            first_step,
            task_kwargs: task_kwargs.unbind(),
            task_kwargs_in_use: AtomicBool::new(false),
        })
    }

    /// `app(scope, receive, send)` as a task on the loop (see [`run_app`]), in a copy of the
    /// caller's context, its first step already taken.
    pub(crate) fn start<'py>(
        &self,
        py: Python<'py>,
        app: Py<PyAny>,
        call_args: Bound<'py, PyTuple>,
        completion: Py<Completion>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let event_loop = self.event_loop.bind(py);
        let first_step = match self.first_step {
            Some(first_step)
                if event_loop.getattr(intern!(py, "_task_factory"))?.is_none()
                    && !self.current_tasks.bind(py).contains(event_loop)? =>
            {
                first_step
            }
            _ => {
                let mut args = vec![app.into_bound(py)];
                args.extend(call_args.iter());
                args.push(completion.into_bound(py).into_any());
                return self.fallback.bind(py).call1(PyTuple::new(py, args)?);
            }
        };
        let context = self.copy_context.bind(py).call0()?;
        let coro = Bound::new(py, Resume::calling(app, call_args.unbind(), completion))?;
        let (kwargs, lent) = match self.task_kwargs_in_use.compare_exchange(
            false,
            true,
            Ordering::Acquire,
            Ordering::Relaxed,
        ) {
            Ok(_) => (
                self.task_kwargs.bind(py).clone(),
                Some(LentKwargs(&self.task_kwargs_in_use)),
            ),
            Err(_) => (self.task_kwargs.bind(py).copy()?, None),
        };
        kwargs.set_item(intern!(py, "context"), context)?;
        let n = self.started.fetch_add(1, Ordering::Relaxed) + 1;
        kwargs.set_item(intern!(py, "name"), task_name(py, "asgi-request-", n))?;
        let task_type = self.task_type.bind(py);
        // The shared dict lets go of the request's context once the task has it, so that what
        // the app keeps in context variables goes with its task.
        let release = |lent: Option<LentKwargs<'_>>| -> PyResult<()> {
            if lent.is_some() {
                kwargs.set_item(intern!(py, "context"), py.None())?;
            }
            Ok(())
        };
        if let FirstStep::Eager = first_step {
            let task = task_type.call((coro,), Some(&kwargs));
            release(lent)?;
            return task;
        }
        // The loop's `call_soon` keeps, rather than queues, the step `Task` schedules.
        let call_soon = self.call_soon.get();
        call_soon.keep_next();
        let task = task_type.call((coro,), Some(&kwargs));
        let released = release(lent);
        let kept = call_soon.take_kept();
        let task = task?;
        released?;
        let (step, step_context) =
            kept.ok_or_else(|| PyRuntimeError::new_err("the new task scheduled no first step"))?;
        self.context_run.bind(py).call1((step_context, step))?;
        Ok(task)
    }
}
