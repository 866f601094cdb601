-- The Lua runner of the conformance scenarios: it interprets the step
-- streams that lb_conformance writes at build time from
-- tests/conformance/*.scn (tests/conformance/README.md, "Step streams"),
-- through the module `lazybreaker` as a Lua user calls it, each scenario on
-- a fresh manual-clock registry.
--
--   lua5.4 conformance.lua [--expect mismatch] STREAM...
--
-- Exit status 0 (pass), 1 (mismatch), 2 (not a step stream); with --expect
-- mismatch, 0 when every stream mismatches, else 1. Numbers stay decimal
-- strings from stream to library (the module takes a string of digits for
-- any 64-bit value), so they are exact on LuaJIT too, whose numbers hold 53
-- bits. Each step is a function of the scenario's state and the line's
-- tokens (t[1] the step, t[2] its .scn line); it returns a mismatch or nil.
local lb = require "lazybreaker"

local function expect(want, got, what)
  if want ~= got then return ("%sexpected %s, got %s"):format(what or "", want, tostring(got)) end
end

local steps = {}
function steps.scenario(s, t)
  s.reg = lb.registry { manual_clock = true }
  s.settings = { name = t[3] }
end
-- Each cb_config field by its C name, as a Lua user sets it.
function steps.config(s, t) if t[5] == "set" then s.settings[t[3]] = t[4] end end
function steps.create(s) s.b = s.reg:new(s.settings) end
-- Through the cheap two-step (acquire, then done with the ticket): the
-- published quiet path where it runs (LAZYBREAKER_FASTPATH=0: the library
-- for every call), so the scenarios pin it against C.
function steps.allow(s, t)
  local ticket, reason = s.b:acquire()
  if ticket then s.tickets[t[4] or #s.tickets + 1] = ticket end
  local got = ticket and "ok" or "rejected"
  if got ~= t[3] then return ("expected %s, got %s (%s)"):format(t[3], got, tostring(reason or s.b:state())) end
end
function steps.done(s, t) s.b:done(s.tickets[t[3]], t[4]) end
function steps.advance(s, t) s.reg:advance_ns(t[3]) end
function steps.state(s, t) return expect(t[3], s.b:state()) end
function steps.retry_after(s, t) return expect(t[3], s.b:retry_after_ns(true)) end
function steps.force_open(s) s.b:force_open() end
function steps.disable(s) s.b:disable() end
function steps.reset(s) s.b:reset() end
function steps.trip(s, t) s.b:trip_ns(t[3]) end
function steps.count(s, t) return expect(t[4], s.b:stats(true)[t[3]], t[3] .. ": ") end
function steps.rate(s, t)
  local got = s.b:stats()[t[3]]
  if not (math.abs(got - tonumber(t[4])) <= 1e-9) then
    return ("%s: expected %s, got %.17g"):format(t[3], t[4], got)
  end
end

-- 0 pass, 1 mismatch, 2 not a step stream
local function run_stream(path)
  local f = io.open(path, "r")
  local source = f and (f:read("l") or ""):match("^lbsteps 1 (.+)$")
  if not source then
    print(("%s: not a step stream of version 1"):format(path))
    return 2
  end
  local scenarios, failed, s = 0, 0, nil
  for line in f:lines() do
    local t = {}
    for token in line:gmatch("%S+") do t[#t + 1] = token end
    if t[1] == "scenario" then s = { tickets = {} } end
    if t[1] == "end" then
      if s.reg then s.reg:close() end
      scenarios = scenarios + 1
      if s.mismatch then
        print(s.mismatch)
        failed = failed + 1
      end
    elseif not s.mismatch then -- after a mismatch, the rest of the scenario is skipped
      local step = steps[t[1]]
      if not step then
        print(("%s: not a step: %s"):format(path, line))
        return 2
      end
      local ok, result = pcall(step, s, t)
      if not ok or result then s.mismatch = ("%s:%s: mismatch: %s: %s"):format(source, t[2], t[1], tostring(result)) end
    end
  end
  f:close()
  print(("%s: %d scenarios, %d passed, %d failed (%s, fast path %s)"):format(source, scenarios, scenarios - failed,
    failed, jit and jit.version or _VERSION, lb.fastpath))
  return failed > 0 and 1 or 0
end

local expect_mismatch = arg[1] == "--expect"
local first = expect_mismatch and 3 or 1
if (expect_mismatch and arg[2] ~= "mismatch") or #arg < first then
  io.stderr:write("usage: conformance.lua [--expect mismatch] STREAM...\n")
  os.exit(2)
end
local status = 0
for i = first, #arg do
  local rc = run_stream(arg[i])
  if expect_mismatch and rc ~= 1 then
    print(("%s: expected a mismatch, but there was none"):format(arg[i]))
    status = 1
  elseif not expect_mismatch and rc > status then
    status = rc
  end
end
os.exit(status, true)
