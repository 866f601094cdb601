/* Unloading the library while a thread that used it lives on is safe, and so
 * is loading it again: dlopen, a thread makes calls (which gives it a counter
 * stripe and a thread-exit destructor in the library), dlclose while that
 * thread lives, then the thread exits. Twice in one process. The library is
 * linked -z nodelete, so dlclose leaves it mapped (docs/install.md).
 *
 * usage: test_dlclose path/to/liblazybreaker.so */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "lazybreaker/lazybreaker.h"

typedef int (*config_init_fn)(cb_config *, size_t);
typedef int (*create_fn)(cb_registry *, const char *, const cb_config *, cb_handle *);
typedef int (*allow_fn)(cb_handle, cb_ticket *);
typedef int (*done_fn)(cb_handle, cb_ticket, int);
typedef int (*destroy_fn)(cb_handle);

struct api {
  config_init_fn config_init;
  create_fn create;
  allow_fn allow;
  done_fn done;
  destroy_fn destroy;
};

static pthread_barrier_t used, unloaded;
static int worker_failed;

static void *worker(void *arg) {
  const struct api *lb = arg;
  cb_config cfg;
  cb_handle h = 0;
  cb_ticket t = 0;
  int ok = lb->config_init(&cfg, sizeof cfg) == CB_OK && lb->create(NULL, NULL, &cfg, &h) == CB_OK;
  for (int i = 0; ok && i < 100; ++i)
    ok = lb->allow(h, &t) == CB_OK && lb->done(h, t, CB_SUCCESS) == CB_OK;
  ok = ok && lb->destroy(h) == CB_OK;
  worker_failed = !ok;
  pthread_barrier_wait(&used);
  pthread_barrier_wait(&unloaded); /* the library is dlclosed now */
  return NULL;                     /* thread exit runs the library's destructor */
}

static void *must(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (p == NULL) fprintf(stderr, "test_dlclose: %s not found: %s\n", name, dlerror());
  return p;
}

static int round_trip(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "test_dlclose: dlopen %s: %s\n", path, dlerror());
    return 1;
  }
  struct api lb;
  /* POSIX: a dlsym result converts to a function pointer. */
  *(void **)&lb.config_init = must(lib, "cb_config_init_size");
  *(void **)&lb.create = must(lib, "cb_create");
  *(void **)&lb.allow = must(lib, "cb_allow");
  *(void **)&lb.done = must(lib, "cb_done");
  *(void **)&lb.destroy = must(lib, "cb_destroy");
  if (!lb.config_init || !lb.create || !lb.allow || !lb.done || !lb.destroy) return 1;
  pthread_t th;
  if (pthread_create(&th, NULL, worker, &lb) != 0) return 1;
  pthread_barrier_wait(&used);
  if (dlclose(lib) != 0) {
    fprintf(stderr, "test_dlclose: dlclose: %s\n", dlerror());
    return 1;
  }
  pthread_barrier_wait(&unloaded);
  pthread_join(th, NULL);
  if (worker_failed) fprintf(stderr, "test_dlclose: the worker's calls failed\n");
  return worker_failed;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s path/to/liblazybreaker.so\n", argv[0]);
    return 2;
  }
  pthread_barrier_init(&used, NULL, 2);
  pthread_barrier_init(&unloaded, NULL, 2);
  int failed = 0;
  for (int round = 0; round < 2; ++round) failed += round_trip(argv[1]);
  printf("%d passed, %d failed\n", 2 - failed, failed);
  return failed != 0;
}
