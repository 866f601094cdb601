-- The Lua runner of tests/conformance/*.scn (format: tests/conformance/
-- README.md), through the module `lazybreaker` as a Lua user calls it.
--
--   lua5.4 conformance.lua [--clock-offset N] [--expect malformed|mismatch] FILE...
--
-- Exit status 0 (pass), 1 (mismatch), 2 (malformed or unreadable); with
-- --expect, 0 when every file fails that way, else 1. Numbers stay decimal
-- strings from file to library (the module takes a string of digits for any
-- 64-bit value), so they are exact on LuaJIT too, whose numbers hold 53 bits.
local lb = require "lazybreaker"

local UINT64_MAX = "18446744073709551615"

local number_keys = {
  failure_threshold = true, half_open_max_calls = true, half_open_success_threshold = true,
  open_duration_ns = true, half_open_timeout_ns = true, window_size = true, window_buckets = true,
  minimum_calls = true, window_duration_ns = true, slow_call_ns = true, open_duration_max_ns = true,
}
local decimal_keys = {
  failure_rate_threshold = true, slow_call_rate_threshold = true, open_backoff_multiplier = true, open_jitter = true,
}
local policies = { consecutive = true, count_window = true, time_window = true }
local states = { closed = true, open = true, half_open = true, forced_open = true, disabled = true }
local outcomes = { success = true, failure = true, ignored = true }
local stat_numbers = {
  admitted = true, rejected = true, successes = true, failures = true, ignored = true, trips = true,
  consecutive_failures = true, slow = true, state_ns = true,
}
local stat_decimals = { failure_rate = true, slow_rate = true }

local function is_number(s) return s:match("^%d+$") ~= nil end
local function is_decimal(s) return s:match("^%d+$") ~= nil or s:match("^%d+%.%d+$") ~= nil end
local function is_name(s) return s:match("^[A-Za-z_][A-Za-z0-9_]*$") ~= nil end
-- A number as the library prints it: no leading zeros.
local function canonical(s) return s:gsub("^0+(%d)", "%1") end
-- Fits 64 bits: at most 20 digits, and not above UINT64_MAX.
local function fits_u64(s)
  s = canonical(s)
  return #s < 20 or (#s == 20 and s <= UINT64_MAX)
end

-- ---- parsing: the whole file first; any fault makes it malformed ----------------
local Malformed = {}

local function parse(path)
  local f, err = io.open(path, "r")
  if not f then return nil, err end
  local scenarios, names = {}, {}
  local current
  local lineno = 0
  local function bad(msg) error(setmetatable({ msg = ("%s:%d: malformed: %s"):format(path, lineno, msg) }, Malformed), 0) end
  local function key_values(tokens, allowed)
    local seen, pairs_ = {}, {}
    if #tokens < 2 then bad("no KEY=VALUE after " .. tokens[1]) end
    for i = 2, #tokens do
      local key, value = tokens[i]:match("^([^=]+)=(.*)$")
      if not key or value == "" then bad("expected KEY=VALUE, got " .. tokens[i]) end
      if seen[key] then bad("key given twice: " .. key) end
      seen[key] = true
      local kind = allowed(key, value)
      if not kind then bad("unknown key or bad value: " .. tokens[i]) end
      pairs_[#pairs_ + 1] = { key = key, value = value, kind = kind }
    end
    return pairs_
  end
  for line in f:lines() do
    lineno = lineno + 1
    line = line:gsub("#.*$", "")
    local tokens = {}
    for token in line:gmatch("[^ \t\r]+") do tokens[#tokens + 1] = token end
    local word = tokens[1]
    if word then
      local step = { line = lineno, op = word }
      local n = #tokens
      if word == "scenario" then
        if n ~= 2 or not is_name(tokens[2]) then bad("expected: scenario NAME") end
        if names[tokens[2]] then bad("duplicate scenario " .. tokens[2]) end
        names[tokens[2]] = true
        current = { name = tokens[2], line = lineno, steps = {}, bound = {} }
        scenarios[#scenarios + 1] = current
        step = nil
      elseif not current then
        bad("a step before the first scenario")
      elseif word == "config" then
        if #current.steps > 0 or current.config then bad("config must be the first step, once") end
        current.config = key_values(tokens, function(key, value)
          if number_keys[key] then return is_number(value) and fits_u64(value) and "number" end
          if decimal_keys[key] then return is_decimal(value) and "decimal" end
          if key == "policy" then return policies[value] and "policy" end
        end)
        current.config_line = lineno
        step = nil
        current.has_steps = true
      elseif word == "allow" then
        if n == 3 and tokens[2] == "->" and tokens[3] == "rejected" then
          step.expect = "rejected"
        elseif n == 4 and tokens[2] == "->" and tokens[3] == "ok" and is_name(tokens[4]) then
          if current.bound[tokens[4]] then bad("ticket bound twice: " .. tokens[4]) end
          current.bound[tokens[4]] = true
          step.expect, step.ticket = "ok", tokens[4]
        else
          bad("expected: allow -> ok T | allow -> rejected")
        end
      elseif word == "done" then
        if n ~= 3 or not is_name(tokens[2]) or not outcomes[tokens[3]] then bad("expected: done T OUTCOME") end
        if not current.bound[tokens[2]] then bad("ticket used before allow bound it: " .. tokens[2]) end
        step.ticket, step.outcome = tokens[2], tokens[3]
      elseif word == "advance" or word == "trip" then
        if n ~= 2 or not is_number(tokens[2]) or not fits_u64(tokens[2]) then bad("expected: " .. word .. " N") end
        step.value = canonical(tokens[2])
      elseif word == "state" then
        if n ~= 2 or not states[tokens[2]] then bad("expected: state S") end
        step.value = tokens[2]
      elseif word == "retry_after" then
        if n ~= 2 or not (tokens[2] == "max" or (is_number(tokens[2]) and fits_u64(tokens[2]))) then
          bad("expected: retry_after N | retry_after max")
        end
        step.value = tokens[2] == "max" and UINT64_MAX or canonical(tokens[2])
      elseif word == "force_open" or word == "disable" or word == "reset" then
        if n ~= 1 then bad("extra token after " .. word) end
      elseif word == "stats" then
        step.values = key_values(tokens, function(key, value)
          if stat_numbers[key] then return is_number(value) and fits_u64(value) and "number" end
          if stat_decimals[key] then return is_decimal(value) and "decimal" end
        end)
      else
        bad("unknown step " .. word)
      end
      if step then
        current.steps[#current.steps + 1] = step
        current.has_steps = true
      end
    end
  end
  f:close()
  if #scenarios == 0 then lineno = 0; bad("no scenario") end
  for _, s in ipairs(scenarios) do
    if not s.has_steps then lineno = s.line; bad("scenario without steps: " .. s.name) end
  end
  return scenarios
end

-- Exact unsigned 64-bit arithmetic for the clock-offset check: Lua 5.4's
-- integers, or LuaJIT's uint64_t cdata (its numbers hold 53 bits).
local u64, u64_mod, u64_div
if jit then
  local ffi = require "ffi"
  u64 = function(s)
    local v = ffi.new("uint64_t", 0)
    for digit in s:gmatch("%d") do v = v * 10 + tonumber(digit) end
    return v
  end
  u64_mod = function(a, b) return tonumber(a % b) end
  u64_div = function(a, b) return a / b end -- cdata: integer division
else
  u64 = function(s) return math.tointeger(tonumber(s)) end
  u64_mod = function(a, b) return a % b end
  u64_div = load("return function(a, b) return a // b end")() -- LuaJIT cannot parse //
end

-- A late clock moves no time-window bucket boundary only when the bucket
-- width (window_duration_ns / window_buckets, rounded down) divides the
-- offset (README, "Clock offset"); a scenario where it does not is a
-- mismatch, as in the C++ runner. nil when the scenario is fine.
local function offset_problem(s, clock_offset)
  local settings = {}
  for _, kv in ipairs(s.config or {}) do settings[kv.key] = kv.value end
  if settings.policy ~= "time_window" then return nil end
  local duration = u64(settings.window_duration_ns or "60000000000")
  local buckets = u64(settings.window_buckets or "10")
  if tonumber(buckets) == 0 then return nil end -- cb_create refuses it: a mismatch of its own
  local width = u64_div(duration, buckets)
  if tonumber(width) == 0 or u64_mod(u64(clock_offset), width) ~= 0 then
    return ("a bucket width of %s ns does not divide the clock offset %s"):format(tostring(width):gsub("ULL$", ""),
                                                                              clock_offset)
  end
end

-- ---- running: one fresh manual-clock registry and breaker per scenario ------------
local function run_scenario(path, s, clock_offset)
  local reg = lb.registry { manual_clock = true }
  local permits = {}
  local function mismatch(line, expected, actual)
    return ("%s:%d: mismatch in %s: expected %s, got %s"):format(path, line, s.name, expected, tostring(actual))
  end
  local ok, result = pcall(function()
    if clock_offset then
      local problem = offset_problem(s, clock_offset)
      if problem then return mismatch(s.config_line or s.line, "a scenario the clock offset fits", problem) end
      reg:advance_ns(clock_offset)
    end
    local settings = { name = s.name }
    for _, kv in ipairs(s.config or {}) do
      settings[kv.key] = kv.kind == "decimal" and tonumber(kv.value) or kv.value
    end
    local created, b = pcall(reg.new, reg, settings)
    if not created then return mismatch(s.config_line or s.line, "the config to be accepted", b) end
    for _, step in ipairs(s.steps) do
      local op, line = step.op, step.line
      local fine, err = pcall(function()
        if op == "allow" then
          local p, reason = b:allow()
          if step.expect == "ok" then
            if not p then return mismatch(line, "ok", "rejected (" .. tostring(reason) .. ")") end
            permits[step.ticket] = p
          elseif p then
            permits[#permits + 1] = p -- kept, so that its __gc reports nothing mid-scenario
            return mismatch(line, "rejected", "ok")
          end
        elseif op == "done" then
          local p = permits[step.ticket]
          if p:is_reported() then
            b:done(p:ticket(), step.outcome) -- the same ticket again, as the library sees it
          else
            p:report(step.outcome)
          end
        elseif op == "advance" then
          reg:advance_ns(step.value)
        elseif op == "trip" then
          b:trip_ns(step.value)
        elseif op == "state" then
          local actual = b:state()
          if actual ~= step.value then return mismatch(line, step.value, actual) end
        elseif op == "retry_after" then
          local actual = b:retry_after_ns(true)
          if actual ~= step.value then return mismatch(line, step.value, actual) end
        elseif op == "force_open" then
          b:force_open()
        elseif op == "disable" then
          b:disable()
        elseif op == "reset" then
          b:reset()
        elseif op == "stats" then
          local stats = b:stats(true)
          for _, kv in ipairs(step.values) do
            local actual = stats[kv.key]
            if kv.kind == "number" then
              if actual ~= canonical(kv.value) then return mismatch(line, kv.key .. "=" .. kv.value, actual) end
            else
              local rate = b:stats()[kv.key]
              if not (math.abs(rate - tonumber(kv.value)) <= 1e-9) then
                return mismatch(line, kv.key .. "=" .. kv.value, ("%.17g"):format(rate))
              end
            end
          end
        end
      end)
      if not fine then return mismatch(line, "the call to succeed", err) end
      if err then return err end
    end
  end)
  reg:close() -- every permit left is silent now
  if not ok then return ("%s: %s: runner error: %s"):format(path, s.name, tostring(result)) end
  return result
end

-- ---- main ----------------------------------------------------------------------------
local clock_offset, expect
local files = {}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--clock-offset" then
    clock_offset = arg[i + 1]
    if not clock_offset or not is_number(clock_offset) or not fits_u64(clock_offset) then
      io.stderr:write("--clock-offset needs a number of nanoseconds\n")
      os.exit(2)
    end
    i = i + 2
  elseif a == "--expect" then
    expect = arg[i + 1]
    if expect ~= "malformed" and expect ~= "mismatch" then
      io.stderr:write("--expect needs malformed or mismatch\n")
      os.exit(2)
    end
    i = i + 2
  else
    files[#files + 1] = a
    i = i + 1
  end
end
if #files == 0 then
  io.stderr:write("usage: conformance.lua [--clock-offset N] [--expect malformed|mismatch] FILE...\n")
  os.exit(2)
end

-- 0 pass, 1 mismatch, 2 malformed or unreadable
local function run_file(path)
  local ok, scenarios, err = pcall(parse, path)
  if not ok then
    if getmetatable(scenarios) == Malformed then
      print(scenarios.msg)
      return 2
    end
    error(scenarios, 0)
  end
  if not scenarios then
    print(("%s: cannot read: %s"):format(path, err))
    return 2
  end
  local failed = 0
  for _, s in ipairs(scenarios) do
    local problem = run_scenario(path, s, clock_offset)
    if problem then
      print(problem)
      failed = failed + 1
    end
  end
  print(("%s: %d scenarios, %d passed, %d failed (%s)"):format(path, #scenarios, #scenarios - failed, failed,
                                                              jit and jit.version or _VERSION))
  return failed > 0 and 1 or 0
end

local status = 0
for _, path in ipairs(files) do
  local rc = run_file(path)
  if expect then
    local want = expect == "malformed" and 2 or 1
    if rc ~= want then
      print(("%s: expected to be %s, but it was not"):format(path, expect))
      status = 1
    end
  elseif rc > status then
    status = rc
  end
end
os.exit(status, true)
