//! The plaintext path allocates nothing per request once warm: every allocation in the process
//! is counted while a keep-alive client sends thousands of requests.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use vireo_http::{service_fn, Response, Server};

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

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n";

/// Send `n` requests (in pipelined batches of `depth`) and read their responses, allocating
/// nothing on this side.
fn exchange(stream: &mut std::net::TcpStream, n: usize, depth: usize, response_len: usize) {
    let batch: Vec<u8> = REQUEST.repeat(depth);
    let mut buf = vec![0u8; response_len * depth];
    for _ in 0..n / depth {
        stream.write_all(&batch).unwrap();
        stream.read_exact(&mut buf).unwrap();
    }
}

#[test]
fn plaintext_requests_allocate_nothing_once_warm() {
    let server = Server::bind("127.0.0.1:0")
        .unwrap()
        .workers(1)
        .spawn(service_fn(|_req| Response::text("Hello, World!")))
        .unwrap();
    let mut stream = std::net::TcpStream::connect(server.addr()).unwrap();
    stream.write_all(REQUEST).unwrap();
    let mut first = [0u8; 1024];
    let response_len = stream.read(&mut first).unwrap();
    for depth in [1, 16] {
        exchange(&mut stream, 1_000, depth, response_len);
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        exchange(&mut stream, 10_000, depth, response_len);
        let during = ALLOCATIONS.load(Ordering::Relaxed) - before;
        // A handful of one-off allocations (a timer wheel level, the date re-rendered once a
        // second) are allowed; one per request would be 10,000.
        assert!(
            during < 20,
            "{during} allocations for 10,000 requests pipelined {depth} deep"
        );
    }
    server.shutdown().unwrap();
}
