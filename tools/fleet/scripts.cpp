#include "scripts.hpp"

namespace lazybreaker::fleet::scripts {

// Commands per change: HMGET, HSET, and a DEL of the lease when the
// breaker was OPEN (a lease exists only then); per call: four TYPE checks,
// INCR, XADD, SADD, and HSET/HDEL of the open hash. So a batch costs about
// three commands a change and eight more. Callers send at most
// kMaxChangesPerCall changes a call (Lua's unpack has a limit).
const char *const kPublish = R"lua(
local prefix, by, now, slack = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
if now == nil or slack == nil then return redis.error_reply('bad arguments') end
local wants = {'stream', 'set', 'string', 'hash'}
for i = 1, 4 do
  local t = redis.call('TYPE', KEYS[i]).ok
  if t ~= 'none' and t ~= wants[i] then
    return redis.error_reply('FOREIGN ' .. KEYS[i] .. ' is a ' .. t)
  end
end
local states = {closed = true, open = true, forced_open = true, disabled = true}
local out, fields, opened, closed, named = {}, {}, {}, {}, {}
for i = 5, #ARGV, 4 do
  local name, kind, new_until, reason = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  local key = prefix .. 'b:' .. name
  local cur = redis.pcall('HMGET', key, 'epoch', 'state', 'until_ms', 'trips')
  if type(cur) == 'table' and cur.err then
    out[#out + 1] = 'FOREIGN ' .. key .. ': ' .. cur.err
  else
    local epoch = tonumber(cur[1] or '0')
    local state = cur[2] or 'closed'
    local until_ms = tonumber(cur[3] or '0')
    local trips = tonumber(cur[4] or '0')
    if epoch == nil or until_ms == nil or trips == nil or not states[state] then
      out[#out + 1] = 'FOREIGN ' .. key .. ' holds values that are not a breaker'
    elseif new_until == nil then
      out[#out + 1] = 'FOREIGN bad until_ms for ' .. key
    else
      local to, to_until, trip = nil, 0, 0
      local lease_key = prefix .. 'lease:' .. name
      if kind == 'trip' then
        if state == 'open' and until_ms > now then
          -- the period is running: an end later by more than the slack
          -- extends it, and it is one trip; the rest is the same trip
          if new_until > until_ms + slack then to, to_until = 'open', new_until end
        elseif state ~= 'forced_open' and state ~= 'disabled' then
          to, to_until, trip = 'open', new_until, 1
        end
      elseif kind == 'force_open' then
        if state ~= 'forced_open' then to = 'forced_open' end
      elseif kind == 'closed' then
        -- only the probe of the host that holds the lease closes the fleet
        if state == 'open' and until_ms <= now then
          local holder = redis.pcall('GET', lease_key)
          if holder == by then to = 'closed' end
        end
      elseif kind == 'operator_trip' then
        to, to_until, trip = 'open', new_until, 1
      elseif kind == 'operator_force_open' then
        to = 'forced_open'
      elseif kind == 'operator_disable' then
        to = 'disabled'
      elseif kind == 'operator_reset' then
        to = 'closed'
      end
      if to == nil then
        out[#out + 1] = {0, epoch, state, until_ms, trips}
      else
        epoch, trips = epoch + 1, trips + trip
        redis.call('HSET', key, 'epoch', epoch, 'state', to, 'until_ms', to_until, 'by', by,
                   'reason', reason, 'changed_ms', now, 'trips', trips)
        if state == 'open' then redis.pcall('DEL', lease_key) end
        local packed = epoch .. ' ' .. to .. ' ' .. to_until .. ' ' .. trips .. ' ' .. reason
        fields[#fields + 1] = 'b:' .. name
        fields[#fields + 1] = packed
        named[#named + 1] = name
        if to == 'closed' then
          closed[#closed + 1] = name
        else
          opened[#opened + 1] = name
          opened[#opened + 1] = packed .. ' ' .. by
        end
        out[#out + 1] = {1, epoch, to, to_until, trips}
      end
    end
  end
end
if #fields > 0 then
  local seq = redis.call('INCR', KEYS[3])
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', '10000', '*', 'seq', seq, 'by', by, unpack(fields))
  redis.call('SADD', KEYS[2], unpack(named))
  if #opened > 0 then redis.call('HSET', KEYS[4], unpack(opened)) end
  if #closed > 0 then redis.call('HDEL', KEYS[4], unpack(closed)) end
end
for i = 1, #out do
  if type(out[i]) == 'string' then out[i] = {err = out[i]} end
end
return out
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
