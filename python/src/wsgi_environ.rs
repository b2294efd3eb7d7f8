//! PEP 3333's environ for each request. Each environ starts as a copy of a per-app template
//! that holds every key, with the values that never change and the commonest of those that do;
//! a request sets only what is its own.

use crate::asgi_scope::{http_version, percent_decode_bytes, Origin};
use crate::request::latin1;
use crate::wsgi_input::WsgiInput;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use vireo_http::http::Method;
use vireo_http::Head;

pub(crate) struct EnvironTemplate {
    template: Py<PyDict>,
    /// Where `wsgi.errors` is looked up for each request: `sys.stderr` when the request came.
    sys: Py<PyModule>,
}

impl EnvironTemplate {
    pub(crate) fn new(
        py: Python<'_>,
        root_path: &str,
        server: Option<&(String, u16)>,
        (multithread, multiprocess): (bool, bool),
        file_wrapper: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let env = PyDict::new(py);
        env.set_item(intern!(py, "REQUEST_METHOD"), intern!(py, "GET"))?;
        env.set_item(intern!(py, "SCRIPT_NAME"), root_path)?;
        env.set_item(intern!(py, "PATH_INFO"), intern!(py, "/"))?;
        env.set_item(intern!(py, "QUERY_STRING"), intern!(py, ""))?;
        env.set_item(intern!(py, "SERVER_PROTOCOL"), intern!(py, "HTTP/1.1"))?;
        let (name, port) = match server {
            Some((host, port)) => (host.as_str(), port.to_string()),
            None => ("localhost", "80".to_owned()),
        };
        env.set_item(intern!(py, "SERVER_NAME"), name)?;
        env.set_item(intern!(py, "SERVER_PORT"), port)?;
        env.set_item(intern!(py, "wsgi.version"), (1, 0))?;
        env.set_item(intern!(py, "wsgi.url_scheme"), intern!(py, "http"))?;
        env.set_item(intern!(py, "wsgi.multithread"), multithread)?;
        env.set_item(intern!(py, "wsgi.multiprocess"), multiprocess)?;
        env.set_item(intern!(py, "wsgi.run_once"), false)?;
        env.set_item(intern!(py, "wsgi.input_terminated"), true)?;
        env.set_item(intern!(py, "wsgi.file_wrapper"), file_wrapper)?;
        Ok(EnvironTemplate {
            template: env.unbind(),
            sys: py.import(intern!(py, "sys"))?.unbind(),
        })
    }

    pub(crate) fn environ<'py>(
        &self,
        py: Python<'py>,
        head: &Head,
        origin: &Origin,
        input: Bound<'py, WsgiInput>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let env = self.template.bind(py).copy()?;
        env.set_item(intern!(py, "wsgi.input"), input)?;
        let errors = self.sys.bind(py).getattr(intern!(py, "stderr"))?;
        env.set_item(intern!(py, "wsgi.errors"), errors)?;
        if head.method() != Method::GET {
            env.set_item(intern!(py, "REQUEST_METHOD"), head.method().as_str())?;
        }
        if head.path() != "/" {
            let path = latin1(&percent_decode_bytes(head.path()));
            env.set_item(intern!(py, "PATH_INFO"), path)?;
        }
        if let Some(query) = head.query().filter(|q| !q.is_empty()) {
            env.set_item(intern!(py, "QUERY_STRING"), query)?;
        }
        let version = http_version(head);
        if version != "1.1" {
            env.set_item(intern!(py, "SERVER_PROTOCOL"), format!("HTTP/{version}"))?;
        }
        if origin.scheme != "http" {
            env.set_item(intern!(py, "wsgi.url_scheme"), origin.scheme)?;
        }
        if let Some((host, port)) = &origin.client {
            env.set_item(intern!(py, "REMOTE_ADDR"), host)?;
            env.set_item(intern!(py, "REMOTE_PORT"), port.to_string())?;
        }
        for (name, value) in head.headers() {
            // `X_Forwarded_For` would become the same key as `X-Forwarded-For` and pass for it:
            // names with underscores are dropped, as gunicorn and nginx drop them.
            if name.contains('_') {
                continue;
            }
            let key = header_key(py, name);
            let value = header_value(py, value);
            match env.get_item(&key)? {
                // Repeated fields are joined as one, with commas (a cookie with "; ").
                Some(earlier) => {
                    let separator = if key.to_str()? == "HTTP_COOKIE" {
                        "; "
                    } else {
                        ","
                    };
                    let joined = format!("{}{separator}{}", earlier.str()?, value.to_str()?);
                    env.set_item(key, joined)?;
                }
                None => env.set_item(key, value)?,
            }
        }
        Ok(env)
    }
}

/// The environ key of a header field: `CONTENT_TYPE`, `CONTENT_LENGTH`, or `HTTP_` and the name
/// in upper case with `_` for `-`. The commonest are made once.
fn header_key<'py>(py: Python<'py>, name: &str) -> Bound<'py, PyString> {
    let known = [
        ("host", intern!(py, "HTTP_HOST")),
        ("user-agent", intern!(py, "HTTP_USER_AGENT")),
        ("accept", intern!(py, "HTTP_ACCEPT")),
        ("accept-encoding", intern!(py, "HTTP_ACCEPT_ENCODING")),
        ("connection", intern!(py, "HTTP_CONNECTION")),
        ("content-type", intern!(py, "CONTENT_TYPE")),
        ("content-length", intern!(py, "CONTENT_LENGTH")),
    ];
    if let Some((_, key)) = known
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name))
    {
        return (*key).clone();
    }
    let key = format!("HTTP_{}", name.to_ascii_uppercase().replace('-', "_"));
    PyString::new(py, &key)
}

/// A header value as a "bytes-as-str" (PEP 3333): each byte one character.
fn header_value<'py>(py: Python<'py>, value: &[u8]) -> Bound<'py, PyString> {
    match std::str::from_utf8(value) {
        Ok(text) if text.is_ascii() => PyString::new(py, text),
        _ => PyString::new(py, &latin1(value)),
    }
}
