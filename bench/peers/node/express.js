// Express peer, with Express's defaults (ETag, X-Powered-By) left on, as a user gets them.
const express = require('express');
const port = require('./port');

const app = express();

// The two app-wide middlewares each store a value on the request.
app.use((req, res, next) => { req.one = true; next(); });
app.use((req, res, next) => { req.two = true; next(); });

app.get('/', (req, res) => res.type('text/plain').send('Hello, World!'));
app.get('/json', (req, res) => res.json({ message: 'Hello, World!' }));
app.get('/users/:id', (req, res) => {
  if (!(req.one && req.two)) return res.sendStatus(500);
  res.type('text/plain').send(`User: ${req.params.id}`);
});
app.get('/favicon.ico', (req, res) => res.status(204).end());
app.get('/compute', (req, res) => {
  let sum = 0;
  for (let i = 0; i < 1000; i++) sum += i * i;
  res.type('text/plain').send(String(sum));
});
app.get('/async', async (req, res) => {
  const ms = Number(req.query.ms) || 0;
  await new Promise((resolve) => setTimeout(resolve, ms));
  res.type('text/plain').send(`waited ${ms}`);
});

app.listen(port, '127.0.0.1');
