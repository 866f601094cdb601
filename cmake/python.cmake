# The Python binding (bindings/python, package `lazybreaker`): SWIG's low
# layer, the extension module lazybreaker._core, from bindings/swig/python.i,
# the typed package bindings/python/lazybreaker/ over it, its pytest suite
# (CTest label `python`: the conformance streams, the idioms, threads, the
# gunicorn pre-fork test, tests/cross_language), the type check (mypy
# --strict) and bench/python (`make bench`). For Debian's CPython 3.11
# (python3-dev). Under LB_SANITIZE the module is instrumented and the tests
# preload the runtimes, as Lua's do (bindings/python/tests). Returns early when switched off; a missing interpreter,
# header or test tool is reported through lb_binding_unavailable (fatal
# under CI=true).
include_guard(GLOBAL)
option(LB_PYTHON "Build the Python binding (SWIG, CPython 3.11 headers)" ${PROJECT_IS_TOP_LEVEL})
if(NOT LB_PYTHON)
  return()
endif()

include(swig)
lb_find_swig(Python _lb_have_swig)
if(NOT _lb_have_swig)
  return()
endif()

# The interpreter is Debian's, found explicitly: a pyenv or venv python3
# earlier on PATH has other headers and no Debian packages (pytest, mypy,
# gunicorn). -DPython3_EXECUTABLE=... chooses another.
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 3.11 QUIET COMPONENTS Interpreter Development.Module)
if(NOT Python3_Interpreter_FOUND OR NOT Python3_Development.Module_FOUND)
  lb_binding_unavailable(Python "no CPython 3.11 interpreter with its headers (Debian: python3 and python3-dev)")
  return()
endif()
# The tests' tools and the frameworks the integrations wrap, Debian's
# packages for this interpreter.
set(_lb_missing "")
foreach(_lb_mod pytest:python3-pytest mypy:mypy gunicorn:gunicorn circuitbreaker:python3-circuitbreaker
                httpx:python3-httpx requests:python3-requests aiohttp:python3-aiohttp
                starlette:python3-starlette prometheus_client:python3-prometheus-client)
  string(REPLACE ":" ";" _lb_mod "${_lb_mod}")
  list(GET _lb_mod 0 _lb_import)
  list(GET _lb_mod 1 _lb_deb)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import ${_lb_import}" RESULT_VARIABLE _lb_rc
                  OUTPUT_QUIET ERROR_QUIET)
  if(NOT _lb_rc EQUAL 0)
    list(APPEND _lb_missing ${_lb_deb})
  endif()
endforeach()
if(LB_BUILD_TESTS AND _lb_missing)
  list(JOIN _lb_missing " " _lb_missing)
  lb_binding_unavailable(Python "${Python3_EXECUTABLE} lacks the test tools (Debian: ${_lb_missing})")
  return()
endif()
set(LB_PYTHON_ENABLED ON)
add_subdirectory(${PROJECT_SOURCE_DIR}/bindings/python ${PROJECT_BINARY_DIR}/bindings/python)
