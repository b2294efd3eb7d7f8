// node:http peer: the bare core server with a hand-written router. The two
// "middlewares" are plain functions run before routing, each setting a field.
const http = require('node:http');
const port = require('./port');

const first = (req) => { req.one = true; };
const second = (req) => { req.two = true; };

function text(res, body) {
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  first(req);
  second(req);
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  if (path === '/') return text(res, 'Hello, World!');
  if (path === '/json') {
    const body = JSON.stringify({ message: 'Hello, World!' });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    return res.end(body);
  }
  if (path === '/favicon.ico') {
    res.writeHead(204);
    return res.end();
  }
  if (path === '/compute') {
    let sum = 0;
    for (let i = 0; i < 1000; i++) sum += i * i;
    return text(res, String(sum));
  }
  if (path === '/async') {
    const ms = Number(new URLSearchParams(req.url.slice(q + 1)).get('ms')) || 0;
    return setTimeout(() => text(res, `waited ${ms}`), ms);
  }
  if (path.startsWith('/users/')) {
    const id = path.slice('/users/'.length);
    if (id && !id.includes('/')) {
      if (!(req.one && req.two)) { res.writeHead(500); return res.end(); }
      return text(res, `User: ${id}`);
    }
  }
  res.writeHead(404, { 'Content-Type': 'text/plain' });
  res.end('Not Found');
});

server.listen(port, '127.0.0.1');
