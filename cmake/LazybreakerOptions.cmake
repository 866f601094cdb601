# Warnings and sanitizers for every target of this project, through one
# interface target that every target links.
add_library(lb_build_options INTERFACE)
target_compile_options(lb_build_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  $<$<BOOL:${LB_WERROR}>:-Werror>)
if(LB_SANITIZE)
  target_compile_options(lb_build_options INTERFACE -fsanitize=${LB_SANITIZE} -fno-omit-frame-pointer
                         -fno-sanitize-recover=all)
  target_link_options(lb_build_options INTERFACE -fsanitize=${LB_SANITIZE})
endif()
# The fuzz tree (LB_FUZZ): libFuzzer's coverage in the library too, so the
# fuzzer sees the paths inside it.
if(LB_FUZZ)
  target_compile_options(lb_build_options INTERFACE -fsanitize=fuzzer-no-link)
endif()
