// WebSocket peer: gorilla/websocket on net/http, echoing every text and binary
// message on any path. The runner starts it with GOMAXPROCS=1, like every peer.
package main

import (
	"net/http"
	"os"

	"github.com/gorilla/websocket"
)

// The buffer sizes are gorilla's defaults, said out loud; any origin is accepted
// (the load comes from a client, not a browser).
var upgrader = websocket.Upgrader{
	ReadBufferSize:  4096,
	WriteBufferSize: 4096,
	CheckOrigin:     func(*http.Request) bool { return true },
}

func echo(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	for {
		kind, message, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(kind, message); err != nil {
			return
		}
	}
}

func main() {
	port := "8080"
	if len(os.Args) > 1 {
		port = os.Args[1]
	} else if p := os.Getenv("PORT"); p != "" {
		port = p
	}
	if err := http.ListenAndServe("127.0.0.1:"+port, http.HandlerFunc(echo)); err != nil {
		panic(err)
	}
}
