# Install rules of the Lua binding (component Lua, package lua-lazybreaker):
# each interpreter's C module and the Lua module where Debian's (and
# Fedora's) Lua 5.4 and LuaJIT look for them:
#   <libdir>/lua/5.4/lazybreaker_core.so   /usr/share/lua/5.4/lazybreaker.lua
#   <libdir>/lua/5.1/lazybreaker_core.so   /usr/share/lua/5.1/lazybreaker.lua  (LuaJIT)
# (<libdir>: lib/x86_64-linux-gnu on Debian, lib64 on RPM distros; both are
# in the interpreters' default package.cpath.)
foreach(flavour IN LISTS LB_LUA_ENABLED_FLAVOURS)
  install(TARGETS lazybreaker_${flavour}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/lua/${LB_${flavour}_ABI} COMPONENT Lua)
  install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/lazybreaker.lua
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lua/${LB_${flavour}_ABI} COMPONENT Lua)
endforeach()

lb_package(Lua DEB lua-lazybreaker RPM lua-lazybreaker SECTION interpreters GROUP Development/Libraries
  DEPENDS_ON_RUNTIME
  SUMMARY "Lazy, lock-free circuit breaker library - Lua 5.4 and LuaJIT module"
  DESCRIPTION "lazybreaker is a circuit breaker for calls to a downstream dependency.
Recovery is lazy: it starts no thread and arms no timer, and its request
path is a handful of atomic operations.

This package contains the Lua module: require \"lazybreaker\" from Lua 5.4
and from LuaJIT 2.1 (and so OpenResty).")
