#include "options.hpp"

#include <variant>

#include "config_options.hpp"
#include "format.hpp"
#include "host_check.hpp"
#include "listen_address.hpp"

namespace cbctl {

CLI::Validator duration_validator() {
  return CLI::Validator(
      [](std::string &text) {
        std::string why;
        return parse_duration(text, &why) ? std::string() : why;
      },
      "DURATION");
}

uint64_t duration(const std::string &text) { return parse_duration(text, nullptr).value_or(0); }

CLI::Validator octal_mode_validator() {
  return CLI::Validator(
      [](std::string &text) {
        if (text.empty() || text.size() > 5 ||
            text.find_first_not_of("01234567") != std::string::npos)
          return "bad mode '" + text + "': octal permission bits, e.g. 0660";
        return std::string();
      },
      "OCTAL");
}

bool parse_listen(const std::string &text, ServeOptions *out, std::string *why) {
  return lazybreaker::fleet::parse_listen_address(text, &out->host, &out->port, why);
}

CLI::Validator listen_validator() {
  return CLI::Validator(
      [](std::string &text) {
        ServeOptions ignored;
        std::string why;
        return parse_listen(text, &ignored, &why) ? std::string() : why;
      },
      "HOST:PORT");
}

CLI::Validator allow_host_validator() {
  return CLI::Validator(
      [](std::string &text) {
        std::string why;
        return lazybreaker::fleet::valid_allow_host(text, &why) ? std::string() : why;
      },
      "NAME[:PORT]");
}

namespace {

CLI::Option *add_config_option(CLI::App *cmd, cb_config *cfg, const ConfigOption &o) {
  struct Add {
    CLI::App *cmd;
    cb_config *cfg;
    const ConfigOption &o;
    CLI::Option *operator()(uint32_t cb_config::*m) const {
      return cmd->add_option(o.flag, cfg->*m, o.help);
    }
    CLI::Option *operator()(double cb_config::*m) const {
      return cmd->add_option(o.flag, cfg->*m, o.help);
    }
    CLI::Option *operator()(uint64_t cb_config::*m) const {
      auto set = [c = cfg, m](const std::string &text) { c->*m = duration(text); };
      return cmd->add_option_function<std::string>(o.flag, set, o.help)
          ->check(duration_validator());
    }
    CLI::Option *operator()(int cb_config::*m) const {
      auto set = [c = cfg, m](const std::string &text) { c->*m = policy_named(text); };
      return cmd->add_option_function<std::string>(o.flag, set, o.help)
          ->check(CLI::IsMember(policy_names()));
    }
  };
  return std::visit(Add{cmd, cfg, o}, o.member);
}

}  // namespace

void add_config_options(CLI::App *cmd, cb_config *cfg, ConfigTexts *texts) {
  for (const ConfigOption &o : config_options()) {
    add_config_option(cmd, cfg, o)
        ->group("Breaker configuration")
        ->each([texts, field = o.field](const std::string &text) { (*texts)[field] = text; });
  }
}

}  // namespace cbctl
