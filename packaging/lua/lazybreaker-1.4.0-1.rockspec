-- LuaRocks: the Lua module `lazybreaker`, built against an installed
-- liblazybreaker (Debian: liblazybreaker-dev; or `cmake --install`). SWIG
-- generates the C module from bindings/swig/lua.i, as the CMake build does.
--   luarocks --lua-version 5.4 make packaging/lua/lazybreaker-*.rockspec   (from a checkout)
--   luarocks --lua-version 5.4 make ... LAZYBREAKER_DIR=/opt/lazybreaker  (another prefix)
--   luarocks --lua-version 5.1 make ... LUA_INCDIR=/usr/include/luajit-2.1
--                                       (LuaJIT; OpenResty's luarocks knows it)
-- (Debian's luarocks builds for Lua 5.1 unless told --lua-version.)
-- The version is the header's (CB_VERSION_*): LuaRocks wants it in this
-- file's name and in `version` and `tag` below; the docs test
-- (tests/docs) fails until all three follow a new header.
rockspec_format = "3.0"
package = "lazybreaker"
version = "1.4.0-1"
source = {
  url = "git+https://github.com/lazybreaker/lazybreaker.git",
  tag = "v1.4.0",
}
description = {
  summary = "A lazy, lock-free circuit breaker (C library) for Lua 5.4, LuaJIT and OpenResty",
  detailed = [[
lazybreaker is a circuit breaker for calls to a downstream dependency.
Recovery is lazy: it starts no thread and arms no timer, and its request
path is a handful of atomic operations. The state machine is the C
library's; this module gives Lua breaker:call(fn, ...), permits, events and
Prometheus text.]],
  homepage = "https://github.com/lazybreaker/lazybreaker",
  license = "MIT",
  labels = { "circuit-breaker", "resilience", "openresty" },
}
dependencies = {
  "lua >= 5.1, < 5.5", -- Lua 5.4 and LuaJIT 2.1 (5.1 API) are tested
}
external_dependencies = {
  LAZYBREAKER = {
    header = "lazybreaker/lazybreaker.h",
    library = "lazybreaker",
  },
}
build_dependencies = {}
build = {
  type = "command",
  -- SWIG 4 must be on PATH (Debian: swig).
  build_command = [[
swig -lua -Ibindings/swig -Ibindings/lua -I$(LAZYBREAKER_INCDIR) -o lazybreaker_core_wrap.c bindings/swig/lua.i &&
$(CC) $(CFLAGS) -std=c11 -fno-strict-aliasing -I$(LUA_INCDIR) -I$(LAZYBREAKER_INCDIR) -Ibindings/lua -c lazybreaker_core_wrap.c -o lazybreaker_core_wrap.o &&
$(LD) $(LIBFLAG) -o lazybreaker_core.$(LIB_EXTENSION) lazybreaker_core_wrap.o -L$(LAZYBREAKER_LIBDIR) -llazybreaker
]],
  install = {
    lua = { lazybreaker = "bindings/lua/lazybreaker.lua" },
    lib = { lazybreaker_core = "lazybreaker_core.so" },
  },
}
