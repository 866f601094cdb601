/* php.i: the PHP overlay of lazybreaker.i. SWIG generates the low layer,
 * the PHP 8.2 extension `lazybreaker` (SWIG's flat functions cb_* and
 * lb_*), from it; the classes of namespace LazyBreaker\ (bindings/php/src,
 * PSR-4) are the API a PHP user sees. What is PHP's alone lives here:
 *
 *   - uint64_t is a PHP int (64-bit, signed). Handles and tickets use all
 *     64 bits and cross bit for bit (as Java's long): a handle is a token,
 *     never arithmetic. Other values (nanoseconds, counters) going in must
 *     be a non-negative int; coming out, a value above PHP_INT_MAX (only
 *     cb_retry_after's UINT64_MAX, "until reset") is -1, which the classes
 *     turn into null.
 *   - %lb_raise throws LazyBreaker\LazyBreakerException (autoloaded; a
 *     plain RuntimeException if the classes are not loaded) whose code is
 *     the status and whose message is cb_strerror's and this thread's
 *     cb_last_error_message(). The classes read cb_last_error_field() after
 *     the throw (nothing in between calls the library) to name the option in
 *     PHP's words.
 *   - Registries opened by path persist across requests in one process (a
 *     PHP-FPM worker): lb_php_registry_open keeps each (path, options) once
 *     per process, as phpredis keeps its persistent connections, so a
 *     worker maps the file once, not once per request. Such a registry is
 *     never closed before the process ends (Registry::close() closes the
 *     PHP object, whose breakers then throw): another object of the same
 *     process may hold it, and a registry freed under it would crash.
 *   - lb_php_config_fields() is CB_CONFIG_FIELDS (lists.h) as a PHP array:
 *     the classes derive their option names and bounds from it;
 *     lb_php_policy_reads() is cb_policy_reads' answers for every policy and
 *     field, asked once per process.
 *   - LB_OVERLAY_ARGOUT / %lb_return_int: results are set on SWIG's zval
 *     return_value, not assigned.
 */
%module lazybreaker

%{
#include "lazybreaker/lazybreaker.h"
#include "zend_exceptions.h"
#include "ext/spl/spl_exceptions.h"

/* "CB_EINVAL: invalid argument or configuration: cb_config: failure_threshold
 * must be 1..65535, got 0", thrown as LazyBreaker\LazyBreakerException. */
static void lb_php_throw(int status) {
  zend_string *name = zend_string_init("LazyBreaker\\LazyBreakerException",
                                       sizeof("LazyBreaker\\LazyBreakerException") - 1, 0);
  zend_class_entry *ce = zend_lookup_class(name);
  zend_string_release(name);
  if (EG(exception)) return; /* the autoloader threw: that one goes up */
  const char *detail = cb_last_error_message();
  if (detail && *detail)
    zend_throw_exception_ex(ce ? ce : spl_ce_RuntimeException, status, "lazybreaker: %s: %s", cb_strerror(status),
                            detail);
  else
    zend_throw_exception_ex(ce ? ce : spl_ce_RuntimeException, status, "lazybreaker: %s", cb_strerror(status));
}

static void lb_php_argument_error(const char *what, zval *value) {
  zend_throw_exception_ex(spl_ce_InvalidArgumentException, CB_EINVAL, "lazybreaker: %s, got %s", what,
                          zend_zval_type_name(value));
}

%}

/* ---- the raise hook ------------------------------------------------------- */
%define %lb_raise(status)
  lb_php_throw(status);
  return;
%enddef
#define LB_RAISE_DEFINED
%define %lb_return_int(value)
  RETVAL_LONG((zend_long)value);
%enddef
#define LB_RETURN_INT_DEFINED

/* ---- numbers ---------------------------------------------------------------- */
%typemap(in, phptype="int") cb_handle, cb_ticket %{
  if (Z_TYPE($input) != IS_LONG) {
    lb_php_argument_error("expected an int handle or ticket", &$input);
    return;
  }
  $1 = (uint64_t)Z_LVAL($input);
%}
%typemap(out, phptype="int") cb_handle, cb_ticket %{ RETVAL_LONG((zend_long)$1); %}
%typemap(in, phptype="int") uint64_t, unsigned long long %{
  if (Z_TYPE($input) != IS_LONG || Z_LVAL($input) < 0) {
    lb_php_argument_error("expected an int of 0 or more", &$input);
    return;
  }
  $1 = ($1_ltype)Z_LVAL($input);
%}
%typemap(out, phptype="int") uint64_t, unsigned long long %{
  RETVAL_LONG((uint64_t)$1 > (uint64_t)ZEND_LONG_MAX ? -1 : (zend_long)$1);
%}
%typemap(in, phptype="int") uint32_t, unsigned int %{
  if (Z_TYPE($input) != IS_LONG || Z_LVAL($input) < 0 || Z_LVAL($input) > (zend_long)UINT32_MAX) {
    lb_php_argument_error("expected an int 0..4294967295", &$input);
    return;
  }
  $1 = ($1_ltype)Z_LVAL($input);
%}
%typemap(in, phptype="int") int %{
  if (Z_TYPE($input) != IS_LONG || Z_LVAL($input) < INT32_MIN || Z_LVAL($input) > INT32_MAX) {
    lb_php_argument_error("expected an int", &$input);
    return;
  }
  $1 = (int)Z_LVAL($input);
%}
%typemap(in, phptype="float") double %{
  if (Z_TYPE($input) == IS_LONG) {
    $1 = (double)Z_LVAL($input);
  } else if (Z_TYPE($input) == IS_DOUBLE) {
    $1 = Z_DVAL($input);
  } else {
    lb_php_argument_error("expected a number", &$input);
    return;
  }
%}

/* ---- names and paths in ------------------------------------------------------ */
/* A string (or null); a NUL inside is refused: C would cut "a\0b" to "a". */
%typemap(in, phptype="?string") const char *name, const char *path %{
  if (Z_TYPE($input) == IS_NULL) {
    $1 = NULL;
  } else if (Z_TYPE($input) == IS_STRING) {
    if (strlen(Z_STRVAL($input)) != Z_STRLEN($input)) {
      zend_throw_exception(spl_ce_InvalidArgumentException, "lazybreaker: $1_name: a NUL byte inside the $1_name",
                           CB_EINVAL);
      return;
    }
    $1 = Z_STRVAL($input);
  } else {
    lb_php_argument_error("$1_name: expected a string or null", &$input);
    return;
  }
%}

/* ---- results on return_value (LB_OVERLAY_ARGOUT) --------------------------------- */
#define LB_OVERLAY_ARGOUT
%typemap(argout) uint64_t *LB_OUT_U64 %{
  if (strcmp("$*1_type", "cb_handle") == 0)
    RETVAL_LONG((zend_long)temp$argnum);
  else
    RETVAL_LONG(temp$argnum > (uint64_t)ZEND_LONG_MAX ? -1 : (zend_long)temp$argnum);
%}
%typemap(argout) cb_ticket *LB_OUT_TICKET %{ RETVAL_LONG(result == CB_OK ? (zend_long)temp$argnum : 0); %}

%include "lazybreaker.i"

/* ---- PHP's helpers ------------------------------------------------------------ */
%rename("%s") lb_php_registry_open;
%rename("%s") lb_php_config_fields;
%rename("%s") lb_php_stats;
%rename("%s") lb_php_config;
%rename("%s") lb_php_policy_reads;
%{
/* ---- persistent registries --------------------------------------------------- */
typedef struct lb_php_persistent {
  char *path;
  cb_registry_options opts;
  cb_registry *reg;
  struct lb_php_persistent *next;
} lb_php_persistent;
static lb_php_persistent *lb_php_registries = NULL;

static int lb_php_same_options(const cb_registry_options *a, const cb_registry_options *b) {
  return a->capacity == b->capacity && a->clock == b->clock && a->flags == b->flags &&
         a->event_capacity == b->event_capacity && a->mode == b->mode;
}

/* The registry at path with these options: the one this process opened
 * already, else opened now and kept until the process ends. NULL path or
 * !persistent: a registry of the caller's own, which it closes. */
static cb_registry *lb_php_registry_open(const cb_registry_options *opts, const char *path, int persistent) {
  if (!path || !persistent) return lb_registry_open_at(opts, path);
  cb_registry_options mine;
  cb_registry_options_init(&mine);
  if (opts) mine = *opts;
  for (lb_php_persistent *p = lb_php_registries; p; p = p->next)
    if (strcmp(p->path, path) == 0 && lb_php_same_options(&p->opts, &mine)) return p->reg;
  lb_php_persistent *p = (lb_php_persistent *)calloc(1, sizeof *p);
  char *copy = (char *)malloc(strlen(path) + 1);
  if (!p || !copy) {
    free(p);
    free(copy);
    return (cb_registry *)lb_fail_null(CB_ENOMEM);
  }
  strcpy(copy, path);
  cb_registry *reg = lb_registry_open_at(&mine, path);
  if (!reg) {
    free(p);
    free(copy);
    return NULL;
  }
  p->path = copy;
  p->opts = mine;
  p->reg = reg;
  p->next = lb_php_registries;
  lb_php_registries = p;
  return reg;
}

%}

%exception lb_php_registry_open {
  $action
  if (!result) {
    lb_php_throw(lb_last_status());
    return;
  }
}
cb_registry *lb_php_registry_open(const cb_registry_options *opts, const char *path, bool persistent);

/* Helpers that fill SWIG's return_value with a PHP array themselves: their
 * int result is a status (a failure has thrown already) and sets nothing. */
%typemap(in, numinputs=0) zval *LB_PHP_RESULT %{ $1 = return_value; %}
%typemap(out) int LB_PHP_FILLED %{ (void)$1; %}
%apply zval *LB_PHP_RESULT { zval *out };
%apply int LB_PHP_FILLED { int lb_php_config_fields, int lb_php_stats, int lb_php_config, int lb_php_policy_reads };
%{
#define LB_PHP_NUMBER(arr, key, type, v)                                  \
  do {                                                                     \
    if (strcmp(#type, "double") == 0)                                      \
      add_assoc_double(arr, key, (double)(v));                             \
    else                                                                   \
      add_assoc_long(arr, key, (zend_long)(v));                            \
  } while (0)
#define LB_PHP_FIELD_INFO(field, type, since, unit, bounds, lo, hi, def)  \
  {                                                                        \
    zval f;                                                                \
    array_init(&f);                                                        \
    add_assoc_string(&f, "type", #type);                                   \
    add_assoc_string(&f, "since", #since);                                 \
    add_assoc_string(&f, "unit", #unit);                                   \
    add_assoc_string(&f, "bounds", #bounds);                               \
    LB_PHP_NUMBER(&f, "lo", type, lo);                                     \
    LB_PHP_NUMBER(&f, "hi", type, hi);                                     \
    LB_PHP_NUMBER(&f, "default", type, def);                               \
    add_assoc_zval(out, #field, &f);                                       \
  }
/* The fields of CB_CONFIG_FIELDS by C name: ['type' => 'uint32_t', 'unit'
 * => 'count', 'bounds' => 'closed', 'lo' => 1, 'hi' => 65535, 'default' =>
 * 5] (lo, hi and default are int for integer fields, float otherwise). */
static int lb_php_config_fields(zval *out) {
  array_init(out);
  CB_CONFIG_FIELDS(LB_PHP_FIELD_INFO)
  return CB_OK;
}

/* cb_policy_reads for every policy and every field, by C field and policy
 * value: ['window_size' => [CB_POLICY_CONSECUTIVE =>
 * CB_FIELD_READ_WITH_SLOW_CALLS, ...], ...]. The library is asked once per
 * process and the answers kept here: PHP's statics end with each request,
 * and every request of a PHP-FPM worker builds its Configs from them. */
#define LB_PHP_FIELD_NAME(field, type, since, unit, bounds, lo, hi, def) #field,
static const char *const lb_php_field_names[] = {CB_CONFIG_FIELDS(LB_PHP_FIELD_NAME)};
#undef LB_PHP_FIELD_NAME
#define LB_PHP_FIELD_COUNT (sizeof lb_php_field_names / sizeof *lb_php_field_names)
/* The members of cb_policy_t. */
static const int lb_php_policies[] = {CB_POLICY_CONSECUTIVE, CB_POLICY_COUNT_WINDOW, CB_POLICY_TIME_WINDOW};
#define LB_PHP_POLICY_COUNT (sizeof lb_php_policies / sizeof *lb_php_policies)
static int lb_php_policy_reads(zval *out) {
  static int answers[LB_PHP_FIELD_COUNT][LB_PHP_POLICY_COUNT];
  static int asked = 0;
  if (!asked) {
    for (size_t f = 0; f < LB_PHP_FIELD_COUNT; ++f) {
      for (size_t p = 0; p < LB_PHP_POLICY_COUNT; ++p) {
        const int st = cb_policy_reads(lb_php_policies[p], lb_php_field_names[f], &answers[f][p]);
        if (st != CB_OK) {
          lb_php_throw(st);
          return st;
        }
      }
    }
    asked = 1;
  }
  array_init(out);
  for (size_t f = 0; f < LB_PHP_FIELD_COUNT; ++f) {
    zval row;
    array_init(&row);
    for (size_t p = 0; p < LB_PHP_POLICY_COUNT; ++p) add_index_long(&row, lb_php_policies[p], answers[f][p]);
    add_assoc_zval(out, lb_php_field_names[f], &row);
  }
  return CB_OK;
}

/* A breaker's counters (cb_stats_get) by the C names of cb_stats. */
static int lb_php_stats(zval *out, cb_handle h) {
  cb_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  const int st = cb_stats_get(h, &s);
  if (st != CB_OK) {
    lb_php_throw(st);
    return st;
  }
  array_init(out);
#define LB_PHP_COUNT(m) add_assoc_long(out, #m, s.m > (uint64_t)ZEND_LONG_MAX ? ZEND_LONG_MAX : (zend_long)s.m)
  LB_PHP_COUNT(admitted);
  LB_PHP_COUNT(rejected);
  LB_PHP_COUNT(successes);
  LB_PHP_COUNT(failures);
  LB_PHP_COUNT(ignored);
  LB_PHP_COUNT(trips);
  LB_PHP_COUNT(consecutive_failures);
  LB_PHP_COUNT(slow);
  add_assoc_double(out, "failure_rate", s.failure_rate);
  add_assoc_double(out, "slow_rate", s.slow_rate);
  LB_PHP_COUNT(state_ns);
#undef LB_PHP_COUNT
  return CB_OK;
}

/* A breaker's configuration (cb_config_get) by the C names of
 * CB_CONFIG_FIELDS. */
static int lb_php_config(zval *out, cb_handle h) {
  cb_config c;
  cb_config_init(&c);
  const int st = cb_config_get(h, &c);
  if (st != CB_OK) {
    lb_php_throw(st);
    return st;
  }
  array_init(out);
#define LB_PHP_FIELD_VALUE(field, type, since, unit, bounds, lo, hi, def) LB_PHP_NUMBER(out, #field, type, c.field);
  CB_CONFIG_FIELDS(LB_PHP_FIELD_VALUE)
#undef LB_PHP_FIELD_VALUE
  return CB_OK;
}
%}
/* Checks a configuration as cb_create would, without keeping a breaker: a
 * breaker created and destroyed in a private registry of one slot that the
 * process keeps (PHP's statics end with each request; this does not, so a
 * PHP-FPM worker makes it once). Throws the library's refusal. */
%apply int LB_STATUS { int lb_php_config_check };
%rename("%s") lb_php_config_check;
%{
static int lb_php_config_check(const cb_config *cfg) {
  static cb_registry *checker = NULL;
  if (!checker) {
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.capacity = 1;
    const int st = cb_registry_open(&o, &checker);
    if (st != CB_OK) return st;
  }
  cb_handle h = 0;
  const int st = cb_create(checker, NULL, cfg, &h);
  if (st != CB_OK) return st;
  return cb_destroy(h);
}
%}
int lb_php_config_check(const cb_config *cfg);
int lb_php_config_fields(zval *out);
int lb_php_stats(zval *out, cb_handle h);
int lb_php_config(zval *out, cb_handle h);
int lb_php_policy_reads(zval *out);
