//! tower interop, both ways (the `tower` feature).
//!
//! - [`App::into_tower`](crate::App::into_tower) makes an app a
//!   `tower::Service<http::Request<B>>`, so hyper can serve it, another tower-based framework
//!   can nest it, and tests can drive it with `ServiceExt::oneshot`.
//! - [`layer`] runs any tower [`Layer`](tower_layer::Layer) (tower-http's `TraceLayer`,
//!   `CorsLayer`, `CompressionLayer`, `SetRequestIdLayer`, `tower::limit`, ...) as Vireo
//!   middleware, app-wide, on a router or on one route.
//!
//! Both convert between Vireo's request and response and `http`'s at the boundary, which costs
//! more than native middleware: prefer Vireo's own middleware on hot paths, and a tower layer
//! where it does more or where a team already depends on it.

mod body;
mod convert;
mod layer;
mod service;

pub use body::{LayerBody, ResponseBody};
pub use layer::{layer, NextService, TowerLayer};
pub use service::TowerService;
