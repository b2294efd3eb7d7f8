//! ASGI apps mounted at a path prefix (`App.mount`): a request under the prefix that no route
//! of the app answers goes to the mounted app, as Starlette's `Mount` takes it.

use crate::app::AppInner;
use crate::asgi_config::AppConfig;
use crate::asgi_ws;
use std::sync::Arc;
use vireo_http::Head;

/// One mounted app.
pub(crate) struct Mount {
    /// The prefix without its trailing slash: `/static`, or empty for an app mounted at `/`.
    pub prefix: String,
    /// The app, with the prefix as its `root_path`.
    pub config: Arc<AppConfig>,
}

/// Whether `path` is under `prefix`: the prefix, then `/` and anything.
fn holds(prefix: &str, path: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with('/'))
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
        return app.websockets.is_none().then_some(mount);
    }
    (!app.router.answers(head.method(), path)).then_some(mount)
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
