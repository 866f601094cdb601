# Warnings and sanitizers for every target of this project, through one
# interface target that every target links.
add_library(lb_build_options INTERFACE)
target_compile_options(lb_build_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  $<$<BOOL:${LB_WERROR}>:-Werror>)
if(LB_SANITIZE)
  target_compile_options(lb_build_options INTERFACE -fsanitize=${LB_SANITIZE} -fno-omit-frame-pointer
                         -fno-sanitize-recover=all)
  target_link_options(lb_build_options INTERFACE -fsanitize=${LB_SANITIZE})
endif()
# The fuzz tree (LB_FUZZ): libFuzzer's coverage in the library too, so the
# fuzzer sees the paths inside it.
if(LB_FUZZ)
  target_compile_options(lb_build_options INTERFACE -fsanitize=fuzzer-no-link)
endif()

# lb_sanitizer_preload(<var>): the sanitizer runtimes of LB_SANITIZE, as
# LD_PRELOAD wants them, for an interpreter (lua, python3) that loads an
# instrumented module but is not instrumented itself.
function(lb_sanitizer_preload var)
  set(_lb_preload "")
  foreach(_lb_san address:asan undefined:ubsan thread:tsan)
    string(REPLACE ":" ";" _lb_san "${_lb_san}")
    list(GET _lb_san 0 _lb_name)
    list(GET _lb_san 1 _lb_lib)
    if(LB_SANITIZE MATCHES "${_lb_name}")
      execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=lib${_lb_lib}.so
                      OUTPUT_VARIABLE _lb_path OUTPUT_STRIP_TRAILING_WHITESPACE)
      string(APPEND _lb_preload " ${_lb_path}")
    endif()
  endforeach()
  string(STRIP "${_lb_preload}" _lb_preload)
  set(${var} "${_lb_preload}" PARENT_SCOPE)
endfunction()
