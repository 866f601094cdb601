/* Builds against lazybreaker added with add_subdirectory: one call. */
#include <lazybreaker/lazybreaker.h>
#include <stdio.h>

int main(void) {
  cb_handle h = 0;
  cb_ticket t = 0;
  if (cb_create(NULL, "subproject", NULL, &h) != CB_OK || cb_allow(h, &t) != CB_OK ||
      cb_done(h, t, CB_SUCCESS) != CB_OK) {
    fprintf(stderr, "consumer: %s\n", cb_last_error_message());
    return 1;
  }
  puts("consumer: one call through lazybreaker added with add_subdirectory");
  return 0;
}
