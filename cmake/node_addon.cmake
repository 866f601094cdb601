# lb_node_addon(<target> <include dir> <output dir> [sources...]): the
# Node-API addon of bindings/node/src/*.c (and the sources given) as
# <output dir>/lazybreaker.node, compiled against the node_api.h in
# <include dir> and linked with the library: the Linux addon and its
# prebuilt copy (cmake/node.cmake), the Windows one (cmake/node_windows.cmake).
include_guard(GLOBAL)
function(lb_node_addon target include_dir output_dir)
  file(GLOB _lb_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/bindings/node/src/*.c)
  add_library(${target} MODULE ${_lb_sources} ${ARGN})
  target_include_directories(${target} PRIVATE ${include_dir} ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(${target} PRIVATE NODE_GYP_MODULE_NAME=lazybreaker)
  # Node resolves the napi_* symbols when it loads the addon.
  target_link_libraries(${target} PRIVATE lazybreaker lb_build_options)
  set_target_properties(${target} PROPERTIES PREFIX "" SUFFIX ".node" OUTPUT_NAME lazybreaker
                        LIBRARY_OUTPUT_DIRECTORY ${output_dir} C_VISIBILITY_PRESET hidden)
endfunction()
