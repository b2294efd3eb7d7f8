//! An ASGI or WSGI application as `vireo serve` runs it, with the server options that shape
//! each request (root path, trusted proxies, concurrency limit, logging hooks).

use crate::asgi_scope::ScopeTemplates;
use crate::event_loop::LoopRefs;
use crate::running::RunningCalls;
use crate::task_start::TaskStarter;
use crate::wsgi_environ::EnvironTemplate;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use vireo::ws::WsConfig;

/// How the application is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interface {
    Asgi,
    Wsgi,
}

/// Which peers may set the client address and scheme with `X-Forwarded-For` / `-Proto`.
pub(crate) enum Trusted {
    Any,
    Addrs(Vec<IpAddr>),
}

impl Trusted {
    pub(crate) fn allows(&self, ip: IpAddr) -> bool {
        match self {
            Trusted::Any => true,
            Trusted::Addrs(list) => list
                .iter()
                .any(|a| *a == ip || a.to_canonical() == ip.to_canonical()),
        }
    }
}

/// What the service needs for every request; shared by the worker's requests.
pub(crate) struct AppConfig {
    pub app: Py<PyAny>,
    pub interface: Interface,
    pub root_path: String,
    /// The request's path begins with `root_path` already, as for an app mounted at it
    /// (`App.mount`); otherwise `root_path` is put before it, as a proxy took it off.
    pub root_in_path: bool,
    /// `Some` with `--proxy-headers`.
    pub proxy: Option<Trusted>,
    pub limit_concurrency: Option<usize>,
    /// The app calls running, for `limit_concurrency` and a graceful shutdown.
    pub running: Arc<RunningCalls>,
    /// Each scope's keys, and the values that never change.
    pub scopes: ScopeTemplates,
    /// The limits of WebSocket sessions; `None` when WebSockets are off (`--ws none`), and an
    /// upgrade request is then an ordinary `http` request.
    pub ws: Option<WsConfig>,
    /// The lifespan state each request's scope gets a shallow copy of.
    pub state: Option<Py<PyDict>>,
    /// Starts `run_app(app, scope, receive, send, completion)` as the app's task on the loop.
    pub starter: TaskStarter,
    /// `log_error(message, exc_or_none)`: logs through the `vireo.error` logger.
    pub log_error: Py<PyAny>,
    /// `access(client, method, path, version, status)`, when access logging is on.
    pub access_log: Option<Py<PyAny>>,
    /// `with_written(rest, written)`: a streamed WSGI result with what `write()` is given while
    /// it runs, see `vireo/_wsgi.py`.
    pub wsgi_with_written: Py<PyAny>,
    /// Each WSGI environ's keys, and the values that never change.
    pub environ: EnvironTemplate,
    pub bind_loop: Py<PyAny>,
    pub spawn: Py<PyAny>,
    pub context_run: Py<PyAny>,
    pub send_none: Py<PyAny>,
}

impl AppConfig {
    pub(crate) fn loop_refs(&self, py: Python<'_>) -> LoopRefs {
        LoopRefs {
            bind_loop: self.bind_loop.clone_ref(py),
            spawn: self.spawn.clone_ref(py),
            context_run: self.context_run.clone_ref(py),
            send_none: self.send_none.clone_ref(py),
        }
    }

    /// Log a server-side error with the app's traceback, if any.
    pub(crate) fn log(&self, py: Python<'_>, message: &str, err: Option<PyErr>) {
        let exc = err.map(|e| e.into_value(py).into_any());
        if let Err(e) = self.log_error.call1(py, (message, exc)) {
            e.print(py);
        }
    }
}

/// An application made servable: `AsgiApp(app, interface, helpers, **options)`.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct AsgiApp {
    pub(crate) config: Arc<AppConfig>,
}

#[pymethods]
impl AsgiApp {
    #[new]
    #[pyo3(signature = (app, interface, helpers, root_path=String::new(), proxy_headers=false,
        forwarded_allow_ips=vec!["127.0.0.1".to_owned()], limit_concurrency=None, server=None,
        state=None, access_log=None, multiprocess=false, multithread=true, ws=true,
        ws_max_size=16 << 20,
        ws_ping_interval=20.0, ws_ping_timeout=20.0, ws_per_message_deflate=true, mounted=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        app: Py<PyAny>,
        interface: &str,
        helpers: &Bound<'_, PyDict>,
        root_path: String,
        proxy_headers: bool,
        forwarded_allow_ips: Vec<String>,
        limit_concurrency: Option<usize>,
        server: Option<(String, u16)>,
        state: Option<Py<PyDict>>,
        access_log: Option<Py<PyAny>>,
        multiprocess: bool,
        multithread: bool,
        ws: bool,
        ws_max_size: usize,
        ws_ping_interval: f64,
        ws_ping_timeout: f64,
        ws_per_message_deflate: bool,
        mounted: bool,
    ) -> PyResult<Self> {
        let interface = match interface {
            "asgi" => Interface::Asgi,
            "wsgi" => Interface::Wsgi,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown interface {other:?}"
                )))
            }
        };
        let proxy = proxy_headers
            .then(|| trusted(&forwarded_allow_ips))
            .transpose()?;
        let get = |name: &str| -> PyResult<Py<PyAny>> {
            helpers
                .get_item(name)?
                .map(Bound::unbind)
                .ok_or_else(|| PyValueError::new_err(format!("vireo helper {name} missing")))
        };
        let ws = ws
            .then(|| ws_config(ws_max_size, ws_ping_interval, ws_ping_timeout))
            .transpose()?
            .map(|ws| ws.compression(ws_per_message_deflate));
        let scopes = ScopeTemplates::new(py, &root_path, server.as_ref(), state.is_some())?;
        let environ = EnvironTemplate::new(
            py,
            &root_path,
            server.as_ref(),
            (multithread, multiprocess),
            get("wsgi_file_wrapper")?.bind(py),
        )?;
        Ok(AsgiApp {
            config: Arc::new(AppConfig {
                app,
                interface,
                scopes,
                root_path,
                root_in_path: mounted,
                proxy,
                limit_concurrency: limit_concurrency.filter(|n| *n > 0),
                running: Arc::default(),
                state,
                ws,
                starter: TaskStarter::new(
                    py,
                    get("start_app")?,
                    get("event_loop")?,
                    get("context_run")?,
                )?,
                log_error: get("log_error")?,
                access_log,
                wsgi_with_written: get("wsgi_with_written")?,
                environ,
                bind_loop: get("bind_loop")?,
                spawn: get("spawn")?,
                context_run: get("context_run")?,
                send_none: get("send_none")?,
            }),
        })
    }
}

/// The WebSocket limits from `--ws-max-size`, `--ws-ping-interval` and `--ws-ping-timeout`;
/// `--ws-per-message-deflate` is applied by the caller.
fn ws_config(max_size: usize, ping_interval: f64, ping_timeout: f64) -> PyResult<WsConfig> {
    let seconds = |name: &str, secs: f64| {
        Duration::try_from_secs_f64(secs)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{name} must be a positive number of seconds, not {secs}"
                ))
            })
    };
    if max_size == 0 {
        return Err(PyValueError::new_err(
            "--ws-max-size must be at least 1 byte",
        ));
    }
    Ok(WsConfig::default()
        .max_message_size(max_size)
        .max_frame_size(max_size)
        .idle_timeout(seconds("--ws-ping-interval", ping_interval)?)
        .pong_timeout(seconds("--ws-ping-timeout", ping_timeout)?))
}

/// `--forwarded-allow-ips`: addresses, or `*` for any peer.
fn trusted(list: &[String]) -> PyResult<Trusted> {
    let mut addrs = Vec::new();
    for item in list.iter().flat_map(|s| s.split(',')) {
        let item = item.trim();
        match item {
            "" => {}
            "*" => return Ok(Trusted::Any),
            ip => addrs.push(ip.parse::<IpAddr>().map_err(|e| {
                PyValueError::new_err(format!(
                    "--forwarded-allow-ips: {ip:?} is not an IP address: {e}"
                ))
            })?),
        }
    }
    Ok(Trusted::Addrs(addrs))
}
