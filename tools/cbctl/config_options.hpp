// create's configuration options, one per field of cb_config: the option,
// the field it sets (by the C name cb_last_error_field() gives it), and how
// its value reads in cbctl's words (`show`, the messages).
#pragma once

#include <lazybreaker/lazybreaker.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cbctl {

// The field an option sets, by its type: a count or a rate is taken as
// CLI11 converts it, a duration as parse_duration reads it, the policy by
// its name.
using ConfigMember = std::variant<uint32_t cb_config::*, uint64_t cb_config::*, double cb_config::*,
                                  int cb_config::*>;

struct ConfigOption {
  const char *flag;   // "--open-for"
  const char *field;  // "open_duration_ns"
  ConfigMember member;
  const char *zero;  // what 0 means, if it means more than none ("off"); else nullptr
  const char *help;
};

// What the command line said for the fields of cb_config: the C field's
// name -> the option's text as given ("1.5s").
using ConfigTexts = std::map<std::string, std::string, std::less<>>;

// Every one, in the order of `cbctl create --help`.
std::span<const ConfigOption> config_options();
// The option that sets the field of that C name; nullptr for none.
const ConfigOption *config_option_for(std::string_view field);

// --policy's values, by cb_policy_t ("" for none of them), and all of them.
std::string_view policy_name(int policy);
std::vector<std::string> policy_names();
int policy_named(std::string_view name);  // CB_POLICY_CONSECUTIVE for anything else

// The field's value in cfg as `show` prints it ("30s", "count", "0.5",
// "off") and as JSON (nanoseconds, the policy's name, a number).
std::string config_value_text(const ConfigOption &o, const cb_config &cfg);
std::string config_value_json(const ConfigOption &o, const cb_config &cfg);

}  // namespace cbctl
