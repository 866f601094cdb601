/* A consumer that never saw lazybreaker.h: it dlopens liblazybreaker.so.1
 * by its SONAME and finds every function with dlsym, as a language runtime
 * (or a plugin host) does. The struct layouts below are the ones the ABI
 * promises for version 1 (pinned by tests/abi/struct_layout.c). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct v1_registry_options { /* cb_registry_options, version 1 */
  size_t struct_size;
  uint32_t capacity;
  int clock;
  const char *path;
};

struct v1_config { /* cb_config, version 1 */
  size_t struct_size;
  uint32_t failure_threshold;
  uint64_t open_duration_ns;
  uint32_t half_open_max_calls;
  uint32_t half_open_success_threshold;
  uint64_t half_open_timeout_ns;
};

enum { OK = 0, REJECTED = 1, CLOCK_MANUAL = 1, FAILURE = 1, SUCCESS = 0 };
enum { CLOSED = 0, OPEN = 1, HALF_OPEN = 2 };

typedef int (*options_init_fn)(struct v1_registry_options *, size_t);
typedef int (*config_init_fn)(struct v1_config *, size_t);
typedef int (*registry_open_fn)(const struct v1_registry_options *, void **);
typedef int (*registry_close_fn)(void *);
typedef int (*create_fn)(void *, const char *, const struct v1_config *, uint64_t *);
typedef int (*allow_fn)(uint64_t, uint64_t *);
typedef int (*done_fn)(uint64_t, uint64_t, int);
typedef int (*state_fn)(uint64_t);
typedef int (*advance_fn)(void *, uint64_t);
typedef const char *(*version_fn)(void);

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "dlopen_cycle: %s failed at line %d\n", #cond, __LINE__); \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

/* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
#define LOAD(var, type, name)                                            \
  do {                                                                   \
    void *sym_ = dlsym(lib, name);                                       \
    if (sym_ == NULL) {                                                  \
      fprintf(stderr, "dlopen_cycle: dlsym(%s): %s\n", name, dlerror()); \
      return 1;                                                          \
    }                                                                    \
    *(void **)(&var) = sym_;                                             \
  } while (0)

int main(void) {
  options_init_fn options_init;
  config_init_fn config_init;
  registry_open_fn registry_open;
  registry_close_fn registry_close;
  create_fn create;
  allow_fn allow;
  done_fn done;
  state_fn state;
  advance_fn advance;
  version_fn version;
  struct v1_registry_options o;
  struct v1_config cfg;
  void *reg = NULL;
  uint64_t h = 0, t = 0;
  int i;

  void *lib = dlopen("liblazybreaker.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen_cycle: dlopen: %s\n", dlerror());
    return 1;
  }
  LOAD(options_init, options_init_fn, "cb_registry_options_init_size");
  LOAD(config_init, config_init_fn, "cb_config_init_size");
  LOAD(registry_open, registry_open_fn, "cb_registry_open");
  LOAD(registry_close, registry_close_fn, "cb_registry_close");
  LOAD(create, create_fn, "cb_create");
  LOAD(allow, allow_fn, "cb_allow");
  LOAD(done, done_fn, "cb_done");
  LOAD(state, state_fn, "cb_state");
  LOAD(advance, advance_fn, "cb_clock_advance");
  LOAD(version, version_fn, "cb_version_string");

  CHECK(options_init(&o, sizeof o) == OK);
  o.clock = CLOCK_MANUAL;
  CHECK(registry_open(&o, &reg) == OK);
  CHECK(config_init(&cfg, sizeof cfg) == OK);
  cfg.failure_threshold = 2;
  cfg.open_duration_ns = 1000000;
  CHECK(create(reg, "dlopen", &cfg, &h) == OK);

  for (i = 0; i < 2; ++i) {
    CHECK(allow(h, &t) == OK);
    CHECK(done(h, t, FAILURE) == OK);
  }
  CHECK(state(h) == OPEN);
  CHECK(allow(h, &t) == REJECTED);
  CHECK(advance(reg, 1000000) == OK);
  CHECK(allow(h, &t) == OK);
  CHECK(state(h) == HALF_OPEN);
  CHECK(done(h, t, SUCCESS) == OK);
  CHECK(state(h) == CLOSED);
  CHECK(registry_close(reg) == OK);

  printf("dlopen_cycle: lazybreaker %s: tripped, rejected, recovered\n", version());
  dlclose(lib);
  return 0;
}
