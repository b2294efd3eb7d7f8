module vireo.bench/peers

go 1.25.0

// v1.74.0 is pinned: later fasthttp releases need a module the Go proxy refuses.
require (
	github.com/gorilla/websocket v1.5.3
	github.com/valyala/fasthttp v1.74.0
)

require (
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/molecule-man/go-brrr v1.0.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
)
