# Install rules of the PHP binding (component PHP, package php-lazybreaker),
# the Debian way:
#   <php-config --extension-dir>/lazybreaker.so    the extension
#   /etc/php/<8.2>/mods-available/lazybreaker.ini  extension=lazybreaker.so
#     (enabled for cli and fpm by the package's postinst, phpenmod)
#   /usr/share/php/LazyBreaker/                    the classes and autoload.php
#     (require_once 'LazyBreaker/autoload.php'; /usr/share/php is on
#     Debian's include_path)
install(TARGETS lazybreaker_php LIBRARY DESTINATION ${LB_PHP_EXTENSION_DIR} COMPONENT PHP)
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/src/ DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/php/LazyBreaker
  COMPONENT PHP FILES_MATCHING PATTERN "*.php")
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/lazybreaker.ini CONTENT
"; lazybreaker: a lazy, lock-free circuit breaker (php-lazybreaker)
; priority=20
extension=lazybreaker.so
")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lazybreaker.ini
  DESTINATION /etc/php/${LB_PHP_MAJOR_MINOR}/mods-available COMPONENT PHP)

lb_package(PHP DEB php-lazybreaker RPM php-lazybreaker SECTION php GROUP Development/Languages
  DEPENDS_ON_RUNTIME
  SUMMARY "Lazy, lock-free circuit breaker library - PHP extension"
  DESCRIPTION "lazybreaker is a circuit breaker for calls to a downstream dependency.
Recovery is lazy: it starts no thread and arms no timer, and its request
path is a handful of atomic operations.

This package contains the PHP ${LB_PHP_MAJOR_MINOR} extension lazybreaker, enabled for
the cli and fpm SAPIs, and its classes (namespace LazyBreaker) under
/usr/share/php/LazyBreaker: require_once 'LazyBreaker/autoload.php'. A
registry file shared by every PHP-FPM worker holds one breaker state for
the whole pool, across worker and php-fpm restarts.")
