//! The app as the native side holds it: its routes, planned, and the Python objects it calls.

use crate::asgi_config::{AppConfig, AsgiApp};
use crate::middleware::Next;
use crate::mounts::{Mount, Target};
use crate::plan::{template_names, CallKind, Param, Route};
use crate::pyrefs::PyRefs;
use crate::router::Router;
use crate::running::RunningCalls;
use http::{Method, StatusCode};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use std::sync::Arc;

/// Shared by every request of the process; immutable once built.
pub(crate) struct AppInner {
    pub router: Router,
    /// The outermost middleware and the `call_next` it is given, if there is middleware.
    pub middleware: Option<(Py<PyAny>, Py<PyAny>)>,
    pub refs: PyRefs,
    /// The Python `App`, for `request.app`.
    pub app: Py<PyAny>,
    /// HTTP errors behind middleware are raised to it rather than answered, because the app
    /// has exception handlers for them (a layer in the middleware handles them).
    pub raise_http_errors: bool,
    /// The app's WebSocket routes, served as an ASGI app of their own (`App._websockets`).
    pub websockets: Option<Arc<AppConfig>>,
    /// Apps mounted at a prefix (`App.mount`), in the order mounted.
    pub mounts: Vec<Mount>,
    /// Handler tasks counted from when they first wait until they end; once a graceful
    /// shutdown has closed the connections, those left are the ones whose client left.
    pub orphans: Arc<RunningCalls>,
    /// A path that matches no route but would with its trailing slash added or removed is
    /// redirected there (`App(redirect_slashes=...)`, on by default as in FastAPI).
    pub redirect_slashes: bool,
    /// A body with no `content-type` is not read as JSON (`App(strict_content_type=...)`, on
    /// by default as in FastAPI, against cross-site requests that skip a CORS preflight).
    pub strict_content_type: bool,
    /// What the app's `lifespan` yielded (a dict), copied into each request's `state`.
    pub lifespan_state: Option<Py<PyAny>>,
    /// With middleware (or exception handlers): the routes a request no route takes runs
    /// through it, the 404 and the 405 (given the `Allow` value as its path value).
    pub fallback: Option<(Arc<Route>, Arc<Route>)>,
    /// The routes a request gets to only when no route, mount or slash redirect takes it
    /// (`app.frontend(...)`'s), the most specific path first.
    pub low_priority: Option<Router>,
    /// The templates of the app's WebSocket routes, which come before its mounts.
    pub websocket_paths: Option<matchit::Router<()>>,
    /// The app's `root_path`, taken off a path that still has it before routing, as
    /// Starlette does (a mounted app's request comes with its prefix already taken off).
    pub routed_root: Option<Box<str>>,
    /// The body limit of a request no route of the app limits (`App(max_body_size=...)`, or
    /// the app it is mounted in); `None` leaves the server's.
    pub max_body_size: Option<u64>,
    /// Whether some route sets a body limit of its own, so a request is routed before its
    /// body is read.
    pub route_body_limits: bool,
    /// A returned `str` is sent as a JSON string, as FastAPI sends it (`vireo.FastAPI`),
    /// rather than as text (`vireo.App`).
    pub str_as_json: bool,
}

impl AppInner {
    /// The most bytes of body a request for `method` and `path` may have: its route's limit,
    /// else the app's; `None` leaves the server's.
    pub(crate) fn body_limit(&self, method: &Method, path: &str) -> Option<u64> {
        let route = match self.route_body_limits {
            true => self.router.route_for(method, path),
            false => None,
        };
        route
            .and_then(|route| route.max_body_size)
            .or(self.max_body_size)
    }
}

/// The compiled app. Built by `vireo.App` from its routes; served by `Listener.serve` or a
/// test client.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct AppCore {
    pub inner: Arc<AppInner>,
}

/// A route from its Python tuple: `(methods, path, handler, params, status_code, kind)`, and
/// the Python route last when there is one; whether it sets a body limit.
fn route_from(t: &Bound<'_, PyTuple>, router: &mut Router) -> PyResult<bool> {
    let (methods, path, route) = route_of(t)?;
    let limited = route.max_body_size.is_some();
    router
        .insert(&methods, &path, Arc::new(route))
        .map_err(PyValueError::new_err)?;
    Ok(limited)
}

/// A setting the Python route has, unless it is `None` (left to the app) or there is no
/// route.
fn route_setting<'py>(
    listed: Option<&Py<PyAny>>,
    name: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(listed) = listed else {
        return Ok(None);
    };
    Ok(listed
        .bind(name.py())
        .getattr_opt(name)?
        .filter(|value| !value.is_none()))
}

/// A route's methods, path and plan from its Python tuple (see [`route_from`]).
fn route_of(t: &Bound<'_, PyTuple>) -> PyResult<(Vec<Method>, String, Route)> {
    let methods: Vec<String> = t.get_item(0)?.extract()?;
    let path: String = t.get_item(1)?.extract()?;
    let handler = t.get_item(2)?.unbind();
    let params = t.get_item(3)?;
    let status: u16 = t.get_item(4)?.extract()?;
    let kind: String = t.get_item(5)?.extract()?;
    let path_names = template_names(&Router::normalise(&path));
    let mut planned = Vec::new();
    for p in params.try_iter()? {
        planned.push(Param::from_tuple(p?.cast()?, &path_names)?);
    }
    let kind = match kind.as_str() {
        "sync" => CallKind::Sync,
        "async" => CallKind::Async,
        "blocking" => CallKind::Blocking,
        other => return Err(PyValueError::new_err(format!("unknown kind {other}"))),
    };
    let when_invalid = handler
        .bind(t.py())
        .getattr_opt(intern!(t.py(), "__vireo_when_invalid__"))?
        .map(Bound::unbind);
    let listed = match t.len() > 6 {
        true => Some(t.get_item(6)?.unbind()).filter(|r| !r.is_none(t.py())),
        false => None,
    };
    let max_body_size = route_setting(listed.as_ref(), intern!(t.py(), "max_body_size"))?
        .map(|limit| limit.extract::<u64>())
        .transpose()?;
    let strict_content_type =
        route_setting(listed.as_ref(), intern!(t.py(), "strict_content_type"))?
            .map(|strict| strict.extract::<bool>())
            .transpose()?;
    let route = Route {
        when_invalid,
        max_body_size,
        strict_content_type,
        handler,
        has_keywords: planned.iter().any(|p| p.keyword.is_some()),
        params: planned,
        kind,
        status: StatusCode::from_u16(status).map_err(|e| PyValueError::new_err(e.to_string()))?,
        path_names,
        listed,
    };
    let methods = methods
        .iter()
        .map(|m| Method::from_bytes(m.as_bytes()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((methods, path, route))
}

/// A mount from its prefix and what `App._build` made of the app mounted there: an `AsgiApp`
/// or, for a Vireo app, its `AppCore`.
fn mount_of(prefix: String, target: &Bound<'_, PyAny>) -> PyResult<Mount> {
    let target = match target.cast::<AppCore>() {
        Ok(core) => Target::App(core.get().inner.clone()),
        Err(_) => Target::Asgi(target.cast::<AsgiApp>()?.get().config.clone()),
    };
    Ok(Mount { prefix, target })
}

#[pymethods]
impl AppCore {
    #[new]
    #[allow(clippy::too_many_arguments)] // the parts `App._build` hands over
    #[pyo3(signature = (app, routes, middleware, refs, raise_http_errors=false, websockets=None,
        mounts=Vec::new(), routed_root=String::new(), max_body_size=None,
        low_priority=Vec::new()))]
    fn new(
        app: Py<PyAny>,
        routes: Vec<Bound<'_, PyTuple>>,
        middleware: Vec<Py<PyAny>>,
        refs: &Bound<'_, PyDict>,
        raise_http_errors: bool,
        websockets: Option<PyRef<'_, AsgiApp>>,
        mounts: Vec<(String, Bound<'_, PyAny>)>,
        routed_root: String,
        max_body_size: Option<u64>,
        low_priority: Vec<Bound<'_, PyTuple>>,
    ) -> PyResult<Self> {
        let py = refs.py();
        let mut router = Router::default();
        let mut route_body_limits = false;
        for route in &routes {
            route_body_limits |= route_from(route, &mut router)?;
        }
        let low_priority = if low_priority.is_empty() {
            None
        } else {
            let mut low = Router::default();
            for route in &low_priority {
                route_body_limits |= route_from(route, &mut low)?;
            }
            Some(low)
        };
        let refs = PyRefs::from_dict(refs)?;
        let flag = |name: &str| match app.bind(py).getattr(name) {
            Ok(flag) => flag.is_truthy(),
            Err(_) => Ok(true),
        };
        let (redirect_slashes, strict_content_type) =
            (flag("redirect_slashes")?, flag("strict_content_type")?);
        let str_as_json = match app.bind(py).getattr_opt("_str_as_json")? {
            Some(flag) => flag.is_truthy()?,
            None => false,
        };
        // Read once the app has started (startup runs before the app is built).
        let lifespan_state = app
            .bind(py)
            .getattr("_lifespan_state")
            .ok()
            .filter(|state| !state.is_none())
            .map(Bound::unbind);
        // call_next for the last middleware is Next; for each one before, a layer that calls
        // the next middleware with its own call_next.
        let mut call_next: Py<PyAny> = Py::new(py, Next)?.into_any();
        for mw in middleware.iter().skip(1).rev() {
            call_next = refs.make_layer.call1(py, (mw, call_next))?;
        }
        let middleware = middleware
            .into_iter()
            .next()
            .map(|first| (first, call_next));
        let fallback = match middleware {
            Some(_) => {
                let pair = app.bind(py).call_method0("_fallback_routes")?;
                let route = |i: usize| -> PyResult<Arc<Route>> {
                    Ok(Arc::new(route_of(pair.get_item(i)?.cast()?)?.2))
                };
                Some((route(0)?, route(1)?))
            }
            None => None,
        };
        let websocket_paths = crate::mounts::websocket_paths(app.bind(py))?;
        Ok(AppCore {
            inner: Arc::new(AppInner {
                router,
                low_priority,
                middleware,
                refs,
                app,
                raise_http_errors,
                websockets: websockets.map(|ws| ws.config.clone()),
                mounts: mounts
                    .into_iter()
                    .map(|(prefix, target)| mount_of(prefix, &target))
                    .collect::<PyResult<_>>()?,
                orphans: Arc::default(),
                redirect_slashes,
                strict_content_type,
                lifespan_state,
                fallback,
                routed_root: (!routed_root.is_empty()).then(|| routed_root.into()),
                websocket_paths,
                max_body_size,
                route_body_limits,
                str_as_json,
            }),
        })
    }

    /// The most bytes of body a request for `method` and `path` (the app's root path still
    /// on it) may have, as the app sets it; `None` where it leaves the server's limit.
    fn body_limit(&self, method: &str, path: &str) -> PyResult<Option<u64>> {
        let method = Method::from_bytes(method.as_bytes())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(crate::mounts::body_limit_at(&self.inner, &method, path))
    }
}
