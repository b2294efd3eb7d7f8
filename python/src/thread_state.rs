//! One Python thread state for the whole life of a thread the engine started.
//!
//! Attaching from a thread Python did not create makes a thread state and destroys it again on
//! detaching, which costs time on every call and loses what lives in it: the running event
//! loop, `threading.local` values, the current context. A worker keeps one instead.

use pyo3::ffi;
use std::cell::{Cell, RefCell};

thread_local! {
    static KEPT: Cell<bool> = const { Cell::new(false) };
    static FREED_AT_EXIT: RefCell<Option<FreeAtExit>> = const { RefCell::new(None) };
}

/// Give this thread a Python thread state that outlives every later attach. Only for threads
/// Python did not start (the engine's workers, the test client's), before they first attach.
pub(crate) fn keep() {
    if KEPT.with(Cell::get) {
        return;
    }
    KEPT.with(|kept| kept.set(true));
    make_and_detach();
}

/// [`keep`] for a thread that may end while the interpreter lives on (a blocking-pool thread,
/// retired when idle): its thread state is freed when the thread exits.
pub(crate) fn keep_until_exit() {
    if KEPT.with(Cell::get) {
        return;
    }
    KEPT.with(|kept| kept.set(true));
    let tstate = make_and_detach();
    FREED_AT_EXIT.with(|slot| *slot.borrow_mut() = Some(FreeAtExit(tstate)));
}

fn make_and_detach() -> *mut ffi::PyThreadState {
    // SAFETY: the interpreter is initialised (this module was imported), and the callers run
    // this on a thread Python did not start, before it first attaches, so it holds no thread
    // state and no GIL. `PyGILState_Ensure` makes its thread state and takes the GIL; it is
    // never released, so the thread state lives on. `PyEval_SaveThread` gives the GIL back,
    // leaving the thread detached as before. Later attaches find this thread state and reuse
    // it; it is freed with the interpreter, or by `FreeAtExit`.
    unsafe {
        let _ = ffi::PyGILState_Ensure();
        ffi::PyEval_SaveThread()
    }
}

/// Frees a kept thread state when its thread exits.
struct FreeAtExit(*mut ffi::PyThreadState);

impl Drop for FreeAtExit {
    fn drop(&mut self) {
        // SAFETY: this runs as the thread exits, detached (every attach has ended), and the
        // thread state is this thread's own, made by `make_and_detach`. Attaching it takes
        // the GIL, which clearing the state needs; detaching again makes it no longer
        // current, which deleting it needs. Nothing on this thread uses it afterwards. An
        // interpreter already gone frees it itself.
        unsafe {
            if ffi::Py_IsInitialized() == 0 {
                return;
            }
            ffi::PyEval_RestoreThread(self.0);
            ffi::PyThreadState_Clear(self.0);
            let _ = ffi::PyEval_SaveThread();
            ffi::PyThreadState_Delete(self.0);
        }
    }
}
