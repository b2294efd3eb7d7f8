//! Middleware: `async def mw(request, call_next)`, outermost first. The innermost `call_next`
//! is [`Next`], native: it runs the route's handler and answers with a [`Rendered`] response,
//! so a handler behind middleware is converted and rendered as on the fast path.

use crate::app::AppInner;
use crate::args::invoke;
use crate::convert::convert;
use crate::coroutine::send_value;
use crate::errors::{handled_error, CallError, ValidationFailed};
use crate::event_loop::{self, LoopState};
use crate::file_range::{AskRange, RangeAsk};
use crate::handler_await::AwaitHandler;
use crate::plan::CallKind;
use crate::render::render;
use crate::request::{latin1, Request};
use crate::stream::Pull;
use bytes::Bytes;
use http::{HeaderName, HeaderValue, StatusCode};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::iterator::PySendResult;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use vireo_http::{ContentType, Response};

/// The innermost `call_next(request)`: an awaitable of the route's [`Rendered`] response.
/// HTTP errors (`HTTPException`, validation) become responses; any other exception is raised
/// to the middleware, as in Starlette.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Next;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The handler's value, or the response for an HTTP error, or the exception.
fn outcome_response(
    py: Python<'_>,
    outcome: Result<Bound<'_, PyAny>, CallError>,
    app: &Arc<AppInner>,
    status: StatusCode,
    range: AskRange<'_>,
) -> PyResult<Response> {
    match outcome {
        // A handler of a kind that answers here (not `blocking=True`) made it on the worker.
        Ok(value) => render(&value, status, Pull::Worker, app, range),
        Err(CallError::Invalid(body)) if app.raise_http_errors => Err(ValidationFailed::new_err((
            PyBytes::new(py, &body).unbind(),
        ))),
        Err(CallError::Raised(e)) if app.raise_http_errors => Err(e),
        Err(CallError::Invalid(body)) => Ok(Response::typed(
            StatusCode::UNPROCESSABLE_ENTITY,
            body,
            ContentType::Json,
        )),
        Err(CallError::Raised(e)) => match handled_error(py, &e, app) {
            Some(res) => Ok(res),
            None => Err(e),
        },
    }
}

/// Call the request's handler, with the request itself for a `Request` parameter.
fn call_handler<'py>(request: &Bound<'py, Request>) -> Result<Bound<'py, PyAny>, CallError> {
    let py = request.py();
    let this = request.get();
    let converted = convert(
        &this.route.params,
        &*this.parts.head,
        &this.parts.path_values,
    );
    let mut make_request = |_py: Python<'py>| Ok(request.clone().into_any());
    // Behind middleware the handler runs in the context the middleware runs in.
    invoke(
        py,
        &this.app,
        &this.route,
        converted,
        this.body_bytes(),
        &mut make_request,
        None,
    )
}

/// An awaitable of the handler's response, or of the exception it raised: as in Starlette,
/// the middleware sees the handler's exception when it awaits `call_next`'s awaitable.
fn answer_when_awaited(
    py: Python<'_>,
    refs: &crate::pyrefs::PyRefs,
    response: PyResult<Response>,
) -> PyResult<Py<PyAny>> {
    match response {
        Ok(response) => refs.done.call1(py, (Rendered::new(response),)),
        Err(error) => refs.raised.call1(py, (error.into_value(py),)),
    }
}

#[pymethods]
impl Next {
    fn __call__(slf: &Bound<'_, Self>, request: &Bound<'_, Request>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let this = request.get();
        if this.mounted.is_some() {
            return crate::mounts::call_mounted(request);
        }
        let refs = &this.app.refs;
        let range = &|| RangeAsk::of(&this.parts.head);
        match this.route.kind {
            CallKind::Sync => {
                let outcome = call_handler(request);
                let res = outcome_response(py, outcome, &this.app, this.route.status, range);
                answer_when_awaited(py, refs, res)
            }
            // The handler's first step runs here, as a sync handler does: one that finishes
            // without suspending is answered as a sync handler is; one that suspends goes on
            // when the middleware awaits.
            CallKind::Async => {
                let value = match call_handler(request) {
                    Err(e) => Err(e),
                    Ok(coro) => match send_value(&coro, py.None().bind(py)) {
                        Ok(PySendResult::Return(value)) => Ok(value),
                        Ok(PySendResult::Next(first)) => {
                            let request = request.clone().unbind();
                            let handler = AwaitHandler::new(coro.unbind(), first.unbind(), request);
                            return Ok(Py::new(py, handler)?.into_any());
                        }
                        Err(e) => Err(CallError::Raised(e)),
                    },
                };
                let res = outcome_response(py, value, &this.app, this.route.status, range);
                answer_when_awaited(py, refs, res)
            }
            CallKind::Blocking => {
                let future = blocking_future(request)?;
                refs.finish_async.call1(py, (future, request, slf))
            }
        }
    }

    /// The response for an awaited handler's value.
    fn render(&self, request: &Bound<'_, Request>, value: &Bound<'_, PyAny>) -> PyResult<Rendered> {
        let this = request.get();
        let pull = Pull::after(this.route.kind);
        Ok(Rendered::new(render(
            value,
            this.route.status,
            pull,
            &this.app,
            &|| RangeAsk::of(&this.parts.head),
        )?))
    }

    /// The response for an HTTP error an awaited handler raised; any other is raised again.
    fn render_error(
        &self,
        request: &Bound<'_, Request>,
        error: Bound<'_, PyAny>,
    ) -> PyResult<Rendered> {
        let py = request.py();
        let err = PyErr::from_value(error);
        let app = &request.get().app;
        if app.raise_http_errors {
            return Err(err);
        }
        match handled_error(py, &err, app) {
            Some(res) => Ok(Rendered::new(res)),
            None => Err(err),
        }
    }
}

/// Run a blocking handler on the blocking pool; its value arrives through an asyncio future.
fn blocking_future(request: &Bound<'_, Request>) -> PyResult<Py<PyAny>> {
    let py = request.py();
    let (future, state) = loop_future(py)?;
    let delivered = future.clone_ref(py);
    let request = request.clone().unbind();
    tokio::task::spawn_local(async move {
        let outcome = vireo_http::spawn_blocking(move || {
            Python::attach(|py| match call_handler(request.bind(py)) {
                Ok(value) => Ok(value.unbind()),
                Err(CallError::Invalid(body)) => Err(ValidationFailed::new_err((PyBytes::new(
                    py, &body,
                )
                .unbind(),))),
                Err(CallError::Raised(e)) => Err(e),
            })
        })
        .await;
        Python::attach(|py| {
            settle(delivered.bind(py), outcome);
            state.kick(py);
        });
    });
    Ok(future)
}

/// A new asyncio future on this thread's loop, and the loop.
pub(crate) fn loop_future(py: Python<'_>) -> PyResult<(Py<PyAny>, Rc<LoopState>)> {
    let state = event_loop::current()
        .ok_or_else(|| PyRuntimeError::new_err("no event loop on this thread"))?;
    let future = state
        .event_loop
        .bind(py)
        .call_method0("create_future")?
        .unbind();
    Ok((future, state))
}

/// Give `future` its result or exception, unless it is already done (cancelled).
pub(crate) fn settle(future: &Bound<'_, PyAny>, outcome: PyResult<Py<PyAny>>) {
    let py = future.py();
    let done = future.call_method0("done").and_then(|d| d.is_truthy());
    if !done.unwrap_or(true) {
        let set = match outcome {
            Ok(value) => future.call_method1("set_result", (value,)),
            Err(e) => future.call_method1("set_exception", (e.into_value(py),)),
        };
        if let Err(e) = set {
            e.print(py);
        }
    }
}

/// An empty `vireo.datastructures.MutableHeaders`, a dict whose names are compared without
/// case.
fn mutable_headers(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    static CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let class = CLASS.get_or_try_init(py, || {
        let module = py.import(intern!(py, "vireo.datastructures"))?;
        Ok::<_, PyErr>(module.getattr(intern!(py, "MutableHeaders"))?.unbind())
    })?;
    Ok(class.bind(py).call0()?.cast_into::<PyDict>()?)
}

/// The response `call_next` answers with: its status and header fields may be changed
/// before it is returned; the body is already rendered.
#[pyclass(frozen, module = "vireo._vireo", name = "RenderedResponse")]
pub(crate) struct Rendered {
    response: Mutex<Option<Response>>,
    /// The header fields as a dict (the last value of a repeated name), made when first asked
    /// for; what changed in it is applied when the response is sent.
    headers: PyOnceLock<Py<PyDict>>,
}

impl Rendered {
    pub(crate) fn new(response: Response) -> Self {
        Rendered {
            response: Mutex::new(Some(response)),
            headers: PyOnceLock::new(),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Response) -> R) -> PyResult<R> {
        match lock(&self.response).as_mut() {
            Some(res) => Ok(f(res)),
            None => Err(PyRuntimeError::new_err("this response was already sent")),
        }
    }

    /// The engine response, with the header fields the middleware changed. A name whose value
    /// the middleware left alone keeps every value it had (two `set-cookie` fields stay two);
    /// one it set is replaced by the new value, and one it deleted goes, as Starlette's
    /// `MutableHeaders` does.
    pub(crate) fn take(&self, py: Python<'_>) -> PyResult<Response> {
        let mut res = lock(&self.response)
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this response was already sent"))?;
        if let Some(headers) = self.headers.get(py) {
            let headers = headers.bind(py);
            let fields = res.headers_mut();
            let names: Vec<HeaderName> = fields.keys().cloned().collect();
            for name in names {
                if !headers.contains(name.as_str())? {
                    fields.remove(&name);
                }
            }
            for (name, value) in headers.iter() {
                let name: String = name.extract()?;
                let value: String = value.str()?.extract()?;
                let name =
                    HeaderName::from_bytes(name.as_bytes()).map_err(crate::errors::value_error)?;
                let unchanged = fields
                    .get_all(&name)
                    .iter()
                    .next_back()
                    .is_some_and(|old| latin1(old.as_bytes()) == value);
                if !unchanged {
                    let value =
                        HeaderValue::from_str(&value).map_err(crate::errors::value_error)?;
                    fields.insert(name, value);
                }
            }
            // Those `headers.append` added beside a name's first.
            let extra = headers.getattr(intern!(py, "extra"))?;
            for pair in extra.try_iter()? {
                let (name, value): (String, String) = pair?.extract()?;
                let name =
                    HeaderName::from_bytes(name.as_bytes()).map_err(crate::errors::value_error)?;
                let value = HeaderValue::from_str(&value).map_err(crate::errors::value_error)?;
                fields.append(name, value);
            }
        }
        Ok(res)
    }
}

#[pymethods]
impl Rendered {
    #[getter]
    fn get_status_code(&self) -> PyResult<u16> {
        self.with(|r| r.status().as_u16())
    }

    #[setter]
    fn set_status_code(&self, code: u16) -> PyResult<()> {
        let status = StatusCode::from_u16(code).map_err(crate::errors::value_error)?;
        self.with(|r| r.set_status(status))
    }

    /// The header fields, as a dict of lower-case names to change in place.
    #[getter]
    fn headers(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        self.headers
            .get_or_try_init(py, || {
                let d = mutable_headers(py)?;
                let pairs: Vec<(String, String)> = self.with(|r| {
                    r.headers()
                        .iter()
                        .map(|(n, v)| (n.as_str().to_owned(), latin1(v.as_bytes())))
                        .collect()
                })?;
                for (n, v) in pairs {
                    d.set_item(n, v)?;
                }
                Ok::<_, PyErr>(d.unbind())
            })
            .map(|d| d.clone_ref(py))
    }

    #[getter]
    fn media_type(&self) -> PyResult<Option<String>> {
        self.with(|r| {
            r.headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        })
    }

    /// The body as bytes; `None` for a streamed body.
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.with(|r| r.body().in_memory().map(|b| PyBytes::new(py, b)))
    }

    /// Replace the body.
    #[setter]
    fn set_body(&self, body: &Bound<'_, PyAny>) -> PyResult<()> {
        let bytes = body
            .cast::<PyBytes>()
            .map_err(|_| PyTypeError::new_err("body must be bytes"))?;
        let bytes = Bytes::copy_from_slice(bytes.as_bytes());
        self.with(|r| r.set_body(bytes))
    }

    /// Add a header field, keeping those of the same name (a second `set-cookie`), as
    /// Starlette's `MutableHeaders.append`.
    fn append_header(&self, py: Python<'_>, name: &str, value: &str) -> PyResult<()> {
        let name = HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes())
            .map_err(crate::errors::value_error)?;
        let field = HeaderValue::from_str(value).map_err(crate::errors::value_error)?;
        self.with(|r| r.headers_mut().append(name.clone(), field))?;
        // The dict shows a name's last value: this one, so `take` sees it unchanged.
        if let Some(headers) = self.headers.get(py) {
            headers.bind(py).set_item(name.as_str(), value)?;
        }
        Ok(())
    }

    /// Add a `set-cookie` field, as Starlette's `Response.set_cookie` (the same arguments).
    #[pyo3(signature = (*args, **kwargs))]
    fn set_cookie(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let field = py.import(intern!(py, "vireo.responses"))?.call_method(
            intern!(py, "cookie_field"),
            args,
            kwargs,
        )?;
        self.append_header(py, "set-cookie", &field.extract::<String>()?)
    }

    /// Add a `set-cookie` field that deletes the cookie, as Starlette's `delete_cookie`.
    #[pyo3(signature = (key, path = "/", domain = None, secure = false, httponly = false,
        samesite = Some("lax")))]
    #[allow(clippy::too_many_arguments)] // Starlette's signature
    fn delete_cookie(
        &self,
        py: Python<'_>,
        key: &str,
        path: &str,
        domain: Option<&str>,
        secure: bool,
        httponly: bool,
        samesite: Option<&str>,
    ) -> PyResult<()> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("max_age", 0)?;
        kwargs.set_item("expires", 0)?;
        kwargs.set_item("path", path)?;
        kwargs.set_item("domain", domain)?;
        kwargs.set_item("secure", secure)?;
        kwargs.set_item("httponly", httponly)?;
        kwargs.set_item("samesite", samesite)?;
        self.set_cookie(py, &PyTuple::new(py, [key])?, Some(&kwargs))
    }

    /// Compress a streamed body with gzip at `level` as it is sent; `False`, changing
    /// nothing, for a body held in memory (see `body`).
    fn gzip_stream(&self, level: u32) -> PyResult<bool> {
        if !(0..=9).contains(&level) {
            return Err(PyValueError::new_err(format!(
                "a gzip level is 0 to 9, not {level}"
            )));
        }
        self.with(|r| {
            if r.body().in_memory().is_some() {
                return false;
            }
            let body = crate::gzip_stream::gzip_body(r.take_body(), level);
            r.set_body(body);
            true
        })
    }

    fn __repr__(&self) -> PyResult<String> {
        self.with(|r| format!("<Response {}>", r.status().as_u16()))
    }
}
