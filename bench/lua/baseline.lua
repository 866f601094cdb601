-- A breaker in plain Lua, in the shape of the seed-style pure-Lua breakers
-- that OpenResty code keeps per worker: a table with a failure counter and
-- the timestamp it opened at. The benchmark's baseline, not an API: it has
-- no half-open cap, no windows, and one copy per worker process.
local Breaker = {}
Breaker.__index = Breaker

local clock = os.clock

local function new(failure_threshold, open_duration)
  return setmetatable({
    failures = 0,
    opened_at = nil,
    failure_threshold = failure_threshold,
    open_duration = open_duration,
  }, Breaker)
end

-- true when a call may go ahead (the clock is read only while open)
function Breaker:allow()
  local opened_at = self.opened_at
  if opened_at == nil then return true end
  if clock() - opened_at < self.open_duration then return false end
  self.opened_at = nil -- half-open: let this one through
  return true
end

function Breaker:success()
  if self.failures ~= 0 then self.failures = 0 end
end

function Breaker:failure()
  local failures = self.failures + 1
  self.failures = failures
  if failures >= self.failure_threshold then self.opened_at = clock() end
end

-- run fn under pcall, as breaker:call does
function Breaker:call(fn, ...)
  if not self:allow() then return nil, "open" end
  local ok, a, b, c = pcall(fn, ...)
  if ok then self:success() else self:failure() error(a, 0) end
  return a, b, c
end

-- The count window in the same plain Lua: a ring of the last `size`
-- outcomes (true for a failure) and the failures among them; it trips when
-- at least `minimum` outcomes are in and their failure rate reaches `rate`.
local Window = {}
Window.__index = Window

local function new_window(size, minimum, rate, open_duration)
  local ring = {}
  for i = 1, size do ring[i] = false end
  return setmetatable({
    ring = ring, size = size, at = 1, calls = 0, failures = 0,
    minimum = minimum, rate = rate, opened_at = nil, open_duration = open_duration,
  }, Window)
end

Window.allow = Breaker.allow

function Window:record(failed)
  local at, ring = self.at, self.ring
  local calls, failures = self.calls, self.failures
  if calls == self.size then
    if ring[at] then failures = failures - 1 end
  else
    calls = calls + 1
  end
  ring[at] = failed
  if failed then failures = failures + 1 end
  self.at = at == self.size and 1 or at + 1
  self.calls, self.failures = calls, failures
  if failed and calls >= self.minimum and failures >= calls * self.rate then self.opened_at = clock() end
end

function Window:success() self:record(false) end
function Window:failure() self:record(true) end

return { new = new, new_window = new_window }
