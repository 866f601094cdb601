# One fuzz target as a CTest test: replays the committed corpus (seeds and
# regression inputs), then fuzzes for SECONDS. New inputs go to WORK/corpus
# and crash, timeout and leak inputs to WORK/artifacts, never into the
# source tree (tests/fuzz/README.md says how one becomes a regression file).
#   cmake -DFUZZER=<target> -DWORK=<dir> -DCORPUS=<dir> -DSECONDS=<n> -P run.cmake
foreach(var FUZZER WORK CORPUS SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake: ${var} is not set")
  endif()
endforeach()
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1")
# 0 seconds: the corpus is replayed, nothing more (libFuzzer's own 0 is no limit).
if(SECONDS EQUAL 0)
  set(budget -runs=0)
else()
  set(budget -max_total_time=${SECONDS})
endif()
execute_process(
  COMMAND ${FUZZER} ${budget} -timeout=3 -print_final_stats=1
          -artifact_prefix=${WORK}/artifacts/ ${WORK}/corpus ${CORPUS}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB found ${WORK}/artifacts/*)
  list(JOIN found "\n  " found)
  message(FATAL_ERROR "${FUZZER} failed (${rc}); the input is in:\n  ${found}\n"
                      "Reproduce: ${FUZZER} <input>; keep it as a regression file: "
                      "tests/fuzz/README.md")
endif()
