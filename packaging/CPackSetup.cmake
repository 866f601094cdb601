# CPack: .deb and .rpm, one package per component declared with
# lb_package() (packaging/Packages.cmake). Runs deferred, at the end of the
# top-level CMakeLists.txt. packaging/make-packages.sh configures one build
# tree per package format (the libdir differs: lib/<multiarch> for Debian,
# lib64 for RPM distros) and runs cpack in each.
include_guard(GLOBAL)

set(LB_PACKAGE_MAINTAINER "The lazybreaker authors <lazybreaker@users.noreply.github.com>"
    CACHE STRING "Maintainer field of the distro packages")
set(_lb_pkgdir ${CMAKE_CURRENT_LIST_DIR})
set(_lb_full_version "${PROJECT_VERSION}-${LB_PACKAGE_RELEASE}")

if(LB_PACKAGE_LAYOUT AND NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(WARNING "LB_PACKAGE_LAYOUT=${LB_PACKAGE_LAYOUT} wants CMAKE_INSTALL_PREFIX=/usr "
                  "(it is ${CMAKE_INSTALL_PREFIX}): lazybreaker.pc records the prefix")
endif()

# The changelogs must name the version being packaged.
file(STRINGS ${_lb_pkgdir}/debian/changelog _lb_deb_top LIMIT_COUNT 1)
file(STRINGS ${_lb_pkgdir}/rpm/changelog _lb_rpm_top LIMIT_COUNT 1)
if(NOT _lb_deb_top MATCHES "^lazybreaker \\(${_lb_full_version}\\) "
   OR NOT _lb_rpm_top MATCHES " - ${_lb_full_version}$")
  message(WARNING "packaging/debian/changelog and packaging/rpm/changelog must start with an "
                  "entry for ${_lb_full_version}")
endif()

# --- the packages that have files ---------------------------------------------
get_cmake_property(_lb_installed COMPONENTS)
get_property(_lb_declared GLOBAL PROPERTY LB_PACKAGE_COMPONENTS)
foreach(_lb_c IN LISTS _lb_installed)
  if(NOT _lb_c IN_LIST _lb_declared)
    message(WARNING "install component '${_lb_c}' has no package: declare it with lb_package()")
  endif()
endforeach()
get_property(_lb_runtime_deb GLOBAL PROPERTY LB_PACKAGE_Runtime_DEB)
get_property(_lb_runtime_rpm GLOBAL PROPERTY LB_PACKAGE_Runtime_RPM)

# %{_isa}, e.g. "(x86-64)", so that -devel requires the runtime of its own
# architecture, as Fedora's guidelines ask.
set(_lb_rpm_isa "")
find_program(LB_RPM_EXECUTABLE rpm)
if(LB_RPM_EXECUTABLE)
  execute_process(COMMAND ${LB_RPM_EXECUTABLE} --eval "%{?_isa}" OUTPUT_VARIABLE _lb_rpm_isa
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()

if(LB_PACKAGE_LAYOUT STREQUAL "deb")
  # Debian wants changelogs compressed with gzip -9n (no name, no time).
  file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/packaging)
  execute_process(COMMAND gzip -9nc ${_lb_pkgdir}/debian/changelog
                  OUTPUT_FILE ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz
                  RESULT_VARIABLE _lb_rc)
  if(_lb_rc)
    message(FATAL_ERROR "gzip failed: ${_lb_rc}")
  endif()
endif()

set(CPACK_COMPONENTS_ALL "")
foreach(_lb_c IN LISTS _lb_declared)
  foreach(_lb_f DEB RPM SECTION GROUP SUMMARY DESCRIPTION DEPENDS_ON_RUNTIME DEB_DEPENDS RPM_REQUIRES
                DEB_CONTROL_EXTRA RPM_USER_FILELIST)
    get_property(_lb_${_lb_f} GLOBAL PROPERTY LB_PACKAGE_${_lb_c}_${_lb_f})
  endforeach()
  if(NOT _lb_c IN_LIST _lb_installed)
    message(STATUS "lazybreaker: component ${_lb_c} installs nothing: no ${_lb_DEB} package")
    continue()
  endif()
  list(APPEND CPACK_COMPONENTS_ALL ${_lb_c})
  string(TOUPPER ${_lb_c} _lb_C)

  # licence and changelog, where each distro looks for them
  if(LB_PACKAGE_LAYOUT STREQUAL "deb")
    install(FILES ${_lb_pkgdir}/debian/copyright ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz
      DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_lb_DEB} COMPONENT ${_lb_c})
    # lintian overrides, only where a package needs one
    # (packaging/debian/<Component>.lintian-overrides); each says why, and
    # the packaging test fails on one that matches nothing.
    if(EXISTS ${_lb_pkgdir}/debian/${_lb_c}.lintian-overrides)
      set(DEB_NAME ${_lb_DEB})
      file(READ ${_lb_pkgdir}/debian/${_lb_c}.lintian-overrides _lb_overrides)
      string(CONFIGURE "${_lb_overrides}" _lb_overrides @ONLY)
      file(WRITE ${PROJECT_BINARY_DIR}/packaging/lintian/${_lb_DEB} "${_lb_overrides}")
      install(FILES ${PROJECT_BINARY_DIR}/packaging/lintian/${_lb_DEB}
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides COMPONENT ${_lb_c})
    endif()
  elseif(LB_PACKAGE_LAYOUT STREQUAL "rpm")
    install(FILES ${PROJECT_SOURCE_DIR}/LICENSE
      DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/licenses/${_lb_RPM} COMPONENT ${_lb_c})
    set(CPACK_RPM_${_lb_C}_USER_FILELIST
      "%license ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATAROOTDIR}/licenses/${_lb_RPM}/LICENSE")
  endif()

  set(CPACK_COMPONENT_${_lb_C}_DISPLAY_NAME "${_lb_SUMMARY}")
  set(CPACK_DEBIAN_${_lb_C}_PACKAGE_NAME ${_lb_DEB})
  set(CPACK_DEBIAN_${_lb_C}_PACKAGE_SECTION ${_lb_SECTION})
  set(CPACK_DEBIAN_${_lb_C}_DESCRIPTION "${_lb_SUMMARY}\n${_lb_DESCRIPTION}")
  set(CPACK_RPM_${_lb_C}_PACKAGE_NAME ${_lb_RPM})
  set(CPACK_RPM_${_lb_C}_PACKAGE_GROUP "${_lb_GROUP}")
  set(CPACK_RPM_${_lb_C}_PACKAGE_SUMMARY "${_lb_SUMMARY}")
  set(CPACK_RPM_${_lb_C}_PACKAGE_DESCRIPTION "${_lb_DESCRIPTION}")
  if(_lb_DEPENDS_ON_RUNTIME)
    # Exactly this build of the runtime: -dev's unversioned link and the
    # tools are only right against the library they were built with.
    set(CPACK_DEBIAN_${_lb_C}_PACKAGE_DEPENDS "${_lb_runtime_deb} (= ${_lb_full_version})")
    set(CPACK_RPM_${_lb_C}_PACKAGE_REQUIRES "${_lb_runtime_rpm}${_lb_rpm_isa} = ${_lb_full_version}")
  endif()
  # more dependencies and maintainer scripts of the package's own (lb_package)
  foreach(_lb_pair "DEB_DEPENDS;DEBIAN;PACKAGE_DEPENDS;, " "RPM_REQUIRES;RPM;PACKAGE_REQUIRES;, ")
    list(GET _lb_pair 0 _lb_key)
    list(GET _lb_pair 1 _lb_gen)
    list(GET _lb_pair 2 _lb_var)
    list(GET _lb_pair 3 _lb_sep)
    if(_lb_${_lb_key})
      if(CPACK_${_lb_gen}_${_lb_C}_${_lb_var})
        string(APPEND CPACK_${_lb_gen}_${_lb_C}_${_lb_var} "${_lb_sep}${_lb_${_lb_key}}")
      else()
        set(CPACK_${_lb_gen}_${_lb_C}_${_lb_var} "${_lb_${_lb_key}}")
      endif()
    endif()
  endforeach()
  if(_lb_DEB_CONTROL_EXTRA)
    set(CPACK_DEBIAN_${_lb_C}_PACKAGE_CONTROL_EXTRA ${_lb_DEB_CONTROL_EXTRA})
  endif()
  if(_lb_RPM_USER_FILELIST AND LB_PACKAGE_LAYOUT STREQUAL "rpm")
    list(APPEND CPACK_RPM_${_lb_C}_USER_FILELIST ${_lb_RPM_USER_FILELIST})
  endif()
endforeach()

# --- common metadata -----------------------------------------------------------
set(CPACK_PACKAGE_NAME lazybreaker)
set(CPACK_PACKAGE_VENDOR "The lazybreaker authors")
set(CPACK_PACKAGE_CONTACT "${LB_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# CPack's DEB generator puts a non-default package summary in front of every
# component's description; each component has its own synopsis, so keep
# the default here (CPack.cmake's CPACK_DEFAULT_PACKAGE_DESCRIPTION_SUMMARY).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_PACKAGE_HOMEPAGE_URL ${PROJECT_HOMEPAGE_URL})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_OUTPUT_FILE_PREFIX packages)
set(CPACK_THREADS 0)
if(LB_PACKAGE_LAYOUT STREQUAL "deb")
  set(CPACK_GENERATOR DEB)
elseif(LB_PACKAGE_LAYOUT STREQUAL "rpm")
  set(CPACK_GENERATOR RPM)
elseif(WIN32)
  # `make windows`: one zip of everything installed (the DLL, its import
  # library, the static library, the headers, lazybreaker.pc and the CMake
  # package), under a folder of the zip's own name.
  set(CPACK_GENERATOR ZIP)
  set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)
  set(CPACK_PACKAGE_FILE_NAME lazybreaker-${PROJECT_VERSION}-win-x64)
  set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
  set(CPACK_PACKAGING_INSTALL_PREFIX "")
else()
  set(CPACK_GENERATOR TGZ)
endif()

# --- Debian --------------------------------------------------------------------
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # name_version-revision_arch.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE ${LB_PACKAGE_RELEASE})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # Depends: from dpkg-shlibdeps
# A tool or binding linking liblazybreaker.so.1: dpkg-shlibdeps finds the
# library in the build tree (the runtime package is not installed yet) and,
# with no shlibs for it there (CPack passes --ignore-missing-info), leaves
# the dependency to the exact one lb_package(DEPENDS_ON_RUNTIME) adds.
get_target_property(_lb_libdir lazybreaker BINARY_DIR)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${_lb_libdir})
# shlibs and symbols are written below, not by CPack: CPack's shlibs would
# ask for (>= version-revision), stricter than the ABI needs.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Architecture: left to `dpkg --print-architecture`.

# The runtime's control files: the ldconfig trigger, a symbols file made
# from abi/symbols.txt (each symbol with the version that introduced it,
# from its version node), so that dpkg-shlibdeps gives consumers the lowest
# version they need, and a shlibs file asking for the release that
# introduced the newest version node (for tools that ignore symbols).
set(_lb_symbols "liblazybreaker.so.${PROJECT_VERSION_MAJOR} ${_lb_runtime_deb} #MINVER#\n")
string(APPEND _lb_symbols "* Build-Depends-Package: liblazybreaker-dev\n")
file(STRINGS ${PROJECT_SOURCE_DIR}/abi/symbols.txt _lb_lines REGEX "^[^#]")
set(_lb_nodes "")
set(_lb_newest 0)
foreach(_lb_line IN LISTS _lb_lines)
  if(NOT _lb_line MATCHES "^([A-Za-z0-9_]+)@@(LAZYBREAKER_([0-9]+)\\.([0-9]+))$")
    message(FATAL_ERROR "abi/symbols.txt: cannot read '${_lb_line}'")
  endif()
  set(_lb_since "${CMAKE_MATCH_3}.${CMAKE_MATCH_4}.0")
  if(_lb_since VERSION_GREATER _lb_newest)
    set(_lb_newest ${_lb_since})
  endif()
  string(APPEND _lb_symbols " ${CMAKE_MATCH_1}@${CMAKE_MATCH_2} ${_lb_since}\n")
  if(NOT CMAKE_MATCH_2 IN_LIST _lb_nodes)
    list(APPEND _lb_nodes ${CMAKE_MATCH_2})
    string(APPEND _lb_symbols " ${CMAKE_MATCH_2}@${CMAKE_MATCH_2} ${_lb_since}\n")
  endif()
endforeach()
file(WRITE ${PROJECT_BINARY_DIR}/packaging/debian/symbols "${_lb_symbols}")
file(WRITE ${PROJECT_BINARY_DIR}/packaging/debian/shlibs
  "liblazybreaker ${PROJECT_VERSION_MAJOR} ${_lb_runtime_deb} (>= ${_lb_newest})\n")
configure_file(${_lb_pkgdir}/debian/triggers ${PROJECT_BINARY_DIR}/packaging/debian/triggers COPYONLY)
# Our own postinst/postrm replace the ones CPack writes, which would run
# ldconfig by hand (lintian: maintscript-calls-ldconfig).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
  ${PROJECT_BINARY_DIR}/packaging/debian/symbols ${PROJECT_BINARY_DIR}/packaging/debian/shlibs
  ${PROJECT_BINARY_DIR}/packaging/debian/triggers
  ${_lb_pkgdir}/debian/postinst ${_lb_pkgdir}/debian/postrm)
# lazybreaker-tools makes the agent's user and group and /run/lazybreaker
# from its sysusers.d and tmpfiles.d files (tools/agent/CMakeLists.txt).
set(CPACK_DEBIAN_TOOLS_PACKAGE_CONTROL_EXTRA ${_lb_pkgdir}/debian/tools/postinst)

# --- RPM -----------------------------------------------------------------------
set(CPACK_RPM_COMPONENT_INSTALL ON)
set(CPACK_RPM_FILE_NAME RPM-DEFAULT) # name-version-release.arch.rpm
set(CPACK_RPM_PACKAGE_RELEASE ${LB_PACKAGE_RELEASE})
set(CPACK_RPM_PACKAGE_LICENSE MIT)
set(CPACK_RPM_PACKAGE_URL ${PROJECT_HOMEPAGE_URL})
# Packager tag; no /usr/lib/.build-id links (they serve debuginfo
# packages, which a CPack build does not make).
set(CPACK_RPM_SPEC_MORE_DEFINE "%define packager ${LB_PACKAGE_MAINTAINER}\n%define _build_id_links none")
set(CPACK_RPM_CHANGELOG_FILE ${_lb_pkgdir}/rpm/changelog)
set(CPACK_RPM_RUNTIME_POST_INSTALL_SCRIPT_FILE ${_lb_pkgdir}/rpm/ldconfig.sh)
set(CPACK_RPM_RUNTIME_POST_UNINSTALL_SCRIPT_FILE ${_lb_pkgdir}/rpm/ldconfig.sh)
# lazybreaker-tools makes the agent's user and group and /run/lazybreaker
# from its sysusers.d and tmpfiles.d files (tools/agent/CMakeLists.txt).
set(CPACK_RPM_TOOLS_POST_INSTALL_SCRIPT_FILE ${_lb_pkgdir}/rpm/tools-post.sh)
# Directories the filesystem package (or another package) owns.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
  ${CMAKE_INSTALL_FULL_LIBDIR}/cmake ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig
  ${CMAKE_INSTALL_PREFIX}/share/licenses ${CMAKE_INSTALL_PREFIX}/share/doc
  ${CMAKE_INSTALL_FULL_MANDIR} ${CMAKE_INSTALL_FULL_MANDIR}/man1
  # bash-completion owns the completions directory (cbctl's completion)
  ${CMAKE_INSTALL_PREFIX}/share/bash-completion ${CMAKE_INSTALL_PREFIX}/share/bash-completion/completions
  # javapackages-filesystem owns the jar directory
  ${CMAKE_INSTALL_PREFIX}/share/java
  # systemd owns these (lazybreaker-tools' sysusers.d and tmpfiles.d files)
  ${CMAKE_INSTALL_PREFIX}/lib/sysusers.d ${CMAKE_INSTALL_PREFIX}/lib/tmpfiles.d
  # python3-libs owns the interpreter's directories (python3-lazybreaker;
  # cmake/python.cmake found the interpreter)
  ${CMAKE_INSTALL_FULL_LIBDIR}/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}
  ${CMAKE_INSTALL_FULL_LIBDIR}/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages)

include(CPack)
