//! The ASGI `http` and `websocket` scopes of a request, and what it shares with a WSGI environ: the client and
//! scheme (rewritten from a trusted proxy's `X-Forwarded-*`), the decoded path.

use crate::asgi_config::AppConfig;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use std::borrow::Cow;
use std::cell::RefCell;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use vireo_http::http::{Method, Version};
use vireo_http::tls::TlsSession;
use vireo_http::Head;

/// Where a request came from, as the app should see it.
pub(crate) struct Origin {
    pub client: Option<(String, u16)>,
    /// `http` or `https`.
    pub scheme: &'static str,
    /// The TLS session of the connection, when this server terminated TLS.
    pub tls: Option<Arc<TlsSession>>,
}

/// The peer, or the client a trusted proxy names.
pub(crate) fn origin(
    head: &Head,
    peer: Option<SocketAddr>,
    tls: Option<&Arc<TlsSession>>,
    config: &AppConfig,
) -> Origin {
    let mut origin = Origin {
        client: peer.map(|p| (ip_text(p.ip()), p.port())),
        scheme: if tls.is_some() { "https" } else { "http" },
        tls: tls.cloned(),
    };
    let Some(trusted) = &config.proxy else {
        return origin;
    };
    // A Unix socket's peer is the proxy in front, trusted as uvicorn trusts it.
    if let Some(peer) = peer {
        if !trusted.allows(peer.ip()) {
            return origin;
        }
    }
    // Each field's lines are read as one list: a proxy may add its own line after the client's.
    if let Some(proto) = joined_header(head, "x-forwarded-proto") {
        if let Ok(proto) = std::str::from_utf8(&proto) {
            let proto = proto.rsplit(',').next().unwrap_or("").trim();
            if proto.eq_ignore_ascii_case("http") {
                origin.scheme = "http";
            } else if proto.eq_ignore_ascii_case("https") {
                origin.scheme = "https";
            }
        }
    }
    if let Some(xff) = joined_header(head, "x-forwarded-for") {
        if let Ok(xff) = std::str::from_utf8(&xff) {
            let hosts: Vec<&str> = xff
                .split(',')
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .collect();
            // The nearest address that is not itself a trusted proxy; the first if all are.
            let client = hosts
                .iter()
                .rev()
                .find(|h| h.parse::<IpAddr>().map_or(true, |ip| !trusted.allows(ip)))
                .or(hosts.first());
            if let Some(host) = client {
                origin.client = Some(((*host).to_owned(), 0));
            }
        }
    }
    origin
}

/// Every line of the field `name`, joined with commas in the order received (RFC 9110 §5.3).
fn joined_header(head: &Head, name: &str) -> Option<Vec<u8>> {
    let mut joined: Option<Vec<u8>> = None;
    for (_, value) in head.headers().filter(|(n, _)| n.eq_ignore_ascii_case(name)) {
        match &mut joined {
            Some(all) => {
                all.push(b',');
                all.extend_from_slice(value);
            }
            None => joined = Some(value.to_vec()),
        }
    }
    joined
}

/// `ip` as text. The worker's last answer is kept: behind a proxy, or from one client over
/// keep-alive, it is the same address request after request, and formatting one is not cheap.
fn ip_text(ip: IpAddr) -> String {
    thread_local! {
        static LAST: RefCell<Option<(IpAddr, String)>> = const { RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some((seen, text)) if *seen == ip => text.clone(),
            _ => {
                let text = ip.to_string();
                *last = Some((ip, text.clone()));
                text
            }
        }
    })
}

/// A header name as ASGI gives it, in lower case; a name that is already (the usual case) is
/// not copied first.
fn lowercase_bytes<'py>(py: Python<'py>, name: &[u8]) -> Bound<'py, PyBytes> {
    if !name.iter().any(u8::is_ascii_uppercase) {
        return PyBytes::new(py, name);
    }
    let mut buf = [0u8; 64];
    match buf.get_mut(..name.len()) {
        Some(lower) => {
            for (to, from) in lower.iter_mut().zip(name) {
                *to = from.to_ascii_lowercase();
            }
            PyBytes::new(py, lower)
        }
        None => PyBytes::new(py, &name.to_ascii_lowercase()),
    }
}

/// `%XX` sequences decoded; invalid UTF-8 replaced, as Python's `unquote` does.
pub(crate) fn percent_decode(raw: &str) -> Cow<'_, str> {
    if !raw.contains('%') {
        return Cow::Borrowed(raw);
    }
    Cow::Owned(String::from_utf8_lossy(&percent_decode_bytes(raw)).into_owned())
}

/// `%XX` sequences decoded to bytes; a `%` not followed by two hex digits is kept.
pub(crate) fn percent_decode_bytes(raw: &str) -> Vec<u8> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// The head's fields as an ASGI scope's `headers`: `(name, value)` byte pairs in order, the
/// names in lower case.
pub(crate) fn header_list<'py>(py: Python<'py>, head: &Head) -> PyResult<Bound<'py, PyList>> {
    let headers = PyList::empty(py);
    for (name, value) in head.headers() {
        headers.append(PyTuple::new(
            py,
            [
                lowercase_bytes(py, name.as_bytes()),
                PyBytes::new(py, value),
            ],
        )?)?;
    }
    Ok(headers)
}

pub(crate) fn http_version(head: &Head) -> &'static str {
    match head.version() {
        Version::HTTP_10 => "1.0",
        Version::HTTP_2 => "2",
        _ => "1.1",
    }
}

/// The keys every `http` or `websocket` scope of an app has, with the values that never
/// change filled in, and the commonest value of those that may (`GET`, HTTP/1.1). Each request's
/// scope starts as a copy, so its keys are neither hashed nor inserted into a growing table one
/// by one, and a common value is not set again.
pub(crate) struct ScopeTemplates {
    http: Py<PyDict>,
    websocket: Py<PyDict>,
    /// The `asgi` value of each kind of scope, copied for each request (an app may change it).
    http_asgi: Py<PyDict>,
    websocket_asgi: Py<PyDict>,
}

impl ScopeTemplates {
    pub(crate) fn new(
        py: Python<'_>,
        root_path: &str,
        server: Option<&(String, u16)>,
        state: bool,
    ) -> PyResult<Self> {
        let template = |kind: &str, scheme: &str, last: &[&str]| -> PyResult<Py<PyDict>> {
            let scope = PyDict::new(py);
            scope.set_item(intern!(py, "type"), PyString::intern(py, kind))?;
            scope.set_item(intern!(py, "asgi"), py.None())?;
            scope.set_item(intern!(py, "http_version"), intern!(py, "1.1"))?;
            scope.set_item(intern!(py, "scheme"), PyString::intern(py, scheme))?;
            for key in ["path", "raw_path", "query_string"] {
                scope.set_item(PyString::intern(py, key), py.None())?;
            }
            scope.set_item(intern!(py, "root_path"), PyString::new(py, root_path))?;
            scope.set_item(intern!(py, "headers"), py.None())?;
            scope.set_item(intern!(py, "client"), py.None())?;
            scope.set_item(intern!(py, "server"), server)?;
            if state {
                scope.set_item(intern!(py, "state"), py.None())?;
            }
            for key in last {
                scope.set_item(PyString::intern(py, key), py.None())?;
            }
            Ok(scope.unbind())
        };
        let asgi = |spec_version: &str| -> PyResult<Py<PyDict>> {
            let asgi = PyDict::new(py);
            asgi.set_item(intern!(py, "version"), intern!(py, "3.0"))?;
            asgi.set_item(
                intern!(py, "spec_version"),
                PyString::intern(py, spec_version),
            )?;
            Ok(asgi.unbind())
        };
        let http = template("http", "http", &["method", "extensions"])?;
        http.bind(py)
            .set_item(intern!(py, "method"), intern!(py, "GET"))?;
        Ok(ScopeTemplates {
            http,
            websocket: template("websocket", "ws", &["subprotocols", "extensions"])?,
            http_asgi: asgi("2.3")?,
            websocket_asgi: asgi("2.4")?,
        })
    }
}

/// The scope dict for an `http` request.
pub(crate) fn http_scope<'py>(
    py: Python<'py>,
    head: &Head,
    origin: &Origin,
    config: &AppConfig,
) -> PyResult<Bound<'py, PyDict>> {
    let scope = config.scopes.http.bind(py).copy()?;
    if origin.scheme == "https" {
        scope.set_item(intern!(py, "scheme"), intern!(py, "https"))?;
    }
    fill_scope(py, &scope, &config.scopes.http_asgi, head, origin, config)?;
    // The template's method is `GET`.
    let method = head.method();
    if *method != Method::GET {
        let method = match *method {
            Method::POST => intern!(py, "POST").clone(),
            _ => PyString::new(py, method.as_str()),
        };
        scope.set_item(intern!(py, "method"), method)?;
    }
    let extensions = PyDict::new(py);
    extensions.set_item(intern!(py, "http.response.pathsend"), PyDict::new(py))?;
    extensions.set_item(intern!(py, "http.response.trailers"), PyDict::new(py))?;
    add_tls_extension(py, &extensions, origin)?;
    scope.set_item(intern!(py, "extensions"), extensions)?;
    Ok(scope)
}

/// The scope dict for a WebSocket handshake: `ws` or `wss`, the subprotocols the client
/// offers, and the denial-response extension.
pub(crate) fn websocket_scope<'py>(
    py: Python<'py>,
    head: &Head,
    origin: &Origin,
    config: &AppConfig,
) -> PyResult<Bound<'py, PyDict>> {
    let scope = config.scopes.websocket.bind(py).copy()?;
    if origin.scheme == "https" {
        scope.set_item(intern!(py, "scheme"), intern!(py, "wss"))?;
    }
    fill_scope(
        py,
        &scope,
        &config.scopes.websocket_asgi,
        head,
        origin,
        config,
    )?;
    let subprotocols = PyList::empty(py);
    for (name, value) in head.headers() {
        if name.eq_ignore_ascii_case("sec-websocket-protocol") {
            for item in String::from_utf8_lossy(value).split(',') {
                let item = item.trim();
                if !item.is_empty() {
                    subprotocols.append(item)?;
                }
            }
        }
    }
    scope.set_item(intern!(py, "subprotocols"), subprotocols)?;
    let extensions = PyDict::new(py);
    extensions.set_item(intern!(py, "websocket.http.response"), PyDict::new(py))?;
    add_tls_extension(py, &extensions, origin)?;
    scope.set_item(intern!(py, "extensions"), extensions)?;
    Ok(scope)
}

/// ASGI's `tls` extension, on a connection this server terminated TLS for: the version, the
/// cipher suite, and the client's certificate chain (PEM, the client's own first) with its
/// subject (RFC 4514). The server's certificate is `None`, which the spec allows.
fn add_tls_extension<'py>(
    py: Python<'py>,
    extensions: &Bound<'py, PyDict>,
    origin: &Origin,
) -> PyResult<()> {
    let Some(session) = &origin.tls else {
        return Ok(());
    };
    let tls = PyDict::new(py);
    tls.set_item(intern!(py, "server_cert"), py.None())?;
    let chain = PyList::empty(py);
    if !session.peer_certificates().is_empty() {
        let to_pem = py.import("ssl")?.getattr("DER_cert_to_PEM_cert")?;
        for cert in session.peer_certificates() {
            chain.append(to_pem.call1((PyBytes::new(py, cert),))?)?;
        }
    }
    tls.set_item(intern!(py, "client_cert_chain"), chain)?;
    let name = session.peer_certificates().first().and_then(|cert| {
        use x509_cert::der::Decode;
        let parsed = x509_cert::Certificate::from_der(cert).ok()?;
        Some(parsed.tbs_certificate.subject.to_string())
    });
    tls.set_item(intern!(py, "client_cert_name"), name)?;
    tls.set_item(intern!(py, "client_cert_error"), py.None())?;
    tls.set_item(intern!(py, "tls_version"), session.protocol_version())?;
    tls.set_item(intern!(py, "cipher_suite"), session.cipher_suite())?;
    extensions.set_item(intern!(py, "tls"), tls)
}

/// The values of the keys the `http` and `websocket` scopes share that change from request to
/// request; `asgi` is the scope's `asgi` value, of which each scope gets a copy.
fn fill_scope<'py>(
    py: Python<'py>,
    scope: &Bound<'py, PyDict>,
    asgi: &Py<PyDict>,
    head: &Head,
    origin: &Origin,
    config: &AppConfig,
) -> PyResult<()> {
    scope.set_item(intern!(py, "asgi"), asgi.bind(py).copy()?)?;
    // The template's version is 1.1.
    match head.version() {
        Version::HTTP_10 => scope.set_item(intern!(py, "http_version"), intern!(py, "1.0"))?,
        Version::HTTP_2 => scope.set_item(intern!(py, "http_version"), intern!(py, "2"))?,
        _ => {}
    }
    let raw_path = head.path();
    let root = config.root_path.as_str();
    let path = percent_decode(raw_path);
    if root.is_empty() || config.root_in_path {
        scope.set_item(intern!(py, "path"), &*path)?;
        scope.set_item(
            intern!(py, "raw_path"),
            PyBytes::new(py, raw_path.as_bytes()),
        )?;
    } else {
        scope.set_item(intern!(py, "path"), format!("{root}{path}"))?;
        let raw = [root.as_bytes(), raw_path.as_bytes()].concat();
        scope.set_item(intern!(py, "raw_path"), PyBytes::new(py, &raw))?;
    }
    scope.set_item(
        intern!(py, "query_string"),
        PyBytes::new(py, head.query().unwrap_or("").as_bytes()),
    )?;
    scope.set_item(intern!(py, "headers"), header_list(py, head)?)?;
    let client = origin
        .client
        .as_ref()
        .map(|(host, port)| (host.as_str(), *port));
    scope.set_item(intern!(py, "client"), client)?;
    if let Some(state) = &config.state {
        scope.set_item(intern!(py, "state"), state.bind(py).copy()?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{ip_text, percent_decode};

    #[test]
    fn an_address_is_written_out_whichever_came_before() {
        let v4: std::net::IpAddr = "10.0.0.7".parse().unwrap();
        let v6: std::net::IpAddr = "2001:db8::1".parse().unwrap();
        for ip in [v4, v4, v6, v4, v6, v6] {
            assert_eq!(ip_text(ip), ip.to_string());
        }
    }

    #[test]
    fn decodes_percent_escapes() {
        assert_eq!(percent_decode("/a%20b"), "/a b");
        assert_eq!(percent_decode("/caf%C3%A9"), "/café");
        assert_eq!(percent_decode("/bad%zz%4"), "/bad%zz%4");
        assert_eq!(percent_decode("/end%"), "/end%");
        assert_eq!(percent_decode("/%ff"), "/\u{fffd}");
    }
}
