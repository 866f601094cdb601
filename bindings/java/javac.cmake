# cmake -DJAVAC=... -DOUT=dir [-DGENERATED=dir] -DSOURCES="a.java;b.java"
#       -DRELEASE=17 [-DCLASSPATH=...] [-DLINT=all,-serial] -P javac.cmake
# Compiles the hand-written sources with whatever SWIG generated (a set of
# files known only once SWIG has run), warnings on and fatal. The classes
# appear in OUT only when all of them compiled.
set(_generated "")
if(GENERATED)
  file(GLOB _generated ${GENERATED}/*.java)
endif()
if(NOT LINT)
  set(LINT all,-serial)
endif()
file(REMOVE_RECURSE ${OUT}.partial)
file(MAKE_DIRECTORY ${OUT}.partial)
set(_cp "")
if(CLASSPATH)
  set(_cp -classpath ${CLASSPATH})
endif()
execute_process(COMMAND ${JAVAC} --release ${RELEASE} -encoding UTF-8 -Xlint:${LINT} -Werror
                        -d ${OUT}.partial ${_cp} ${_generated} ${SOURCES}
                RESULT_VARIABLE _rc)
if(_rc)
  message(FATAL_ERROR "javac failed (${_rc})")
endif()
file(REMOVE_RECURSE ${OUT})
file(RENAME ${OUT}.partial ${OUT})
