/*
 * lazybreaker-shared-workers: one breaker shared by two worker processes,
 * as in a PHP-FPM or prefork pool. The parent creates the registry file and
 * forks two workers; worker A's calls fail until the breaker trips; worker
 * B, told by a pipe that A has tripped it, fails fast on its very first
 * call: it never learns of the outage by failing itself.
 *
 *   lazybreaker-shared-workers [DIR]    (the file goes in DIR, default /dev/shm)
 *
 * C99 and POSIX, the C ABI only. Exit status 0 when B was rejected at once.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lazybreaker/lazybreaker.h"

static void die(const char *what) {
  fprintf(stderr, "lazybreaker-shared-workers: %s: %s\n", what, cb_last_error_message());
  exit(EXIT_FAILURE);
}

/* What every worker does at start: open the file, get (or create) the breaker. */
static cb_handle open_breaker(const char *path, cb_registry **reg) {
  cb_registry_options opts;
  cb_registry_options_init(&opts);
  opts.path = path; /* capacity and clock: the file's */
  cb_config cfg;
  cb_config_init(&cfg);
  cfg.failure_threshold = 3;
  cfg.open_duration_ns = 30ull * 1000000000; /* 30 s */
  cb_handle h = 0;
  if (cb_registry_open(&opts, reg) != CB_OK) die(path);
  if (cb_get_or_create(*reg, "payments-api", &cfg, &h) != CB_OK) die("payments-api");
  return h;
}

/* Worker A: every call to the payments API times out, until the breaker trips. */
static int worker_a(const char *path, int tripped) {
  cb_registry *reg = NULL;
  const cb_handle h = open_breaker(path, &reg);
  cb_ticket t;
  int failures = 0;
  while (cb_allow(h, &t) == CB_OK) {
    cb_done(h, t, CB_FAILURE); /* the call timed out */
    ++failures;
  }
  const int open = cb_state(h) == CB_STATE_OPEN;
  printf("worker A: %d failures, the breaker is %s\n", failures, open ? "OPEN" : "not open");
  fflush(stdout);
  if (write(tripped, "!", 1) != 1) die("write");
  cb_registry_close(reg);
  return open ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* Worker B: its first call comes after A's trip, and fails fast. */
static int worker_b(const char *path, int tripped) {
  cb_registry *reg = NULL;
  const cb_handle h = open_breaker(path, &reg);
  char c;
  if (read(tripped, &c, 1) != 1) die("read");
  cb_ticket t;
  uint64_t wait_ns = 0;
  const int st = cb_allow(h, &t);
  cb_retry_after(h, &wait_ns);
  printf("worker B: first call %s, retry in %.0f s\n",
         st == CB_REJECTED ? "rejected at once" : "admitted", (double)wait_ns / 1e9);
  fflush(stdout);
  cb_registry_close(reg);
  return st == CB_REJECTED ? EXIT_SUCCESS : EXIT_FAILURE;
}

int main(int argc, char **argv) {
  char path[4096];
  snprintf(path, sizeof path, "%s/lazybreaker-example-%ld.cbr", argc > 1 ? argv[1] : "/dev/shm",
           (long)getpid());
  /* The parent creates the file; the workers open it. */
  cb_registry_options opts;
  cb_registry_options_init(&opts);
  opts.path = path;
  opts.flags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE;
  opts.capacity = 16;
  cb_registry *reg = NULL;
  if (cb_registry_open(&opts, &reg) != CB_OK) die(path);
  cb_registry_close(reg);

  int pipefd[2];
  if (pipe(pipefd) != 0) die("pipe");
  const pid_t a = fork();
  if (a == 0) _exit(worker_a(path, pipefd[1]));
  const pid_t b = fork();
  if (b == 0) {
    close(pipefd[1]); /* so that B's read ends if A dies before writing */
    _exit(worker_b(path, pipefd[0]));
  }
  close(pipefd[0]);
  close(pipefd[1]);

  int status_a = 1, status_b = 1;
  waitpid(a, &status_a, 0);
  waitpid(b, &status_b, 0);
  unlink(path);
  return status_a == 0 && status_b == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
