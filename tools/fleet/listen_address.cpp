#include "listen_address.hpp"

namespace lazybreaker::fleet {

bool parse_listen_address(const std::string &text, std::string *host_out, int *port_out,
                          std::string *why) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    *why = "expected HOST:PORT, e.g. 127.0.0.1:9464";
    return false;
  }
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    *why = "bad port '" + port + "': 0..65535 (0: any free port)";
    return false;
  }
  *host_out = host;
  *port_out = std::stoi(port);
  return true;
}

}  // namespace lazybreaker::fleet
