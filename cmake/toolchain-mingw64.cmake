# Cross-compiling lazybreaker.dll for 64-bit Windows on Debian (`make
# windows`, build-windows/): mingw-w64's GCC in its -posix variant, whose
# libstdc++ has std::thread and std::mutex (the -win32 variant has neither);
# packaging/install-deps.sh installs it (g++-mingw-w64-x86-64-posix).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(LB_MINGW_TRIPLE x86_64-w64-mingw32)

set(CMAKE_C_COMPILER ${LB_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${LB_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${LB_MINGW_TRIPLE}-windres)

# Libraries and headers from the mingw-w64 tree only; programs (wine, sh)
# from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${LB_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The Windows test programs run on this machine under Wine when it is there
# (Debian: wine, wine64).
find_program(LB_WINE NAMES wine wine64)
if(LB_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${LB_WINE})
endif()
