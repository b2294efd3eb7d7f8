-- Loaded by wrk with -s. When the run ends, print one line the runner parses:
-- "WRK_JSON {...}" with the request count, socket errors, and latency
-- percentiles in microseconds.
--
-- Non-2xx: wrk counts responses with status >= 400 in errors.status. Counting
-- 1xx/3xx too would need a Lua response() hook, which runs for every response
-- and would lower the load one wrk thread can generate; the runner instead
-- checks each route's exact status and body once before loading it.

local function percentiles(latency)
  local parts = {}
  for _, p in ipairs({ 50, 75, 90, 99, 99.9 }) do
    parts[#parts + 1] = string.format('"p%s": %d', tostring(p), latency:percentile(p))
  end
  return table.concat(parts, ", ")
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\nWRK_JSON {"requests": %d, "duration_us": %d, "bytes": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"latency_us": {"min": %d, "max": %d, "mean": %.1f, "stdev": %.1f, %s}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.max, latency.mean, latency.stdev, percentiles(latency)))
end
