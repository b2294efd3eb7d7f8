// idleconns opens N keep-alive connections to a server, sends one request on
// each and reads its response, then holds them all idle so the harness can
// measure how much memory the server spends per idle connection.
//
// Protocol on stdio: once every connection is open it prints one JSON line
// {"opened":..,"failed":..,"seconds":..}. Each "check" line on stdin prints
// {"alive":..}, the connections the server has not closed. EOF on stdin ends it.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "server address")
	n := flag.Int("n", 5000, "connections to open")
	path := flag.String("path", "/", "path to request on each connection")
	parallel := flag.Int("parallel", 64, "connections being opened at once")
	flag.Parse()
	request := []byte(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", *path, *addr))

	var opened, failed, alive atomic.Int64
	var conns sync.Map // keeps every open connection referenced until exit
	sem := make(chan struct{}, *parallel)
	var wg sync.WaitGroup
	began := time.Now()
	for i := 0; i < *n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			conn, err := open(*addr, request, i)
			<-sem
			if err != nil {
				failed.Add(1)
				return
			}
			opened.Add(1)
			alive.Add(1)
			conns.Store(i, conn)
			// Park on a read: it returns only when the server closes the
			// connection, which is how "alive" stays current. Blocked reads sit
			// in Go's netpoller, so this costs no thread per connection.
			go func() {
				var b [1]byte
				conn.Read(b[:])
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
	conns.Range(func(_, c any) bool {
		c.(net.Conn).Close()
		return true
	})
}

// open dials, sends one request and reads the full response, leaving the
// connection idle and reusable.
//
// Connection i comes from source address 127.0.0.(2 + i%8). From a single
// source address, connect() slows down sharply as the ephemeral port range
// fills up (it searches the range for a free port): 20,000 connections took
// 5-6 s, long enough for servers with a 5 s idle timeout (Node, uvicorn) to
// close the first ones before the memory is read. Spread out, it takes ~2 s.
func open(addr string, request []byte, i int) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second,
		LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%8))}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err = conn.Write(request); err == nil {
		var resp *http.Response
		if resp, err = http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.Close {
				err = fmt.Errorf("server closed the connection (no keep-alive)")
			}
		}
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	conn.SetDeadline(time.Time{})
	// Close with a reset rather than a FIN, so 20,000 closed connections do not
	// sit in TIME_WAIT holding the client's ephemeral ports for the next peer.
	conn.(*net.TCPConn).SetLinger(0)
	return conn, nil
}
