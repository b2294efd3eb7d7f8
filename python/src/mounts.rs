//! Apps mounted at a path prefix (`App.mount`): a request under the prefix that no route of
//! the app answers goes to the mounted app, as Starlette's `Mount` takes it. The mounted app is
//! an ASGI app, or a Vireo `App`, which is served natively with the prefix taken off its path.

use crate::app::AppInner;
use crate::asgi_config::AppConfig;
use crate::asgi_service::{serve_parts, BodySource};
use crate::asgi_ws;
use crate::middleware::{loop_future, settle, Rendered};
use crate::request::{Parts, Request};
use http::Method;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::Arc;
use vireo_http::tls::TlsSession;
use vireo_http::{Head, Response};

/// One mounted app.
pub(crate) struct Mount {
    /// The prefix without its trailing slash: `/static`, or empty for an app mounted at `/`.
    pub prefix: String,
    pub target: Target,
}

/// What a mount serves.
#[derive(Clone)]
pub(crate) enum Target {
    /// An ASGI app, with the prefix as its `root_path` and the full path in its scope.
    Asgi(Arc<AppConfig>),
    /// A Vireo app, whose `root_path` is the prefix: it routes the path after it.
    App(Arc<AppInner>),
}

impl Mount {
    /// This mount, for a request that reaches it through the app's middleware.
    pub(crate) fn behind_middleware(&self, tls: Option<&Arc<TlsSession>>) -> Mounted {
        Mounted {
            prefix: self.prefix.clone(),
            target: self.target.clone(),
            tls: tls.cloned(),
        }
    }
}

/// The mounted app a request goes to once the app's middleware has run: the innermost
/// `call_next` serves it, with the body the middleware's request holds.
#[derive(Clone)]
pub(crate) struct Mounted {
    prefix: String,
    target: Target,
    tls: Option<Arc<TlsSession>>,
}

impl Mounted {
    /// The mounted app's response to the request in `parts`.
    pub(crate) async fn serve(&self, parts: &Parts) -> Response {
        match &self.target {
            Target::Asgi(config) => self.serve_asgi(config, parts, None).await,
            Target::App(app) => {
                let mut head = parts.head.clone();
                head.strip_path_prefix(&self.prefix);
                let body = parts.body.clone();
                let (peer, secure, tls) = (parts.peer, parts.secure, self.tls.as_ref());
                Box::pin(crate::dispatch::answer_read(
                    app, head, body, peer, secure, tls,
                ))
                .await
            }
        }
    }

    async fn serve_asgi(
        &self,
        config: &Arc<AppConfig>,
        parts: &Parts,
        scope_entry: Option<(&str, Py<PyAny>)>,
    ) -> Response {
        let running = Arc::new(config.running.start().0);
        let body = BodySource::Read(Some(parts.body.clone()));
        let (peer, tls) = (parts.peer, self.tls.as_ref());
        serve_parts(config, &parts.head, body, peer, tls, &running, scope_entry).await
    }

    /// The mounted app's response, or the HTTP error an ASGI app raised before its response
    /// began, for the app's exception handlers (`vireo.mounts.answering_http_errors` puts it
    /// in the list under [`RAISED`] in the scope, and answers it). A Vireo app answers its
    /// errors with its own handlers, as a mounted Starlette app does.
    async fn serve_raising(&self, parts: &Parts) -> PyResult<Response> {
        let Target::Asgi(config) = &self.target else {
            return Ok(self.serve(parts).await);
        };
        let raised = Python::attach(|py| PyList::empty(py).unbind());
        let entry = Python::attach(|py| raised.clone_ref(py).into_any());
        let response = self.serve_asgi(config, parts, Some((RAISED, entry))).await;
        Python::attach(|py| match raised.bind(py).get_item(0) {
            Ok(error) => Err(PyErr::from_value(error)),
            Err(_) => Ok(response),
        })
    }
}

/// The scope key under which a mounted app's HTTP error is handed back to the app's exception
/// handlers.
const RAISED: &str = "vireo.raised";

/// The innermost `call_next` for a request a mounted app answers: a future of the mounted
/// app's response, as a `RenderedResponse` whose status and header fields the middleware may
/// change and whose body streams from the app.
pub(crate) fn call_mounted(request: &Bound<'_, Request>) -> PyResult<Py<PyAny>> {
    let (future, state) = loop_future(request.py())?;
    let delivered = future.clone_ref(request.py());
    let request = request.clone().unbind();
    tokio::task::spawn_local(async move {
        let this = request.get();
        let Some(mounted) = &this.mounted else {
            return;
        };
        let response = match this.app.raise_http_errors {
            true => mounted.serve_raising(&this.parts).await,
            false => Ok(mounted.serve(&this.parts).await),
        };
        Python::attach(|py| {
            let rendered = response.and_then(|res| Py::new(py, Rendered::new(res)));
            settle(delivered.bind(py), rendered.map(Py::into_any));
            state.kick(py);
        });
    });
    Ok(future)
}

/// Whether `path` is under `prefix`: the prefix, then `/` and anything.
fn holds(prefix: &str, path: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// The body limit of a request for `method` and `path` as it reaches `app` (its root path
/// still on it), found through the Vireo apps mounted in it, as serving it would apply it.
pub(crate) fn body_limit_at(app: &AppInner, method: &Method, path: &str) -> Option<u64> {
    let path = match &app.routed_root {
        Some(root) if path.len() > root.len() && holds(root, path) => &path[root.len()..],
        _ => path,
    };
    if !app.router.answers(method, path) {
        if let Some(mount) = app.mounts.iter().find(|m| holds(&m.prefix, path)) {
            if let Target::App(mounted) = &mount.target {
                return body_limit_at(mounted, method, &path[mount.prefix.len()..]);
            }
        }
    }
    app.body_limit(method, path)
}

/// The mount that takes this request: the first mounted under whose prefix its path is, when
/// no route of the app answers its method there. A WebSocket handshake goes to a mount only in
/// an app without WebSocket routes of its own.
pub(crate) fn mount_for<'a>(app: &'a AppInner, head: &Head) -> Option<&'a Mount> {
    if app.mounts.is_empty() {
        return None;
    }
    let path = head.path();
    let mount = app.mounts.iter().find(|m| holds(&m.prefix, path))?;
    if asgi_ws::is_websocket(head) {
        // The app's own WebSocket routes first, as its HTTP routes come first below.
        let own = app.websockets.is_some()
            && app
                .websocket_paths
                .as_ref()
                .is_none_or(|paths| paths.at(path).is_ok());
        return (!own).then_some(mount);
    }
    (!app.router.answers(head.method(), path)).then_some(mount)
}

/// The path templates of the app's WebSocket routes (`App._websockets.routes`), to tell a
/// handshake for one of them from one for a mounted app; `None` if one cannot be matched here,
/// and then every handshake stays with the app's routes.
pub(crate) fn websocket_paths(app: &Bound<'_, PyAny>) -> PyResult<Option<matchit::Router<()>>> {
    let mut paths = matchit::Router::new();
    for route in app.getattr("_websockets")?.getattr("routes")?.try_iter()? {
        let template: String = route?.getattr("path")?.extract()?;
        if paths
            .insert(crate::router::Router::normalise(&template), ())
            .is_err()
        {
            return Ok(None);
        }
    }
    Ok(Some(paths))
}

#[cfg(test)]
mod tests {
    use super::holds;

    #[test]
    fn a_mount_holds_the_paths_below_its_prefix() {
        assert!(holds("/static", "/static/app.js"));
        assert!(holds("/static", "/static/"));
        assert!(!holds("/static", "/static"));
        assert!(!holds("/static", "/statics/app.js"));
        assert!(holds("", "/anything"));
    }
}
