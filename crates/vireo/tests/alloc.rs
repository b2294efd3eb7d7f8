//! What a request through `App` allocates once the worker is warm: every allocation in the
//! process is counted while a keep-alive client sends thousands of requests.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use vireo::{serve_ephemeral, App, Next, Request};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to the system allocator unchanged; counting has no effect on
// the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout, as the caller guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract, which we pass on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Set by the first middleware.
struct First(&'static str);

/// Set by the second middleware.
struct Second(u32);

/// Set by the third middleware of `/owned`: a value with something to drop.
struct Owner(String);

/// The reference app's shape: `GET /` straight to a sync handler, and routes behind two
/// app-wide middlewares that each set a value the handler reads.
fn app() -> App {
    let mut app = App::new();
    app.r#use(|mut req: Request, next: Next| {
        req.set(First("first"));
        next.run(req)
    });
    app.r#use(|mut req: Request, next: Next| {
        req.set(Second(2));
        next.run(req)
    });
    app.get("/", |_req| "Hello, World!");
    // As the reference app's `/users/:id`, whose `format!` allocates the body.
    app.get("/users/:id", |req: Request| {
        let (Some(First(first)), Some(Second(second))) = (req.get::<First>(), req.get::<Second>())
        else {
            return String::from("middleware did not run");
        };
        assert_eq!((*first, *second), ("first", 2));
        format!("User: {}", req.param("id").unwrap_or_default())
    });
    // The same without the body's allocation, so what is left is the framework's.
    app.get("/marks/:id", |req: Request| {
        let marks = (req.get::<First>(), req.get::<Second>());
        assert!(matches!(marks, (Some(First("first")), Some(Second(2)))));
        assert_eq!(req.param("id").as_deref(), Some("7"));
        "marked"
    });
    // A value that owns memory, set by a route's own middleware: the value itself allocates,
    // its place on the request does not.
    app.get("/owned", |req: Request| {
        assert_eq!(req.get::<Owner>().map(|o| o.0.as_str()), Some("ann"));
        "owned"
    })
    .with(|mut req: Request, next: Next| {
        req.set(Owner(String::from("ann")));
        next.run(req)
    });
    app
}

/// Send `request` `n` times (in pipelined batches of `depth`) and read the responses, each
/// `response_len` bytes, allocating nothing on this side.
fn exchange(stream: &mut TcpStream, request: &[u8], n: usize, depth: usize, response_len: usize) {
    let batch: Vec<u8> = request.repeat(depth);
    let mut buf = vec![0u8; response_len * depth];
    for _ in 0..n / depth {
        stream.write_all(&batch).unwrap();
        stream.read_exact(&mut buf).unwrap();
    }
}

/// Allocations in the whole process per 10,000 requests for `target`, once warm, at each depth.
fn allocations(stream: &mut TcpStream, target: &str) -> Vec<(usize, usize)> {
    let request = format!("GET {target} HTTP/1.1\r\nHost: t\r\n\r\n").into_bytes();
    stream.write_all(&request).unwrap();
    let mut first = [0u8; 1024];
    let response_len = stream.read(&mut first).unwrap();
    let response = std::str::from_utf8(&first[..response_len]).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 "), "{response}");
    [1, 16]
        .into_iter()
        .map(|depth| {
            exchange(stream, &request, 1_000, depth, response_len);
            let before = ALLOCATIONS.load(Ordering::Relaxed);
            exchange(stream, &request, 10_000, depth, response_len);
            (depth, ALLOCATIONS.load(Ordering::Relaxed) - before)
        })
        .collect()
}

#[test]
fn requests_through_the_app_allocate_only_what_handlers_do() {
    let server = serve_ephemeral(app()).unwrap();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    // A handful of one-off allocations (a timer wheel level, the date re-rendered once a
    // second) are allowed; one per request would be 10,000.
    for (target, per_request) in [("/", 0), ("/marks/7", 0), ("/users/7", 2), ("/owned", 1)] {
        for (depth, during) in allocations(&mut stream, target) {
            assert!(
                during < 10_000 * per_request + 20,
                "{during} allocations for 10,000 requests for {target} pipelined {depth} deep"
            );
        }
    }
    server.shutdown().unwrap();
}
