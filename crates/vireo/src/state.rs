//! App-wide state fetched once, when routes are registered: a handler that captures a
//! [`State`] can never find its state missing at request time.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A handle on app-wide state of type `T`, from [`crate::App::state_of`]. It derefs to `T`,
/// clones cheaply (one reference count), and reads the value with no per-request lookup.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use vireo::{App, Request};
///
/// let mut app = App::new();
/// app.state(AtomicU64::new(0));
/// // Fails here, at start-up, if no AtomicU64 was registered, not with a 500 later.
/// let hits = app.state_of::<AtomicU64>()?;
/// app.get("/hits", move |_req: Request| (hits.fetch_add(1, Ordering::Relaxed) + 1).to_string());
///
/// let client = vireo::TestClient::new(app);
/// assert_eq!(client.get("/hits").send().text(), "1");
/// assert_eq!(client.get("/hits").send().text(), "2");
/// # Ok::<(), vireo::MissingState>(())
/// ```
pub struct State<T>(pub(crate) Arc<T>);

impl<T> State<T> {
    /// The shared value, as the `Arc` [`crate::Request::state`] reads it from.
    pub fn arc(&self) -> &Arc<T> {
        &self.0
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&self.0).finish()
    }
}

/// [`crate::App::state_of`] asked for a type no [`crate::App::state`] call registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingState {
    type_name: &'static str,
}

impl MissingState {
    pub(crate) fn of<T>() -> Self {
        MissingState {
            type_name: std::any::type_name::<T>(),
        }
    }

    /// The type asked for.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Display for MissingState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no state of type {} was registered with App::state before App::state_of asked for it",
            self.type_name
        )
    }
}

impl std::error::Error for MissingState {}
