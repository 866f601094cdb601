-- lazybreaker: a lazy, lock-free circuit breaker for Lua 5.4 and LuaJIT.
--
-- The idiomatic layer over the C module `lazybreaker_core`, which is SWIG's
-- low layer (bindings/swig/lua.i) plus the registry, breaker and permit
-- objects written in C (bindings/lua/objects.c). Written in Lua here: what
-- must yield (breaker:call runs user code under pcall, which yields in
-- OpenResty's cosockets; a C function's lua_pcall would not), settings
-- tables, events and text. The state machine stays in the C library.
-- docs/lua.md describes every function.
local core = require "lazybreaker_core"

local M = {}
M._VERSION = core.cb_version_string()
M.version = M._VERSION

local error, pcall, type, tostring, pairs, ipairs, select = error, pcall, type, tostring, pairs, ipairs, select
local floor = math.floor

local registry_methods = core.methods("registry")
local breaker_methods = core.methods("breaker")
local permit_methods = core.methods("permit")

-- Names from the library (cb_state_name, cb_reason_name), never copied here.
local state_names, reason_names = {}, {}
for value = 0, 63 do
  state_names[value] = core.cb_state_name(value)
  reason_names[value] = core.cb_reason_name(value)
end
local policies = {
  consecutive = core.CB_POLICY_CONSECUTIVE,
  count_window = core.CB_POLICY_COUNT_WINDOW,
  time_window = core.CB_POLICY_TIME_WINDOW,
}
local policy_names = {}
for name, value in pairs(policies) do policy_names[value] = name end

-- Settings in seconds, as Lua and OpenResty code writes durations, beside
-- the C names in nanoseconds.
local in_seconds = {
  open_duration = "open_duration_ns",
  half_open_timeout = "half_open_timeout_ns",
  window_duration = "window_duration_ns",
  slow_call = "slow_call_ns",
  open_duration_max = "open_duration_max_ns",
}

-- How each policy reads each field (docs/policies.md, "Which settings a
-- policy reads"): the library's own table, asked of cb_policy_reads once
-- per Lua state (3 policies x 16 fields), when a settings table is first
-- read. The fields in CB_CONFIG_FIELDS' order, the policies in the order
-- inference tries them.
local READ, READ_WITH_SLOW_CALLS = core.CB_FIELD_READ, core.CB_FIELD_READ_WITH_SLOW_CALLS
local policy_order = { "consecutive", "count_window", "time_window" }
local field_order = {}
for field, info in pairs(core.config_fields) do field_order[info.order] = field end
local policy_reads_table
local function policy_reads()
  if not policy_reads_table then
    local answers = {}
    for _, policy in ipairs(policy_order) do
      local row = {}
      for _, field in ipairs(field_order) do row[field] = core.cb_policy_reads(policies[policy], field) end
      answers[policy] = row
    end
    policy_reads_table = answers
  end
  return policy_reads_table
end
M._policy_reads = policy_reads

local function fail(level, fmt, ...)
  error("lazybreaker: " .. fmt:format(...), level + 1)
end

local function seconds_to_ns(key, seconds)
  if type(seconds) ~= "number" or not (seconds >= 0) or seconds == math.huge then
    fail(4, "%s: expected a duration in seconds, 0 or more, got %s", key, tostring(seconds))
  end
  return floor(seconds * 1e9 + 0.5)
end

-- The first field of `given` (C field -> key) after the `after`th that
-- `policy` ignores: one it answers CB_FIELD_IGNORED for, or
-- CB_FIELD_READ_WITH_SLOW_CALLS while slow_call_ns is 0 (`slow` false).
-- Returns the field and whether slow calls would let it be read.
local function ignored_field(policy, given, slow, after)
  local row = policy_reads()[policy]
  for n = (after or 0) + 1, #field_order do
    local field = field_order[n]
    local reads = row[field]
    if given[field] and reads ~= READ and not (slow and reads == READ_WITH_SLOW_CALLS) then
      return field, reads == READ_WITH_SLOW_CALLS
    end
  end
end

local function read_by_every_policy(field)
  for _, row in pairs(policy_reads()) do
    if row[field] ~= READ then return false end
  end
  return true
end

-- The first policy that answers CB_FIELD_READ for every field given (so
-- consecutive when none is given that some policy ignores).
local function policy_reading_all(given)
  local answers = policy_reads()
  for _, policy in ipairs(policy_order) do
    local row, all = answers[policy], true
    for field in pairs(given) do
      if row[field] ~= READ then
        all = false
        break
      end
    end
    if all then return policy end
  end
end

-- The policy for a settings table (docs/policies.md, "Which settings a
-- policy reads"): the one it names, which must read every field given;
-- else the first that reads them all; else the one the first field given
-- that some policy ignores chooses alone, if it reads every later one (the
-- consecutive policy with slow_call and its window). Anything else is an
-- error naming the setting and the policy. Returns the inferred policy, or
-- nil when the settings name one.
local function choose_policy(policy, given, slow, level)
  if policy ~= nil then
    local field, needs_slow = ignored_field(policy, given, slow)
    if field then
      fail(level, "%s is ignored by the %s policy%s: leave it unset or choose another policy", given[field], policy,
        needs_slow and " without slow_call" or "")
    end
    return nil
  end
  local chosen = policy_reading_all(given)
  if chosen then return chosen end
  for n, first in ipairs(field_order) do
    if given[first] and not read_by_every_policy(first) then
      chosen = policy_reading_all({ [first] = first }) or policy_order[1]
      local field, needs_slow = ignored_field(chosen, given, slow, n)
      if not field then return chosen end
      fail(level, "%s is ignored by the %s policy%s, which %s chooses: set policy, or leave one of them unset",
        given[field], chosen, needs_slow and " without slow_call" or "", given[first])
    end
  end
end

-- A cb_config from a settings table: cb_config_init's defaults (SWIG's
-- constructor), then each setting by its C name; the library checks the
-- values when the breaker is created. A key that is no field of cb_config
-- is refused here, so a typo never passes for a default. Returns the
-- config and the keys each field was set with.
local function set_field(cfg, field, value) cfg[field] = value end
local function make_config(settings)
  local cfg = core.cb_config()
  local given, policy = {}, nil
  for key, value in pairs(settings) do
    if key ~= "name" and key ~= "classify" then
      local field = in_seconds[key] or key
      if in_seconds[key] then
        value = seconds_to_ns(key, value)
      elseif key == "policy" then
        if type(value) == "string" then
          value = policies[value] or fail(3, "policy: expected consecutive, count_window or time_window, got %q", value)
        end
        policy = policy_names[value] or fail(3, "policy: expected consecutive, count_window or time_window, got %s", tostring(value))
      end
      if type(field) ~= "string" or cfg[field] == nil then
        fail(3, "unknown setting %s", tostring(key))
      end
      if given[field] then fail(3, "%s and %s set the same thing", field, in_seconds[key] and key or given[field]) end
      given[field] = key
      local ok, err = pcall(set_field, cfg, field, value)
      if not ok then fail(3, "%s: %s", key, tostring(err):gsub("^.-lazybreaker: ", "")) end
    end
  end
  local inferred = choose_policy(policy, given, cfg.slow_call_ns ~= 0, 4)
  if inferred then cfg.policy = policies[inferred] end
  return cfg, given
end

-- Says a refused create in the settings' words: a duration set in seconds
-- in seconds (its bounds from the library's own list of fields), every
-- other setting by the key it was set with.
local fields = core.config_fields
local function seconds_text(ns) return ("%.9g"):format(ns / 1e9) end
local function refused(status, field, given, settings, what, name)
  local key = given[field] or field
  local head = "lazybreaker: " .. core.cb_strerror(status) .. ": "
  if status == core.CB_EEXIST then
    error(head .. ("%s: %q exists with another configuration: its %s differs"):format(what, name, key), 3)
  end
  local f = fields[field]
  if in_seconds[key] and f then
    local range = seconds_text(f.lo) .. ".." .. seconds_text(f.hi)
    -- The one rule across fields (lists.h): a cap of at least the duration.
    if field == "open_duration_max_ns" then range = "0 or at least open_duration, at most " .. seconds_text(f.hi) end
    error(head .. ("%s must be %s s, got %s"):format(key, range, tostring(settings[key])), 3)
  end
  error(head .. core.cb_last_error_message(), 3)
end

-- A name is a string without NUL: C would cut "a\0b" to "a". Raises at
-- the line that called new or get_or_create.
local find = string.find
local function check_name(name)
  if type(name) ~= "string" then fail(3, "name: expected a string, got %s", type(name)) end
  if find(name, "\0", 1, true) then fail(3, "name: a NUL byte inside the name") end
end

-- The classify functions, by breaker object (weak: they go with it).
local classifiers = setmetatable({}, { __mode = "k" })

-- Interned configurations: settings seen before (the same keys with the
-- same values, name and classify aside) reuse the cb_config made for them,
-- so a create of a known configuration makes no SWIG object, sets no
-- field and checks nothing again. Keyed by the settings' text, and each
-- value compared exactly on a hit (a text may round a number). Bounded:
-- emptied when it reaches INTERNED_MAX distinct configurations.
local interned, interned_count, INTERNED_MAX = {}, 0, 256
local key_parts = {}
local concat = table.concat
local function settings_key(settings)
  local n = 0
  for key, value in pairs(settings) do
    if key ~= "name" and key ~= "classify" then
      key_parts[n + 1], key_parts[n + 2] = tostring(key), tostring(value)
      n = n + 2
    end
  end
  local text = concat(key_parts, "\1", 1, n)
  return text, n / 2
end
local function same_settings(entry, settings, count)
  if entry.count ~= count then return false end
  local values = entry.values
  for key, value in pairs(settings) do
    if key ~= "name" and key ~= "classify" and values[key] ~= value then return false end
  end
  return true
end
local function interned_config(settings)
  local text, count = settings_key(settings)
  local entry = interned[text]
  if entry and same_settings(entry, settings, count) then return entry.cfg, entry.given end
  local cfg, given = make_config(settings)
  local values = {}
  for key, value in pairs(settings) do
    if key ~= "name" and key ~= "classify" then values[key] = value end
  end
  if interned_count >= INTERNED_MAX then interned, interned_count = {}, 0 end
  if not interned[text] then interned_count = interned_count + 1 end
  interned[text] = { cfg = cfg, given = given, values = values, count = count }
  return cfg, given
end

local create = registry_methods.create
function registry_methods:new(settings)
  settings = settings or {}
  if type(settings) ~= "table" then fail(2, "new: expected a table of settings, got %s", type(settings)) end
  local classify = settings.classify
  if classify ~= nil and type(classify) ~= "function" then
    fail(2, "classify: expected a function, got %s", type(classify))
  end
  local name = settings.name
  if name ~= nil then check_name(name) end
  local cfg, given = interned_config(settings)
  local b, status, field = create(self, name, cfg)
  if not b then refused(status, field, given, settings, "new", name) end
  classifiers[b] = classify
  return b
end

-- reg:get_or_create(name, settings): the breaker of that name if its
-- configuration is the one `settings` (as for new, without name) describes,
-- else a new one; of concurrent calls with one name, in any process sharing
-- the registry file, one creates and the others get its breaker. Another
-- configuration raises CB_EEXIST. The breaker is shared: neither close nor
-- __gc destroys it.
local get_or_create = registry_methods.get_or_create
function registry_methods:get_or_create(name, settings)
  if type(name) ~= "string" then fail(2, "get_or_create: expected a name, got %s", type(name)) end
  check_name(name)
  settings = settings or {}
  if type(settings) ~= "table" then fail(2, "get_or_create: expected a table of settings, got %s", type(settings)) end
  if settings.name ~= nil and settings.name ~= name then
    fail(2, "get_or_create: settings.name %s is not the name %s", tostring(settings.name), name)
  end
  local classify = settings.classify
  if classify ~= nil and type(classify) ~= "function" then
    fail(2, "classify: expected a function, got %s", type(classify))
  end
  local cfg, given = interned_config(settings)
  local b, status, field = get_or_create(self, name, cfg)
  if not b then refused(status, field, given, settings, "get_or_create", name) end
  classifiers[b] = classify
  return b
end

-- b:config(): the breaker's configuration read back, as settings by their
-- C names (durations in ns; the policy by its name): what new and
-- get_or_create take.
-- The settings its policy ignores are left out, as new refuses them
-- (they hold their defaults unless C code set them).
local read_config = breaker_methods._config
function breaker_methods:config()
  local c = read_config(self)
  c.policy = policy_names[c.policy]
  local given, slow = {}, c.slow_call_ns ~= 0
  for field in pairs(c) do given[field] = field end
  local field = ignored_field(c.policy, given, slow)
  while field do
    c[field], given[field] = nil, nil
    field = ignored_field(c.policy, given, slow)
  end
  return c
end

-- Takes up to `max` (default 64) events from the registry's queue, oldest
-- first, as tables.
function registry_methods:poll_events(max)
  max = max or 64
  if type(max) ~= "number" or max < 1 or floor(max) ~= max then
    fail(2, "poll_events: expected a count of 1 or more, got %s", tostring(max))
  end
  local batch = core.lb_event_batch(max)
  local n = batch:poll(self:_swig())
  local events = {}
  for i = 0, n - 1 do
    local e = batch:get(i)
    local name = e.name
    events[i + 1] = {
      sequence = e.sequence,
      name = name ~= "" and name or nil,
      from = state_names[e.from],
      to = state_names[e.to],
      reason = reason_names[e.reason] or e.reason,
      at_ns = e.at_ns,
      at = e.at_ns / 1e9,
    }
  end
  return events
end

-- How many events the queue has dropped (it keeps the newest).
function registry_methods:events_dropped()
  return core.cb_events_dropped(self:_swig())
end

-- Which events to record: any of "transitions", "rejections".
function registry_methods:select_events(...)
  local kinds = 0
  for i = 1, select("#", ...) do
    local kind = select(i, ...)
    if kind == "transitions" then
      kinds = kinds + core.CB_EVENTS_TRANSITIONS
    elseif kind == "rejections" then
      kinds = kinds + core.CB_EVENTS_REJECTIONS
    else
      fail(2, "select_events: expected \"transitions\" or \"rejections\", got %s", tostring(kind))
    end
  end
  core.cb_events_select(self:_swig(), kinds)
end

-- Every breaker of the registry in the Prometheus text format.
function registry_methods:prometheus()
  return core.lb_prometheus(self:_swig())
end

-- ---- the cheap two-step: b:acquire() and b:success(t) ----------------------------
-- acquire() gives the ticket as a value, not a permit: nothing allocated,
-- no finalizer. On Lua 5.4 both are C functions of objects.c around
-- cb_allow and cb_done (the ticket a Lua integer, its 64 bits as they
-- are). On LuaJIT they are Lua over the ffi: the published quiet path
-- (lazybreaker/fastpath.h, layout 1) in this file, the ticket a uint64_t
-- cdata, every other call to cb_allow/cb_done through the ffi, so a JIT
-- trace never leaves for the classic C API. LAZYBREAKER_FASTPATH=0 in the
-- environment (read when the module loads) turns the quiet path off: every
-- call then goes to the library. M.fastpath says which path runs: "ffi"
-- (LuaJIT's), "c" (objects.c's, every call to cb_allow/cb_done, whose own
-- quiet path serves a healthy call), "off" (switched off, or no stripe free).
M.fastpath = os.getenv("LAZYBREAKER_FASTPATH") == "0" and "off" or "c"
local SUCCESS, FAILURE, IGNORED = core.CB_SUCCESS, core.CB_FAILURE, core.CB_IGNORED
local ffi_ok, ffi = false, nil
if jit then ffi_ok, ffi = pcall(require, "ffi") end
local quiet_wanted = os.getenv("LAZYBREAKER_FASTPATH") ~= "0"

-- The ffi's declarations, checked against objects.c's own layout (core._ffi):
-- any difference and the C functions serve (M.fastpath = "c").
local function ffi_declare(info)
  if not pcall(ffi.typeof, "lb_lua_ffi_ref") then
    ffi.cdef [[
      typedef struct lb_lua_ffi_fastpath {
        size_t struct_size; uint32_t layout; uint32_t index_bits; const uint64_t *lines;
        uint32_t line_words; uint32_t open_period_word; const uint8_t *lean_rejections;
        uint32_t chunk_bits; uint32_t fold_at;
      } lb_lua_ffi_fastpath;
      typedef struct lb_lua_ffi_cells {
        size_t struct_size; uint64_t *cells; uint32_t stripe; uint32_t claimed;
      } lb_lua_ffi_cells;
      typedef struct lb_lua_ffi_reg { void *reg; int refs; int closed; int is_default; } lb_lua_ffi_reg;
      typedef struct lb_lua_ffi_breaker {
        uint64_t handle; lb_lua_ffi_reg *reg; int refs; int owned; int shared; int closed;
      } lb_lua_ffi_breaker;
      typedef struct lb_lua_ffi_ref { lb_lua_ffi_breaker *record; } lb_lua_ffi_ref;
      typedef struct lb_lua_ffi_timespec { long tv_sec; long tv_nsec; } lb_lua_ffi_timespec;
    ]]
  end
  local sizeof, offsetof = ffi.sizeof, ffi.offsetof
  return sizeof("lb_lua_ffi_ref") == info.sizeof_ref and sizeof("lb_lua_ffi_breaker") == info.sizeof_breaker
    and sizeof("lb_lua_ffi_reg") == info.sizeof_reg and sizeof("lb_lua_ffi_fastpath") == info.sizeof_fastpath
    and sizeof("lb_lua_ffi_cells") == info.sizeof_cells and sizeof("lb_lua_ffi_timespec") == info.sizeof_timespec
    and offsetof("lb_lua_ffi_breaker", "handle") == info.breaker_handle
    and offsetof("lb_lua_ffi_breaker", "reg") == info.breaker_reg
    and offsetof("lb_lua_ffi_breaker", "closed") == info.breaker_closed
    and offsetof("lb_lua_ffi_reg", "closed") == info.reg_closed
end

-- The quiet path's decisions (lazybreaker/fastpath.h, layout 1) as pure
-- functions of the words the ffi path reads, which its acquire, report and
-- counting call on every call, and which the shared vectors check
-- (bindings/lua/tests/quiet_vectors.lua). No state, no memory touched:
--   allow(h, w, open_words, clock): ALLOW_ADMIT and the ticket,
--     ALLOW_REJECT_OPEN, ALLOW_REJECT_FORCED, or ALLOW_LIBRARY (cb_allow
--     decides); w the slot's state word. The rest is asked for only when the
--     reject rule needs it, as reading it costs more than an admitted call:
--     open_words(h) gives p (the line's open_period_word) and lean (the
--     chunk's lean_rejections byte), and clock() CLOCK_MONOTONIC in ns.
--   quiet_success(h, w, t, outcome): true when a report changes nothing and
--     is only counted (CB_FASTPATH_SUCCESSES), false for cb_done.
--   count(cell, f, fold_at): the cell after counting one in counter f, and
--     whether cb_fastpath_fold(stripe, h, f) is due before the next count.
-- uint64_t constants are built at run time: Lua 5.4 parses this file too.
local ALLOW_LIBRARY, ALLOW_ADMIT, ALLOW_REJECT_OPEN, ALLOW_REJECT_FORCED = 0, 1, 2, 3
local function quiet_rules()
  local band, bor, bxor, rshift, lshift = bit.band, bit.bor, bit.bxor, bit.rshift, bit.lshift
  local U = ffi.typeof("uint64_t")
  local INDEX_BITS, SLOT_MASK, LIFE_MASK = 24, 0xffffff, 0xfffff
  local MODE_OPEN, MODE_RUN, MODE_FORCED, MODE_WINDOW = 1, 3, 4, 7
  local LIFE = lshift(U(0xb0000), 20)
  local CALL_TICKET = lshift(U(0xc), 60)
  local ONE = U(1)

  local function is_quiet(h, w)
    return rshift(bxor(h, w), INDEX_BITS) == 0 and rshift(w, 63) == 1
  end

  local function allow(h, w, open_words, clock)
    if is_quiet(h, w) then return ALLOW_ADMIT, h + w end
    if rshift(h, 24) ~= bor(LIFE, band(rshift(w, 24), LIFE_MASK)) then return ALLOW_LIBRARY end
    local mode = tonumber(rshift(w, 60))
    if mode == MODE_WINDOW or mode == MODE_RUN then return ALLOW_ADMIT, h + bor(CALL_TICKET, band(w, SLOT_MASK)) end
    if mode ~= MODE_FORCED and mode ~= MODE_OPEN then return ALLOW_LIBRARY end
    local p, lean = open_words(h)
    if lean == 0 then return ALLOW_LIBRARY end
    if mode == MODE_FORCED then return ALLOW_REJECT_FORCED end
    if band(bxor(p, w), SLOT_MASK) == 0 then
      local d = lshift(rshift(p, 24), 20)
      if d ~= 0 and clock() < d then return ALLOW_REJECT_OPEN end
    end
    return ALLOW_LIBRARY
  end

  local function quiet_success(h, w, t, outcome)
    return outcome == SUCCESS and is_quiet(h, w) and t == h + w
  end

  local function count(cell, f, fold_at)
    local shift = 16 * f
    local v = cell + lshift(ONE, shift)
    return v, band(rshift(v, shift), fold_at) ~= 0
  end

  return { allow = allow, quiet_success = quiet_success, count = count, ADMIT = ALLOW_ADMIT,
           REJECT_OPEN = ALLOW_REJECT_OPEN, REJECT_FORCED = ALLOW_REJECT_FORCED, LIBRARY = ALLOW_LIBRARY }
end

local function ffi_path()
  local info = core._ffi()
  if not ffi_declare(info) then return nil end
  local cast, new, band, rshift = ffi.cast, ffi.new, bit.band, bit.rshift
  local fn = function(name, ctype) return cast(ctype, info[name]) end
  local cb_allow = fn("cb_allow", "int (*)(uint64_t, uint64_t *)")
  local cb_done = fn("cb_done", "int (*)(uint64_t, uint64_t, int)")
  local cb_state = fn("cb_state", "int (*)(uint64_t)")
  local cb_retry_after = fn("cb_retry_after", "int (*)(uint64_t, uint64_t *)")
  local fold = fn("cb_fastpath_fold", "int (*)(uint32_t, uint64_t, int)")
  local clock_gettime = fn("clock_gettime", "int (*)(int, lb_lua_ffi_timespec *)")
  local release = fn("cb_fastpath_release_cells", "int (*)(uint32_t)")
  local ref_t = ffi.typeof("lb_lua_ffi_ref *")
  local out = new("uint64_t[1]")
  local now_ts = new("lb_lua_ffi_timespec")
  local MONOTONIC = info.CLOCK_MONOTONIC
  local ticket_t = ffi.typeof("uint64_t")
  local rules = quiet_rules()
  local decide_allow, quiet_success, count = rules.allow, rules.quiet_success, rules.count
  local NEVER = ticket_t(0) - 1

  -- The quiet path's tables, when the library publishes layout 1 and a
  -- stripe is free for this Lua state (one writer at a time: the state).
  local fp, cells = new("lb_lua_ffi_fastpath"), new("lb_lua_ffi_cells")
  fp.struct_size, cells.struct_size = ffi.sizeof(fp), ffi.sizeof(cells)
  local quiet = quiet_wanted
    and fn("cb_fastpath_describe", "int (*)(lb_lua_ffi_fastpath *)")(fp) == 0 and fp.layout == 1
    and fp.index_bits == 24 and fp.line_words == 8
    and fn("cb_fastpath_claim_cells", "int (*)(lb_lua_ffi_cells *)")(cells) == 0
  local lines, lean, cell, stripe = fp.lines, fp.lean_rejections, cells.cells, cells.stripe
  local period_word, chunk_bits, fold_at = fp.open_period_word, fp.chunk_bits, fp.fold_at
  local SLOT_MASK = 0xffffff
  -- The stripe goes back when the state closes (or the module's table is
  -- collected); from then on every call goes to the library.
  local live = quiet
  M._stripe_guard = quiet and ffi.gc(new("char[1]"), function()
    live = false
    release(stripe)
  end) or nil

  local function count_in(h, i, f)
    local v, fold_due = count(cell[i], f, fold_at)
    cell[i] = v
    if fold_due then fold(stripe, h, f) end
  end
  local function open_words(h)
    local i = band(h, SLOT_MASK)
    return lines[i * 8 + period_word], lean[tonumber(rshift(i, chunk_bits))]
  end
  local function monotonic_ns()
    clock_gettime(MONOTONIC, now_ts)
    return ticket_t(now_ts.tv_sec) * 1000000000 + now_ts.tv_nsec
  end

  -- The record of a live breaker object, else nil (the C function then
  -- raises the documented error). Its payload is looked up once per object
  -- through the checked C function, then kept (weak keys: it goes with it).
  local refs = setmetatable({}, { __mode = "k" })
  local ref_of = core._ref_of
  local function record_of(self)
    local ref = refs[self]
    if ref == nil then
      ref = cast(ref_t, ref_of(self))
      refs[self] = ref
    end
    local b = ref.record
    if b == nil or b.closed ~= 0 or b.reg.closed ~= 0 then return nil end
    return b
  end

  local function rejection(h, st)
    local reason = st == core.CB_STATE_FORCED_OPEN and "forced_open"
      or st == core.CB_STATE_HALF_OPEN and "half_open_full" or "open"
    local wait = 0
    if cb_retry_after(h, out) == 0 then
      wait = out[0] == NEVER and math.huge or tonumber(out[0]) / 1e9
    end
    return nil, reason, wait
  end

  local c_acquire = breaker_methods.acquire
  local function library_acquire(self, h)
    local st = cb_allow(h, out)
    if st == 0 then return out[0] end
    if st == core.CB_REJECTED then return rejection(h, cb_state(h)) end
    return c_acquire(self) -- raises the library's error (a breaker destroyed elsewhere)
  end

  local function acquire(self)
    local b = record_of(self)
    if b == nil then return c_acquire(self) end
    local h = b.handle
    if not live then return library_acquire(self, h) end
    local i = band(h, SLOT_MASK)
    local decision, t = decide_allow(h, lines[i * 8], open_words, monotonic_ns)
    if decision == ALLOW_ADMIT then
      count_in(h, i, 0)
      return t
    end
    if decision == ALLOW_LIBRARY then return library_acquire(self, h) end
    count_in(h, i, 1)
    return rejection(h, decision == ALLOW_REJECT_FORCED and core.CB_STATE_FORCED_OPEN or core.CB_STATE_OPEN)
  end

  local c_report = breaker_methods._report
  local function report(self, t, outcome)
    local b = record_of(self)
    if b == nil or type(t) ~= "cdata" then return c_report(self, t, outcome) end
    local h = b.handle
    if live then
      local i = band(h, SLOT_MASK)
      if quiet_success(h, lines[i * 8], t, outcome) then
        count_in(h, i, 2)
        return
      end
    end
    local st = cb_done(h, cast(ticket_t, t), outcome)
    if st < 0 then return c_report(self, tostring(t):match("^%d+"), outcome) end -- raises the library's error
  end
  return {
    acquire = acquire,
    report = report,
    success = function(self, t) return report(self, t, SUCCESS) end,
    failure = function(self, t) return report(self, t, FAILURE) end,
    ignore = function(self, t) return report(self, t, IGNORED) end,
    mode = quiet and "ffi" or "off",
  }
end

if ffi_ok then
  M._quiet_rules = quiet_rules()
  local path = ffi_path()
  if path then
    breaker_methods.acquire, breaker_methods._report = path.acquire, path.report
    breaker_methods.success, breaker_methods.failure, breaker_methods.ignore = path.success, path.failure, path.ignore
    M.fastpath = path.mode
  else
    M.fastpath = "c"
  end
end

local acquire, report = breaker_methods.acquire, breaker_methods._report
local outcome_of = { success = SUCCESS, failure = FAILURE, ignored = IGNORED }

-- b:done(ticket, "success" | "failure" | "ignored"): the outcome of a
-- ticket by name (as permit:report), for any ticket acquire gave.
function breaker_methods:done(t, outcome)
  local o = outcome_of[outcome]
  if not o then fail(2, "done: expected \"success\", \"failure\" or \"ignored\", got %s", tostring(outcome)) end
  return report(self, t, o)
end

-- breaker:call(fn, ...): fn's results; nil, reason, retry_after when
-- rejected; a raised error is a failure (unless classify says otherwise)
-- and is raised again, unchanged. Through the cheap two-step: a call that
-- never returns (a coroutine dropped mid-call) reports nothing, and a
-- probe it held expires after half_open_timeout.

local function settle(b, t, classify, ok, ...)
  if classify then
    local fine, verdict = pcall(classify, ok, ...)
    local outcome = fine and outcome_of[verdict]
    if not outcome then
      report(b, t, FAILURE)
      if not fine then error(verdict, 0) end
      fail(3, "classify returned %s; expected \"success\", \"failure\" or \"ignored\"", tostring(verdict))
    end
    report(b, t, outcome)
  else
    report(b, t, ok and SUCCESS or FAILURE)
  end
  if not ok then error((...), 0) end
  return ...
end

-- Whether fn can be called: a function, or a value whose metatable has
-- __call (read raw: a __metatable field must not hide it).
local getmetatable_raw = debug and debug.getmetatable or getmetatable
local function callable(fn)
  local mt = getmetatable_raw(fn)
  return type(mt) == "table" and rawget(mt, "__call") ~= nil
end

function breaker_methods:call(fn, ...)
  -- Checked before asking the breaker: not the dependency's failure, the
  -- caller's; raised at the caller's line, counted nowhere.
  if type(fn) ~= "function" and not callable(fn) then
    fail(2, "bad argument #1 to 'call' (expected a function, got %s)", type(fn))
  end
  local t, reason, retry_after = acquire(self)
  if not t then return nil, reason, retry_after end
  return settle(self, t, classifiers[self], pcall(fn, ...))
end

-- permit:report("success" | "failure" | "ignored")
local verdicts = { success = permit_methods.success, failure = permit_methods.failure, ignored = permit_methods.ignore }
function permit_methods:report(outcome)
  local report = verdicts[outcome]
  if not report then fail(2, "report: expected \"success\", \"failure\" or \"ignored\", got %s", tostring(outcome)) end
  return report(self)
end

-- ---- registries -------------------------------------------------------------------
local default
function M.default_registry()
  default = default or core.default_registry()
  return default
end

-- lb.registry{ capacity = N, manual_clock = true, event_capacity = N }
-- A shared registry, the file every process opening the same path shares:
-- lb.registry{ path = "/dev/shm/app.lbr", create = true, exclusive = false,
--              any_owner = false, mode = tonumber("660", 8) }
-- (a missing file without create raises CB_ENOENT; with exclusive an
-- existing one raises CB_EEXIST; mode defaults to 0600; a create raises
-- CB_EPERM for an existing file another user than this process's or root
-- owns, or others may write beyond mode, unless any_owner; a symlink at
-- the path always; CB_EBUSY when another process held the file's lock 5 s).
local option_keys = {
  capacity = true, event_capacity = true, manual_clock = true,
  path = true, create = true, exclusive = true, any_owner = true, mode = true,
}
local flag_keys = {
  create = "CB_REGISTRY_CREATE", exclusive = "CB_REGISTRY_EXCLUSIVE", any_owner = "CB_REGISTRY_ANY_OWNER",
}
function M.registry(options)
  options = options or {}
  if type(options) ~= "table" then fail(2, "registry: expected a table of options, got %s", type(options)) end
  local opts = core.cb_registry_options()
  local path = options.path
  if path ~= nil and type(path) ~= "string" then fail(2, "path: expected a string, got %s", type(path)) end
  local flags = 0
  for key, value in pairs(options) do
    if not option_keys[key] then fail(2, "registry: unknown option %s", tostring(key)) end
    if key == "manual_clock" then
      opts.clock = value and core.CB_CLOCK_MANUAL or core.CB_CLOCK_MONOTONIC
    elseif flag_keys[key] then
      if type(value) ~= "boolean" then fail(2, "%s: expected a boolean, got %s", key, type(value)) end
      if value then flags = flags + core[flag_keys[key]] end
    elseif key == "path" then
      -- passed beside the options (objects.c)
    else
      local ok, err = pcall(set_field, opts, key, value)
      if not ok then fail(2, "%s: %s", key, tostring(err):gsub("^.-lazybreaker: ", "")) end
    end
  end
  opts.flags = flags
  return core.registry_open(opts, path)
end

-- The default registry's shortcuts: lb.new{...}, lb.lookup(name), ...
function M.new(settings) return M.default_registry():new(settings) end
function M.lookup(name) return M.default_registry():lookup(name) end
function M.breakers() return M.default_registry():breakers() end
function M.poll_events(max) return M.default_registry():poll_events(max) end
function M.prometheus() return M.default_registry():prometheus() end

-- The low layer, for what this module does not cover.
M.core = core

return M
