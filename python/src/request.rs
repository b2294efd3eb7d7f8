//! The `Request` handed to middleware and to handlers that ask for it. Header fields, query
//! parameters and the state object become Python objects only when first used.

use crate::app::AppInner;
use crate::middleware::State;
use crate::plan::Route;
use crate::urlencoded::{decode, query_pairs};
use bytes::Bytes;
use pyo3::exceptions::{PyKeyError, PyStopIteration};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::net::SocketAddr;
use std::sync::Arc;
use vireo_http::Head;

/// What a request brings: its head, its body (read whole), its path values and its peer.
pub(crate) struct Parts {
    pub head: Head,
    pub body: Bytes,
    pub path_values: Vec<String>,
    pub peer: Option<SocketAddr>,
}

/// An HTTP request, as Starlette's `Request` shows it.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Request {
    pub parts: Parts,
    pub route: Arc<Route>,
    pub app: Arc<AppInner>,
    state: PyOnceLock<Py<PyAny>>,
    headers: PyOnceLock<Py<Headers>>,
    query: PyOnceLock<Py<QueryParams>>,
}

impl Request {
    pub(crate) fn new(parts: Parts, route: Arc<Route>, app: Arc<AppInner>) -> Self {
        Request {
            parts,
            route,
            app,
            state: PyOnceLock::new(),
            headers: PyOnceLock::new(),
            query: PyOnceLock::new(),
        }
    }
}

/// Header values are Latin-1 text, as in Starlette.
fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| b as char).collect()
}

#[pymethods]
impl Request {
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

    #[getter]
    fn url(&self) -> Url {
        let head = &self.parts.head;
        Url {
            path: decode(head.path(), false).into_owned(),
            query: head.query().unwrap_or("").to_owned(),
            netloc: head.header("host").map(latin1).unwrap_or_default(),
        }
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
                let pairs = self
                    .parts
                    .head
                    .query()
                    .map(|q| {
                        query_pairs(q)
                            .map(|(k, v)| (k.into_owned(), v.into_owned()))
                            .collect()
                    })
                    .unwrap_or_default();
                Py::new(py, QueryParams { pairs })
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

    /// An object to keep values on for the rest of this request (middleware to handler).
    #[getter]
    fn state(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.state
            .get_or_try_init(py, || Py::new(py, State).map(Py::into_any))
            .map(|s| s.clone_ref(py))
    }

    /// The `App` this request was routed by.
    #[getter]
    fn app(&self, py: Python<'_>) -> Py<PyAny> {
        self.app.app.clone_ref(py)
    }

    /// `(host, port)` of the peer, or None on a transport without one.
    #[getter]
    fn client(&self) -> Option<(String, u16)> {
        self.parts.peer.map(|a| (a.ip().to_string(), a.port()))
    }

    /// The whole body, as `bytes` (awaitable, as in Starlette).
    fn body(&self, py: Python<'_>) -> Ready {
        Ready {
            value: PyBytes::new(py, &self.parts.body).into_any().unbind(),
        }
    }

    /// The body parsed as JSON (awaitable).
    fn json(&self, py: Python<'_>) -> PyResult<Ready> {
        let body = PyBytes::new(py, &self.parts.body);
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

/// The request's URL, in the parts middleware usually reads.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Url {
    #[pyo3(get)]
    path: String,
    #[pyo3(get)]
    query: String,
    #[pyo3(get)]
    netloc: String,
}

#[pymethods]
impl Url {
    #[getter]
    fn scheme(&self) -> &'static str {
        "http"
    }

    fn __str__(&self) -> String {
        let query = if self.query.is_empty() {
            String::new()
        } else {
            format!("?{}", self.query)
        };
        format!("http://{}{}{}", self.netloc, self.path, query)
    }

    fn __repr__(&self) -> String {
        format!("URL('{}')", self.__str__())
    }
}

/// The request's header fields: a read-only mapping, names compared without case.
#[pyclass(frozen, module = "vireo._vireo", mapping)]
pub(crate) struct Headers {
    request: Py<Request>,
}

impl Headers {
    fn each<R>(&self, py: Python<'_>, f: impl FnOnce(&vireo_http::RequestHead) -> R) -> R {
        f(&self.request.bind(py).get().parts.head)
    }
}

#[pymethods]
impl Headers {
    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<String> {
        self.each(py, |h| h.header(name).map(latin1))
            .ok_or_else(|| PyKeyError::new_err(name.to_owned()))
    }

    #[pyo3(signature = (name, default=None))]
    fn get(&self, py: Python<'_>, name: &str, default: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        match self.each(py, |h| h.header(name).map(latin1)) {
            Some(v) => Ok(v.into_pyobject(py)?.into_any().unbind()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    /// Every value of a repeated field.
    fn getlist(&self, py: Python<'_>, name: &str) -> Vec<String> {
        self.each(py, |h| {
            h.headers()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| latin1(v))
                .collect()
        })
    }

    fn __contains__(&self, py: Python<'_>, name: &str) -> bool {
        self.each(py, |h| h.header(name).is_some())
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.each(py, |h| h.headers().len())
    }

    /// Names in lower case, in the order received.
    fn keys(&self, py: Python<'_>) -> Vec<String> {
        self.each(py, |h| {
            h.headers().map(|(n, _)| n.to_ascii_lowercase()).collect()
        })
    }

    fn values(&self, py: Python<'_>) -> Vec<String> {
        self.each(py, |h| h.headers().map(|(_, v)| latin1(v)).collect())
    }

    fn items(&self, py: Python<'_>) -> Vec<(String, String)> {
        self.each(py, |h| {
            h.headers()
                .map(|(n, v)| (n.to_ascii_lowercase(), latin1(v)))
                .collect()
        })
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, self.keys(py))?.try_iter()?.into_any())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("Headers({:?})", self.items(py))
    }
}

/// The decoded query parameters: a read-only mapping where the last value of a repeated
/// name wins, and `getlist` gives them all.
#[pyclass(frozen, module = "vireo._vireo", mapping)]
pub(crate) struct QueryParams {
    pairs: Vec<(String, String)>,
}

impl QueryParams {
    fn last(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[pymethods]
impl QueryParams {
    fn __getitem__(&self, name: &str) -> PyResult<String> {
        self.last(name)
            .map(str::to_owned)
            .ok_or_else(|| PyKeyError::new_err(name.to_owned()))
    }

    #[pyo3(signature = (name, default=None))]
    fn get(&self, py: Python<'_>, name: &str, default: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        match self.last(name) {
            Some(v) => Ok(v.into_pyobject(py)?.into_any().unbind()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    fn getlist(&self, name: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.last(name).is_some()
    }

    fn __len__(&self) -> usize {
        self.keys().len()
    }

    /// Each name once, in the order first seen.
    fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for (k, _) in &self.pairs {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
        keys
    }

    fn items(&self) -> Vec<(String, String)> {
        self.keys()
            .into_iter()
            .map(|k| {
                let v = self.last(&k).unwrap_or_default().to_owned();
                (k, v)
            })
            .collect()
    }

    fn multi_items(&self) -> Vec<(String, String)> {
        self.pairs.clone()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, self.keys())?.try_iter()?.into_any())
    }

    fn __repr__(&self) -> String {
        format!("QueryParams({:?})", self.pairs)
    }
}

/// An awaitable that is already done: `await request.body()` with the body read.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct Ready {
    value: Py<PyAny>,
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
