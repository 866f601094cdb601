-- LuaJIT's quiet path (lazybreaker.lua's ffi path) against the shared
-- vectors that tests/quiet_vectors/quiet_vectors.c computes with
-- lazybreaker/fastpath.h's own functions: every vector of the file named
-- by LB_QUIET_VECTORS through the rules the ffi path calls on every call
-- (lb._quiet_rules). Prints how many vectors of each kind it checked;
-- fails at the first mismatch, naming the line, and when the variable is
-- unset, the file unreadable, or a kind has no vector.
local lb = require "lazybreaker"
local ffi = require "ffi"

local function die(fmt, ...)
  io.stderr:write("quiet_vectors: ", fmt:format(...), "\n")
  os.exit(1)
end

local rules = lb._quiet_rules or die("lazybreaker.lua has no ffi quiet path on %s", _VERSION)
local path = os.getenv("LB_QUIET_VECTORS")
if not path or path == "" then die("LB_QUIET_VECTORS is not set: it names the vectors file") end
local file, err = io.open(path, "r")
if not file then die("cannot read %s: %s", path, tostring(err)) end

local U = ffi.typeof("uint64_t")
-- A 64-bit value as the file writes it.
local function text(v) return (bit.tohex(v, 16):gsub("^0+(.)", "%1")) end
-- A 64-bit unsigned number in lowercase hex without 0x, exactly.
local function hex(text, where)
  if not text or not text:match("^[0-9a-f]+$") or #text > 16 then die("%s: not a hex number: %s", where, tostring(text)) end
  local v = U(0)
  for n = 1, #text do v = v * 16 + tonumber(text:sub(n, n), 16) end
  return v
end

local decisions = { admit = rules.ADMIT, reject = true, library = rules.LIBRARY }
local function decision_name(d)
  if d == rules.ADMIT then return "admit" end
  if d == rules.REJECT_OPEN or d == rules.REJECT_FORCED then return "reject" end
  return "library"
end

local checked = { allow = 0, done = 0, count = 0 }

local function check_allow(f, where)
  if #f ~= 8 or not decisions[f[7]] then die("%s: expected allow h w p lean now decision ticket", where) end
  local h, w, p, lean, now = hex(f[2], where), hex(f[3], where), hex(f[4], where), tonumber(f[5], 16), hex(f[6], where)
  local ticket = hex(f[8], where)
  local d, t = rules.allow(h, w, function() return p, lean end, function() return now end)
  local got = decision_name(d)
  if got ~= f[7] then die("%s: decision %s, expected %s", where, got, f[7]) end
  if got == "admit" and t ~= ticket then die("%s: ticket %s, expected %s", where, text(t), f[8]) end
end

local function check_done(f, where)
  if #f ~= 6 or (f[6] ~= "success" and f[6] ~= "library") then
    die("%s: expected done h w ticket outcome decision", where)
  end
  local quiet = rules.quiet_success(hex(f[2], where), hex(f[3], where), hex(f[4], where), tonumber(f[5], 16))
  local got = quiet and "success" or "library"
  if got ~= f[6] then die("%s: decision %s, expected %s", where, got, f[6]) end
end

local function check_count(f, where)
  if #f ~= 6 or (f[6] ~= "0" and f[6] ~= "1") then die("%s: expected count cell counter fold_at new_cell fold", where) end
  local v, fold = rules.count(hex(f[2], where), tonumber(f[3], 16), tonumber(f[4], 16))
  local want = hex(f[5], where)
  if v ~= want then die("%s: new cell %s, expected %s", where, text(v), f[5]) end
  if (fold and "1" or "0") ~= f[6] then die("%s: fold %s, expected %s", where, fold and "1" or "0", f[6]) end
end

local checks = { allow = check_allow, done = check_done, count = check_count }
local number = 0
for line in file:lines() do
  number = number + 1
  if line ~= "" and line:sub(1, 1) ~= "#" then
    local fields = {}
    for field in line:gmatch("[^ ]+") do fields[#fields + 1] = field end
    local where = ("%s:%d"):format(path, number)
    local check = checks[fields[1]] or die("%s: unknown kind %s", where, tostring(fields[1]))
    check(fields, where)
    checked[fields[1]] = checked[fields[1]] + 1
  end
end
file:close()

print(("checked %d allow, %d done, %d count vectors from %s"):format(checked.allow, checked.done, checked.count, path))
for _, kind in ipairs { "allow", "done", "count" } do
  if checked[kind] == 0 then die("no %s vector in %s", kind, path) end
end
