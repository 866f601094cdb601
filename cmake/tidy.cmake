# The size gate of src/, tools/ and the bindings' hand-written C (CTest label `tidy`): clang-tidy with the
# repository's .clang-tidy (no function over 80 lines or over cognitive
# complexity 30) over every .cpp there, through this build's
# compile_commands.json; any warning fails it (cmake/tidy.sh). Without
# clang-tidy (Debian: clang-tidy) the test is skipped loudly (recorded in
# skipped-bindings.txt, which `make test` announces, and reported by CTest
# as skipped) or, with CI=true, a configure error.
#
# The gate is about the source, not the build: the sanitizer trees
# (LB_SANITIZE) would only run it again on the same files, so it is
# registered in the release tree alone.
include_guard(GLOBAL)
if(LB_SANITIZE)
  return()
endif()

find_program(LB_CLANG_TIDY NAMES clang-tidy clang-tidy-19 clang-tidy-18 clang-tidy-17 clang-tidy-16
                                 clang-tidy-15 clang-tidy-14)
if(NOT LB_CLANG_TIDY)
  set(_lb_why "clang-tidy not found (Debian: clang-tidy)")
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "lazybreaker: the tidy gate cannot run: ${_lb_why} "
                        "(CI=true: a missing tool is an error; packaging/install-deps.sh installs it)")
  endif()
  message(WARNING "lazybreaker: SKIPPING the tidy gate (label tidy): ${_lb_why}. "
                  "Run packaging/install-deps.sh.")
  file(APPEND ${LB_SKIPPED_BINDINGS_FILE} "tidy (function size gate): ${_lb_why}\n")
  # Still a test, so that `ctest -L tidy` says it did not run rather than
  # finding nothing to run.
  add_test(NAME tidy.functions_within_size_limits
           COMMAND sh -c "echo 'SKIPPED: ${_lb_why}' >&2; exit 77")
  set_tests_properties(tidy.functions_within_size_limits PROPERTIES LABELS tidy SKIP_RETURN_CODE 77)
  return()
endif()

# cbctl's sources have compile commands only when cbctl is built; when it is
# not (its libraries are missing, or LB_CBCTL=OFF), the gate cannot parse
# them, says so in skipped-bindings.txt, and checks the rest.
set(_lb_tidy_unbuilt "")
# The Windows half of the platform layer is compiled only by the Windows
# tree (label windows): checked here with clang's mingw target and the
# C++ and Windows headers of mingw-w64's -posix g++ (from its include search
# list), when that is installed; else not at all, and said so.
set(_lb_tidy_windows src/platform/windows.cpp src/platform/windows_shared_file.cpp)
list(APPEND _lb_tidy_unbuilt ${_lb_tidy_windows})
set(_lb_tidy_cross "")
find_program(LB_TIDY_MINGW_CXX x86_64-w64-mingw32-g++-posix)
if(LB_TIDY_MINGW_CXX)
  execute_process(COMMAND ${LB_TIDY_MINGW_CXX} -xc++ -E -v -
                  INPUT_FILE /dev/null OUTPUT_QUIET ERROR_VARIABLE _lb_mingw_search)
  string(REGEX MATCH "#include <...> search starts here:\n(.*)\nEnd of search list" _lb_found
               "${_lb_mingw_search}")
  string(REGEX REPLACE "\n *" ";" _lb_mingw_dirs "${CMAKE_MATCH_1}")
  set(_lb_tidy_cross --cross ${_lb_tidy_windows} --flags --target=x86_64-w64-mingw32 -std=c++20
                     -nostdinc++ -I${PROJECT_SOURCE_DIR}/src -I${PROJECT_SOURCE_DIR}/include)
  foreach(_lb_dir IN LISTS _lb_mingw_dirs)
    string(STRIP "${_lb_dir}" _lb_dir)
    # GCC's own headers (intrinsics) are not clang's: clang brings its own.
    if(_lb_dir AND NOT _lb_dir MATCHES "/gcc/[^/]+/[^/]+/include(-fixed)?$")
      list(APPEND _lb_tidy_cross -isystem ${_lb_dir})
    endif()
  endforeach()
else()
  file(APPEND ${LB_SKIPPED_BINDINGS_FILE}
       "tidy (function size gate): ${_lb_tidy_windows} not checked (no x86_64-w64-mingw32-g++-posix)\n")
endif()
if(NOT LB_CBCTL_ENABLED)
  # The agent and the fleet code they share are built with cbctl alone.
  list(APPEND _lb_tidy_unbuilt tools/cbctl tools/agent tools/fleet)
  file(APPEND ${LB_SKIPPED_BINDINGS_FILE}
       "tidy (function size gate): tools/cbctl, tools/agent and tools/fleet not checked (cbctl is not built)\n")
endif()
add_test(NAME tidy.functions_within_size_limits
         COMMAND ${PROJECT_SOURCE_DIR}/cmake/tidy.sh ${LB_CLANG_TIDY} ${PROJECT_SOURCE_DIR}
                 ${PROJECT_BINARY_DIR} ${_lb_tidy_unbuilt} ${_lb_tidy_cross})
# clang-tidy parses as a compiler does: two files at a time (tidy.sh), so
# it counts for two.
set_tests_properties(tidy.functions_within_size_limits PROPERTIES LABELS tidy PROCESSORS 2 TIMEOUT 900)
