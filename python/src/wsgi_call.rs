//! Calling a WSGI (PEP 3333) application: `start_response` with `exc_info`, `write()`, and the
//! result read up to its first non-empty chunk (to its end when that is the whole body), then
//! closed, however the call ends. Native, because this runs on every request of a WSGI app.

use pyo3::exceptions::{PyAssertionError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyByteArray, PyBytes, PyDict, PyIterator, PyList, PyMemoryView, PyString, PyTuple,
};

/// What the app answered: the status and headers it started the response with, and its body.
pub(crate) struct Called<'py> {
    pub(crate) status: Bound<'py, PyString>,
    /// `(name, value)` tuples of `str`.
    pub(crate) headers: Bound<'py, PyList>,
    /// The body, or its start when `rest` is the rest of it.
    pub(crate) chunks: Vec<Bound<'py, PyBytes>>,
    /// The rest of a streamed result, with what `write()` is given meanwhile in its place;
    /// `None` when the whole body is in `chunks` and the result is closed.
    pub(crate) rest: Option<Bound<'py, PyAny>>,
    /// The app's result, for closing a streamed one.
    pub(crate) result: Bound<'py, PyAny>,
}

/// The `start_response` callable an app is given.
#[pyclass(module = "vireo._vireo")]
pub(crate) struct StartResponse {
    status: Option<Py<PyString>>,
    headers: Option<Py<PyList>>,
    /// What `write()` was given and has not been sent yet.
    written: Py<PyList>,
    /// The head counts as sent: `exc_info` can no longer replace the status.
    sent: bool,
}

#[pymethods]
impl StartResponse {
    #[pyo3(signature = (status, headers, exc_info=None))]
    fn __call__<'py>(
        slf: &Bound<'py, Self>,
        status: &Bound<'py, PyAny>,
        headers: &Bound<'py, PyAny>,
        exc_info: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let exc_info = exc_info.filter(|info| info.is_truthy().unwrap_or(true));
        {
            let this = slf.borrow();
            match exc_info {
                Some(info) if this.sent => {
                    let error = info
                        .get_item(1)?
                        .call_method1(intern!(py, "with_traceback"), (info.get_item(2)?,))?;
                    return Err(PyErr::from_value(error));
                }
                None if this.status.is_some() => {
                    return Err(PyAssertionError::new_err(
                        "start_response() called a second time without exc_info",
                    ));
                }
                _ => {}
            }
        }
        let status = status.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "the WSGI status must be a str, not {}",
                type_name(status)
            ))
        })?;
        let pairs = PyList::empty(py);
        for pair in headers.try_iter()? {
            pairs.append(header_pair(&pair?)?)?;
        }
        let mut this = slf.borrow_mut();
        this.status = Some(status.clone().unbind());
        this.headers = Some(pairs.unbind());
        drop(this);
        slf.getattr(intern!(py, "write"))
    }

    /// PEP 3333's `write()`: bytes that go out before whatever the result yields next.
    fn write(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.status.is_none() {
            return Err(PyAssertionError::new_err("write() before start_response()"));
        }
        let data = body_bytes(data)?;
        if !data.as_bytes().is_empty() {
            // The head goes out with the first bytes written.
            self.sent = true;
        }
        self.written.bind(py).append(data)
    }
}

/// A header as the app gave it, checked: a `(name, value)` tuple of two `str`.
fn header_pair<'py>(pair: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let py = pair.py();
    let items: Vec<Bound<'py, PyAny>> = match pair.cast::<PyTuple>() {
        Ok(tuple) => tuple.iter().collect(),
        Err(_) => pair
            .try_iter()
            .and_then(|items| items.collect::<PyResult<_>>())
            .map_err(|_| not_a_pair(pair))?,
    };
    let [name, value] = <[Bound<'py, PyAny>; 2]>::try_from(items).map_err(|_| not_a_pair(pair))?;
    if !name.is_instance_of::<PyString>() || !value.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "WSGI header names and values must be str: {}",
            repr(pair)
        )));
    }
    match pair.cast::<PyTuple>() {
        Ok(tuple) => Ok(tuple.clone()),
        Err(_) => PyTuple::new(py, [name, value]),
    }
}

fn not_a_pair(pair: &Bound<'_, PyAny>) -> PyErr {
    PyValueError::new_err(format!(
        "a WSGI header is a (name, value) pair, not {}",
        repr(pair)
    ))
}

/// Call `app` with `environ` and a fresh `start_response`, and read its result as far as
/// [`Called`] says. `with_written(rest, written)` joins what `write()` is given to a result that
/// is still streaming. The result is closed on every error.
pub(crate) fn call_wsgi<'py>(
    app: &Bound<'py, PyAny>,
    environ: &Bound<'py, PyDict>,
    with_written: &Bound<'py, PyAny>,
) -> PyResult<Called<'py>> {
    let py = app.py();
    let start = Bound::new(
        py,
        StartResponse {
            status: None,
            headers: None,
            written: PyList::empty(py).unbind(),
            sent: false,
        },
    )?;
    let result = app.call1((environ, &start))?;
    let mut reading = Reading {
        start: &start,
        result: &result,
        closed: false,
        chunks: Vec::new(),
    };
    match reading.read(with_written) {
        Ok(rest) => {
            let (status, headers) = reading.started(RETURNED_UNSTARTED)?;
            Ok(Called {
                status,
                headers,
                chunks: reading.chunks,
                rest,
                result,
            })
        }
        Err(error) => {
            reading.close()?;
            Err(error)
        }
    }
}

const RETURNED_UNSTARTED: &str = "returned without calling start_response()";

/// The reading of one result.
struct Reading<'a, 'py> {
    start: &'a Bound<'py, StartResponse>,
    result: &'a Bound<'py, PyAny>,
    closed: bool,
    chunks: Vec<Bound<'py, PyBytes>>,
}

impl<'py> Reading<'_, 'py> {
    /// Read the result into `chunks`; the rest of it when it is still streaming.
    fn read(&mut self, with_written: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = self.result.py();
        if self.result.is_instance_of::<PyList>() || self.result.is_instance_of::<PyTuple>() {
            self.take_written()?;
            for chunk in self.result.try_iter()? {
                self.chunks.push(body_bytes(&chunk?)?);
            }
            self.close()?;
            self.started(RETURNED_UNSTARTED)?;
            return Ok(None);
        }
        let rest = self.result.try_iter()?;
        if !self.next_until_non_empty(&rest, false)? {
            self.close()?;
            self.started(RETURNED_UNSTARTED)?;
            return Ok(None);
        }
        let (_, headers) = self.started("yielded before calling start_response()")?;
        // From here on, as if the head had gone out.
        self.start.borrow_mut().sent = true;
        let have: usize = self.chunks.iter().map(|c| c.as_bytes().len()).sum();
        if declared_length(&headers)? == Some(have) {
            // The whole declared body is here (Flask's and Django's usual case): end the
            // result now, on this thread, rather than on a second trip to the pool for its end.
            if !self.next_until_non_empty(&rest, true)? {
                self.close()?;
                return Ok(None);
            }
            // More than declared: streamed, and cut off there.
        }
        let written = self.start.borrow().written.clone_ref(py);
        Ok(Some(with_written.call1((rest, written))?))
    }

    /// Read chunks (and what `write()` was given before each) up to and including the next
    /// non-empty one (or the next that brings non-empty written bytes along, with
    /// `count_written`); `false` when the result ended first.
    fn next_until_non_empty(
        &mut self,
        rest: &Bound<'py, PyIterator>,
        count_written: bool,
    ) -> PyResult<bool> {
        for chunk in rest.clone() {
            let chunk = chunk?;
            let before = self.chunks.len();
            self.take_written()?;
            let wrote = count_written
                && self.chunks[before..]
                    .iter()
                    .any(|c| !c.as_bytes().is_empty());
            let chunk = chunk.cast_into::<PyBytes>().map_err(|e| {
                PyTypeError::new_err(format!(
                    "a WSGI application must yield bytes, not {}",
                    type_name(&e.into_inner())
                ))
            })?;
            let non_empty = wrote || !chunk.as_bytes().is_empty();
            self.chunks.push(chunk);
            if non_empty {
                return Ok(true);
            }
        }
        self.take_written()?;
        Ok(false)
    }

    /// Move what `write()` was given into `chunks`: it goes before what is yielded next.
    fn take_written(&mut self) -> PyResult<()> {
        let start = self.start.borrow();
        let written = start.written.bind(self.result.py());
        if written.is_empty() {
            return Ok(());
        }
        for chunk in written.iter() {
            self.chunks.push(chunk.cast_into::<PyBytes>()?);
        }
        written.del_slice(0, usize::MAX)
    }

    /// The status and headers the app started the response with; an error saying the app
    /// `what` when it has not.
    fn started(&self, what: &str) -> PyResult<(Bound<'py, PyString>, Bound<'py, PyList>)> {
        let py = self.result.py();
        let start = self.start.borrow();
        match (&start.status, &start.headers) {
            (Some(status), Some(headers)) => {
                Ok((status.bind(py).clone(), headers.bind(py).clone()))
            }
            _ => Err(PyRuntimeError::new_err(format!(
                "the WSGI application {what}"
            ))),
        }
    }

    /// Call the result's `close()`, if it has one, once.
    fn close(&mut self) -> PyResult<()> {
        if std::mem::replace(&mut self.closed, true) {
            return Ok(());
        }
        match self
            .result
            .getattr_opt(intern!(self.result.py(), "close"))?
        {
            Some(close) => close.call0().map(drop),
            None => Ok(()),
        }
    }
}

/// A chunk of the body as bytes: `bytes` as it is, `bytearray` and `memoryview` copied; anything
/// else is refused.
fn body_bytes<'py>(data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(bytes.clone());
    }
    if data.is_instance_of::<PyByteArray>() || data.is_instance_of::<PyMemoryView>() {
        return Ok(data
            .py()
            .get_type::<PyBytes>()
            .call1((data,))?
            .cast_into()?);
    }
    Err(PyTypeError::new_err(format!(
        "a WSGI response body is made of bytes, not {}",
        type_name(data)
    )))
}

/// The response's `Content-Length`, if it gives a valid one.
fn declared_length(headers: &Bound<'_, PyList>) -> PyResult<Option<usize>> {
    for pair in headers.iter() {
        let pair = pair.cast_into::<PyTuple>()?;
        let name = pair.get_item(0)?;
        let name = name.cast::<PyString>()?.to_cow()?;
        if name.len() == 14 && name.eq_ignore_ascii_case("content-length") {
            let value = pair.get_item(1)?;
            let value = value.cast::<PyString>()?.to_cow()?;
            let value = value.trim();
            let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
            return Ok(digits.then(|| value.parse().ok()).flatten());
        }
    }
    Ok(None)
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |name| name.to_string())
}

fn repr(value: &Bound<'_, PyAny>) -> String {
    value
        .repr()
        .map_or_else(|_| "?".to_owned(), |repr| repr.to_string())
}
