# cbctl (tools/cbctl): the command-line tool over a shared registry file, and
# lazybreaker-agent (tools/agent), which links a host's files to a fleet
# through Redis, in the Tools component (package lazybreaker-tools). They
# need CLI11 (Debian's libcli11-dev) for their arguments, cpp-httplib
# (libcpp-httplib-dev) for `cbctl serve` and the agent's --listen, and
# hiredis (libhiredis-dev) and OpenSSL (libssl-dev) for the fleet. Like a binding, it is on by default at top level and, when
# a dependency is missing, skipped loudly (recorded in skipped-bindings.txt,
# which `make test` announces) or, with CI=true, a configure error.
include_guard(GLOBAL)
option(LB_CBCTL "Build cbctl, the command-line tool over registry files (CLI11, cpp-httplib)"
       ${PROJECT_IS_TOP_LEVEL})
if(NOT LB_CBCTL)
  return()
endif()

function(_lb_cbctl_unavailable why)
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "lazybreaker: cbctl cannot be built: ${why} "
                        "(CI=true: a missing dependency is an error; packaging/install-deps.sh installs it)")
  endif()
  message(WARNING "lazybreaker: SKIPPING cbctl: ${why}. "
                  "Run packaging/install-deps.sh, or switch it off on purpose (-DLB_CBCTL=OFF).")
  file(APPEND ${LB_SKIPPED_BINDINGS_FILE} "cbctl (tool): ${why}\n")
endfunction()

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  _lb_cbctl_unavailable("CLI11 not found (Debian: libcli11-dev)")
  return()
endif()

# cpp-httplib as upstream installs it (CMake package httplib::httplib), or
# as Debian does: a compiled libcpp-httplib.so described by pkg-config only,
# whose Cflags (-DCPPHTTPLIB_OPENSSL_SUPPORT, ...) must match the library's
# build, so they are taken from the .pc file, never guessed.
find_package(httplib CONFIG QUIET)
if(TARGET httplib::httplib)
  set(LB_CBCTL_HTTPLIB httplib::httplib)
else()
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(LB_CPP_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
  endif()
  if(NOT LB_CPP_HTTPLIB_FOUND)
    _lb_cbctl_unavailable("cpp-httplib not found (Debian: libcpp-httplib-dev)")
    return()
  endif()
  set(LB_CBCTL_HTTPLIB PkgConfig::LB_CPP_HTTPLIB)
endif()

# hiredis (Debian's libhiredis-dev, 0.14) for the fleet: `cbctl fleet` and
# lazybreaker-agent (tools/agent), which share tools/fleet.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(LB_HIREDIS QUIET IMPORTED_TARGET hiredis)
endif()
if(NOT LB_HIREDIS_FOUND)
  _lb_cbctl_unavailable("hiredis not found (Debian: libhiredis-dev)")
  return()
endif()

# OpenSSL (libssl-dev) for TLS to Redis (rediss://), which the fleet's
# connection does itself: hiredis 0.14 has no TLS.
find_package(OpenSSL QUIET)
if(NOT OPENSSL_FOUND)
  _lb_cbctl_unavailable("OpenSSL not found (Debian: libssl-dev)")
  return()
endif()

set(LB_CBCTL_ENABLED ON)
add_subdirectory(${PROJECT_SOURCE_DIR}/tools/fleet ${PROJECT_BINARY_DIR}/tools/fleet)
add_subdirectory(${PROJECT_SOURCE_DIR}/tools/cbctl ${PROJECT_BINARY_DIR}/tools/cbctl)
add_subdirectory(${PROJECT_SOURCE_DIR}/tools/agent ${PROJECT_BINARY_DIR}/tools/agent)
