# The format check (CTest label `format`): every hand-written C and C++
# file is as clang-format and the repository's .clang-format write it
# (cmake/check-format.sh; `make format` fixes it), and the check finds a
# planted misformatted file. Without clang-format (Debian: clang-format)
# the tests are skipped loudly, or, with CI=true, a configure error.
# Registered in the release tree alone: the sanitizer trees would check
# the same files again.
include_guard(GLOBAL)
if(LB_SANITIZE)
  return()
endif()

find_program(LB_CLANG_FORMAT NAMES clang-format clang-format-19 clang-format-18 clang-format-17
                                   clang-format-16 clang-format-15 clang-format-14)
if(NOT LB_CLANG_FORMAT)
  set(_lb_why "clang-format not found (Debian: clang-format)")
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "lazybreaker: the format check cannot run: ${_lb_why} "
                        "(CI=true: a missing tool is an error; packaging/install-deps.sh installs it)")
  endif()
  message(WARNING "lazybreaker: SKIPPING the format check (label format): ${_lb_why}. "
                  "Run packaging/install-deps.sh.")
  file(APPEND ${LB_SKIPPED_BINDINGS_FILE} "format (clang-format check): ${_lb_why}\n")
  add_test(NAME format.sources_as_clang_format_writes
           COMMAND sh -c "echo 'SKIPPED: ${_lb_why}' >&2; exit 77")
  set_tests_properties(format.sources_as_clang_format_writes PROPERTIES LABELS format
                       SKIP_RETURN_CODE 77)
  return()
endif()

add_test(NAME format.sources_as_clang_format_writes
         COMMAND ${PROJECT_SOURCE_DIR}/cmake/check-format.sh ${LB_CLANG_FORMAT} ${PROJECT_SOURCE_DIR})
add_test(NAME format.check_finds_planted_file
         COMMAND ${PROJECT_SOURCE_DIR}/cmake/check-format.sh ${LB_CLANG_FORMAT} --self-test)
set_tests_properties(format.sources_as_clang_format_writes format.check_finds_planted_file
                     PROPERTIES LABELS format)
