// fixedrate is the harness's stand-in for wrk2, which Debian does not package:
// an open-loop client that sends requests on a fixed schedule (e.g. 1000 req/s)
// over N keep-alive connections and reports latency percentiles as JSON.
//
// Latency is measured from each request's *scheduled* send time, not from when
// a connection happened to be free to send it. A closed-loop tool like wrk waits
// for a response before sending the next request, so when the server stalls it
// simply sends less and the stall never shows up in its percentiles
// ("coordinated omission"). Here a stall delays every request scheduled during
// it, and each of them is charged the wait, as wrk2 does.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"time"
)

type sample struct {
	latency time.Duration // scheduled send time to last response byte
	lag     time.Duration // scheduled send time to actual send (client delay + queueing)
	status  int           // 0 when the request failed
}

// job is one request in flight: when it was due and how late it went out.
type job struct {
	due    time.Time
	lag    time.Duration
	failed bool
}

// conn is one keep-alive connection with at most one request in flight;
// its reader goroutine receives that request's job on `jobs`.
type conn struct {
	net.Conn
	br   *bufio.Reader
	jobs chan job
}

// pool holds idle connections, and requests that came due while every
// connection was busy. One lock covers both lists, so a request is never left
// queued while a connection sits idle.
type pool struct {
	mu      sync.Mutex
	idle    []*conn
	pending []time.Time
}

var (
	request []byte
	host    string
	timeout time.Duration

	samplesMu sync.Mutex
	samples   []sample
)

func main() {
	target := flag.String("url", "http://127.0.0.1:8080/", "URL to GET")
	rate := flag.Float64("rate", 1000, "requests per second")
	conns := flag.Int("conns", 50, "keep-alive connections")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	flag.DurationVar(&timeout, "timeout", 5*time.Second, "per-request timeout")
	flag.Parse()

	u, err := url.Parse(*target)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	host = u.Host
	request = []byte(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.RequestURI(), host))

	// The scheduler parks its own OS thread in nanosleep (Go's timers wake up
	// to ~1 ms late on Linux, which would swamp the latencies being measured;
	// nanosleep is ~0.1 ms), so the response readers get a second P.
	runtime.GOMAXPROCS(2)

	p := &pool{}
	for i := 0; i < *conns; i++ {
		c := &conn{jobs: make(chan job, 1)}
		if err := c.dial(); err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			os.Exit(1)
		}
		p.idle = append(p.idle, c)
		go c.readLoop(p)
	}

	// The schedule: request i is due at start + i/rate. This goroutine sends
	// it itself on an idle connection, or queues it when all are busy.
	runtime.LockOSThread()
	total := int(*rate * duration.Seconds())
	interval := time.Duration(float64(time.Second) / *rate)
	start := time.Now().Add(10 * time.Millisecond)
	for i := 0; i < total; i++ {
		due := start.Add(time.Duration(i) * interval)
		sleepUntil(due)
		p.mu.Lock()
		var c *conn
		if n := len(p.idle); n > 0 {
			c, p.idle = p.idle[n-1], p.idle[:n-1]
		} else {
			p.pending = append(p.pending, due)
		}
		p.mu.Unlock()
		if c != nil {
			c.send(due)
		}
	}

	// Let queued requests finish, but not forever: what is still queued after
	// the timeout is reported as unsent, so a stuck server cannot hang the run.
	var unsent int
	for giveUp := time.Now().Add(timeout); ; time.Sleep(2 * time.Millisecond) {
		p.mu.Lock()
		idle, queued := len(p.idle), len(p.pending)
		if (idle == *conns && queued == 0) || time.Now().After(giveUp) {
			unsent, p.pending = queued, nil
			p.mu.Unlock()
			break
		}
		p.mu.Unlock()
	}
	elapsed := time.Since(start)
	samplesMu.Lock()
	report(samples, unsent, *rate, elapsed)
}

func sleepUntil(t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) != nil { // EINTR: sleep the remainder
	}
}

func (c *conn) dial() error {
	nc, err := net.DialTimeout("tcp", host, timeout)
	if err != nil {
		return err
	}
	c.Conn, c.br = nc, bufio.NewReader(nc)
	return nil
}

// send writes the request due at `due` (redialing first if the server closed
// the connection) and passes the job to the reader. The caller owns c.
func (c *conn) send(due time.Time) {
	j := job{due: due, lag: time.Since(due)}
	if c.Conn == nil && c.dial() != nil {
		j.failed = true
	} else {
		c.SetDeadline(time.Now().Add(timeout))
		_, err := c.Write(request)
		j.failed = err != nil
	}
	c.jobs <- j
}

// readLoop reads each response, records it, then takes the oldest queued
// request or goes back to the idle list.
func (c *conn) readLoop(p *pool) {
	for j := range c.jobs {
		status, keep := 0, false
		if !j.failed {
			status, keep = c.readResponse()
		}
		record(sample{time.Since(j.due), j.lag, status})
		if !keep && c.Conn != nil {
			c.Close()
			c.Conn = nil // send() dials again
		}
		p.mu.Lock()
		if len(p.pending) > 0 {
			due := p.pending[0]
			p.pending = p.pending[1:]
			p.mu.Unlock()
			c.send(due)
			continue
		}
		p.idle = append(p.idle, c)
		p.mu.Unlock()
	}
}

// readResponse reads one whole response. It returns the status (0 on failure)
// and whether the connection can be used again.
func (c *conn) readResponse() (int, bool) {
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, false
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, false
	}
	return resp.StatusCode, !resp.Close // Connection: close means dial again
}

func record(s sample) {
	samplesMu.Lock()
	samples = append(samples, s)
	samplesMu.Unlock()
}

func report(samples []sample, unsent int, rate float64, elapsed time.Duration) {
	var lat, lag []float64 // milliseconds, answered requests only
	errors, non2xx := 0, 0
	for _, s := range samples {
		if s.status == 0 {
			errors++
			continue
		}
		if s.status < 200 || s.status > 299 {
			non2xx++
		}
		lat = append(lat, ms(s.latency))
		lag = append(lag, ms(s.lag))
	}
	sort.Float64s(lat)
	sort.Float64s(lag)
	pct := func(xs []float64, p float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		return xs[min(int(p/100*float64(len(xs))), len(xs)-1)]
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"target_rate":   rate,
		"achieved_rate": float64(len(lat)) / elapsed.Seconds(),
		"requests":      len(lat),
		"errors":        errors,
		"non2xx":        non2xx,
		"unsent":        unsent,
		"latency_ms": map[string]float64{
			"p50": pct(lat, 50), "p90": pct(lat, 90), "p99": pct(lat, 99),
			"p99.9": pct(lat, 99.9), "max": pct(lat, 100),
		},
		// How late requests went out. The latencies above include this: its low
		// percentiles are the client's own resolution, its high ones grow when
		// the server is slow and requests queue for a free connection.
		"send_lag_ms": map[string]float64{"p50": pct(lag, 50), "p99": pct(lag, 99)},
	})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
