#include "scripts.hpp"

namespace lazybreaker::fleet::scripts {

const char *const kChange = R"lua(
local function foreign(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then return 'FOREIGN ' .. key .. ' is a ' .. t end
  return nil
end
local wants = {'hash', 'stream', 'set', 'string', 'string'}
for i = 1, 5 do
  local f = foreign(KEYS[i], wants[i])
  if f then return redis.error_reply(f) end
end
local cur = redis.call('HMGET', KEYS[1], 'epoch', 'state', 'until_ms')
local epoch = tonumber(cur[1] or '0')
local state = cur[2] or 'closed'
local until_ms = tonumber(cur[3] or '0')
local states = {closed = true, open = true, forced_open = true, disabled = true}
if epoch == nil or until_ms == nil or not states[state] then
  return redis.error_reply('FOREIGN ' .. KEYS[1] .. ' holds values that are not a breaker')
end
local by, kind = ARGV[2], ARGV[3]
local new_until, now = tonumber(ARGV[4]), tonumber(ARGV[5])
if new_until == nil or now == nil then return redis.error_reply('bad arguments') end
local to, to_until, trips = nil, 0, 0
if kind == 'trip' then
  if state == 'open' and until_ms > now then
    -- the period is running: a later end extends it, and it is one trip
    if new_until > until_ms then to, to_until = 'open', new_until end
  elseif state ~= 'forced_open' and state ~= 'disabled' then
    to, to_until, trips = 'open', new_until, 1
  end
elseif kind == 'force_open' then
  if state ~= 'forced_open' then to = 'forced_open' end
elseif kind == 'closed' then
  -- only the probe of the host that holds the lease closes the fleet
  if state == 'open' and until_ms <= now and redis.call('GET', KEYS[4]) == by then
    to = 'closed'
  end
elseif kind == 'operator_trip' then
  to, to_until, trips = 'open', new_until, 1
elseif kind == 'operator_force_open' then
  to = 'forced_open'
elseif kind == 'operator_disable' then
  to = 'disabled'
elseif kind == 'operator_reset' then
  to = 'closed'
else
  return redis.error_reply('unknown kind ' .. kind)
end
if to == nil then return {0, epoch, state, until_ms} end
epoch = epoch + 1
redis.call('HSET', KEYS[1], 'epoch', epoch, 'state', to, 'until_ms', to_until, 'by', by,
           'reason', ARGV[6], 'changed_ms', now)
if trips > 0 then redis.call('HINCRBY', KEYS[1], 'trips', trips) end
redis.call('DEL', KEYS[4])
local seq = redis.call('INCR', KEYS[5])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', '100000', '*', 'name', ARGV[1], 'epoch', epoch,
           'seq', seq)
redis.call('SADD', KEYS[3], ARGV[1])
return {1, epoch, to, to_until}
)lua";

const char *const kFlush = R"lua(
local prefix = ARGV[1]
local foreign = 0
local fields = {'admitted', 'rejected', 'successes', 'failures'}
for i = 2, #ARGV, 5 do
  local key = prefix .. 'b:' .. ARGV[i]
  local refused = false
  for j = 1, 4 do
    if ARGV[i + j] ~= '0' then
      local r = redis.pcall('HINCRBY', key, fields[j], ARGV[i + j])
      if type(r) == 'table' and r.err then refused = true end
    end
  end
  if refused then foreign = foreign + 1 end
end
return foreign
)lua";

const char *const kRenew = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
)lua";

}  // namespace lazybreaker::fleet::scripts
