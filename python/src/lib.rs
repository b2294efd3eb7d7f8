//! Vireo for Python: the native half of the `vireo` package.
//!
//! The Python side plans each route once (parameter sources, types, sync or async) and hands
//! the plan to [`app::AppCore`]; from then on requests are routed, their path and query values
//! converted, and handler results encoded here, with the GIL taken only around Python calls.

mod app;
mod app_service;
mod args;
mod asgi_body;
mod asgi_bridge;
mod asgi_channel;
mod asgi_config;
mod asgi_file;
mod asgi_scope;
mod asgi_service;
mod asgi_ws;
mod asgi_ws_channel;
mod call_soon;
mod convert;
mod coroutine;
mod dispatch;
mod errors;
mod event_loop;
mod file_range;
mod gzip_stream;
mod handle;
mod handler_await;
mod handshake_params;
mod json;
mod mappings;
mod middleware;
mod mounts;
mod multipart;
mod plan;
mod pyrefs;
mod ready;
mod render;
mod request;
mod resume;
mod router;
mod running;
mod serve;
mod stream;
mod task_start;
mod testclient;
mod thread_state;
mod tls_files;
mod urlencoded;
mod wsgi_call;
mod wsgi_environ;
mod wsgi_input;
mod wsgi_service;
mod wsgi_stream;

use pyo3::prelude::*;

#[pymodule]
fn _vireo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<app::AppCore>()?;
    m.add_class::<request::Request>()?;
    m.add_class::<mappings::Headers>()?;
    m.add_class::<mappings::QueryParams>()?;
    m.add_class::<request::Ready>()?;
    m.add_class::<coroutine::Completion>()?;
    m.add_class::<coroutine::InlineTask>()?;
    m.add_class::<resume::Resume>()?;
    m.add_class::<handler_await::AwaitHandler>()?;
    m.add_class::<handle::Handle>()?;
    m.add_class::<call_soon::CallSoon>()?;
    m.add_class::<ready::LoopWaker>()?;
    m.add_class::<middleware::Next>()?;
    m.add_class::<middleware::Rendered>()?;
    m.add_class::<request::State>()?;
    m.add_class::<serve::Listener>()?;
    m.add_class::<asgi_config::AsgiApp>()?;
    m.add_class::<asgi_channel::Receive>()?;
    m.add_class::<asgi_channel::Send>()?;
    m.add_class::<asgi_ws_channel::WsReceive>()?;
    m.add_class::<asgi_ws_channel::WsSend>()?;
    m.add_class::<wsgi_input::WsgiInput>()?;
    m.add_class::<wsgi_call::StartResponse>()?;
    m.add_class::<handshake_params::HandshakeParams>()?;
    m.add_class::<testclient::LocalClient>()?;
    m.add_class::<asgi_bridge::Flow>()?;
    m.add_function(wrap_pyfunction!(json::dumps, m)?)?;
    m.add_function(wrap_pyfunction!(coroutine::send_none, m)?)?;
    m.add_function(wrap_pyfunction!(task_start::run_app, m)?)?;
    m.add_function(wrap_pyfunction!(render::render_body, m)?)?;
    m.add_function(wrap_pyfunction!(multipart::parse_multipart, m)?)?;
    m.add(
        "MultipartError",
        m.py().get_type::<multipart::MultipartError>(),
    )?;
    m.add(
        "ClientDisconnected",
        m.py().get_type::<asgi_ws_channel::ClientDisconnected>(),
    )?;
    m.add(
        "ValidationFailed",
        m.py().get_type::<errors::ValidationFailed>(),
    )?;
    Ok(())
}
