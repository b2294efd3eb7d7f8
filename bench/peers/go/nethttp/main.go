// net/http peer: the standard library server and ServeMux (Go 1.22 patterns).
// The runner starts it with GOMAXPROCS=1 so it uses one core, like every peer.
//
//	nethttp PORT                      HTTP/1.1
//	nethttp PORT --h2c                HTTP/1.1 and HTTP/2 with prior knowledge (http.Protocols)
//	nethttp PORT --tls CERT.pem KEY.pem   HTTPS, HTTP/2 or HTTP/1.1 by ALPN
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
)

type ctxKey int

const (
	keyOne ctxKey = iota
	keyTwo
)

// Each middleware stores a value on the request (its context), the Go idiom.
func first(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyOne, true)))
	})
}

func second(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyTwo, true)))
	})
}

func text(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte(body))
}

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		text(w, "Hello, World!")
	})
	mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		body, _ := json.Marshal(struct {
			Message string `json:"message"`
		}{"Hello, World!"})
		w.Write(body)
	})
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		one, _ := r.Context().Value(keyOne).(bool)
		two, _ := r.Context().Value(keyTwo).(bool)
		if !one || !two {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		text(w, "User: "+r.PathValue("id"))
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /compute", func(w http.ResponseWriter, r *http.Request) {
		sum := 0
		for i := 0; i < 1000; i++ {
			sum += i * i
		}
		text(w, strconv.Itoa(sum))
	})
	mux.HandleFunc("GET /async", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		// Parks this goroutine on the runtime's timer; the thread serves others meanwhile.
		time.Sleep(time.Duration(ms) * time.Millisecond)
		text(w, "waited "+strconv.Itoa(ms))
	})

	port := "8080"
	if len(os.Args) > 1 {
		port = os.Args[1]
	} else if p := os.Getenv("PORT"); p != "" {
		port = p
	}
	// The middlewares wrap the whole mux, so they are app-wide like Express's app.use.
	server := &http.Server{Addr: "127.0.0.1:" + port, Handler: second(first(mux))}
	var err error
	switch {
	case len(os.Args) == 3 && os.Args[2] == "--h2c":
		server.Protocols = new(http.Protocols)
		server.Protocols.SetHTTP1(true)
		server.Protocols.SetUnencryptedHTTP2(true)
		err = server.ListenAndServe()
	case len(os.Args) == 5 && os.Args[2] == "--tls":
		err = server.ListenAndServeTLS(os.Args[3], os.Args[4])
	case len(os.Args) <= 2:
		err = server.ListenAndServe()
	default:
		err = fmt.Errorf("usage: nethttp PORT [--h2c | --tls CERT KEY]")
	}
	panic(err)
}
