//! The request's header fields and query parameters as read-only Python mappings.

use crate::request::{latin1, Request};
use crate::urlencoded::{query_pairs, urlencode};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

/// The request's header fields: a read-only mapping, names compared without case.
#[pyclass(frozen, module = "vireo._vireo", mapping)]
pub(crate) struct Headers {
    pub(crate) request: Py<Request>,
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

    /// Every field as `(name, value)` bytes, names in lower case, as Starlette's `raw`.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let request = self.request.bind(py).get();
        crate::asgi_scope::header_list(py, &request.parts.head)
    }

    /// A `MutableHeaders` of these fields, as Starlette's `mutablecopy()`.
    fn mutablecopy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let copy = py
            .import(pyo3::intern!(py, "vireo.datastructures"))?
            .getattr(pyo3::intern!(py, "MutableHeaders"))?
            .call0()?;
        for (name, value) in self.items(py) {
            copy.call_method1(pyo3::intern!(py, "append"), (name, value))?;
        }
        Ok(copy)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("Headers({:?})", self.items(py))
    }
}

/// The decoded query parameters: a read-only mapping where the last value of a repeated
/// name wins, and `getlist` gives them all.
#[pyclass(frozen, module = "vireo._vireo", mapping)]
pub(crate) struct QueryParams {
    pub(crate) pairs: Vec<(String, String)>,
}

impl QueryParams {
    /// The parameters of a query string (without its `?`), decoded as a request's are.
    pub(crate) fn parse(query: &str) -> Self {
        let pairs = query_pairs(query)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        QueryParams { pairs }
    }

    /// Starlette's accepted shapes of one argument: a query string (`str` or Latin-1
    /// `bytes`), another `QueryParams`, a mapping, or an iterable of `(name, value)` pairs.
    fn from_value(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(query) = value.cast::<PyString>() {
            return Ok(QueryParams::parse(query.to_str()?));
        }
        if let Ok(query) = value.cast::<PyBytes>() {
            let query: String = query.as_bytes().iter().map(|&b| char::from(b)).collect();
            return Ok(QueryParams::parse(&query));
        }
        if let Ok(other) = value.cast::<QueryParams>() {
            return Ok(QueryParams {
                pairs: other.get().pairs.clone(),
            });
        }
        let py = value.py();
        let pairs = if value.hasattr(intern!(py, "keys"))? {
            str_pairs(value.call_method0(intern!(py, "items"))?.try_iter()?)?
        } else {
            str_pairs(value.try_iter()?)?
        };
        Ok(QueryParams { pairs })
    }

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
    /// `QueryParams("a=1&a=2")`: the parameters of a query string, decoded as a request's are;
    /// or, as Starlette's, of `bytes`, another `QueryParams`, a mapping or `(name, value)`
    /// pairs, with keyword arguments after them, every name and value made a `str`.
    #[new]
    #[pyo3(signature = (*args, **kwargs))]
    fn new(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        if args.len() > 1 {
            return Err(PyTypeError::new_err(format!(
                "QueryParams takes at most 1 positional argument ({} given)",
                args.len()
            )));
        }
        let mut params = match args.iter().next() {
            None => QueryParams { pairs: Vec::new() },
            Some(value) => QueryParams::from_value(&value)?,
        };
        if let Some(kwargs) = kwargs {
            params
                .pairs
                .extend(str_pairs(kwargs.items().iter().map(Ok))?);
        }
        Ok(params)
    }

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

    /// The value of each name, in the order of `keys()`, the last where it repeats.
    fn values(&self) -> Vec<String> {
        self.items().into_iter().map(|(_, v)| v).collect()
    }

    /// Equal to another `QueryParams` holding the same pairs, in any order.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        match other.cast::<QueryParams>() {
            Ok(other) => {
                let (mut ours, mut theirs) = (self.pairs.clone(), other.get().pairs.clone());
                ours.sort();
                theirs.sort();
                (ours == theirs).into_pyobject(py).map_or_else(
                    |_| py.NotImplemented(),
                    |b| b.to_owned().into_any().unbind(),
                )
            }
            Err(_) => py.NotImplemented(),
        }
    }

    /// The pairs as a query string, as `urllib.parse.urlencode` writes them.
    fn __str__(&self) -> String {
        urlencode(&self.pairs)
    }

    /// As Starlette's: `QueryParams('a=1&b=2')` (the encoded string holds no quote to escape).
    fn __repr__(&self) -> String {
        format!("QueryParams('{}')", urlencode(&self.pairs))
    }
}

/// `(name, value)` pairs, each made a `str` as `str()` makes it.
fn str_pairs<'py>(
    items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
) -> PyResult<Vec<(String, String)>> {
    items
        .map(|item| {
            let (name, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
            Ok((
                name.str()?.to_str()?.to_owned(),
                value.str()?.to_str()?.to_owned(),
            ))
        })
        .collect()
}
