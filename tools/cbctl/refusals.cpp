#include "refusals.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string_view>

#include "config_options.hpp"
#include "format.hpp"

namespace cbctl {

namespace {

// How lists.h bounds a value (CB_CONFIG_FIELDS' unit and bounds).
enum class Unit { kCount, kNs, kRatio, kFactor, kPolicy };
enum class Bounds { kClosed, kAbove, kBelow, kZeroOr };
struct Range {
  Unit unit;
  Bounds bounds;
  long double lo, hi;
};

#define LB_UNIT_count Unit::kCount
#define LB_UNIT_ns Unit::kNs
#define LB_UNIT_ratio Unit::kRatio
#define LB_UNIT_factor Unit::kFactor
#define LB_UNIT_policy Unit::kPolicy
#define LB_BOUNDS_closed Bounds::kClosed
#define LB_BOUNDS_above Bounds::kAbove
#define LB_BOUNDS_below Bounds::kBelow
#define LB_BOUNDS_zero_or Bounds::kZeroOr

struct FieldRange {
  std::string_view field;
  Range range;
};
#define LB_FIELD_RANGE(field, type, since, unit, bounds, lo, hi, def) \
  {#field, {LB_UNIT_##unit, LB_BOUNDS_##bounds, (long double)(lo), (long double)(hi)}},
const FieldRange kFieldRanges[] = {CB_CONFIG_FIELDS(LB_FIELD_RANGE)};
#undef LB_FIELD_RANGE

const Range *range_of(std::string_view field) {
  for (const FieldRange &f : kFieldRanges) {
    if (f.field == field) return &f.range;
  }
  return nullptr;
}

std::string bound_text(long double v, Unit unit) {
  if (unit == Unit::kNs) return exact_duration(static_cast<uint64_t>(v));
  if (unit == Unit::kRatio || unit == Unit::kFactor) return json_number(static_cast<double>(v));
  return std::to_string(static_cast<unsigned long long>(v));
}

// "must be at least 1us", "must be in (0, 1]", ...: what the range asks of v.
std::string must_be(long double v, const Range &r) {
  std::string lo = bound_text(r.lo, r.unit), hi = bound_text(r.hi, r.unit);
  switch (r.bounds) {
    case Bounds::kAbove:
      return "must be in (" + lo + ", " + hi + "]";
    case Bounds::kBelow:
      return "must be in [" + lo + ", " + hi + ")";
    case Bounds::kZeroOr:
      return v > r.hi ? "must be at most " + hi : "must be 0 or at least " + lo;
    case Bounds::kClosed:
      break;
  }
  if (v < r.lo) return "must be at least " + lo;
  if (v > r.hi) return "must be at most " + hi;
  return "must be " + lo + ".." + hi;
}

long double value_of(const ConfigOption &o, const cb_config &cfg) {
  return std::visit([&](auto member) { return static_cast<long double>(cfg.*member); }, o.member);
}

// The option's text as given, or the value as cbctl would write it.
std::string text_of(const ConfigOption &o, const cb_config &cfg, const ConfigTexts &texts) {
  auto given = texts.find(o.field);
  return given != texts.end() ? given->second : config_value_text(o, cfg);
}

// A field of cfg out of range, as its option: "--failure-threshold 0 must
// be at least 1"; nullopt for a field cbctl has no option for.
std::optional<std::string> config_refusal(std::string_view field, const cb_config &cfg,
                                          const ConfigTexts &texts) {
  const ConfigOption *o = config_option_for(field);
  const Range *r = range_of(field);
  if (!o || !r) return std::nullopt;
  std::string said = std::string(o->flag) + " " + text_of(*o, cfg, texts);
  long double v = value_of(*o, cfg);
  // lists.h's one rule across fields: a cap is at least the open duration.
  if (field == "open_duration_max_ns" && v >= r->lo && v <= r->hi) {
    const ConfigOption *open_for = config_option_for("open_duration_ns");
    return said + " must be 0 (no cap) or at least " + open_for->flag + " (" +
           text_of(*open_for, cfg, texts) + ")";
  }
  return said + " " + must_be(v, *r);
}

// A name cb_create refuses (its field "name"): what is wrong with it.
std::string name_refusal(const std::string &name) {
  if (name.empty()) return "a breaker's name must not be empty";
  if (name.size() > CB_MAX_NAME_BYTES)
    return "the name '" + printable(name) + "' is longer than " +
           std::to_string(CB_MAX_NAME_BYTES) + " bytes";
  return "the name '" + printable(name) + "' is not valid UTF-8";
}

// cb_get_or_create's CB_EEXIST: the field that differs, with both values
// when the breaker's own can still be read.
std::string other_configuration(const std::string &name, const ConfigOption &o,
                                const cb_config &wanted, const ConfigTexts &texts,
                                cb_registry *reg) {
  std::string out =
      "breaker '" + printable(name) + "' exists with another configuration: its " + o.flag + " ";
  cb_handle h = 0;
  cb_config held;
  cb_config_init(&held);
  if (reg && cb_lookup(reg, name.c_str(), &h) == CB_OK && cb_config_get(h, &held) == CB_OK)
    return out + "is " + config_value_text(o, held) + ", not " + text_of(o, wanted, texts);
  return out + "differs";
}

std::string owner_text(uid_t uid) {
  std::string out = "uid " + std::to_string(uid);
  passwd pw, *found = nullptr;
  char buf[1024];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found)
    out += " (" + std::string(found->pw_name) + ")";
  return out;
}

std::string mode_text(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0%03o", mode);
  return buf;
}

// The symlink at `path`: where it points and whether that exists.
std::string symlink_text(const std::string &path) {
  char target[4096];
  ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
  std::string out = "a symbolic link";
  if (n < 0) return out;
  target[n] = '\0';
  struct stat st;
  out += " to " + printable(target);
  return stat(path.c_str(), &st) == 0 ? out : out + ", which does not exist";
}

// A file --create-file may not use (CB_EPERM): a symlink, or a file that
// neither this user nor root owns, or that others may write though --mode
// does not grant that. nullopt when the file is none of these (then the
// library's message, an errno's text, says why).
std::optional<std::string> untrusted_file(const std::string &path, const OpenRequest &request) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return std::nullopt;
  if (S_ISLNK(st.st_mode))
    return symlink_text(path) +
           "; --create-file creates or uses a registry file only at the path itself, never "
           "through a symlink (name the file, or open an existing one without --create-file)";
  uint32_t mode = request.mode != 0 ? request.mode : 0600;
  bool owner_ok = st.st_uid == geteuid() || st.st_uid == 0;
  bool others_ok = (st.st_mode & S_IWOTH) == 0 || (mode & S_IWOTH) != 0;
  if (!S_ISREG(st.st_mode) || (owner_ok && others_ok)) return std::nullopt;
  std::string why =
      !owner_ok ? "neither this user nor root owns it"
                : "others may write it, and --mode " + mode_text(mode) + " does not grant that";
  return "an existing file owned by " + owner_text(st.st_uid) + " with mode " +
         mode_text(st.st_mode & 07777) + ": " + why +
         "; --create-file uses an existing file only if this user or root owns it and others "
         "may write it only if --mode grants that (--any-owner uses it anyway; without "
         "--create-file, cbctl opens any file this user may read and write)";
}

// CB_ENOENT for the file: missing, a dangling symlink, or gone meanwhile.
std::string missing_file(const std::string &path, const OpenRequest &request) {
  struct stat st;
  if (lstat(path.c_str(), &st) == 0)
    return S_ISLNK(st.st_mode) ? symlink_text(path)
                               : "the file was removed while cbctl opened it (try again)";
  return request.offer_create ? "no such file (--create-file creates it)" : "no such file";
}

std::optional<std::string> open_words(const std::string &path, const OpenRequest &request,
                                      int status, std::string_view field) {
  if (status == CB_ENOENT) return missing_file(path, request);
  if (status == CB_EPERM && request.create) return untrusted_file(path, request);
  if (status != CB_EINVAL) return std::nullopt;
  // A capacity in range the library names is one the file disagrees with.
  if (field == "capacity" && request.capacity <= CB_MAX_CAPACITY)
    return "--capacity " + std::to_string(request.capacity) +
           " is not the file's capacity (without --capacity, cbctl takes the file's)";
  if (field == "capacity")
    return "--capacity " + std::to_string(request.capacity) + " must be at most " +
           std::to_string(CB_MAX_CAPACITY);
  if (field == "mode")
    return "--mode " + mode_text(request.mode) + " must be permission bits, at most 0777";
  if (field == "path") return "the file's name must not be empty";
  return std::nullopt;
}

// What a status means for a call on one breaker, as far as cbctl can meet
// it: one registry (and a scratch one) of one thread, so a CB_EFULL is the
// file's capacity, never the process's share of the library's room.
std::optional<std::string> breaker_words(const std::string &name, int status) {
  switch (status) {
    case CB_EEXIST:
      return "a breaker named '" + printable(name) + "' exists";
    case CB_EFULL:
      return "the file is full: it holds as many breakers as its capacity (set when the file "
             "was created, by --capacity)";
    case CB_EHANDLE:
      return "breaker '" + printable(name) + "' was destroyed meanwhile";
    case CB_ENOMEM:
      return std::string("out of memory");
    default:
      return std::nullopt;
  }
}

std::string_view last_field() {
  const char *field = cb_last_error_field();
  return field ? field : "";
}

}  // namespace

std::string trip_refusal(const std::string &text, uint64_t open_for_ns) {
  Range r{Unit::kNs, Bounds::kClosed, CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS};
  return "--for " + text + " " + must_be(open_for_ns, r);
}

Failure breaker_refusal(const std::string &file, const std::string &name, int status) {
  std::optional<std::string> words = breaker_words(name, status);
  return Failure{exit_code_for(status, false),
                 file + ": " + (words ? *words : library_message(file, status))};
}

Failure create_refusal(const std::string &file, const std::string &name, int status,
                       const cb_config &cfg, const ConfigTexts &texts, cb_registry *existing,
                       bool exist_ok) {
  std::string_view field = last_field();
  int code = exit_code_for(status, false);
  if (status == CB_EINVAL && field == "name")
    return Failure{code, file + ": " + name_refusal(name)};
  if (status == CB_EINVAL) {
    if (auto words = config_refusal(field, cfg, texts)) return Failure{code, *words};
  }
  const ConfigOption *o = config_option_for(field);
  if (status == CB_EEXIST && o)
    return Failure{code, file + ": " + other_configuration(name, *o, cfg, texts, existing)};
  if (status == CB_EEXIST && exist_ok)  // no field: the breaker is gone by now
    return Failure{code,
                   file + ": breaker '" + printable(name) + "' exists with another configuration"};
  return breaker_refusal(file, name, status);
}

Failure open_refusal(const std::string &path, const OpenRequest &request, int status) {
  std::string_view field = last_field();
  std::optional<std::string> words = open_words(path, request, status, field);
  return Failure{exit_code_for(status, true),
                 path + ": " + (words ? *words : library_message(path, status))};
}

}  // namespace cbctl
