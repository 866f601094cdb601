# The distro packages, one per install component. Included from
# cmake/Install.cmake; packaging/CPackSetup.cmake turns the list into CPack
# settings once every directory has been read.
#
# lb_package(<Component>
#   DEB <name> RPM <name> SECTION <debian section> GROUP <rpm group>
#   SUMMARY <one line> DESCRIPTION <paragraph>
#   [DEPENDS_ON_RUNTIME] [DEB_DEPENDS <deps>] [RPM_REQUIRES <reqs>]
#   [DEB_CONTROL_EXTRA <file>...])
# declares the package that carries <Component>. DEPENDS_ON_RUNTIME makes it
# require exactly this version of the runtime package (a -dev package, a
# tool, a binding); DEB_DEPENDS and RPM_REQUIRES add more (an interpreter's
# version range), DEB_CONTROL_EXTRA maintainer scripts of its own. A
# component that ends up with no install rule (the tools before the demo
# exists, a binding switched off) makes no package.
#
# A binding adds its own package from its CMakeLists.txt, e.g.
#   lb_package(Java DEB liblazybreaker-java RPM lazybreaker-java SECTION java
#     GROUP Development/Libraries SUMMARY "..." DESCRIPTION "..." DEPENDS_ON_RUNTIME)
include_guard(GLOBAL)

#
# Optional, for a package that needs more than files (php-lazybreaker):
#   DEB_DEPENDS <text>           more Depends: of the .deb
#   DEB_CONTROL_EXTRA <file>...  maintainer scripts and conffiles of the .deb
#   RPM_USER_FILELIST <line>...  %config lines for the .rpm's file list
function(lb_package component)
  cmake_parse_arguments(P "DEPENDS_ON_RUNTIME" "DEB;RPM;SECTION;GROUP;SUMMARY;DESCRIPTION;DEB_DEPENDS;RPM_REQUIRES"
                        "DEB_CONTROL_EXTRA;RPM_USER_FILELIST" ${ARGN})
  foreach(field DEB RPM SECTION GROUP SUMMARY DESCRIPTION)
    if(NOT P_${field})
      message(FATAL_ERROR "lb_package(${component}): ${field} is required")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY LB_PACKAGE_COMPONENTS ${component})
  foreach(field DEB RPM SECTION GROUP SUMMARY DESCRIPTION DEPENDS_ON_RUNTIME DEB_DEPENDS RPM_REQUIRES
                DEB_CONTROL_EXTRA RPM_USER_FILELIST)
    set_property(GLOBAL PROPERTY LB_PACKAGE_${component}_${field} "${P_${field}}")
  endforeach()
endfunction()

# Descriptions: lines of at most 79 characters (Debian and RPM both ask
# it); "\n\n" separates paragraphs.
set(_lb_about "lazybreaker is a circuit breaker for calls to a downstream dependency.
Recovery is lazy: it starts no thread and arms no timer, and its request
path is a handful of atomic operations. One stable C ABI serves C, C++
and the language bindings.")

lb_package(Runtime DEB liblazybreaker${PROJECT_VERSION_MAJOR} RPM lazybreaker
  SECTION libs GROUP System\ Environment/Libraries
  SUMMARY "Lazy, lock-free circuit breaker library"
  DESCRIPTION "${_lb_about}\n\nThis package contains the shared library.")
lb_package(Development DEB liblazybreaker-dev RPM lazybreaker-devel
  SECTION libdevel GROUP Development/Libraries DEPENDS_ON_RUNTIME
  SUMMARY "Lazy, lock-free circuit breaker library - development files"
  DESCRIPTION "${_lb_about}\n\nThis package contains the C header lazybreaker.h (the stable C ABI),
fastpath.h (the published quiet path, for bindings),
the header-only C++17 wrapper lazybreaker.hpp, the static library, the
pkg-config file, the CMake package (find_package(lazybreaker)) and the
documentation and examples.")
lb_package(Tools DEB lazybreaker-tools RPM lazybreaker-tools
  SECTION utils GROUP Applications/System DEPENDS_ON_RUNTIME
  SUMMARY "Lazy, lock-free circuit breaker library - command-line tools"
  DESCRIPTION "${_lb_about}\n\nThis package contains the command-line tools: cbctl lists, shows,
watches, trips, forces open, disables, resets, creates and destroys the
breakers of a registry file that processes share, and serves their
Prometheus metrics over HTTP (with its manual page and bash completion);
lazybreaker-agent links a host's registry files to one breaker state per
name across a fleet of hosts, through Redis (with its manual page and a
systemd unit); lazybreaker-demo walks a breaker through its states.")
unset(_lb_about)

# Defer the CPack setup to the end of the top-level directory, after every
# add_subdirectory (bindings included) has declared its packages.
# (Deferred arguments are evaluated late, so the path is spelled out now.)
cmake_language(EVAL CODE "cmake_language(DEFER DIRECTORY [[${PROJECT_SOURCE_DIR}]]
  CALL include [[${CMAKE_CURRENT_LIST_DIR}/CPackSetup.cmake]])")
