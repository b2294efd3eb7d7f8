//! Serving over TCP: a listening socket bound once, before worker processes fork, and served
//! by the engine with one worker thread in each process.

use crate::app::AppCore;
use crate::dispatch::PyService;
use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use std::sync::Mutex;
use vireo_http::{Server, ShutdownHandle};

/// A bound listening socket (SO_REUSEADDR, backlog 4096). A forked worker inherits it and
/// serves it; the parent never does.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Listener {
    server: Mutex<Option<Server>>,
    handle: ShutdownHandle,
    #[pyo3(get)]
    host: String,
    #[pyo3(get)]
    port: u16,
}

#[pymethods]
impl Listener {
    #[new]
    fn new(host: &str, port: u16) -> PyResult<Self> {
        let server = Server::bind((host, port)).map_err(PyOSError::new_err)?;
        let addr = server.local_addr().map_err(PyOSError::new_err)?;
        Ok(Listener {
            handle: server.shutdown_handle(),
            server: Mutex::new(Some(server)),
            host: addr.ip().to_string(),
            port: addr.port(),
        })
    }

    /// Serve `core` on this socket until a graceful shutdown (SIGTERM or SIGINT when
    /// `handle_signals`, or `shutdown()`), then return. `on_ready(address)` is called once
    /// the worker accepts. The GIL is released throughout; handlers attach as they run.
    #[pyo3(signature = (core, on_ready, handle_signals=true))]
    fn serve(
        &self,
        py: Python<'_>,
        core: &AppCore,
        on_ready: Py<PyAny>,
        handle_signals: bool,
    ) -> PyResult<()> {
        let server = self
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this listener is already served"))?;
        let service = PyService(core.inner.clone());
        let server = server
            .workers(1)
            .handle_signals(handle_signals)
            .on_ready(move |addr| {
                Python::attach(|py| {
                    if let Err(e) = on_ready.call1(py, (addr.to_string(),)) {
                        e.print(py);
                    }
                })
            });
        py.detach(move || server.serve(service))
            .map_err(PyOSError::new_err)
    }

    /// Start a graceful shutdown of `serve`.
    fn shutdown(&self) {
        self.handle.shutdown();
    }

    /// Close the socket in a process that will not serve it (the supervising parent).
    fn close(&self) {
        self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}
