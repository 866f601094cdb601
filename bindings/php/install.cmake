# Install rules of the PHP binding (component PHP, package php-lazybreaker).
# Debian's layout (LB_PACKAGE_LAYOUT deb or none):
#   <php-config --extension-dir>/lazybreaker.so    the extension
#   /etc/php/<8.2>/mods-available/lazybreaker.ini  extension=lazybreaker.so
#     (enabled for cli and fpm by the package's postinst, phpenmod)
#   /usr/share/php/LazyBreaker/                    the classes and autoload.php
#     (require_once 'LazyBreaker/autoload.php'; /usr/share/php is on
#     Debian's include_path)
# The rpm (LB_PACKAGE_LAYOUT rpm) puts them where Fedora's PHP looks:
#   <libdir>/php/modules/lazybreaker.so, /etc/php.d/40-lazybreaker.ini (read
#   by every SAPI, so no scriptlet), /usr/share/php/LazyBreaker/.
if(LB_PACKAGE_LAYOUT STREQUAL "rpm")
  set(_lb_php_ext_dir ${CMAKE_INSTALL_LIBDIR}/php/modules)
  set(_lb_php_ini_dir /etc/php.d)
  set(_lb_php_ini 40-lazybreaker.ini)
else()
  set(_lb_php_ext_dir ${LB_PHP_EXTENSION_DIR})
  set(_lb_php_ini_dir /etc/php/${LB_PHP_MAJOR_MINOR}/mods-available)
  set(_lb_php_ini lazybreaker.ini)
endif()
install(TARGETS lazybreaker_php LIBRARY DESTINATION ${_lb_php_ext_dir} COMPONENT PHP)
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/src/ DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/php/LazyBreaker
  COMPONENT PHP FILES_MATCHING PATTERN "*.php")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${_lb_php_ini}
"; lazybreaker: a lazy, lock-free circuit breaker (php-lazybreaker)
; priority=20
extension=lazybreaker.so
")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${_lb_php_ini} DESTINATION ${_lb_php_ini_dir} COMPONENT PHP)

# The .deb's maintainer scripts (phpenmod for cli and fpm) and conffiles.
set(_lb_php_control ${CMAKE_CURRENT_BINARY_DIR}/debian)
set(PHP_VERSION ${LB_PHP_MAJOR_MINOR})
foreach(script postinst prerm)
  configure_file(${PROJECT_SOURCE_DIR}/packaging/php/${script} ${_lb_php_control}/${script} @ONLY
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()
file(WRITE ${_lb_php_control}/conffiles "${_lb_php_ini_dir}/${_lb_php_ini}\n")
# The PHP ABI the extension is built for (Debian's php8.2-common provides
# phpapi-<its PHP API number>, as every Debian PHP extension depends on).
execute_process(COMMAND ${LB_PHP_CONFIG} --phpapi OUTPUT_VARIABLE _lb_phpapi OUTPUT_STRIP_TRAILING_WHITESPACE)

lb_package(PHP DEB php-lazybreaker RPM php-lazybreaker SECTION php GROUP Development/Languages
  DEPENDS_ON_RUNTIME
  DEB_DEPENDS "phpapi-${_lb_phpapi}, php-common"
  DEB_CONTROL_EXTRA ${_lb_php_control}/postinst ${_lb_php_control}/prerm ${_lb_php_control}/conffiles
  RPM_USER_FILELIST "%config(noreplace) ${_lb_php_ini_dir}/${_lb_php_ini}"
  SUMMARY "Lazy, lock-free circuit breaker library - PHP extension"
  DESCRIPTION "lazybreaker is a circuit breaker for calls to a downstream dependency.
Recovery is lazy: it starts no thread and arms no timer, and its request
path is a handful of atomic operations.

This package contains the PHP ${LB_PHP_MAJOR_MINOR} extension lazybreaker, enabled for
the cli and fpm SAPIs, and its classes (namespace LazyBreaker) under
/usr/share/php/LazyBreaker: require_once 'LazyBreaker/autoload.php'. A
registry file shared by every PHP-FPM worker holds one breaker state for
the whole pool, across worker and php-fpm restarts.")
