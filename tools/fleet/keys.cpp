#include "keys.hpp"

namespace lazybreaker::fleet {
namespace {

bool valid_id(const std::string &s, size_t longest) {
  if (s.empty() || s.size() > longest) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool valid_fleet_name(const std::string &name) { return valid_id(name, 64); }
bool valid_host_id(const std::string &id) { return valid_id(id, 255); }

}  // namespace lazybreaker::fleet
