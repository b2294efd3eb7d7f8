//! One Python thread state for the whole life of a thread the engine started.
//!
//! Attaching from a thread Python did not create makes a thread state and destroys it again on
//! detaching, which costs time on every call and loses what lives in it: the running event
//! loop, `threading.local` values, the current context. A worker keeps one instead.

use std::cell::Cell;

thread_local! {
    static KEPT: Cell<bool> = const { Cell::new(false) };
}

/// Give this thread a Python thread state that outlives every later attach. Only for threads
/// Python did not start (the engine's workers, the test client's), before they first attach.
pub(crate) fn keep() {
    if KEPT.with(Cell::get) {
        return;
    }
    KEPT.with(|kept| kept.set(true));
    // SAFETY: the interpreter is initialised (this module was imported), and the callers run
    // this on a thread Python did not start, before it first attaches, so it holds no thread
    // state and no GIL. `PyGILState_Ensure` makes its thread state and takes the GIL; it is
    // never released, so the thread state lives on. `PyEval_SaveThread` gives the GIL back,
    // leaving the thread detached as before. Later attaches find this thread state and reuse
    // it; it is freed with the interpreter.
    unsafe {
        let _ = pyo3::ffi::PyGILState_Ensure();
        let _ = pyo3::ffi::PyEval_SaveThread();
    }
}
