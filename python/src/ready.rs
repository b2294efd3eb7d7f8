//! The loop's ready callbacks run from Rust, and the waker other threads use to hand the
//! loop a callback.
//!
//! When no timer is pending and the selector has nothing to report, one iteration of
//! asyncio's `_run_once` only runs the callbacks that were ready when it began; that is done
//! here without the iteration's Python frame. Any other iteration is asyncio's own.

use crate::handle::Handle;
use pyo3::intern;
use pyo3::prelude::*;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// `loop._engine_wake()`: tells the driver that callbacks are ready, from any thread, in
/// place of asyncio's write to the loop's self-pipe.
#[pyclass(module = "vireo._vireo", frozen)]
pub(crate) struct LoopWaker(pub Arc<Notify>);

#[pymethods]
impl LoopWaker {
    fn __call__(&self) {
        self.0.notify_one();
    }
}

/// Run the callbacks in `ready` (the loop's `_ready` deque) that were there on entry, in
/// order, skipping cancelled ones, as `_run_once` does. `None` when this iteration must be
/// asyncio's: a timer is pending, or the loop is in debug mode (which times each callback).
pub(crate) fn run_ready(
    event_loop: &Bound<'_, PyAny>,
    ready: &Bound<'_, PyAny>,
    scheduled: &Bound<'_, PyAny>,
) -> PyResult<Option<bool>> {
    let py = event_loop.py();
    if scheduled.len()? != 0 || event_loop.getattr(intern!(py, "_debug"))?.is_truthy()? {
        return Ok(None);
    }
    for _ in 0..ready.len()? {
        let handle = ready.call_method0(intern!(py, "popleft"))?;
        if let Ok(native) = handle.cast::<Handle>() {
            Handle::_run(native)?;
        } else if !handle.getattr(intern!(py, "_cancelled"))?.is_truthy()? {
            handle.call_method0(intern!(py, "_run"))?;
        }
    }
    Ok(Some(ready.len()? > 0))
}

/// How long the loop may sleep after an iteration run by [`run_ready`]: not at all while
/// callbacks are ready, until its earliest timer if one was scheduled, else until woken.
pub(crate) fn next_wait(
    event_loop: &Bound<'_, PyAny>,
    more_ready: bool,
    scheduled: &Bound<'_, PyAny>,
) -> PyResult<Option<Duration>> {
    if more_ready {
        return Ok(Some(Duration::ZERO));
    }
    if scheduled.len()? == 0 {
        return Ok(None);
    }
    let py = event_loop.py();
    let when: f64 = scheduled
        .get_item(0)?
        .getattr(intern!(py, "_when"))?
        .extract()?;
    let now: f64 = event_loop.call_method0(intern!(py, "time"))?.extract()?;
    Ok(Some(timer_delay(when - now)))
}

/// How long to sleep for a timer due in `seconds`: at most a day, and none for a timer already
/// due or one whose time is not a number (`asyncio.sleep(float("nan"))`), which asyncio runs at
/// once.
pub(crate) fn timer_delay(seconds: f64) -> Duration {
    // `clamp` keeps a NaN, and `from_secs_f64` would panic on it.
    if seconds.is_nan() {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(seconds.clamp(0.0, 86_400.0))
}
