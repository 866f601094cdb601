# Install rules of the Python binding (component Python, package
# python3-lazybreaker): the package lazybreaker/ (its modules, SWIG's
# _core.py, the extension _core.<SOABI>.so linked to liblazybreaker.so, the
# stub _core.pyi and py.typed) where the distro's python3 looks:
#   deb: /usr/lib/python3/dist-packages/lazybreaker/ (Debian's python3, every 3.x)
#   rpm: <libdir>/python3.11/site-packages/lazybreaker/ (%{python3_sitearch})
# LB_PYTHON_INSTALL_DIR (relative to the prefix) chooses another place.
if(LB_PACKAGE_LAYOUT STREQUAL "rpm" OR (NOT LB_PACKAGE_LAYOUT AND NOT Python3_SITEARCH MATCHES "dist-packages"))
  set(_lb_py_dir ${CMAKE_INSTALL_LIBDIR}/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages)
else()
  set(_lb_py_dir lib/python3/dist-packages)
endif()
set(LB_PYTHON_INSTALL_DIR ${_lb_py_dir} CACHE STRING "Where the Python package goes, relative to the prefix")
install(TARGETS lazybreaker_python LIBRARY DESTINATION ${LB_PYTHON_INSTALL_DIR}/lazybreaker COMPONENT Python)
list(TRANSFORM LB_PYTHON_FILES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/ OUTPUT_VARIABLE _lb_py_sources)
install(FILES ${_lb_py_sources} ${LB_PYTHON_PACKAGE_DIR}/_core.py
  DESTINATION ${LB_PYTHON_INSTALL_DIR}/lazybreaker COMPONENT Python)

set(_lb_py_next "${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}")
math(EXPR _lb_py_next_minor "${Python3_VERSION_MINOR} + 1")
lb_package(Python DEB python3-lazybreaker RPM python3-lazybreaker SECTION python GROUP Development/Libraries
  DEPENDS_ON_RUNTIME
  # the extension is built for this interpreter's ABI (its SOABI) only
  DEB_DEPENDS "python3 (>= ${_lb_py_next}~), python3 (<< ${Python3_VERSION_MAJOR}.${_lb_py_next_minor})"
  RPM_REQUIRES "python(abi) = ${_lb_py_next}"
  DEB_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/debian/python/postinst
                    ${PROJECT_SOURCE_DIR}/packaging/debian/python/prerm
  SUMMARY "Lazy, lock-free circuit breaker library - Python 3 module"
  DESCRIPTION "lazybreaker is a circuit breaker for calls to a downstream dependency.
Recovery is lazy: it starts no thread and arms no timer, and its request
path is a handful of atomic operations.

This package contains the Python 3 module: import lazybreaker. Its
breakers can live in a registry file that every process shares, so the
workers of a gunicorn or uWSGI pool see one breaker.")
