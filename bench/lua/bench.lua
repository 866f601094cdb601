-- bench/lua: lazybreaker's Lua module against its floor and a plain-Lua
-- baseline, on the interpreter that runs it (`make bench` runs it on Lua 5.4
-- and on LuaJIT). Each case runs ROUNDS rounds of N calls, interleaved
-- (a burst of noise on a shared machine is spread over every case); the
-- table gives the median ns per call and ratios of medians.
--
--   floor           two empty C calls through the module's method lookup
--                   (b:_noop(); b:_noop()), what allow + success cannot beat
--   allow+success   local p = b:allow(); p:success()   (CLOSED)
--   call            b:call(empty)                       (CLOSED)
--   rejected        b:allow() on an OPEN breaker: nil, "open", retry_after
--   lua allow+success, lua call: bench/lua/baseline.lua
--
-- Target: allow+success within 2x of the floor on Lua 5.4.
local lb = require "lazybreaker"
local baseline = require "baseline"

local N = tonumber(os.getenv("LB_BENCH_N") or "") or 200000
local ROUNDS = tonumber(os.getenv("LB_BENCH_ROUNDS") or "") or 15
local clock = os.clock

local reg = lb.registry { manual_clock = true }
local b = reg:new { name = "bench", failure_threshold = 5 }
local open = reg:new { name = "bench-open", failure_threshold = 1, open_duration = 3600 }
open:allow():failure()
local plain = baseline.new(5, 30)
local function empty() end

local cases = {
  { "floor", function(n)
    for _ = 1, n do
      b:_noop()
      b:_noop()
    end
  end },
  { "allow+success", function(n)
    for _ = 1, n do
      local p = b:allow()
      p:success()
    end
  end },
  { "call", function(n)
    for _ = 1, n do
      b:call(empty)
    end
  end },
  { "rejected", function(n)
    for _ = 1, n do
      open:allow()
    end
  end },
  { "lua allow+success", function(n)
    for _ = 1, n do
      if plain:allow() then plain:success() end
    end
  end },
  { "lua call", function(n)
    for _ = 1, n do
      plain:call(empty)
    end
  end },
}

local function median(xs)
  table.sort(xs)
  local m = #xs
  return m % 2 == 1 and xs[(m + 1) / 2] or (xs[m / 2] + xs[m / 2 + 1]) / 2
end

-- warm-up: the JIT compiles, the allocator and the collector settle
for _, case in ipairs(cases) do case[2](N) end
collectgarbage()

local samples = {}
for _, case in ipairs(cases) do samples[case[1]] = {} end
for _ = 1, ROUNDS do
  for _, case in ipairs(cases) do
    local t0 = clock()
    case[2](N)
    local t1 = clock()
    local s = samples[case[1]]
    s[#s + 1] = (t1 - t0) * 1e9 / N
  end
end

local interpreter = jit and jit.version or _VERSION
local med = {}
for _, case in ipairs(cases) do med[case[1]] = median(samples[case[1]]) end
print(("lazybreaker Lua bench on %s: median ns per call over %d rounds of %d"):format(interpreter, ROUNDS, N))
print(("%-20s %10s %10s %12s"):format("case", "median ns", "x floor", "x plain Lua"))
local plain_of = { ["allow+success"] = "lua allow+success", call = "lua call" }
for _, case in ipairs(cases) do
  local name = case[1]
  local vs_plain = plain_of[name] and ("%12.2f"):format(med[name] / med[plain_of[name]]) or ("%12s"):format("")
  print(("%-20s %10.1f %10.2f %s"):format(name, med[name], med[name] / med.floor, vs_plain))
end
local ratio = med["allow+success"] / med.floor
if _VERSION == "Lua 5.4" and not jit then
  print(("target (Lua 5.4): allow+success within 2x of the floor: %.2fx, %s"):format(ratio,
    ratio <= 2 and "met" or "NOT met"))
end
reg:close()
