// polka peer: polka's router over node:http; responses are written with plain res.end.
const polka = require('polka');
const port = require('./port');

function text(res, body, status = 200) {
  res.writeHead(status, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

polka()
  // The two app-wide middlewares each store a value on the request.
  .use((req, res, next) => { req.one = true; next(); })
  .use((req, res, next) => { req.two = true; next(); })
  .get('/', (req, res) => text(res, 'Hello, World!'))
  .get('/json', (req, res) => {
    const body = JSON.stringify({ message: 'Hello, World!' });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  })
  .get('/users/:id', (req, res) => {
    if (!(req.one && req.two)) return text(res, 'Internal Server Error', 500);
    text(res, `User: ${req.params.id}`);
  })
  .get('/favicon.ico', (req, res) => { res.writeHead(204); res.end(); })
  .get('/compute', (req, res) => {
    let sum = 0;
    for (let i = 0; i < 1000; i++) sum += i * i;
    text(res, String(sum));
  })
  .get('/async', async (req, res) => {
    const ms = Number(req.query.ms) || 0;
    await new Promise((resolve) => setTimeout(resolve, ms));
    text(res, `waited ${ms}`);
  })
  .listen(port, '127.0.0.1');
