# cmake -DJAVAC=... -DOUT=dir -DGENERATED=dir -DSOURCES="a.java;b.java"
#       -DRELEASE=11 [-DCLASSPATH=...] -P javac.cmake
# Compiles the hand-written sources with whatever SWIG generated (a set of
# files known only once SWIG has run), warnings on and fatal.
file(GLOB _generated ${GENERATED}/*.java)
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(_cp "")
if(CLASSPATH)
  set(_cp -classpath ${CLASSPATH})
endif()
execute_process(COMMAND ${JAVAC} --release ${RELEASE} -encoding UTF-8 -Xlint:all,-serial -Werror
                        -d ${OUT} ${_cp} ${_generated} ${SOURCES}
                RESULT_VARIABLE _rc)
if(_rc)
  message(FATAL_ERROR "javac failed (${_rc})")
endif()
