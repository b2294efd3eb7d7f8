/*
 * The kernel-cost floor: a single-threaded, level-triggered epoll loop that
 * answers every "\r\n\r\n" it reads with the same canned 200 response. No
 * parsing, no allocation, no Date header: whatever a real server costs above
 * this is the price of being an HTTP server rather than a socket echo.
 *
 * Counting terminators (not requests) is what makes pipelining work: 16
 * requests in one read owe 16 responses, written with one write() call.
 *
 * Build: gcc -O2 -o floor floor.c      Run: ./floor PORT   (or PORT=... ./floor)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* "Connection: keep-alive" is for ab, which speaks HTTP/1.0: without it ab
 * waits for the server to close the connection after every response. */
static const char RESPONSE[] =
    "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n"
    "Connection: keep-alive\r\n\r\nHello, World!";
#define RLEN (sizeof(RESPONSE) - 1)
#define BATCH 64            /* responses per write() */
#define MAXFD (1 << 17)     /* fds above this are refused */

/* Per-connection state, indexed by fd. It lives in BSS, so a page only costs
 * memory once a connection with an fd on it exists. */
static struct conn {
    uint32_t owed;   /* responses not yet fully written */
    uint16_t off;    /* bytes of the first owed response already written */
    uint8_t match;   /* how much of "\r\n\r\n" the last bytes matched */
} conns[MAXFD];

static char block[BATCH * RLEN]; /* BATCH copies of RESPONSE back to back */
static char inbuf[64 * 1024];
static int ep;

static void watch(int fd, uint32_t events, int op) {
    struct epoll_event ev = {.events = events, .data.fd = fd};
    epoll_ctl(ep, op, fd, &ev);
}

static void drop(int fd) {
    memset(&conns[fd], 0, sizeof conns[fd]);
    close(fd); /* also removes fd from the epoll set */
}

/* Write what is owed. Returns 0 when done, 1 when the socket is full, -1 on error. */
static int flush(int fd) {
    struct conn *c = &conns[fd];
    while (c->owed > 0) {
        size_t n = (c->owed < BATCH ? c->owed : BATCH) * RLEN - c->off;
        ssize_t w = write(fd, block + c->off, n);
        if (w < 0)
            return errno == EAGAIN ? 1 : -1;
        size_t done = c->off + (size_t)w;
        c->owed -= done / RLEN;
        c->off = done % RLEN;
    }
    return 0;
}

static void on_readable(int fd) {
    struct conn *c = &conns[fd];
    ssize_t n = read(fd, inbuf, sizeof inbuf);
    if (n == 0 || (n < 0 && errno != EAGAIN)) {
        drop(fd);
        return;
    }
    /* A tiny matcher for "\r\n\r\n" that survives terminators split across reads. */
    static const char end[4] = {'\r', '\n', '\r', '\n'};
    for (ssize_t i = 0; i < n; i++) {
        char ch = inbuf[i];
        if (ch == end[c->match]) {
            if (++c->match == 4) {
                c->owed++;
                c->match = 0;
            }
        } else {
            c->match = ch == '\r';
        }
    }
    int r = flush(fd);
    if (r < 0)
        drop(fd);
    else if (r > 0) /* the client is not reading: stop reading it until it drains */
        watch(fd, EPOLLOUT, EPOLL_CTL_MOD);
}

static void on_writable(int fd) {
    int r = flush(fd);
    if (r < 0)
        drop(fd);
    else if (r == 0)
        watch(fd, EPOLLIN, EPOLL_CTL_MOD);
}

static void accept_all(int lfd) {
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or EMFILE: try again on the next wake-up */
        if (fd >= MAXFD) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        watch(fd, EPOLLIN, EPOLL_CTL_ADD);
    }
}

int main(int argc, char **argv) {
    const char *port = argc > 1 ? argv[1] : getenv("PORT");
    if (!port)
        port = "8080";
    for (int i = 0; i < BATCH; i++)
        memcpy(block + i * RLEN, RESPONSE, RLEN);

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(lfd, 4096) < 0) {
        perror("bind/listen");
        return 1;
    }
    ep = epoll_create1(EPOLL_CLOEXEC);
    watch(lfd, EPOLLIN, EPOLL_CTL_ADD);

    struct epoll_event events[256];
    for (;;) {
        int n = epoll_wait(ep, events, 256, -1);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == lfd)
                accept_all(lfd);
            else if (events[i].events & EPOLLOUT)
                on_writable(fd);
            else
                on_readable(fd); /* EPOLLIN, EPOLLHUP or EPOLLERR: read() tells which */
        }
    }
}
