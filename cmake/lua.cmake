# The Lua binding (bindings/lua, module `lazybreaker`): SWIG's low layer
# from bindings/swig/lua.i plus the objects of bindings/lua/objects.c, one
# C module source built twice, for Lua 5.4 and for LuaJIT 2.1 (Debian's
# liblua5.4-dev and libluajit-5.1-dev), the Lua layer bindings/lua/
# lazybreaker.lua, their tests on both interpreters (CTest label `lua`) and
# bench/lua. Returns early when switched off; an interpreter that is missing
# is reported through lb_binding_unavailable (fatal under CI=true).
include_guard(GLOBAL)
option(LB_LUA "Build the Lua binding (SWIG, Lua 5.4 and LuaJIT 2.1)" ${PROJECT_IS_TOP_LEVEL})
if(NOT LB_LUA)
  return()
endif()

include(swig)
lb_find_swig(Lua _lb_have_swig)
if(NOT _lb_have_swig)
  return()
endif()

# One entry per interpreter: <id> <interpreter> <pkg-config module> <Lua ABI
# version, the directory name in Debian's package.cpath>.
find_package(PkgConfig QUIET)
set(LB_LUA_ENABLED_FLAVOURS "")
foreach(_lb_entry "lua54 lua5.4 lua5.4 5.4" "luajit luajit luajit 5.1")
  separate_arguments(_lb_entry)
  list(GET _lb_entry 0 _lb_id)
  list(GET _lb_entry 1 _lb_exe)
  list(GET _lb_entry 2 _lb_pc)
  list(GET _lb_entry 3 _lb_abi)
  find_program(LB_${_lb_id}_EXECUTABLE ${_lb_exe})
  set(_lb_found FALSE)
  if(PkgConfig_FOUND)
    pkg_check_modules(LB_${_lb_id} QUIET ${_lb_pc})
    set(_lb_found ${LB_${_lb_id}_FOUND})
  endif()
  if(NOT LB_${_lb_id}_EXECUTABLE OR NOT _lb_found)
    lb_binding_unavailable(Lua "no ${_lb_exe} interpreter or headers (Debian: ${_lb_exe} and lib${_lb_pc}-dev)")
    continue()
  endif()
  list(APPEND LB_LUA_ENABLED_FLAVOURS ${_lb_id})
  set(LB_${_lb_id}_ABI ${_lb_abi})
endforeach()
unset(_lb_found)
if(NOT LB_LUA_ENABLED_FLAVOURS)
  return()
endif()
set(LB_LUA_ENABLED ON)
add_subdirectory(${PROJECT_SOURCE_DIR}/bindings/lua ${PROJECT_BINARY_DIR}/bindings/lua)
