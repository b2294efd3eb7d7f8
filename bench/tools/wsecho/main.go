// wsecho loads a WebSocket echo server: N connections, each sending one binary
// message of a fixed size and waiting for its echo, in a loop, for a fixed time.
// It prints one JSON line: messages echoed, seconds, errors and round-trip
// latency percentiles.
//
// With -idle it instead opens N WebSocket connections and holds them idle, with
// idleconns's protocol on stdio: one JSON line {"opened":..,"failed":..,"seconds":..}
// once they are open, {"alive":..} for each "check" line on stdin, and EOF ends it.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

func main() {
	url := flag.String("url", "ws://127.0.0.1:8080/ws", "WebSocket URL")
	conns := flag.Int("conns", 100, "connections")
	size := flag.Int("size", 32, "bytes per message")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	idle := flag.Int("idle", 0, "open this many connections and hold them idle instead")
	flag.Parse()
	if *idle > 0 {
		holdIdle(*url, *idle)
		return
	}
	echo(*url, *conns, *size, *duration)
}

// dialer spreads connections over source addresses 127.0.0.2-9, as idleconns does, so
// thousands of connections do not crowd one address's ephemeral ports.
func dialer(i int) *websocket.Dialer {
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%8))}
	return &websocket.Dialer{
		NetDial: func(network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: local}
			return d.Dial(network, addr)
		},
		HandshakeTimeout: 10 * time.Second,
	}
}

func echo(url string, conns, size int, duration time.Duration) {
	payload := bytes.Repeat([]byte{'x'}, size)
	var messages, errors atomic.Int64
	var mu sync.Mutex
	var latencies []time.Duration
	var wg sync.WaitGroup
	// Every connection is open before the clock starts, so the handshakes are not measured.
	sockets := make([]*websocket.Conn, 0, conns)
	for i := 0; i < conns; i++ {
		c, _, err := dialer(i).Dial(url, nil)
		if err != nil {
			fmt.Fprintf(os.Stderr, "dial %s: %v\n", url, err)
			os.Exit(1)
		}
		sockets = append(sockets, c)
	}
	began := time.Now()
	deadline := began.Add(duration)
	for _, c := range sockets {
		wg.Add(1)
		go func(c *websocket.Conn) {
			defer wg.Done()
			own := make([]time.Duration, 0, 4096)
			for time.Now().Before(deadline) {
				sent := time.Now()
				c.SetReadDeadline(sent.Add(10 * time.Second))
				if err := c.WriteMessage(websocket.BinaryMessage, payload); err != nil {
					errors.Add(1)
					break
				}
				_, got, err := c.ReadMessage()
				if err != nil || len(got) != size {
					errors.Add(1)
					break
				}
				own = append(own, time.Since(sent))
				messages.Add(1)
			}
			mu.Lock()
			latencies = append(latencies, own...)
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	seconds := time.Since(began).Seconds()
	for _, c := range sockets {
		c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""),
			time.Now().Add(time.Second))
		c.Close()
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(p float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds())
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"messages": messages.Load(), "seconds": seconds, "errors": errors.Load(),
		"latency_us": map[string]float64{"p50": pct(0.50), "p99": pct(0.99)},
	})
}

func holdIdle(url string, n int) {
	var opened, failed, alive atomic.Int64
	var sockets sync.Map // keeps every open connection referenced until exit
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	began := time.Now()
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, _, err := dialer(i).Dial(url, http.Header{})
			<-sem
			if err != nil {
				failed.Add(1)
				return
			}
			opened.Add(1)
			alive.Add(1)
			sockets.Store(i, c)
			// A read returns only when the server closes the connection (or sends
			// something), which keeps "alive" current.
			go func() {
				c.NextReader()
				alive.Add(-1)
			}()
		}(i)
	}
	wg.Wait()
	out := json.NewEncoder(os.Stdout)
	out.Encode(map[string]any{"opened": opened.Load(), "failed": failed.Load(),
		"seconds": time.Since(began).Seconds()})
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "check" {
			out.Encode(map[string]any{"alive": alive.Load()})
		}
	}
	sockets.Range(func(_, c any) bool {
		c.(*websocket.Conn).UnderlyingConn().(*net.TCPConn).SetLinger(0)
		c.(*websocket.Conn).Close()
		return true
	})
}
