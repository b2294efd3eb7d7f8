// WebSocket peer: the `ws` package on node:http, echoing every text and binary
// message on any path.
const http = require('node:http');
const { WebSocketServer } = require('ws');
const port = require('./port');

const server = http.createServer((req, res) => {
  res.writeHead(426, { 'Content-Type': 'text/plain' });
  res.end('WebSocket only');
});
const wss = new WebSocketServer({ server });
wss.on('connection', (socket) => {
  socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
});
server.listen(port, '127.0.0.1');
