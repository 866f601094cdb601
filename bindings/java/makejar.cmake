# cmake -DJAR=jar -DOUT=file.jar -DSTAGE=dir -DCLASSES=dir -DMANIFEST=file
#       -DMETA=dir [-DNATIVES="lib1;lib2" -DPLATFORM=linux-x86_64 -DSTRIP=strip]
#       -P makejar.cmake
# A jar of the classes, META-INF/maven, and (with NATIVES) the native
# libraries under io/lazybreaker/native/<PLATFORM>/, each copied as the real
# file under its soname-style name (no symlinks in a jar) and stripped of
# debug information.
file(REMOVE_RECURSE ${STAGE})
file(COPY ${CLASSES}/ DESTINATION ${STAGE})
file(COPY ${META}/ DESTINATION ${STAGE}/META-INF)
if(NATIVES)
  set(_dir ${STAGE}/io/lazybreaker/native/${PLATFORM})
  file(MAKE_DIRECTORY ${_dir})
  foreach(_lib IN LISTS NATIVES)
    # NAME=real file: name to give it
    string(REPLACE "=" ";" _pair "${_lib}")
    list(GET _pair 0 _file)
    list(GET _pair 1 _name)
    file(COPY_FILE ${_file} ${_dir}/${_name})
    if(STRIP)
      execute_process(COMMAND ${STRIP} --strip-debug ${_dir}/${_name} RESULT_VARIABLE _rc)
      if(_rc)
        message(FATAL_ERROR "strip ${_name} failed")
      endif()
    endif()
  endforeach()
endif()
get_filename_component(_outdir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${_outdir})
file(REMOVE ${OUT})
execute_process(COMMAND ${JAR} --create --file ${OUT} --manifest ${MANIFEST} -C ${STAGE} .
                RESULT_VARIABLE _rc)
if(_rc)
  message(FATAL_ERROR "jar failed (${_rc})")
endif()
