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

return { new = new }
