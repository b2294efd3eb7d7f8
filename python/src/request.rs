//! The `Request` handed to middleware and to handlers that ask for it. Header fields, query
//! parameters and the state object become Python objects only when first used.

use crate::app::AppInner;
use crate::mappings::{Headers, QueryParams};
use crate::mounts::Mounted;
use crate::plan::Route;
use crate::urlencoded::decode;
use bytes::Bytes;
use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use vireo_http::Head;

/// What a request brings: its head, its body (read whole), its path values and its peer.
#[derive(Clone)]
pub(crate) struct Parts {
    pub head: Head,
    pub body: Bytes,
    pub path_values: Vec<String>,
    pub peer: Option<SocketAddr>,
    /// The request came over TLS: its URL's scheme is `https`.
    pub secure: bool,
    /// Set once the client has left while the request was being answered; `None` where the
    /// answer cannot be interrupted (a sync handler with no middleware).
    pub gone: Option<Arc<AtomicBool>>,
}

/// An HTTP request, as Starlette's `Request` shows it. A Python subclass (one whose `body()`
/// decompresses, say) is made of a request being answered, as `Sub(request.scope,
/// request.receive)`, and may be handed on to the route's handler (see `vireo.route_handlers`).
#[pyclass(frozen, subclass, module = "vireo._vireo")]
pub(crate) struct Request {
    pub parts: Parts,
    /// The body a subclass's own `body()` gave, which the handler's parameters are read
    /// from in place of the one received.
    given_body: OnceLock<Bytes>,
    /// `receive()` has given the body.
    received: AtomicBool,
    pub route: Arc<Route>,
    pub app: Arc<AppInner>,
    /// The mounted app that answers this request once the middleware has run, if one does.
    pub mounted: Option<Mounted>,
    state: PyOnceLock<Py<PyAny>>,
    headers: PyOnceLock<Py<Headers>>,
    query: PyOnceLock<Py<QueryParams>>,
    scope: PyOnceLock<Py<PyDict>>,
}

impl Request {
    pub(crate) fn new(parts: Parts, route: Arc<Route>, app: Arc<AppInner>) -> Self {
        Self::to_mount(parts, route, app, None)
    }

    /// A request that `mounted` answers behind the middleware (`route` runs if none does).
    pub(crate) fn to_mount(
        parts: Parts,
        route: Arc<Route>,
        app: Arc<AppInner>,
        mounted: Option<Mounted>,
    ) -> Self {
        Request {
            parts,
            route,
            app,
            mounted,
            given_body: OnceLock::new(),
            received: AtomicBool::new(false),
            state: PyOnceLock::new(),
            headers: PyOnceLock::new(),
            query: PyOnceLock::new(),
            scope: PyOnceLock::new(),
        }
    }
}

impl Request {
    /// The body the handler's parameters are read from.
    pub(crate) fn body_bytes(&self) -> &Bytes {
        self.given_body.get().unwrap_or(&self.parts.body)
    }

    /// `vireo.datastructures.URL` of `scheme://host` + `path_and_query` on this request's
    /// host.
    fn url_object<'py>(
        &self,
        py: Python<'py>,
        scheme: &str,
        path_and_query: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = format!("{scheme}://{}{path_and_query}", self.netloc());
        py.import(intern!(py, "vireo.datastructures"))?
            .getattr(intern!(py, "URL"))?
            .call1((text,))
    }

    /// The prefix a proxy in front strips (`App.root_path`), which the URLs the app makes
    /// carry; empty when there is none.
    fn root_path(&self, py: Python<'_>) -> String {
        self.app
            .app
            .bind(py)
            .getattr(intern!(py, "root_path"))
            .and_then(|root| root.extract())
            .unwrap_or_default()
    }

    /// The app that names the routes `url_for` finds, and whose `root_path` its URLs and
    /// `base_url` carry: the outermost app, for a request to a Vireo app mounted in another,
    /// as Starlette resolves names from the outermost router.
    fn url_root<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        let app = self.app.app.bind(py);
        match app.getattr(intern!(py, "_url_root")) {
            Ok(root) if !root.is_none() => root,
            _ => app.clone(),
        }
    }

    /// The `root_path` of [`Request::url_root`].
    fn app_root_path(&self, py: Python<'_>) -> String {
        self.url_root(py)
            .getattr(intern!(py, "root_path"))
            .and_then(|root| root.extract())
            .unwrap_or_default()
    }

    fn netloc(&self) -> String {
        self.parts
            .head
            .header("host")
            .map(latin1)
            .unwrap_or_default()
    }
}

/// Header values are Latin-1 text, as in Starlette.
pub(crate) fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| b as char).collect()
}

#[pymethods]
impl Request {
    /// `Request(request.scope, request.receive)`: another view of the request being
    /// answered, the same but for the class (its headers, body, state and scope are the
    /// request's). There is no request to make of a scope alone.
    #[new]
    #[pyo3(signature = (scope, receive=None, send=None))]
    fn of_request(
        scope: &Bound<'_, PyAny>,
        receive: Option<&Bound<'_, PyAny>>,
        send: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = scope.py();
        let _ = send; // Starlette's `send` argument, which reading a request does not use
        let Some(original) = receive
            .and_then(|receive| receive.getattr(intern!(py, "__self__")).ok())
            .and_then(|owner| owner.cast_into::<Request>().ok())
        else {
            return Err(PyTypeError::new_err(
                "Request(scope, receive) takes the `scope` and `receive` of a request being \
                 answered (request.scope, request.receive): a request is not made of a scope",
            ));
        };
        let this = original.get();
        let made = Request::to_mount(
            this.parts.clone(),
            this.route.clone(),
            this.app.clone(),
            this.mounted.clone(),
        );
        if let Some(body) = this.given_body.get() {
            let _ = made.given_body.set(body.clone());
        }
        // The same state and scope (what middleware wrote into it), as two Starlette
        // requests of one scope share them.
        let _ = made.state.set(py, this.state(py)?);
        let _ = made.scope.set(py, Request::scope(&original)?);
        Ok(made)
    }

    /// The ASGI `receive` of the request: its whole body as one `http.request` message,
    /// then `http.disconnect` (the body is read before the handler runs).
    fn receive<'py>(&self, py: Python<'py>) -> PyResult<Ready> {
        let message = PyDict::new(py);
        if self.received.swap(true, Ordering::Relaxed) {
            message.set_item("type", "http.disconnect")?;
        } else {
            message.set_item("type", "http.request")?;
            message.set_item("body", PyBytes::new(py, self.body_bytes()))?;
            message.set_item("more_body", false)?;
        }
        Ok(Ready {
            value: message.into_any().unbind(),
        })
    }

    /// Read the handler's parameters from `body` (what a subclass's `body()` gave); once
    /// given, the body stays what it is.
    fn _use_body(&self, body: &Bound<'_, PyBytes>) -> PyResult<()> {
        let body = body.as_bytes();
        let given = self.given_body.get_or_init(|| Bytes::copy_from_slice(body));
        if given.as_ref() != body {
            return Err(PyTypeError::new_err(
                "this request's body was given once already, and differently",
            ));
        }
        Ok(())
    }

    #[getter]
    fn method(&self) -> &str {
        self.parts.head.method().as_str()
    }

    /// The path, percent-decoded.
    #[getter]
    fn path(&self) -> String {
        decode(self.parts.head.path(), false).into_owned()
    }

    /// The query string as received, without the `?`.
    #[getter]
    fn query_string(&self) -> &str {
        self.parts.head.query().unwrap_or("")
    }

    /// The URL the client asked for, the app's `root_path` in front of the path, as
    /// Starlette's.
    #[getter]
    fn url<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let head = &self.parts.head;
        // The path decoded, as Starlette's, with what would end it escaped again.
        let path = decode(head.path(), false)
            .replace('?', "%3F")
            .replace('#', "%23")
            .replace('\\', "%5C");
        let mut target = self.root_path(py) + &path;
        if let Some(query) = head.query().filter(|q| !q.is_empty()) {
            target = target + "?" + query;
        }
        self.url_object(py, scheme(self.parts.secure), &target)
    }

    /// `scheme://host/`, as Starlette's `base_url`.
    #[getter]
    fn base_url<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.url_object(
            py,
            scheme(self.parts.secure),
            &(self.app_root_path(py) + "/"),
        )
    }

    /// The URL of the route (or mount) named `name` with these path parameters, on this
    /// request's scheme and host: `app.url_path_for(name, **path_params)` made absolute, as
    /// Starlette's `url_for`.
    #[pyo3(signature = (name, /, **path_params))]
    fn url_for<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        path_params: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let path = self
            .url_root(py)
            .call_method("url_path_for", (name,), path_params)?;
        let protocol: String = path
            .getattr(intern!(py, "protocol"))
            .and_then(|protocol| protocol.extract())
            .unwrap_or_default();
        // A WebSocket route's URL is `ws://` (or `wss://`) even from an HTTP request.
        let scheme = match (protocol.as_str(), self.parts.secure) {
            ("websocket", true) => "wss",
            ("websocket", false) => "ws",
            (_, secure) => scheme(secure),
        };
        let target = self.app_root_path(py) + path.str()?.to_str()?;
        self.url_object(py, scheme, &target)
    }

    #[getter]
    fn headers(slf: &Bound<'_, Self>) -> PyResult<Py<Headers>> {
        let py = slf.py();
        let this = slf.get();
        this.headers
            .get_or_try_init(py, || {
                Py::new(
                    py,
                    Headers {
                        request: slf.clone().unbind(),
                    },
                )
            })
            .map(|h| h.clone_ref(py))
    }

    #[getter]
    fn query_params(&self, py: Python<'_>) -> PyResult<Py<QueryParams>> {
        self.query
            .get_or_try_init(py, || {
                let query = self.parts.head.query().unwrap_or_default();
                Py::new(py, QueryParams::parse(query))
            })
            .map(|q| q.clone_ref(py))
    }

    #[getter]
    fn path_params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, value) in self.route.path_names.iter().zip(&self.parts.path_values) {
            d.set_item(&**name, value)?;
        }
        Ok(d)
    }

    /// The cookies the client sent, by name.
    #[getter]
    fn cookies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for field in self
            .parts
            .head
            .headers()
            .filter(|(n, _)| n.eq_ignore_ascii_case("cookie"))
        {
            let field = String::from_utf8_lossy(field.1);
            for (name, value) in crate::convert::cookies(&field) {
                d.set_item(name, value)?;
            }
        }
        Ok(d)
    }

    /// An object to keep values on for the rest of this request (middleware to handler),
    /// starting with what the app's `lifespan` yielded, as in Starlette.
    #[getter]
    fn state(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.state
            .get_or_try_init(py, || {
                let state = Py::new(py, State)?.into_any();
                if let Some(initial) = &self.app.lifespan_state {
                    state
                        .bind(py)
                        .getattr("__dict__")?
                        .call_method1("update", (initial.bind(py),))?;
                }
                Ok::<_, PyErr>(state)
            })
            .map(|s| s.clone_ref(py))
    }

    /// The session `SessionMiddleware` read from the request's cookie (a dict to change), as
    /// Starlette's `request.session`: `scope["session"]`.
    #[getter]
    fn session(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let scope = Self::scope(slf)?;
        match scope.bind(py).get_item("session")? {
            Some(session) => {
                // Noted, so the response gets `Vary: Cookie`.
                if session.hasattr(intern!(py, "mark_accessed"))? {
                    session.call_method0(intern!(py, "mark_accessed"))?;
                }
                Ok(session.unbind())
            }
            None => Err(pyo3::exceptions::PyAssertionError::new_err(
                "SessionMiddleware must be installed to access request.session",
            )),
        }
    }

    /// The `App` this request was routed by.
    #[getter]
    fn app(&self, py: Python<'_>) -> Py<PyAny> {
        self.app.app.clone_ref(py)
    }

    /// The peer's `Address(host, port)`, or None on a transport without one (the test
    /// client's own in a test).
    #[getter]
    fn client(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let refs = &self.app.refs;
        match self.parts.peer {
            Some(peer) => {
                let address = refs
                    .address
                    .call1(py, (peer.ip().to_string(), peer.port()))?;
                Ok(Some(address))
            }
            None => Ok(refs.client_without_peer.as_ref().map(|c| c.clone_ref(py))),
        }
    }

    /// The whole body, as `bytes` (awaitable, as in Starlette).
    fn body(&self, py: Python<'_>) -> Ready {
        Ready {
            value: PyBytes::new(py, self.body_bytes()).into_any().unbind(),
        }
    }

    /// The body's form fields (`multipart/form-data` or `application/x-www-form-urlencoded`)
    /// as Starlette's `FormData`: `form = await request.form()`, or `async with
    /// request.form() as form:` to close its files after. Past a limit, an HTTP 400.
    #[pyo3(signature = (*, max_files = 1000, max_fields = 1000, max_part_size = 1024 * 1024))]
    fn form<'py>(
        &self,
        py: Python<'py>,
        max_files: usize,
        max_fields: usize,
        max_part_size: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let content_type = self.parts.head.header("content-type").map(latin1);
        py.import(intern!(py, "vireo._request"))?.call_method1(
            intern!(py, "read_form"),
            (
                PyBytes::new(py, self.body_bytes()),
                content_type,
                max_files,
                max_fields,
                max_part_size,
            ),
        )
    }

    /// The body as an async iterator of chunks ending with `b""`, as Starlette's
    /// `request.stream()` (the body is read before the handler runs: one chunk).
    fn stream<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import(intern!(py, "vireo._request"))?.call_method1(
            intern!(py, "stream"),
            (PyBytes::new(py, self.body_bytes()),),
        )
    }

    /// The request as an ASGI `http` scope, for code written against Starlette's
    /// `request.scope`: made when first asked for, then the same dict for the rest of the
    /// request (what middleware writes into it stays). Its `state` is `request.state`'s.
    #[getter]
    fn scope(slf: &Bound<'_, Self>) -> PyResult<Py<PyDict>> {
        let py = slf.py();
        let this = slf.get();
        this.scope
            .get_or_try_init(py, || {
                let head = &this.parts.head;
                let scope = PyDict::new(py);
                let asgi = PyDict::new(py);
                asgi.set_item("version", "3.0")?;
                asgi.set_item("spec_version", "2.4")?;
                scope.set_item("type", "http")?;
                scope.set_item("asgi", asgi)?;
                scope.set_item("http_version", crate::asgi_scope::http_version(head))?;
                scope.set_item("method", head.method().as_str())?;
                scope.set_item("scheme", scheme(this.parts.secure))?;
                let root = this.root_path(py);
                scope.set_item("path", root.clone() + &decode(head.path(), false))?;
                let raw_path = [root.as_bytes(), head.path().as_bytes()].concat();
                scope.set_item("raw_path", PyBytes::new(py, &raw_path))?;
                let query = head.query().unwrap_or("").as_bytes();
                scope.set_item("query_string", PyBytes::new(py, query))?;
                scope.set_item("root_path", root)?;
                scope.set_item("headers", crate::asgi_scope::header_list(py, head)?)?;
                scope.set_item("client", this.client(py)?)?;
                scope.set_item("server", py.None())?;
                scope.set_item("app", this.app.app.clone_ref(py))?;
                scope.set_item("path_params", this.path_params(py)?)?;
                if let Some(route) = &this.route.listed {
                    // What Starlette's router puts in the scope for the route it matched.
                    let route = route.bind(py);
                    scope.set_item("route", route)?;
                    scope.set_item("endpoint", route.getattr(intern!(py, "endpoint"))?)?;
                }
                let state = this.state(py)?;
                scope.set_item("state", state.bind(py).getattr("__dict__")?)?;
                Ok::<_, PyErr>(scope.unbind())
            })
            .map(|scope| scope.clone_ref(py))
    }

    /// Whether the client has left while this request was being answered (awaitable, as in
    /// Starlette): a long-running async handler can stop early.
    fn is_disconnected(&self, py: Python<'_>) -> Ready {
        let gone = self
            .parts
            .gone
            .as_ref()
            .is_some_and(|gone| gone.load(Ordering::Relaxed));
        Ready {
            value: PyBool::new(py, gone).to_owned().into_any().unbind(),
        }
    }

    /// The body parsed as JSON (awaitable).
    fn json(&self, py: Python<'_>) -> PyResult<Ready> {
        let body = PyBytes::new(py, self.body_bytes());
        let value = self.app.refs.json_loads.call1(py, (body,))?;
        Ok(Ready { value })
    }

    fn __repr__(&self) -> String {
        format!(
            "<Request {} {}>",
            self.parts.head.method(),
            self.parts.head.path_and_query()
        )
    }
}

/// The URL scheme of a request made in the clear or over TLS.
pub(crate) fn scheme(secure: bool) -> &'static str {
    if secure {
        "https"
    } else {
        "http"
    }
}

/// An awaitable that is already done: `await request.body()` with the body read.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Ready {
    value: Py<PyAny>,
}

impl Ready {
    /// An awaitable that gives `value` at once.
    pub(crate) fn new(value: Py<PyAny>) -> Self {
        Ready { value }
    }
}

#[pymethods]
impl Ready {
    fn __await__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<()> {
        Err(PyStopIteration::new_err((self.value.clone_ref(py),)))
    }

    fn send(&self, py: Python<'_>, _value: Py<PyAny>) -> PyResult<()> {
        self.__next__(py)
    }
}

/// An awaitable already done with `None`, shared: what `send` gives when it need not wait.
/// Finishing by exhaustion, not by raising `StopIteration`, keeps `await` free of exceptions.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Done;

#[pymethods]
impl Done {
    fn __await__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self) -> Option<()> {
        None
    }

    fn send(&self, _value: Py<PyAny>) -> PyResult<()> {
        Err(PyStopIteration::new_err(()))
    }
}

/// The process's one [`Done`].
pub(crate) fn done(py: Python<'_>) -> PyResult<Py<PyAny>> {
    static DONE: PyOnceLock<Py<Done>> = PyOnceLock::new();
    Ok(DONE
        .get_or_try_init(py, || Py::new(py, Done))?
        .clone_ref(py)
        .into_any())
}

/// An object to hang values on: `request.state` and `app.state`.
#[pyclass(dict, module = "vireo._vireo")]
pub(crate) struct State;

#[pymethods]
impl State {
    #[new]
    fn new() -> Self {
        State
    }
}
