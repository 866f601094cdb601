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
--   acquire+success local t = b:acquire(); b:success(t), the cheap two-step
--                   (CLOSED; consecutive, and a count window of 100)
--   lua ...: bench/lua/baseline.lua, the plain-Lua breaker (consecutive,
--                   and its count window: a ring of outcomes)
--   create 1M       reg:new{ failure_threshold = 5 } a million times (CPU
--                   seconds, median of LB_BENCH_CREATE_ROUNDS), beside the
--                   plain-Lua breaker's baseline.new
--
-- Targets (issue 24): Lua 5.4, acquire+success at least 1.5x as fast as
-- the plain-Lua breaker on both policies; LuaJIT, count window
-- acquire+success at most 11 ns; create 1M at most 1.5 s.
local lb = require "lazybreaker"
local baseline = require "baseline"

local N = tonumber(os.getenv("LB_BENCH_N") or "") or 200000
local ROUNDS = tonumber(os.getenv("LB_BENCH_ROUNDS") or "") or 15
local clock = os.clock

local reg = lb.registry { manual_clock = true }
local b = reg:new { name = "bench", failure_threshold = 5 }
local open = reg:new { name = "bench-open", failure_threshold = 1, open_duration = 3600 }
open:allow():failure()
local window = reg:new { name = "bench-window", policy = "count_window", window_size = 100, minimum_calls = 100 }
-- A healthy service's steady state: the window full of successes, so its
-- word is quiet (docs/policies.md, "A clean count window is quiet"). Filled
-- here, outside the timed loops, so that LuaJIT records their traces in
-- that state rather than in the first hundred calls' loud one.
for _ = 1, 200 do window:success(window:acquire()) end
local plain = baseline.new(5, 30)
local plain_window = baseline.new_window(100, 100, 0.5, 30)
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
  { "acquire+success", function(n)
    for _ = 1, n do
      local t = b:acquire()
      b:success(t)
    end
  end },
  { "window acquire+success", function(n)
    for _ = 1, n do
      local t = window:acquire()
      window:success(t)
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
  { "lua window allow+success", function(n)
    for _ = 1, n do
      if plain_window:allow() then plain_window:success() end
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
local plain_of = {
  ["allow+success"] = "lua allow+success", ["acquire+success"] = "lua allow+success",
  ["window acquire+success"] = "lua window allow+success", call = "lua call",
}
for _, case in ipairs(cases) do
  local name = case[1]
  local vs_plain = plain_of[name] and ("%12.2f"):format(med[name] / med[plain_of[name]]) or ("%12s"):format("")
  print(("%-20s %10.1f %10.2f %s"):format(name, med[name], med[name] / med.floor, vs_plain))
end
reg:close()

-- create 1M: CPU seconds for CREATES creates, ours beside the plain-Lua
-- breaker's, each the median of CREATE_ROUNDS.
local CREATES = tonumber(os.getenv("LB_BENCH_CREATES") or "") or 1000000
local CREATE_ROUNDS = tonumber(os.getenv("LB_BENCH_CREATE_ROUNDS") or "") or 3
local function time_creates(make)
  local xs = {}
  for r = 1, CREATE_ROUNDS do
    collectgarbage()
    local t0 = clock()
    make()
    xs[r] = clock() - t0
    collectgarbage()
  end
  return median(xs)
end
local ours_create = time_creates(function()
  local many = lb.registry { capacity = CREATES }
  local keep = {}
  for i = 1, CREATES do keep[i] = many:new { failure_threshold = 5 } end
  many:close()
end)
local plain_create = time_creates(function()
  local keep = {}
  for i = 1, CREATES do keep[i] = baseline.new(5, 30) end
end)

-- The rows of issue 24, each beside the plain-Lua breaker.
local luajit = jit ~= nil
print()
print(("%-32s %12s %12s %10s  %s"):format("row (" .. interpreter .. ")", "ours", "plain Lua", "plain/ours", "target"))
local function row(name, ours, plain_value, unit, target, met)
  print(("%-32s %9.3f %s %9.3f %s %10.2f  %s: %s"):format(name, ours, unit, plain_value, unit, plain_value / ours,
    target, met == nil and "-" or met and "met" or "NOT met"))
end
local cons, win = med["acquire+success"], med["window acquire+success"]
local pc, pw = med["lua allow+success"], med["lua window allow+success"]
row("acquire+success, consecutive", cons, pc, "ns", luajit and "(none on LuaJIT)" or ">= 1.5x",
  (not luajit) and (pc / cons >= 1.5) or nil)
row("acquire+success, count window", win, pw, "ns", luajit and "<= 11 ns" or ">= 1.5x",
  luajit and win <= 11 or pw / win >= 1.5)
row(("create %d"):format(CREATES), ours_create, plain_create, "s ", "<= 1.5 s", CREATES < 1000000 and nil or ours_create <= 1.5)
print(("(fast path: %s)"):format(lb.fastpath))
