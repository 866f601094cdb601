// The values cbctl's options take beyond CLI11's own types (durations,
// octal modes, listen addresses) and create's configuration options, one
// per field of cb_config.
#pragma once

#include <lazybreaker/lazybreaker.h>
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "commands.hpp"
#include "config_options.hpp"

namespace cbctl {

// Refuse, while parsing, what parse_duration (format.hpp) refuses, with its
// reason; an octal permission mode; a listen address (parse_listen).
CLI::Validator duration_validator();
CLI::Validator octal_mode_validator();
CLI::Validator listen_validator();
// --allow-host: NAME or NAME:PORT (fleet::valid_allow_host).
CLI::Validator allow_host_validator();

// A duration that duration_validator() has let through, in nanoseconds.
uint64_t duration(const std::string &text);

// "HOST:PORT", "[IPv6]:PORT" or ":PORT" (every IPv4 address): false, and
// *why says what is wrong, for anything else.
bool parse_listen(const std::string &text, ServeOptions *out, std::string *why);

// create's options, in the group "Breaker configuration": each sets one
// field of *cfg when given (cfg starts from cb_config_init's defaults), and
// keeps the text given under the field's name in *texts.
void add_config_options(CLI::App *cmd, cb_config *cfg, ConfigTexts *texts);

}  // namespace cbctl
