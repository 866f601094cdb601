# Install rules: what `cmake --install`, the distro packages and every
# consumer see. Components:
#   Runtime      the versioned shared library (liblazybreaker.so.1*)
#   Development  headers, the unversioned link, the static library,
#                lazybreaker.pc and the CMake package config
#   Tools        command-line programs: the demo, and cbctl (tools/cbctl,
#                which installs itself, its man page and bash completion)
# Bindings add one component each (see packaging/Packages.cmake).
#
# LB_PACKAGE_LAYOUT picks where licence and changelog files go, the only
# place the distros differ beyond CMAKE_INSTALL_LIBDIR:
#   ""   (plain install) LICENSE in share/doc/lazybreaker
#   deb  share/doc/<package>/{copyright,changelog.Debian.gz} per package
#   rpm  share/licenses/<package>/LICENSE per package
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

set(LB_PACKAGE_LAYOUT "" CACHE STRING "Licence/doc layout for distro packages: '', 'deb' or 'rpm'")
set_property(CACHE LB_PACKAGE_LAYOUT PROPERTY STRINGS "" deb rpm)
set(LB_PACKAGE_RELEASE 1 CACHE STRING "Distro package release (Debian revision, RPM Release)")
set(LB_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lazybreaker)

# --- libraries and headers ---------------------------------------------------
# Shared libraries: mode 0644 for Debian (CMake's default on a Debian host,
# lintian: shared-library-is-executable), 0755 for RPM distros (rpmlint:
# shared-library-not-executable).
if(LB_PACKAGE_LAYOUT STREQUAL "rpm")
  set(CMAKE_INSTALL_SO_NO_EXE OFF)
elseif(LB_PACKAGE_LAYOUT STREQUAL "deb")
  set(CMAKE_INSTALL_SO_NO_EXE ON)
endif()
# (Windows: lazybreaker.dll in bin/, its import library in lib/.)
install(TARGETS lazybreaker EXPORT lazybreaker-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime NAMELINK_COMPONENT Development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
install(TARGETS lazybreaker_static EXPORT lazybreaker-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
# A distro's static library carries no debug info (lintian's
# unstripped-static-library); the shared library keeps what the distro's
# own debug-symbol packaging would take from it.
if(LB_PACKAGE_LAYOUT AND CMAKE_STRIP)
  install(CODE "execute_process(COMMAND ${CMAKE_STRIP} --strip-debug --enable-deterministic-archives
      \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:lazybreaker_static>\"
      COMMAND_ERROR_IS_FATAL ANY)" COMPONENT Development)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/lazybreaker
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

# The static library is C++ inside: a C program linking it needs the C++
# runtime, which a C++ link step adds by itself. Record it once, here, for
# pkg-config (Libs.private) and for CMake consumers that enable only C.
set(LB_CXX_RUNTIME_LIBS "")
foreach(lib IN LISTS CMAKE_CXX_IMPLICIT_LINK_LIBRARIES)
  if(NOT lib IN_LIST CMAKE_C_IMPLICIT_LINK_LIBRARIES AND NOT lib IN_LIST LB_CXX_RUNTIME_LIBS)
    list(APPEND LB_CXX_RUNTIME_LIBS ${lib})
  endif()
endforeach()

# --- CMake package: find_package(lazybreaker 1) -------------------------------
install(EXPORT lazybreaker-targets NAMESPACE lazybreaker:: FILE lazybreaker-targets.cmake
  DESTINATION ${LB_CMAKE_INSTALL_DIR} COMPONENT Development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lazybreaker-config.cmake.in
  ${PROJECT_BINARY_DIR}/lazybreaker-config.cmake INSTALL_DESTINATION ${LB_CMAKE_INSTALL_DIR})
# One major version is one ABI: 1.x satisfies find_package(lazybreaker 1.y)
# for y <= x and never satisfies a request for 2.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lazybreaker-config-version.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lazybreaker-config.cmake
              ${PROJECT_BINARY_DIR}/lazybreaker-config-version.cmake
  DESTINATION ${LB_CMAKE_INSTALL_DIR} COMPONENT Development)

# --- pkg-config ----------------------------------------------------------------
# Relocatable the zstd/libuv way: every path hangs off ${prefix}, so
# `pkg-config --define-variable=prefix=/other` finds an unpacked tree.
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(LB_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(LB_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
list(TRANSFORM LB_CXX_RUNTIME_LIBS PREPEND "-l" OUTPUT_VARIABLE LB_PC_LIBS_PRIVATE)
list(JOIN LB_PC_LIBS_PRIVATE " " LB_PC_LIBS_PRIVATE)
if(WIN32)
  # MinGW's implicit C++ libraries name the DLL libgcc (-lgcc_s), which the
  # DLL itself does not use (it links libgcc in); the static library needs
  # libstdc++, bcrypt (BCryptGenRandom) and advapi32 (a registry file's
  # access list), nothing else.
  set(LB_PC_LIBS_PRIVATE "-lstdc++ -lbcrypt -ladvapi32")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/lazybreaker.pc.in ${PROJECT_BINARY_DIR}/lazybreaker.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/lazybreaker.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT Development)

# --- tools -------------------------------------------------------------------
# Without the demo there is no Tools component and so no tools package
# (packaging/CPackSetup.cmake skips it). Manual pages go in compressed, as
# the distros ship them (gzip -n: no timestamp, so builds are reproducible).
if(TARGET lazybreaker-demo)
  install(TARGETS lazybreaker-demo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Tools)
  set(_lb_man ${CMAKE_CURRENT_BINARY_DIR}/lazybreaker-demo.1.gz)
  add_custom_command(OUTPUT ${_lb_man}
    COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/packaging/man/lazybreaker-demo.1 > ${_lb_man}
    DEPENDS ${PROJECT_SOURCE_DIR}/packaging/man/lazybreaker-demo.1 VERBATIM)
  add_custom_target(lb_man_pages ALL DEPENDS ${_lb_man})
  install(FILES ${_lb_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT Tools)
endif()

# --- documentation -------------------------------------------------------------
# The installed header points at docs/*.md; they, the README and the
# examples go with the development files, where each distro keeps a
# package's documentation (the package names are packaging/Packages.cmake's).
if(LB_PACKAGE_LAYOUT STREQUAL "deb")
  set(_lb_docdir ${CMAKE_INSTALL_DATAROOTDIR}/doc/liblazybreaker-dev)
elseif(LB_PACKAGE_LAYOUT STREQUAL "rpm")
  set(_lb_docdir ${CMAKE_INSTALL_DATAROOTDIR}/doc/lazybreaker-devel)
else()
  set(_lb_docdir ${CMAKE_INSTALL_DOCDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${_lb_docdir} COMPONENT Development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${_lb_docdir}/docs COMPONENT Development
  FILES_MATCHING PATTERN "*.md")
install(FILES ${PROJECT_SOURCE_DIR}/examples/demo.c ${PROJECT_SOURCE_DIR}/examples/example.cpp
  DESTINATION ${_lb_docdir}/examples COMPONENT Development)

# --- licence ---------------------------------------------------------------
# Distro packages carry the licence per package (packaging/CPackSetup.cmake);
# a plain install carries it once.
if(LB_PACKAGE_LAYOUT STREQUAL "")
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT Runtime)
endif()

# --- packages ----------------------------------------------------------------
include(${PROJECT_SOURCE_DIR}/packaging/Packages.cmake)
