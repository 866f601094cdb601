-- The Lua half of tests/cross_language, run as its own process by CTest
-- (cross_language.lua_<flavour>_sees_the_c_trip): the registry file a C
-- program made and tripped "payments" in is opened here, "payments" is open
-- and rejects, and "tripped-by-<language>" is tripped for the C program to
-- see. The settings equal the C program's configuration field for field,
-- or get_or_create would raise CB_EEXIST.
local lb = require "lazybreaker"

local file = assert(os.getenv("LB_CROSS_LANGUAGE_FILE"), "run by tests/cross_language/check.sh")
local language = assert(os.getenv("LB_CROSS_LANGUAGE"), "run by tests/cross_language/check.sh")
local settings = { failure_threshold = 1, open_duration = 300 }

local shared = lb.registry { path = file, manual_clock = true }
local payments = shared:get_or_create("payments", settings)
assert(payments:state() == "open", "payments: " .. payments:state())
local permit, reason, retry_after = payments:allow()
assert(permit == nil and reason == "open", "payments admitted a call")
local result, why = payments:call(function() return "never" end)
assert(result == nil and why == "open", "call ran on an open breaker")
print(("%s: payments rejects, retry after %s s"):format(language, tostring(retry_after)))

local name = "tripped-by-" .. language
local mine = shared:get_or_create(name, settings)
mine:allow():failure()
assert(mine:state() == "open", name .. ": " .. mine:state())
shared:close()
