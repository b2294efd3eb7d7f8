//! Listening, workers and shutdown: the part of the engine that owns threads and sockets.

mod allocator;
mod balance;
mod coalesce;
mod conn;
mod date;
mod future_pool;
#[cfg(feature = "http2")]
mod h2;
#[cfg(feature = "http2")]
mod h2_head;
mod idle;
pub(crate) mod io;
mod listener;
mod runtime;
mod shutdown;
mod stats;
mod thread_policy;
#[cfg(feature = "tls")]
mod tls_accept;
mod trim;
mod worker;
mod write_buffers;

pub use listener::ListenAddr;
pub use shutdown::ShutdownHandle;
pub use stats::ServerStats;
pub use trim::release_when_quiet;

use crate::service::Service;
use crate::{limits::DEFAULT_SHUTDOWN_TIMEOUT, Limits};
use listener::{SocketFile, StdListener};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use worker::Worker;

/// Pending connections the kernel queues before accepting. Large enough for a burst of
/// hundreds of benchmark connections arriving at once.
const LISTEN_BACKLOG: i32 = 4096;

/// Most threads running blocking work at once, across all workers. Blocking work beyond it
/// waits for a thread, so a flood of slow handlers cannot exhaust memory with stacks and
/// per-thread allocator arenas; 64 keeps dozens of slow calls in flight at once.
pub const DEFAULT_MAX_BLOCKING_THREADS: usize = 64;

/// How long an idle blocking thread lingers before exiting, so the pool shrinks after a burst.
const BLOCKING_THREAD_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// How long the runtime waits, after the shutdown bound, for blocking work that is still running.
const BLOCKING_SHUTDOWN_GRACE: Duration = Duration::from_millis(100);

/// An HTTP server (HTTP/1.1, and HTTP/2 with the `http2` feature): a listening socket (TCP or Unix domain) and the settings to serve it with.
///
/// ```no_run
/// use vireo_http::{service_fn, Response, Server};
/// Server::bind("127.0.0.1:8080")?
///     .serve(service_fn(|_req| Response::text("Hello, World!")))
/// # ; Ok::<(), std::io::Error>(())
/// ```
pub struct Server {
    listener: StdListener,
    socket_file: Option<SocketFile>,
    unix_mode: Option<u32>,
    workers: usize,
    limits: Limits,
    shutdown_timeout: Duration,
    max_blocking_threads: usize,
    batch_blocking_threads: bool,
    tune_allocator: bool,
    half_close: bool,
    handle_signals: bool,
    handle: ShutdownHandle,
    stats: ServerStats,
    on_ready: Option<Box<dyn FnOnce(ListenAddr) + Send>>,
    #[cfg(feature = "tls")]
    tls: Option<crate::tls::TlsHandle>,
    #[cfg(feature = "tls")]
    tls_loader: Option<TlsLoader>,
}

/// Makes a new TLS configuration on SIGHUP: [`Server::reload_tls_on_sighup`].
#[cfg(feature = "tls")]
type TlsLoader =
    Box<dyn Fn() -> Result<crate::tls::TlsConfig, crate::tls::TlsError> + Send + 'static>;

/// What the signal thread does on SIGHUP.
type OnHangup = Box<dyn FnMut() + Send>;

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("listener", &self.listener)
            .field("unix_mode", &self.unix_mode)
            .field("workers", &self.workers)
            .field("limits", &self.limits)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("max_blocking_threads", &self.max_blocking_threads)
            .field("batch_blocking_threads", &self.batch_blocking_threads)
            .field("tune_allocator", &self.tune_allocator)
            .field("half_close", &self.half_close)
            .field("handle_signals", &self.handle_signals)
            .field("tls", &self.is_tls())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Bind a listening socket to `addr`. Port 0 picks a free port: see [`Server::local_addr`].
    pub fn bind(addr: impl ToSocketAddrs) -> std::io::Result<Server> {
        let addr = addr
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address"))?;
        let socket = socket2::Socket::new(
            socket2::Domain::for_address(addr),
            socket2::Type::STREAM,
            Some(socket2::Protocol::TCP),
        )?;
        socket.set_reuse_address(true)?;
        socket.bind(&addr.into())?;
        socket.listen(LISTEN_BACKLOG)?;
        Ok(Server::from_listener(socket.into()))
    }

    /// Bind a Unix domain socket at `path`, as a proxy such as nginx often reaches its upstream.
    /// A socket file left by a server that no longer runs is replaced; the file is removed when
    /// this server ends. Who may connect follows the file's permissions: see
    /// [`Server::unix_permissions`].
    ///
    /// ```no_run
    /// use vireo_http::{service_fn, Response, Server};
    /// Server::bind_unix("/run/app.sock")?
    ///     .unix_permissions(0o660)
    ///     .serve(service_fn(|_req| Response::text("Hello, World!")))
    /// # ; Ok::<(), std::io::Error>(())
    /// ```
    pub fn bind_unix(path: impl AsRef<Path>) -> std::io::Result<Server> {
        let (listener, file) = SocketFile::bind(path.as_ref())?;
        let mut server = Server::new(StdListener::Unix(listener));
        server.socket_file = Some(file);
        Ok(server)
    }

    /// Serve an already bound TCP listener.
    pub fn from_listener(listener: TcpListener) -> Server {
        Server::new(StdListener::Tcp(listener))
    }

    fn new(listener: StdListener) -> Server {
        Server {
            listener,
            socket_file: None,
            unix_mode: None,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            limits: Limits::default(),
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            max_blocking_threads: DEFAULT_MAX_BLOCKING_THREADS,
            batch_blocking_threads: false,
            tune_allocator: false,
            half_close: true,
            handle_signals: false,
            handle: ShutdownHandle::default(),
            stats: ServerStats::default(),
            on_ready: None,
            #[cfg(feature = "tls")]
            tls: None,
            #[cfg(feature = "tls")]
            tls_loader: None,
        }
    }

    /// Whether the server serves TLS.
    fn is_tls(&self) -> bool {
        #[cfg(feature = "tls")]
        return self.tls.is_some();
        #[cfg(not(feature = "tls"))]
        false
    }

    /// Serve HTTPS: every accepted connection does a TLS handshake with `config` first (within
    /// [`Limits::tls_handshake_timeout`], at most [`Limits::max_tls_handshakes_per_worker`] at
    /// once per worker), then is served as any other, with [`crate::Request::is_secure`] true.
    /// Replace the configuration while serving through [`Server::tls_handle`].
    ///
    /// ```no_run
    /// use vireo_http::{service_fn, tls::TlsConfig, Response, Server};
    /// Server::bind("0.0.0.0:443")?
    ///     .tls(TlsConfig::from_pem_files("chain.pem", "key.pem")?)
    ///     .serve(service_fn(|_req| Response::text("Hello, World!")))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: crate::tls::TlsConfig) -> Self {
        match &self.tls {
            Some(handle) => handle.reload(config),
            None => self.tls = Some(crate::tls::TlsHandle::new(config)),
        }
        self
    }

    /// On SIGHUP, replace the TLS configuration with what `load` makes (typically the same
    /// files read again, after a certificate renewal), as [`crate::tls::TlsHandle::reload`]
    /// does; if `load` fails, the error is logged and the current configuration kept. Only
    /// while [`Server::handle_signals`] is on (the framework's `App::serve` turns it on) and
    /// [`Server::tls`] is set.
    ///
    /// ```no_run
    /// use vireo_http::{service_fn, tls::TlsConfig, Response, Server};
    /// let load = || TlsConfig::from_pem_files("chain.pem", "key.pem");
    /// Server::bind("0.0.0.0:443")?
    ///     .tls(load()?)
    ///     .reload_tls_on_sighup(load)
    ///     .handle_signals(true)
    ///     .serve(service_fn(|_req| Response::text("Hello, World!")))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "tls")]
    pub fn reload_tls_on_sighup(
        mut self,
        load: impl Fn() -> Result<crate::tls::TlsConfig, crate::tls::TlsError> + Send + 'static,
    ) -> Self {
        self.tls_loader = Some(Box::new(load));
        self
    }

    /// What to do on SIGHUP, if anything.
    fn on_hangup(&mut self) -> Option<OnHangup> {
        #[cfg(feature = "tls")]
        if let (Some(handle), Some(load)) = (self.tls.clone(), self.tls_loader.take()) {
            return Some(Box::new(move || match load() {
                Ok(config) => {
                    handle.reload(config);
                    tracing::info!("SIGHUP: TLS configuration reloaded");
                }
                Err(error) => {
                    tracing::error!(%error, "SIGHUP: TLS configuration not reloaded, keeping the current one");
                }
            }));
        }
        None
    }

    /// A handle that replaces the TLS configuration while the server runs (new certificates
    /// for new handshakes); `None` unless [`Server::tls`] was called.
    #[cfg(feature = "tls")]
    pub fn tls_handle(&self) -> Option<crate::tls::TlsHandle> {
        self.tls.clone()
    }

    /// The TCP address the server listens on; an error for a Unix domain socket (see
    /// [`Server::listen_addr`]).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        match self.listener.local_addr()? {
            ListenAddr::Tcp(addr) => Ok(addr),
            ListenAddr::Unix(path) => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("the server listens on the Unix socket {}", path.display()),
            )),
        }
    }

    /// The address the server listens on, TCP or Unix.
    pub fn listen_addr(&self) -> std::io::Result<ListenAddr> {
        self.listener.local_addr()
    }

    /// The permission bits of the Unix domain socket file (for example `0o660`, so only the
    /// owner and group, such as the proxy's, may connect), set before the server accepts. Has
    /// no effect on a TCP listener. Default: the file is created under the process's umask.
    pub fn unix_permissions(mut self, mode: u32) -> Self {
        self.unix_mode = Some(mode);
        self
    }

    /// Worker threads, each with its own single-threaded runtime (default: one per core).
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self
    }

    /// The limits and timeouts to enforce (default: [`Limits::default`]).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits this server will enforce: those given to [`Server::limits`], or the defaults.
    pub fn configured_limits(&self) -> &Limits {
        &self.limits
    }

    /// How long a graceful shutdown waits for requests in progress (default 30 s).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// How long the server goes on accepting and serving as usual after a graceful shutdown is
    /// requested, before it stops accepting and drains (default: none). Meanwhile
    /// [`ShutdownHandle::is_requested`] is already true, so a readiness endpoint can answer 503
    /// and a load balancer stop sending new connections before they would be refused. Set it
    /// to a little more than the balancer's health-check interval.
    pub fn drain_delay(self, delay: Duration) -> Self {
        self.handle.set_drain_delay(delay);
        self
    }

    /// Most threads running blocking work at once (default
    /// [`DEFAULT_MAX_BLOCKING_THREADS`]).
    pub fn max_blocking_threads(mut self, threads: usize) -> Self {
        self.max_blocking_threads = threads.max(1);
        self
    }

    /// Run the blocking pool's threads under Linux's `SCHED_BATCH` policy (default: off). A
    /// thread woken with work then waits for the worker that handed it over to block or use
    /// up its time slice, rather than preempting it, so a worker reads all its ready
    /// connections before the pool runs, and pool threads taking turns at a lock (Python's
    /// GIL, for a WSGI app) do not switch back and forth on each turn. Fewer context switches
    /// per request, for latency that varies a little more; docs/PERFORMANCE.md measures both.
    /// The threads keep their priority. Has no effect on other systems; a refusal by the
    /// kernel leaves a thread as it was.
    pub fn batch_blocking_threads(mut self, on: bool) -> Self {
        self.batch_blocking_threads = on;
        self
    }

    /// Fit glibc's allocator to the server (default: off; a library leaves process-wide
    /// settings to the program). On Linux with glibc, malloc arenas are capped at one per four
    /// workers, so blocking-pool threads do not each keep an arena resident, and a worker that
    /// goes quiet asks the allocator to return its free pages (`malloc_trim`). This keeps
    /// memory after a long mixed load close to where it started; docs/DEPLOYMENT.md compares it
    /// with the other choices an operator has. The arena cap is skipped when
    /// `MALLOC_ARENA_MAX` is set in the environment.
    pub fn tune_allocator(mut self, on: bool) -> Self {
        self.tune_allocator = on;
        self
    }

    /// Whether a client may close its sending side and still get its answers (RFC 9112 §9.6;
    /// default: on). Off, the end of a client's stream while a service works on a request
    /// means the client has gone: the service's future is dropped unfinished, as hyper and
    /// uvicorn do by default, so long-running work for a departed client stops (work already
    /// on the blocking pool runs to its end). Body bytes the service has not read yet are not
    /// a close: the end is seen once the body has been read, or at once for a request without
    /// one. A streamed response waiting for its next chunk is dropped the same way.
    pub fn half_close(mut self, on: bool) -> Self {
        self.half_close = on;
        self
    }

    /// Start a graceful shutdown on SIGTERM or SIGINT (default: off for the engine; the
    /// framework turns it on).
    pub fn handle_signals(mut self, on: bool) -> Self {
        self.handle_signals = on;
        self
    }

    /// A handle that shuts this server down gracefully.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.handle.clone()
    }

    /// Live figures of this server once it serves (connections open per worker), for metrics.
    pub fn stats(&self) -> ServerStats {
        self.stats.clone()
    }

    /// Call `ready` with the listening address once the server is serving: its workers are
    /// accepting and, if enabled, SIGTERM and SIGINT already mean a graceful shutdown. A
    /// program that announces its address should do it here, so that whoever waits for the
    /// announcement can rely on both.
    pub fn on_ready(mut self, ready: impl FnOnce(ListenAddr) + Send + 'static) -> Self {
        self.on_ready = Some(Box::new(ready));
        self
    }

    /// Serve until shut down, then return once every worker has finished.
    ///
    /// Everything that can fail (signal handlers, each worker's runtime) is set up before any
    /// worker accepts a connection, so a failure is returned at once and a flood of
    /// connections at start-up cannot starve the set-up of file descriptors. Limits the server
    /// cannot run with (a timeout of zero or over a year, no connection or request allowed)
    /// are refused first, with [`std::io::ErrorKind::InvalidInput`].
    pub fn serve<S: Service>(mut self, service: S) -> std::io::Result<()> {
        self.limits.check()?;
        self.listener.set_nonblocking()?;
        let addr = self.listener.local_addr()?;
        if let (Some(file), Some(mode)) = (&self.socket_file, self.unix_mode) {
            file.set_mode(mode)?;
        }
        let signals = if self.handle_signals {
            let on_hangup = self.on_hangup();
            Some(spawn_signal_listener(self.handle.clone(), on_hangup)?)
        } else {
            None
        };
        if self.tune_allocator {
            allocator::limit_malloc_arenas(self.workers);
        }
        let runtime_settings = runtime::Settings {
            blocking_threads: self.max_blocking_threads.div_ceil(self.workers),
            batch_blocking_threads: self.batch_blocking_threads,
        };
        let mut listeners = Vec::with_capacity(self.workers);
        for _ in 0..self.workers {
            match self.listener.try_clone() {
                Ok(listener) => listeners.push(listener),
                Err(error) => {
                    return Err(stop_before_serving(
                        &self.handle,
                        signals,
                        Vec::new(),
                        error,
                    ))
                }
            }
        }
        drop(self.listener);
        let service = Arc::new(service);
        let (balancer, mailboxes) = balance::Balancer::new(self.workers);
        self.stats.attach(balancer.clone());
        let mut threads = Vec::with_capacity(self.workers);
        let mut starting = Vec::with_capacity(self.workers);
        for (id, (listener, mailbox)) in listeners.into_iter().zip(mailboxes).enumerate() {
            let (start, gate) = runtime::start_gate();
            let balancer = balancer.clone();
            let service = service.clone();
            let limits = self.limits.clone();
            let handle = self.handle.clone();
            let shutdown_timeout = self.shutdown_timeout;
            let tune_allocator = self.tune_allocator;
            let half_close = self.half_close;
            #[cfg(feature = "tls")]
            let tls = self.tls.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("vireo-worker-{id}"))
                .spawn(move || {
                    let Some(runtime) = gate.build_then_wait(runtime_settings) else {
                        return Ok(());
                    };
                    let settings = WorkerSettings {
                        limits,
                        shutdown_timeout,
                        tune_allocator,
                        half_close,
                        #[cfg(feature = "tls")]
                        tls,
                    };
                    run_worker(
                        runtime,
                        listener,
                        (balancer, id, mailbox),
                        service,
                        settings,
                        &handle,
                    )
                });
            match spawned {
                Ok(thread) => {
                    threads.push(thread);
                    starting.push(start);
                }
                Err(error) => {
                    drop(starting);
                    return Err(stop_before_serving(&self.handle, signals, threads, error));
                }
            }
        }
        // No worker accepts until every one has its runtime.
        if let Err(error) = starting.iter().try_for_each(runtime::Start::built) {
            drop(starting);
            return Err(stop_before_serving(&self.handle, signals, threads, error));
        }
        for start in starting {
            start.go();
        }
        if let Some(ready) = self.on_ready.take() {
            ready(addr);
        }
        let mut result = Ok(());
        for thread in threads {
            let outcome = thread
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("a worker thread panicked")));
            if outcome.is_err() {
                // One worker failing stops them all.
                self.handle.shutdown();
                result = result.and(outcome);
            }
        }
        self.handle.shutdown();
        if let Some(signals) = signals {
            let _ = signals.join();
        }
        result
    }

    /// Serve on background threads; for tests and for embedding. The returned value knows the
    /// address and shuts the server down when asked. Limits are checked first, as by
    /// [`Server::serve`].
    pub fn spawn<S: Service>(self, service: S) -> std::io::Result<RunningServer> {
        self.limits.check()?;
        let addr = self.listen_addr()?;
        let handle = self.shutdown_handle();
        let thread = std::thread::Builder::new()
            .name("vireo-server".into())
            .spawn(move || self.serve(service))?;
        Ok(RunningServer {
            addr,
            handle,
            thread: Some(thread),
        })
    }
}

/// A server started with [`Server::spawn`]. Dropping it shuts the server down and waits.
#[derive(Debug)]
pub struct RunningServer {
    addr: ListenAddr,
    handle: ShutdownHandle,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl RunningServer {
    /// The TCP address it listens on.
    ///
    /// # Panics
    /// If it listens on a Unix domain socket; [`RunningServer::listen_addr`] covers both.
    pub fn addr(&self) -> SocketAddr {
        match &self.addr {
            ListenAddr::Tcp(addr) => *addr,
            ListenAddr::Unix(path) => panic!(
                "the server listens on the Unix socket {}, not a TCP address",
                path.display()
            ),
        }
    }

    /// The address it listens on, TCP or Unix.
    pub fn listen_addr(&self) -> &ListenAddr {
        &self.addr
    }

    /// A handle that shuts it down gracefully.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.handle.clone()
    }

    /// Shut down gracefully and wait for the server to finish.
    pub fn shutdown(mut self) -> std::io::Result<()> {
        self.handle.shutdown();
        self.join()
    }

    /// Wait for the server to finish (after a shutdown from elsewhere).
    pub fn join(&mut self) -> std::io::Result<()> {
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the server thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.handle.shutdown();
        let _ = self.join();
    }
}

/// Undo a start that failed before any worker served: workers already started are let go
/// without serving, and the signal listener ends.
fn stop_before_serving(
    handle: &ShutdownHandle,
    signals: Option<JoinHandle<()>>,
    workers: Vec<JoinHandle<std::io::Result<()>>>,
    error: std::io::Error,
) -> std::io::Error {
    handle.shutdown();
    for worker in workers {
        let _ = worker.join();
    }
    if let Some(signals) = signals {
        let _ = signals.join();
    }
    error
}

/// What a worker is told of the server's settings.
struct WorkerSettings {
    limits: Limits,
    shutdown_timeout: Duration,
    tune_allocator: bool,
    half_close: bool,
    #[cfg(feature = "tls")]
    tls: Option<crate::tls::TlsHandle>,
}

fn run_worker<S: Service>(
    runtime: tokio::runtime::LocalRuntime,
    listener: StdListener,
    (balancer, id, mailbox): (Arc<balance::Balancer>, usize, balance::Mailbox),
    service: Arc<S>,
    settings: WorkerSettings,
    stop: &ShutdownHandle,
) -> std::io::Result<()> {
    let WorkerSettings {
        limits,
        shutdown_timeout,
        tune_allocator,
        half_close,
        #[cfg(feature = "tls")]
        tls,
    } = settings;
    crate::pool::mark_worker_thread();
    let result = runtime.block_on(async {
        let listener = listener.into_tokio()?;
        #[allow(unused_mut)]
        let mut worker = Worker::new(service, limits, balancer, id, tune_allocator);
        worker.half_close = half_close;
        #[cfg(feature = "tls")]
        {
            let cap = worker.limits.max_tls_handshakes_per_worker;
            worker.tls = tls.map(|handle| tls_accept::TlsAccept::new(handle, cap));
        }
        let worker = Rc::new(worker);
        let ticker = tokio::task::spawn_local({
            let worker = worker.clone();
            async move { worker.tick().await }
        });
        let handoffs = tokio::task::spawn_local({
            let worker = worker.clone();
            async move { worker.receive_handoffs(mailbox).await }
        });
        worker.accept_loop(listener, stop).await;
        worker.drain(shutdown_timeout).await;
        ticker.abort();
        handoffs.abort();
        Ok(())
    });
    runtime.shutdown_timeout(BLOCKING_SHUTDOWN_GRACE);
    result
}

/// A thread that turns SIGTERM or SIGINT into a graceful shutdown, runs `on_hangup` on each
/// SIGHUP if given, and ends with the server.
fn spawn_signal_listener(
    handle: ShutdownHandle,
    mut on_hangup: Option<OnHangup>,
) -> std::io::Result<JoinHandle<()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut term, mut int, mut hup) = {
        let _guard = runtime.enter();
        let hup = match on_hangup {
            Some(_) => Some(signal(SignalKind::hangup())?),
            None => None,
        };
        (
            signal(SignalKind::terminate())?,
            signal(SignalKind::interrupt())?,
            hup,
        )
    };
    std::thread::Builder::new()
        .name("vireo-signals".into())
        .spawn(move || {
            runtime.block_on(async {
                loop {
                    let hangup = async {
                        match &mut hup {
                            Some(hup) => hup.recv().await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = term.recv() => break tracing::info!("SIGTERM: shutting down gracefully"),
                        _ = int.recv() => break tracing::info!("SIGINT: shutting down gracefully"),
                        Some(()) = hangup => {
                            if let Some(on_hangup) = &mut on_hangup {
                                on_hangup();
                            }
                        }
                        _ = handle.wait() => break,
                    }
                }
            });
            handle.shutdown();
        })
}
