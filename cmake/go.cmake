# The Go binding (bindings/go, package lazybreaker): a Go module of the
# standard library only, over cgo. Its low layer is SWIG's Go output for
# bindings/swig/go.i, committed in bindings/go/internal/lbswig so that a Go
# user builds the module without SWIG; `cmake --build build --target
# go-swig-update` regenerates it, and the test go.swig_output_current fails
# when the committed output is not what SWIG makes of the interface now.
# (Go compiles the C of a package itself, so the wrapper is not a CMake
# library as lb_swig_library makes for Java.)
#
# Tests (CTest label `go`): go vet, go test -race (the package's own tests
# and the conformance runner over the step streams of tests/conformance/*.scn
# that lb_conformance writes at build time), the quiet path's rules against
# the vectors of tests/quiet_vectors, the SWIG output check, a consumer
# module built through pkg-config, and the modules of their own beside the
# package (lbprometheus, lbgrpc) against Debian's Go packages. `make bench` runs bench/go
# (bench/CMakeLists.txt).
#
# Everything Go writes (build cache, GOPATH) stays in build/go; nothing is
# downloaded (GOPROXY=off, GOFLAGS=-mod=mod: the module has no dependency).
include_guard(GLOBAL)
option(LB_GO "Build and test the Go binding (Debian's golang-go, cgo)" ${PROJECT_IS_TOP_LEVEL})
if(NOT LB_GO)
  return()
endif()
# Go's race detector is a TSan runtime of its own and cannot share a process
# with a TSan-built library; an ASan-built library needs the Go program
# built with -asan and linked with the sanitizers' runtimes. The sanitizer
# builds cover the library through the C and C++ tests; the Go tests run
# with -race in the release build, and the Makefile leaves the go label
# out of the sanitizer runs.
if(LB_SANITIZE)
  message(STATUS "lazybreaker: Go binding not tested under LB_SANITIZE=${LB_SANITIZE} (on purpose)")
  return()
endif()

include(swig)
lb_find_swig(Go _lb_have_swig)
if(NOT _lb_have_swig)
  return()
endif()
find_program(LB_GO_EXECUTABLE go)
if(NOT LB_GO_EXECUTABLE)
  lb_binding_unavailable(Go "no Go toolchain (Debian: golang-go)")
  return()
endif()
execute_process(COMMAND ${LB_GO_EXECUTABLE} env GOVERSION OUTPUT_VARIABLE _lb_go_version
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _lb_go_rc)
string(REGEX MATCH "^go([0-9]+)\\.([0-9]+)" _lb_go_match "${_lb_go_version}")
if(NOT _lb_go_rc EQUAL 0 OR NOT _lb_go_match OR (CMAKE_MATCH_1 EQUAL 1 AND CMAKE_MATCH_2 LESS 19))
  lb_binding_unavailable(Go "Go 1.19 or later is needed, found '${_lb_go_version}' (Debian: golang-go)")
  return()
endif()
message(STATUS "lazybreaker: Go binding with ${_lb_go_version} (${LB_GO_EXECUTABLE})")
set(LB_GO_ENABLED ON)

set(LB_GO_MODULE_DIR ${PROJECT_SOURCE_DIR}/bindings/go)
set(LB_GO_WORK ${PROJECT_BINARY_DIR}/go)

# A lazybreaker.pc for the build tree: the package's `#cgo pkg-config:
# lazybreaker` finds the headers in the source tree and the library where
# it is built (with an rpath, so test binaries run without LD_LIBRARY_PATH).
file(GENERATE OUTPUT ${LB_GO_WORK}/pkgconfig/lazybreaker.pc CONTENT
"Name: lazybreaker
Description: ${PROJECT_DESCRIPTION} (build tree)
Version: ${PROJECT_VERSION}
Cflags: -I${PROJECT_SOURCE_DIR}/include
Libs: -L$<TARGET_FILE_DIR:lazybreaker> -Wl,-rpath,$<TARGET_FILE_DIR:lazybreaker> -llazybreaker
")

# Go's build cache does not look into headers outside the package: the
# hash of the C interface the package compiles against goes into CGO_CFLAGS,
# so a changed header or overlay rebuilds it (and re-configures CMake).
set(_lb_go_inputs ${PROJECT_SOURCE_DIR}/include/lazybreaker/lazybreaker.h
                  ${PROJECT_SOURCE_DIR}/include/lazybreaker/lists.h ${LB_SWIG_DIR}/lazybreaker.i
                  ${LB_SWIG_DIR}/go.i)
set(_lb_go_digest "")
foreach(f IN LISTS _lb_go_inputs)
  file(SHA256 ${f} _lb_sha)
  string(APPEND _lb_go_digest ${_lb_sha})
endforeach()
string(SHA256 _lb_go_digest "${_lb_go_digest}")
string(SUBSTRING ${_lb_go_digest} 0 16 _lb_go_digest)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_lb_go_inputs})

# The environment of every go command: private caches, no network, cgo on.
set(LB_GO_ENV
    GOENV=off GOWORK=off GOTOOLCHAIN=local GO111MODULE=on GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off
    GOPATH=${LB_GO_WORK}/path GOCACHE=${LB_GO_WORK}/cache CGO_ENABLED=1
    PKG_CONFIG_PATH=${LB_GO_WORK}/pkgconfig
    "CGO_CFLAGS=-O2 -g -DLB_GO_INTERFACE=${_lb_go_digest}"
    "CGO_LDFLAGS=-O2 -g")

# lb_go_command(<var> <go args...>): the command line that runs go with
# LB_GO_ENV (for add_test and add_custom_target).
function(lb_go_command var)
  set(${var} ${CMAKE_COMMAND} -E env ${LB_GO_ENV} ${ARGN} PARENT_SCOPE)
endfunction()

# Regenerating the committed SWIG output, on purpose (review the diff).
set(_lb_go_swig_args -go -cgo -intgosize 64 -package lbswig -Ibindings/swig -Iinclude)
add_custom_target(go-swig-update
  COMMAND ${SWIG_EXECUTABLE} ${_lb_go_swig_args} -o bindings/go/internal/lbswig/lbswig_wrap.c
          -outdir bindings/go/internal/lbswig bindings/swig/go.i
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  COMMENT "Regenerating bindings/go/internal/lbswig from bindings/swig/go.i")

if(LB_BUILD_TESTS)
  enable_testing()
  # The committed SWIG output is SWIG's output for the interface now.
  add_test(NAME go.swig_output_current
    COMMAND ${CMAKE_COMMAND} -DSWIG=${SWIG_EXECUTABLE} "-DARGS=${_lb_go_swig_args}"
            -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUT=${LB_GO_WORK}/swig-check
            -P ${PROJECT_SOURCE_DIR}/cmake/go-swig-check.cmake)

  # go vet, every check, on what we write (the package, the consumer);
  # SWIG's output without the unsafeptr check, which flags SWIG's own copy
  # of a returned C string: the uintptr it converts points into C's malloc
  # heap, which the Go collector neither moves nor frees.
  lb_go_command(_lb_go_vet go vet -tags lbquietvectors .)
  add_test(NAME go.vet COMMAND ${_lb_go_vet} WORKING_DIRECTORY ${LB_GO_MODULE_DIR})
  lb_go_command(_lb_go_vet_swig go vet -unsafeptr=false ./internal/lbswig)
  add_test(NAME go.vet.swig_output COMMAND ${_lb_go_vet_swig} WORKING_DIRECTORY ${LB_GO_MODULE_DIR})
  lb_go_command(_lb_go_vet_consumer go vet .)
  add_test(NAME go.vet.consumer COMMAND ${_lb_go_vet_consumer}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/tests/go/consumer)

  # The package's own tests and the conformance runner, under the race
  # detector. LB_CONFORMANCE_STEPS makes the runner required: without it (a
  # user's `go test` in the module cache) it skips. The streams hold every
  # file twice, the second time at the README's clock offset (10^18 ns), as
  # the C++ runner's late_clock tests run it.
  lb_go_command(_lb_go_test LB_CONFORMANCE_STEPS=${LB_CONFORMANCE_STEPS_DIR}
                go test -race -count=1 ./...)
  add_test(NAME go.test COMMAND ${_lb_go_test} WORKING_DIRECTORY ${LB_GO_MODULE_DIR})

  # The quiet path's rules (bindings/go/quiet_rules.go, which Acquire and
  # Done call) against the vectors include/lazybreaker/fastpath.h's own
  # functions write at build time (tests/quiet_vectors, target
  # quiet_vectors_file). The test is behind the build tag lbquietvectors, so
  # a user's plain `go test` leaves it out; here it fails if the file is
  # missing or holds no vector of a kind, and prints how many it checked.
  if(NOT LB_QUIET_VECTORS_FILE)
    set(LB_QUIET_VECTORS_FILE ${PROJECT_BINARY_DIR}/tests/quiet_vectors.txt)
  endif()
  lb_go_command(_lb_go_quiet_vectors LB_QUIET_VECTORS=${LB_QUIET_VECTORS_FILE}
                go test -tags lbquietvectors -count=1 -run "^TestQuietPathDecidesAsTheVectors$" -v .)
  add_test(NAME go.quiet_vectors COMMAND ${_lb_go_quiet_vectors} WORKING_DIRECTORY ${LB_GO_MODULE_DIR})

  # A program in a module of its own, requiring the binding as a user's go.mod
  # would (replaced by the local directory), built and run.
  lb_go_command(_lb_go_consumer go run .)
  add_test(NAME go.consumer COMMAND ${_lb_go_consumer}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/tests/go/consumer)

  # The same program against the .deb packages alone (label packaging: it
  # needs the packages that tests/packaging builds, and is left out of the
  # sanitizer runs with them).
  add_test(NAME packaging.go_consumer_builds_from_unpacked_debs
    COMMAND ${PROJECT_SOURCE_DIR}/tests/go/consumer-from-debs.sh ${PROJECT_BINARY_DIR}/packaging-test/packages
            ${LB_GO_WORK}/debs ${LB_GO_ENV})
  set_tests_properties(packaging.go_consumer_builds_from_unpacked_debs PROPERTIES LABELS packaging
                       FIXTURES_REQUIRED lb_packages RESOURCE_LOCK lb_go_cache)

  # tests/cross_language: a Go process sees a breaker a C program tripped in
  # a registry file, and trips one the C program then sees
  # (TestCrossLanguageChecker, which skips unless check.sh runs it).
  lb_go_command(_lb_go_cross go test -count=1 -run "^TestCrossLanguageChecker$" -v .)
  add_test(NAME cross_language.go_sees_the_c_trip
    COMMAND ${PROJECT_SOURCE_DIR}/tests/cross_language/check.sh $<TARGET_FILE:lb_cross_language>
            ${LB_CROSS_LANGUAGE_FILE} go --expect "^--- PASS: TestCrossLanguageChecker" -- ${_lb_go_cross}
    WORKING_DIRECTORY ${LB_GO_MODULE_DIR})
  set_tests_properties(cross_language.go_sees_the_c_trip PROPERTIES
    FIXTURES_REQUIRED lb_cross_language)

  # The modules of their own beside the package, so that the package needs
  # only the standard library: a prometheus.Collector (bindings/go/lbprometheus)
  # and gRPC client interceptors (bindings/go/lbgrpc), vetted and tested
  # against Debian's Go packages (tests/go/debian-module.sh).
  foreach(_lb_module_imports IN ITEMS "lbprometheus github.com/prometheus/client_golang"
                                      "lbgrpc google.golang.org/grpc")
    separate_arguments(_lb_module_imports)
    list(GET _lb_module_imports 0 _lb_module)
    lb_go_command(_lb_go_module_test sh ${PROJECT_SOURCE_DIR}/tests/go/debian-module.sh ${LB_GO_WORK}
                  ${PROJECT_SOURCE_DIR} ${_lb_module_imports})
    add_test(NAME go.module.${_lb_module} COMMAND ${_lb_go_module_test})
    set_tests_properties(go.module.${_lb_module} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
  endforeach()

  set(_lb_go_tests go.swig_output_current go.vet go.vet.swig_output go.vet.consumer go.test
      go.quiet_vectors go.consumer cross_language.go_sees_the_c_trip go.module.lbprometheus go.module.lbgrpc)
  set_tests_properties(${_lb_go_tests} PROPERTIES LABELS go)
  set_tests_properties(cross_language.go_sees_the_c_trip PROPERTIES LABELS "go;cross_language")
  set_tests_properties(go.test PROPERTIES TIMEOUT 900)
  # They share one build cache: one at a time, so two go commands do not
  # compile the same package at once on this small machine.
  set_tests_properties(${_lb_go_tests} PROPERTIES RESOURCE_LOCK lb_go_cache)
endif()
