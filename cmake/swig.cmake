# SWIG for the language bindings: one interface, bindings/swig/lazybreaker.i,
# and one overlay per language (bindings/swig/<lang>.i). Each language's own
# cmake/<lang>.cmake includes this file, after its option says it is on.
#
#   lb_swig_library(<target> LANGUAGE <java|csharp|go|lua|python> OVERLAY <file.i>
#                   OUTPUT_DIR <dir> [SWIG_OPTIONS <opt>...] [LINK <library target>])
# generates the wrapper for <lang> from its overlay (C, not C++: the
# interface wraps the C ABI) into a shared library <target> linked to
# liblazybreaker (or LINK: lazybreaker_static for a module that carries the
# library, as Python's wheel does), with the language's generated sources in
# OUTPUT_DIR.
#
#   lb_binding_unavailable(<Language> <why>)
# reports a binding that cannot be built here: with CI=true in the
# environment that fails the configure (a CI run must never skip a language
# in silence); elsewhere it warns and records the language, so that
# `make test` announces it when it runs (build/skipped-bindings.txt).
include_guard(GLOBAL)

set(LB_SWIG_DIR ${PROJECT_SOURCE_DIR}/bindings/swig)
# Emptied by the top-level CMakeLists.txt at each configure; languages
# (and cbctl, cmake/cbctl.cmake) append to it.
set(LB_SKIPPED_BINDINGS_FILE ${PROJECT_BINARY_DIR}/skipped-bindings.txt)

function(lb_binding_unavailable language why)
  string(TOUPPER ${language} _lb_option)
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "lazybreaker: the ${language} binding cannot be built: ${why} "
                        "(CI=true: a missing toolchain is an error; packaging/install-deps.sh installs it)")
  endif()
  message(WARNING "lazybreaker: SKIPPING the ${language} binding: ${why}. "
                  "Run packaging/install-deps.sh, or switch it off on purpose (-DLB_${_lb_option}=OFF).")
  file(APPEND ${LB_SKIPPED_BINDINGS_FILE} "${language}: ${why}\n")
endfunction()

# False (and reported through lb_binding_unavailable) when SWIG is missing.
function(lb_find_swig language out)
  find_package(SWIG 4.0 QUIET)
  if(NOT SWIG_FOUND)
    lb_binding_unavailable(${language} "SWIG 4 not found (Debian: swig)")
    set(${out} FALSE PARENT_SCOPE)
    return()
  endif()
  set(${out} TRUE PARENT_SCOPE)
endfunction()

macro(_lb_use_swig)
  # UseSWIG's modern behaviour: standard target names (CMP0078), the module
  # name passed with -module only when asked (CMP0086), and each language's
  # own library prefix and suffix (CMP0122).
  foreach(_lb_policy CMP0078 CMP0086 CMP0122)
    if(POLICY ${_lb_policy})
      cmake_policy(SET ${_lb_policy} NEW)
    endif()
  endforeach()
  include(UseSWIG)
endmacro()

function(lb_swig_library target)
  cmake_parse_arguments(S "" "LANGUAGE;OVERLAY;OUTPUT_DIR;LINK" "SWIG_OPTIONS" ${ARGN})
  if(NOT S_LINK)
    set(S_LINK lazybreaker)
  endif()
  foreach(field LANGUAGE OVERLAY OUTPUT_DIR)
    if(NOT S_${field})
      message(FATAL_ERROR "lb_swig_library(${target}): ${field} is required")
    endif()
  endforeach()
  _lb_use_swig()
  set_property(SOURCE ${S_OVERLAY} PROPERTY INCLUDE_DIRECTORIES ${LB_SWIG_DIR} ${PROJECT_SOURCE_DIR}/include)
  set_property(SOURCE ${S_OVERLAY} PROPERTY COMPILE_OPTIONS ${S_SWIG_OPTIONS})
  # Regenerate when the shared interface or the header changes, not only
  # the overlay.
  set_property(SOURCE ${S_OVERLAY} PROPERTY DEPENDS ${LB_SWIG_DIR}/lazybreaker.i
               ${PROJECT_SOURCE_DIR}/include/lazybreaker/lazybreaker.h
               ${PROJECT_SOURCE_DIR}/include/lazybreaker/lists.h)
  swig_add_library(${target} TYPE MODULE LANGUAGE ${S_LANGUAGE} SOURCES ${S_OVERLAY}
                   OUTPUT_DIR ${S_OUTPUT_DIR} OUTFILE_DIR ${CMAKE_CURRENT_BINARY_DIR}/${target}.wrap)
  # The wrapper is SWIG's C: the project's -Wconversion set is not for it
  # (SWIG casts between its own types), but -Wall -Wextra hold, fatal under
  # LB_WERROR. C11 for the helpers' _Thread_local status.
  target_link_libraries(${target} PRIVATE ${S_LINK})
  set_target_properties(${target} PROPERTIES C_STANDARD 11 C_VISIBILITY_PRESET hidden
                        SWIG_USE_TARGET_INCLUDE_DIRECTORIES ON)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-function -Wno-unused-parameter
                         -fno-strict-aliasing $<$<BOOL:${LB_WERROR}>:-Werror>)
  target_link_options(${target} PRIVATE -Wl,--no-undefined -Wl,-z,relro,-z,now)
endfunction()
