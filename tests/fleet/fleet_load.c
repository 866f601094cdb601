/* A host's application, for the fleet tests and the fleet bench: a process
 * that uses one registry file through the public C header only.
 *
 *   fleet_load load --file F --name N [--rate CALLS_PER_S] [--fail-flag PATH]
 *                   [--duration S]
 *     calls breaker N at the rate (default 100/s); a call fails while the
 *     file PATH exists, else succeeds. One line per transition this process
 *     sees (cb_events_poll: events are per process), with the wall time in
 *     ms: `t=1733123456789 half_open reason=open_elapsed from=open`; one
 *     line per admitted call it made in HALF_OPEN: `t=... probe
 *     outcome=failure`; last, `t=... done admitted=A rejected=R probes=P`.
 *   fleet_load watch --name N [--duration S] FILE...
 *     watches breaker N in every FILE (polling cb_state every 0.5 ms, which
 *     never moves the state): one line per change it sees, `t=... host=I
 *     state=open retry_ms=R` (I: the FILE's index; R: cb_retry_after, -1
 *     when there is none), first one per FILE at start.
 *   fleet_load populate --file F --count K [--prefix P] [--open-for MS]
 *                       [--failure-threshold T] [--capacity C]
 *     creates F (capacity C, default the library's) if it is missing and breakers P-00000 ..
 * P-(K-1) (cb_get_or_create); prints `created K`. fleet_load storm --file F --count K [--prefix P]
 * [--rate CALLS_PER_S]
 *                    [--fail-flag PATH] [--duration S]
 *     calls the K breakers in turn, failing while PATH exists; last line
 *     `t=... done admitted=A rejected=R transitions=X`.
 * Every mode ends after --duration seconds (default 10) or on SIGTERM or
 * SIGINT, with status 0; bad arguments are status 2, a library error 1. */
#define _POSIX_C_SOURCE 200809L
#include <lazybreaker/lazybreaker.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 64

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

typedef struct args {
  const char *mode;
  const char *file;
  const char *name;
  const char *fail_flag;
  const char *prefix;
  double rate;
  double duration;
  long count;
  long open_for_ms;
  long threshold;
  long capacity;
  const char *files[MAX_FILES];
  int nfiles;
} args;

static uint64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double when) {
  double d = when - mono_s();
  if (d <= 0) return;
  struct timespec ts;
  ts.tv_sec = (time_t)d;
  ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
  nanosleep(&ts, NULL);
}

static int usage(const char *why) {
  fprintf(stderr, "fleet_load: %s\n", why);
  fprintf(stderr,
          "usage: fleet_load load --file F --name N [--rate R] [--fail-flag PATH] [--duration S]\n"
          "       fleet_load watch --name N [--duration S] FILE...\n"
          "       fleet_load populate --file F --count K [--prefix P] [--open-for MS] "
          "[--failure-threshold T] [--capacity C]\n"
          "       fleet_load storm --file F --count K [--prefix P] [--rate R] [--fail-flag PATH] "
          "[--duration S]\n");
  return 2;
}

static int parse(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  a->rate = 100;
  a->duration = 10;
  a->prefix = "b";
  a->open_for_ms = 1000;
  a->threshold = 5;
  if (argc < 2) return usage("a mode is required");
  a->mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const char *o = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = 1;
    if (strcmp(o, "--file") == 0 && v)
      a->file = v;
    else if (strcmp(o, "--name") == 0 && v)
      a->name = v;
    else if (strcmp(o, "--fail-flag") == 0 && v)
      a->fail_flag = v;
    else if (strcmp(o, "--prefix") == 0 && v)
      a->prefix = v;
    else if (strcmp(o, "--rate") == 0 && v)
      a->rate = atof(v);
    else if (strcmp(o, "--duration") == 0 && v)
      a->duration = atof(v);
    else if (strcmp(o, "--count") == 0 && v)
      a->count = atol(v);
    else if (strcmp(o, "--open-for") == 0 && v)
      a->open_for_ms = atol(v);
    else if (strcmp(o, "--failure-threshold") == 0 && v)
      a->threshold = atol(v);
    else if (strcmp(o, "--capacity") == 0 && v)
      a->capacity = atol(v);
    else if (o[0] != '-' && a->nfiles < MAX_FILES) {
      a->files[a->nfiles++] = o;
      takes = 0;
    } else {
      fprintf(stderr, "fleet_load: bad argument '%s'\n", o);
      return 2;
    }
    i += takes;
  }
  if (a->rate <= 0 || a->rate > 1e6) return usage("--rate must be in (0, 1e6]");
  if (a->duration <= 0) return usage("--duration must be positive");
  return 0;
}

static cb_registry *open_file(const char *path, int create, long capacity) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path;
  o.capacity = (uint32_t)capacity;
  o.flags = create ? CB_REGISTRY_CREATE : 0u;
  o.event_capacity = 65536;
  cb_registry *reg = NULL;
  int st = cb_registry_open(&o, &reg);
  if (st != CB_OK) {
    fprintf(stderr, "fleet_load: %s: %s\n", path, cb_last_error_message());
    return NULL;
  }
  return reg;
}

static const char *state_name(int s) {
  const char *n = cb_state_name(s);
  return n ? n : "?";
}

/* Drains the process's events: prints each transition of `h` (every one
 * when h is 0); returns 1 when one of them moved it to HALF_OPEN. */
static int drain(cb_registry *reg, cb_handle h, long *transitions, int print) {
  cb_event ev[64];
  int to_half_open = 0;
  for (;;) {
    size_t n = 0;
    ev[0].struct_size = sizeof ev[0];
    if (cb_events_poll(reg, ev, 64, &n) != CB_OK || n == 0) break;
    for (size_t i = 0; i < n; ++i) {
      if (h && ev[i].breaker != h) continue;
      if (ev[i].to == ev[i].from) continue;
      ++*transitions;
      if (ev[i].to == CB_STATE_HALF_OPEN) to_half_open = 1;
      if (print) {
        const char *reason = cb_reason_name(ev[i].reason);
        printf("t=%llu %s reason=%s from=%s\n", (unsigned long long)wall_ms(), state_name(ev[i].to),
               reason ? reason : "?", state_name(ev[i].from));
      }
    }
  }
  return to_half_open;
}

static int fails(const char *flag) { return flag && access(flag, F_OK) == 0; }

static int run_load(const args *a) {
  if (!a->file || !a->name) return usage("load needs --file and --name");
  cb_registry *reg = open_file(a->file, 0, 0);
  if (!reg) return 1;
  cb_handle h = 0;
  if (cb_lookup(reg, a->name, &h) != CB_OK) {
    fprintf(stderr, "fleet_load: %s: %s\n", a->name, cb_last_error_message());
    return 1;
  }
  long admitted = 0, rejected = 0, probes = 0, transitions = 0;
  double start = mono_s(), period = 1.0 / a->rate;
  printf("t=%llu start state=%s\n", (unsigned long long)wall_ms(), state_name(cb_state(h)));
  for (long i = 0; !stop_flag; ++i) {
    double when = start + (double)i * period;
    if (when - start >= a->duration) break;
    sleep_until(when);
    drain(reg, h, &transitions, 1);
    cb_ticket t = 0;
    int st = cb_allow(h, &t);
    if (st == CB_REJECTED) {
      ++rejected;
      continue;
    }
    if (st != CB_OK) {
      fprintf(stderr, "fleet_load: cb_allow: %s\n", cb_last_error_message());
      return 1;
    }
    ++admitted;
    int probe = drain(reg, h, &transitions, 1) || cb_state(h) == CB_STATE_HALF_OPEN;
    int outcome = fails(a->fail_flag) ? CB_FAILURE : CB_SUCCESS;
    if (probe) {
      ++probes;
      printf("t=%llu probe outcome=%s\n", (unsigned long long)wall_ms(),
             outcome == CB_FAILURE ? "failure" : "success");
    }
    cb_done(h, t, outcome);
  }
  drain(reg, h, &transitions, 1);
  printf("t=%llu done admitted=%ld rejected=%ld probes=%ld\n", (unsigned long long)wall_ms(),
         admitted, rejected, probes);
  cb_registry_close(reg);
  return 0;
}

static int run_watch(const args *a) {
  if (!a->name || a->nfiles == 0) return usage("watch needs --name and FILEs");
  cb_registry *regs[MAX_FILES];
  cb_handle hs[MAX_FILES];
  int last[MAX_FILES];
  for (int i = 0; i < a->nfiles; ++i) {
    if (!(regs[i] = open_file(a->files[i], 0, 0))) return 1;
    cb_events_select(regs[i], 0);
    if (cb_lookup(regs[i], a->name, &hs[i]) != CB_OK) {
      fprintf(stderr, "fleet_load: %s: %s: %s\n", a->files[i], a->name, cb_last_error_message());
      return 1;
    }
    last[i] = -1;
  }
  double start = mono_s();
  while (!stop_flag && mono_s() - start < a->duration) {
    for (int i = 0; i < a->nfiles; ++i) {
      int s = cb_state(hs[i]);
      if (s == last[i]) continue;
      uint64_t ra = 0;
      long long retry = -1;
      if (cb_retry_after(hs[i], &ra) == CB_OK && ra != UINT64_MAX)
        retry = (long long)(ra / 1000000u);
      printf("t=%llu host=%d state=%s retry_ms=%lld\n", (unsigned long long)wall_ms(), i,
             state_name(s), retry);
      fflush(stdout);
      last[i] = s;
    }
    sleep_until(mono_s() + 0.0005);
  }
  for (int i = 0; i < a->nfiles; ++i) cb_registry_close(regs[i]);
  return 0;
}

static void breaker_name(char *buf, size_t size, const char *prefix, long i) {
  snprintf(buf, size, "%s-%05ld", prefix, i);
}

static int run_populate(const args *a) {
  if (!a->file || a->count <= 0) return usage("populate needs --file and --count");
  cb_registry *reg = open_file(a->file, 1, a->capacity);
  if (!reg) return 1;
  cb_config cfg;
  cb_config_init(&cfg);
  cfg.open_duration_ns = (uint64_t)a->open_for_ms * 1000000u;
  cfg.failure_threshold = (uint32_t)a->threshold;
  for (long i = 0; i < a->count; ++i) {
    char name[64];
    breaker_name(name, sizeof name, a->prefix, i);
    cb_handle h = 0;
    if (cb_get_or_create(reg, name, &cfg, &h) != CB_OK) {
      fprintf(stderr, "fleet_load: %s: %s: %s\n", a->file, name, cb_last_error_message());
      return 1;
    }
  }
  printf("created %ld\n", a->count);
  cb_registry_close(reg);
  return 0;
}

static int run_storm(const args *a) {
  if (!a->file || a->count <= 0) return usage("storm needs --file and --count");
  cb_registry *reg = open_file(a->file, 0, 0);
  if (!reg) return 1;
  cb_handle *hs = calloc((size_t)a->count, sizeof *hs);
  if (!hs) return 1;
  for (long i = 0; i < a->count; ++i) {
    char name[64];
    breaker_name(name, sizeof name, a->prefix, i);
    if (cb_lookup(reg, name, &hs[i]) != CB_OK) {
      fprintf(stderr, "fleet_load: %s: %s\n", name, cb_last_error_message());
      return 1;
    }
  }
  long admitted = 0, rejected = 0, transitions = 0;
  double start = mono_s(), period = 1.0 / a->rate;
  for (long i = 0; !stop_flag; ++i) {
    double when = start + (double)i * period;
    if (when - start >= a->duration) break;
    sleep_until(when);
    cb_handle h = hs[i % a->count];
    cb_ticket t = 0;
    int st = cb_allow(h, &t);
    if (st == CB_OK) {
      ++admitted;
      cb_done(h, t, fails(a->fail_flag) ? CB_FAILURE : CB_SUCCESS);
    } else if (st == CB_REJECTED) {
      ++rejected;
    }
    if (i % 256 == 0) drain(reg, 0, &transitions, 0);
  }
  drain(reg, 0, &transitions, 0);
  printf("t=%llu done admitted=%ld rejected=%ld transitions=%ld\n", (unsigned long long)wall_ms(),
         admitted, rejected, transitions);
  free(hs);
  cb_registry_close(reg);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  args a;
  int st = parse(argc, argv, &a);
  if (st != 0) return st;
  if (strcmp(a.mode, "load") == 0) return run_load(&a);
  if (strcmp(a.mode, "watch") == 0) return run_watch(&a);
  if (strcmp(a.mode, "populate") == 0) return run_populate(&a);
  if (strcmp(a.mode, "storm") == 0) return run_storm(&a);
  return usage("unknown mode");
}
