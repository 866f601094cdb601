# The PHP binding (bindings/php, namespace LazyBreaker\): the PHP 8.2
# extension `lazybreaker` that SWIG generates from bindings/swig/php.i (the
# flat cb_* functions), the PSR-4 classes over it (bindings/php/src), their
# PHPUnit tests and the PHP-FPM test (CTest label `php`), the package
# php-lazybreaker, and bench/php (`make bench`). Returns early when switched
# off; a missing php-config, php or phpunit is reported through
# lb_binding_unavailable (fatal under CI=true).
include_guard(GLOBAL)
option(LB_PHP "Build the PHP binding (SWIG, Debian's php8.2-dev and phpunit)" ${PROJECT_IS_TOP_LEVEL})
if(NOT LB_PHP)
  return()
endif()
# Not under the sanitizers: php loads every extension with
# dlopen(RTLD_DEEPBIND) (Zend's DL_LOAD), which the ASan and TSan runtimes
# refuse outright ("dlopen ... with RTLD_DEEPBIND flag which is
# incompatible with sanitizer runtime", google/sanitizers#611), so an
# instrumented library cannot be loaded into php or php-fpm even with the
# runtime preloaded as Lua's tests do (tried: the extension itself, and
# opcache before it, are refused). The sanitizer builds cover what the
# extension calls through the C and C++ tests instead; the extension keeps
# no native objects of its own (handles are ints; only the per-process
# list of opened files, bindings/swig/php.i).
if(LB_SANITIZE)
  message(STATUS "lazybreaker: PHP binding not built under LB_SANITIZE=${LB_SANITIZE} (on purpose)")
  return()
endif()

include(swig)
lb_find_swig(PHP _lb_have_swig)
if(NOT _lb_have_swig)
  return()
endif()
find_program(LB_PHP_CONFIG NAMES php-config8.2 php-config)
find_program(LB_PHP_EXECUTABLE NAMES php8.2 php)
find_program(LB_PHPUNIT phpunit)
if(NOT LB_PHP_CONFIG OR NOT LB_PHP_EXECUTABLE)
  lb_binding_unavailable(PHP "no php-config or php 8.2 (Debian: php8.2-dev and php8.2-cli)")
  return()
endif()
execute_process(COMMAND ${LB_PHP_CONFIG} --version OUTPUT_VARIABLE LB_PHP_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE)
if(LB_PHP_VERSION VERSION_LESS 8.1)
  lb_binding_unavailable(PHP "php-config says PHP ${LB_PHP_VERSION}; the classes need 8.1 or later (enums, named arguments)")
  return()
endif()
if(NOT LB_PHPUNIT)
  lb_binding_unavailable(PHP "no phpunit (Debian: phpunit)")
  return()
endif()
execute_process(COMMAND ${LB_PHP_CONFIG} --includes OUTPUT_VARIABLE _lb_php_includes OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(_lb_php_includes)
list(TRANSFORM _lb_php_includes REPLACE "^-I" "")
set(LB_PHP_INCLUDE_DIRS ${_lb_php_includes})
execute_process(COMMAND ${LB_PHP_CONFIG} --extension-dir OUTPUT_VARIABLE LB_PHP_EXTENSION_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX MATCH "^[0-9]+\\.[0-9]+" LB_PHP_MAJOR_MINOR "${LB_PHP_VERSION}")
set(LB_PHP_ENABLED ON)
add_subdirectory(${PROJECT_SOURCE_DIR}/bindings/php ${PROJECT_BINARY_DIR}/bindings/php)
