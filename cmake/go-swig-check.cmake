# go.swig_output_current: runs SWIG on bindings/swig/go.i into OUT and
# compares with the output committed in bindings/go/internal/lbswig. Run as
#   cmake -DSWIG=... -DARGS=... -DSOURCE_DIR=... -DOUT=... -P go-swig-check.cmake
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${SWIG} ${ARGS} -o ${OUT}/lbswig_wrap.c -outdir ${OUT} bindings/swig/go.i
                WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "swig failed on bindings/swig/go.i")
endif()
set(stale "")
foreach(f lbswig.go lbswig_wrap.c)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/${f}
                          ${SOURCE_DIR}/bindings/go/internal/lbswig/${f} RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    list(APPEND stale ${f})
  endif()
endforeach()
if(stale)
  message(FATAL_ERROR "bindings/go/internal/lbswig/{${stale}} is not what SWIG makes of "
                      "bindings/swig/go.i now (the interface, an overlay or the header changed): run "
                      "`cmake --build build --target go-swig-update` and commit the result "
                      "(fresh output: ${OUT})")
endif()
message(STATUS "bindings/go/internal/lbswig is SWIG's output for bindings/swig/go.i")
