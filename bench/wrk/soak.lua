-- A bounded mixed load: requests cycle through the given paths, and after LIMIT responses the
-- thread stops and prints "SOAK_DONE" (wrk itself sleeps out -d; the runner sends it SIGINT on
-- that line, which ends the run and prints report.lua's summary).
-- Usage: wrk -t1 ... -s soak.lua URL -- LIMIT PATH [PATH ...]

local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")

local limit, seen, requests, i = 0, 0, {}, 0

function init(args)
  limit = tonumber(args[1])
  for k = 2, #args do
    requests[#requests + 1] = wrk.format(nil, args[k])
  end
end

function request()
  i = i % #requests + 1
  return requests[i]
end

function response(status, headers, body)
  seen = seen + 1
  if seen == limit then
    io.write("\nSOAK_DONE\n")
    io.stdout:flush()
    wrk.thread:stop()
  end
end
