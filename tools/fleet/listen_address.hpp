// "HOST:PORT", "[IPv6]:PORT" or ":PORT" (every IPv4 address), for the
// servers of cbctl and the agent.
#pragma once

#include <string>

namespace lazybreaker::fleet {

// False, with *why, for anything else; port 0 means any free port.
bool parse_listen_address(const std::string &text, std::string *host, int *port, std::string *why);

}  // namespace lazybreaker::fleet
