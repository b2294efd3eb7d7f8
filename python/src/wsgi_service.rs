//! A WSGI (PEP 3333) application as the engine's service. The app runs on the blocking pool, so
//! a slow request does not stall the worker; `wsgi.input` streams the body to it as the client
//! sends it, and a streamed result is pulled there chunk by chunk.

use crate::asgi_config::AppConfig;
use crate::asgi_scope::{http_version, origin, percent_decode_bytes, Origin};
use crate::asgi_service::server_error;
use crate::request::latin1;
use crate::thread_state;
use crate::wsgi_input::{Input, WsgiInput};
use crate::wsgi_stream::WsgiStream;
use bytes::{Bytes, BytesMut};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::pin::pin;
use std::sync::Arc;
use vireo_http::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use vireo_http::{Body, BodyKind, ContentType, Head, Response};

/// What `call_wsgi` returns: `(status, headers, chunks, rest, result)`; `rest` is `None` when
/// the whole body is in `chunks` (and the result already closed).
type Called = (
    String,
    Vec<(String, String)>,
    Vec<Vec<u8>>,
    Option<Py<PyAny>>,
    Py<PyAny>,
);

pub(crate) async fn serve(config: &Arc<AppConfig>, req: vireo_http::Request<'_>) -> Response {
    let peer = req.remote_addr().copied();
    let tls = req.tls();
    let (head, mut body) = req.into_parts();
    let input = Input::new(matches!(head.body_kind(), BodyKind::Empty));
    let is_head = head.method() == Method::HEAD;
    let origin = origin(&head, peer, tls, config);
    let app_config = config.clone();
    let app_input = input.clone();
    let mut called = tokio::task::spawn_blocking(move || {
        // The pool's threads are reused: each keeps its thread state between requests.
        thread_state::keep_until_exit();
        let config = app_config;
        Python::attach(|py| -> Result<Response, Response> {
            let environ = environ(py, &head, &origin, &config)
                .map_err(|e| log_500(py, &config, "building the WSGI environ", e))?;
            drop(head);
            let input = Py::new(py, WsgiInput(app_input))
                .map_err(|e| log_500(py, &config, "building the WSGI environ", e))?;
            let called: Called = config
                .wsgi_call
                .call1(py, (config.app.clone_ref(py), environ, input))
                .and_then(|r| r.extract(py))
                .map_err(|e| log_500(py, &config, "Exception in WSGI application", e))?;
            // A result still open (streamed) is closed if its status or headers are refused.
            let open = called.3.as_ref().map(|_| called.4.clone_ref(py));
            response(&config, called, is_head).map_err(|e| {
                if let Some(result) = open {
                    close_result(py, &config, result.bind(py));
                }
                log_500(py, &config, "Invalid WSGI response", e)
            })
        })
    });
    let _end = EndInput(input.clone());
    // The body is read as the app reads `wsgi.input`, while the app runs on the blocking pool.
    let mut pump = pin!(input.pump(&mut body));
    let mut pump_done = false;
    let called = loop {
        tokio::select! {
            called = &mut called => break called,
            read = &mut pump, if !pump_done => {
                pump_done = true;
                if let Err(e) = read {
                    return Response::typed(e.status(), e.to_string(), ContentType::Text);
                }
            }
        }
    };
    // An app that answers before reading all it began to read gets the rest read for it.
    if !pump_done && input.wants_rest() {
        input.drain();
        if let Err(e) = pump.as_mut().await {
            return Response::typed(e.status(), e.to_string(), ContentType::Text);
        }
    }
    match called {
        Ok(Ok(res)) | Ok(Err(res)) => res,
        Err(_) => server_error(),
    }
}

/// Ends `wsgi.input` when the service is done with the body, however it ends.
struct EndInput(Arc<Input>);

impl Drop for EndInput {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// Call the result's `close()`, if it has one; a failure is logged.
fn close_result(py: Python<'_>, config: &AppConfig, result: &Bound<'_, PyAny>) {
    let closed = match result.getattr(pyo3::intern!(py, "close")) {
        Ok(close) => close.call0().map(drop),
        Err(_) => Ok(()),
    };
    if let Err(e) = closed {
        config.log(py, "Exception closing the WSGI result", Some(e));
    }
}

fn log_500(py: Python<'_>, config: &AppConfig, message: &str, err: PyErr) -> Response {
    config.log(py, message, Some(err));
    server_error()
}

fn response(
    config: &Arc<AppConfig>,
    (status, headers, chunks, rest, result): Called,
    is_head: bool,
) -> PyResult<Response> {
    let code = status
        .split_ascii_whitespace()
        .next()
        .and_then(|c| c.parse::<u16>().ok())
        .and_then(|c| StatusCode::from_u16(c).ok())
        .filter(|s| *s >= StatusCode::OK)
        .ok_or_else(|| PyValueError::new_err(format!("invalid WSGI status {status:?}")))?;
    let mut map = HeaderMap::new();
    let mut length = None;
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| PyValueError::new_err(format!("invalid header name {name:?}")))?;
        // Header values are latin-1 strings (PEP 3333), each character one byte.
        let value = latin1_bytes(&value)
            .and_then(|bytes| HeaderValue::from_bytes(&bytes).ok())
            .ok_or_else(|| {
                PyValueError::new_err(format!("invalid value for header {name}: {value:?}"))
            })?;
        if name == header::CONTENT_LENGTH {
            length = value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok());
        }
        map.append(name, value);
    }
    let body = match rest {
        None => {
            let mut all = BytesMut::new();
            for chunk in &chunks {
                all.extend_from_slice(chunk);
            }
            match length {
                Some(len) if is_head && all.is_empty() => {
                    Body::SizedStream(len, Box::pin(WsgiStream::empty()))
                }
                _ => Body::Bytes(all.freeze()),
            }
        }
        Some(rest) => {
            let first: Vec<Bytes> = chunks.into_iter().map(Bytes::from).collect();
            let stream = Box::pin(WsgiStream::new(first, rest, result, config.clone()));
            match length {
                Some(len) => Body::SizedStream(len, stream),
                None => Body::Stream(stream),
            }
        }
    };
    let mut res = Response::new(code, body);
    *res.headers_mut() = map;
    Ok(res)
}

/// PEP 3333's environ, but for `wsgi.input`, `wsgi.errors` and `wsgi.file_wrapper`, which
/// `call_wsgi` adds.
fn environ<'py>(
    py: Python<'py>,
    head: &Head,
    origin: &Origin,
    config: &AppConfig,
) -> PyResult<Bound<'py, PyDict>> {
    let env = PyDict::new(py);
    env.set_item("REQUEST_METHOD", head.method().as_str())?;
    env.set_item("SCRIPT_NAME", config.root_path.as_str())?;
    env.set_item("PATH_INFO", latin1(&percent_decode_bytes(head.path())))?;
    env.set_item("QUERY_STRING", head.query().unwrap_or(""))?;
    env.set_item("SERVER_PROTOCOL", format!("HTTP/{}", http_version(head)))?;
    let (name, port) = match &config.server {
        Some((host, port)) => (host.clone(), port.to_string()),
        None => ("localhost".to_owned(), "80".to_owned()),
    };
    env.set_item("SERVER_NAME", name)?;
    env.set_item("SERVER_PORT", port)?;
    if let Some((host, port)) = &origin.client {
        env.set_item("REMOTE_ADDR", host)?;
        env.set_item("REMOTE_PORT", port.to_string())?;
    }
    let mut joined: Vec<(String, String)> = Vec::new();
    for (name, value) in head.headers() {
        // `X_Forwarded_For` would become the same key as `X-Forwarded-For` and pass for it:
        // names with underscores are dropped, as gunicorn and nginx drop them.
        if name.contains('_') {
            continue;
        }
        let key = match name.to_ascii_lowercase().as_str() {
            "content-type" => "CONTENT_TYPE".to_owned(),
            "content-length" => "CONTENT_LENGTH".to_owned(),
            _ => format!("HTTP_{}", name.to_ascii_uppercase().replace('-', "_")),
        };
        let value = latin1(value);
        match joined.iter_mut().find(|(k, _)| *k == key) {
            // Repeated fields are joined as one, with commas (a cookie with "; ").
            Some((_, v)) => {
                v.push_str(if key == "HTTP_COOKIE" { "; " } else { "," });
                v.push_str(&value);
            }
            None => joined.push((key, value)),
        }
    }
    for (key, value) in joined {
        env.set_item(key, value)?;
    }
    env.set_item("wsgi.version", (1, 0))?;
    env.set_item("wsgi.url_scheme", origin.scheme)?;
    env.set_item("wsgi.multithread", config.multithread)?;
    env.set_item("wsgi.multiprocess", config.multiprocess)?;
    env.set_item("wsgi.run_once", false)?;
    env.set_item("wsgi.input_terminated", true)?;
    Ok(env)
}

/// A "bytes-as-str" back to its bytes; `None` if a character does not fit in one.
fn latin1_bytes(text: &str) -> Option<Vec<u8>> {
    text.chars().map(|c| u8::try_from(c).ok()).collect()
}
