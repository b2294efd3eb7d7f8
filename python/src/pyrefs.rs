//! The Python objects the native side calls: classes and helpers from the `vireo` package.

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Looked up once when the app is built, from a dict the Python side passes.
pub(crate) struct PyRefs {
    pub http_exception: Py<PyAny>,
    pub request_validation_error: Py<PyAny>,
    pub response: Py<PyAny>,
    pub streaming_response: Py<PyAny>,
    pub file_response: Py<PyAny>,
    /// `jsonable(obj)`: a JSON-ready value, or `bytes` of finished JSON, for what the walker
    /// does not know (models, dataclasses, dates).
    pub jsonable: Py<PyAny>,
    /// `log_exception(exc, context)`: logs the traceback through `logging`.
    pub log_exception: Py<PyAny>,
    /// `done(value)`: a coroutine that returns `value` at once.
    pub done: Py<PyAny>,
    /// `raised(exc)`: a coroutine that raises `exc` at once.
    pub raised: Py<PyAny>,
    /// `finish_async(future, request, next)`: awaits a blocking handler and renders its value.
    pub finish_async: Py<PyAny>,
    /// `make_layer(mw, call_next)`: `call_next` for the middleware before `mw`.
    pub make_layer: Py<PyAny>,
    pub json_loads: Py<PyAny>,
    /// `contextvars.copy_context` and `contextvars.Context.run`: each request runs in a copy of
    /// the worker's untouched context, as each request of an ASGI server runs in its own task.
    pub copy_context: Py<PyAny>,
    pub context_run: Py<PyAny>,
    /// `_vireo.send_none`, to start a coroutine inside `Context.run`.
    pub send_none: Py<PyAny>,
    /// `spawn(coro, first, completion)`: wraps a suspended coroutine in a task on the loop.
    pub spawn: Py<PyAny>,
    /// `bind_loop()`: makes the app's loop the running loop of the calling thread; returns
    /// `(step, ready, scheduled, selector_fd)` for the driver.
    pub bind_loop: Py<PyAny>,
    /// `run_background(task)`: starts a response's background task(s), after the response.
    pub run_background: Py<PyAny>,
    /// Starlette's `Response` class, when the app imported it; `from_starlette(response)`
    /// turns one a handler returned into a `vireo.Response`.
    pub starlette_response: Option<Py<PyAny>>,
    pub from_starlette: Py<PyAny>,
    /// `Address(host, port)`, Starlette's `request.client` type.
    pub address: Py<PyAny>,
    /// The client a request without a peer address is from: the test client's
    /// `("testclient", 50000)`, as an `Address`; None when serving.
    pub client_without_peer: Option<Py<PyAny>>,
}

impl PyRefs {
    pub(crate) fn from_dict(d: &Bound<'_, PyDict>) -> PyResult<Self> {
        let get = |name: &str| -> PyResult<Py<PyAny>> {
            d.get_item(name)?.map(Bound::unbind).ok_or_else(|| {
                pyo3::exceptions::PyKeyError::new_err(format!("vireo helper {name} missing"))
            })
        };
        Ok(PyRefs {
            http_exception: get("HTTPException")?,
            request_validation_error: get("RequestValidationError")?,
            response: get("Response")?,
            streaming_response: get("StreamingResponse")?,
            file_response: get("FileResponse")?,
            jsonable: get("jsonable")?,
            log_exception: get("log_exception")?,
            done: get("done")?,
            raised: get("raised")?,
            finish_async: get("finish_async")?,
            make_layer: get("make_layer")?,
            json_loads: get("json_loads")?,
            copy_context: get("copy_context")?,
            context_run: get("context_run")?,
            send_none: get("send_none")?,
            spawn: get("spawn")?,
            bind_loop: get("bind_loop")?,
            run_background: get("run_background")?,
            starlette_response: Some(get("StarletteResponse")?).filter(|c| !c.is_none(d.py())),
            from_starlette: get("from_starlette")?,
            address: get("Address")?,
            client_without_peer: d
                .get_item("client_without_peer")?
                .filter(|c| !c.is_none())
                .map(Bound::unbind),
        })
    }
}
