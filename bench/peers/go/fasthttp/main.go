// fasthttp peer: valyala/fasthttp with a hand-written switch for routing
// (fasthttp has no router of its own). Run with GOMAXPROCS=1.
package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// Each middleware stores a value on the request context, fasthttp's user values.
func first(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetUserValue("one", true)
		next(ctx)
	}
}

func second(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetUserValue("two", true)
		next(ctx)
	}
}

func text(ctx *fasthttp.RequestCtx, body string) {
	ctx.SetContentType("text/plain")
	ctx.SetBodyString(body)
}

func route(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		ctx.SetStatusCode(fasthttp.StatusMethodNotAllowed)
		return
	}
	path := string(ctx.Path())
	switch path {
	case "/":
		text(ctx, "Hello, World!")
	case "/json":
		ctx.SetContentType("application/json")
		body, _ := json.Marshal(struct {
			Message string `json:"message"`
		}{"Hello, World!"})
		ctx.SetBody(body)
	case "/favicon.ico":
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	case "/compute":
		sum := 0
		for i := 0; i < 1000; i++ {
			sum += i * i
		}
		text(ctx, strconv.Itoa(sum))
	case "/async":
		ms, _ := strconv.Atoi(string(ctx.QueryArgs().Peek("ms")))
		// fasthttp serves each connection on its own goroutine; this parks it on a timer.
		time.Sleep(time.Duration(ms) * time.Millisecond)
		text(ctx, "waited "+strconv.Itoa(ms))
	default:
		id, ok := strings.CutPrefix(path, "/users/")
		if !ok || id == "" || strings.Contains(id, "/") {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			return
		}
		one, _ := ctx.UserValue("one").(bool)
		two, _ := ctx.UserValue("two").(bool)
		if !one || !two {
			ctx.SetStatusCode(fasthttp.StatusInternalServerError)
			return
		}
		text(ctx, "User: "+id)
	}
}

func main() {
	port := "8080"
	if len(os.Args) > 1 {
		port = os.Args[1]
	} else if p := os.Getenv("PORT"); p != "" {
		port = p
	}
	if err := fasthttp.ListenAndServe("127.0.0.1:"+port, second(first(route))); err != nil {
		panic(err)
	}
}
