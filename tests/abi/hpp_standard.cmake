# lazybreaker.hpp below C++17 stops at once with one clear #error naming the
# standard it needs (not a cascade of errors from <optional> and friends),
# and compiles from C++17 on.
#   cmake -DCOMPILER=<c++> -DINCLUDE=<dir> -DWORK=<dir> -P hpp_standard.cmake
file(WRITE ${WORK}/hpp_standard.cpp "#include <lazybreaker/lazybreaker.hpp>\n")
execute_process(COMMAND ${COMPILER} -std=c++14 -fsyntax-only -I${INCLUDE} ${WORK}/hpp_standard.cpp
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "lazybreaker.hpp compiled as C++14")
endif()
string(REGEX MATCHALL "error:" errors "${err}")
list(LENGTH errors count)
if(NOT err MATCHES "needs C\\+\\+17 or later" OR NOT count EQUAL 1)
  message(FATAL_ERROR "C++14 should stop with one #error naming C++17, got ${count} errors:\n${err}")
endif()
execute_process(COMMAND ${COMPILER} -std=c++17 -fsyntax-only -I${INCLUDE} ${WORK}/hpp_standard.cpp
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "lazybreaker.hpp does not compile as C++17:\n${err}")
endif()
