# Configures, builds and runs tests/subproject with Google Benchmark and
# doctest made unfindable: a project adding lazybreaker with add_subdirectory
# needs neither, gets no tests, no benchmarks and no bindings, and keeps its
# own (empty) build type. CI=true is set: a missing language toolchain must
# not fail a consumer that asked for no binding.
#   cmake -DSOURCE=<lazybreaker source> -DWORK=<dir> -P run.cmake
file(REMOVE_RECURSE ${WORK})
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env CI=true ${CMAKE_COMMAND} -S ${SOURCE}/tests/subproject -B ${WORK} -DLB_SOURCE_DIR=${SOURCE}
          -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON -DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the subproject does not configure")
endif()
file(STRINGS ${WORK}/CMakeCache.txt cache
     REGEX "^(CMAKE_BUILD_TYPE|LB_BUILD_TESTS|LB_BUILD_BENCH|LB_JAVA|LB_CSHARP|LB_GO|LB_LUA):")
foreach(expected "CMAKE_BUILD_TYPE:STRING=" "LB_BUILD_TESTS:BOOL=OFF" "LB_BUILD_BENCH:BOOL=OFF"
                 "LB_JAVA:BOOL=OFF" "LB_CSHARP:BOOL=OFF" "LB_GO:BOOL=OFF" "LB_LUA:BOOL=OFF")
  list(FIND cache "${expected}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "the subproject's cache should have ${expected}; it has: ${cache}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK} -j 2 --target consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the subproject does not build")
endif()
execute_process(COMMAND ${WORK}/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer failed")
endif()
