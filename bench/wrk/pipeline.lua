-- TechEmpower-style pipelining: every write carries DEPTH requests back to
-- back (default 16), and wrk waits for all DEPTH responses before the next.
-- Usage: wrk ... -s pipeline.lua URL -- DEPTH

-- Reuse report.lua's done(), found next to this file.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")

local batch

function init(args)
  local depth = tonumber(args[1]) or 16
  local requests = {}
  for i = 1, depth do
    requests[i] = wrk.format()
  end
  batch = table.concat(requests)
end

function request()
  return batch
end
