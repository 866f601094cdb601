// A registry's breakers as Prometheus text (registry/prometheus.cpp).
#pragma once

#include <string>

#include "registry/registry.hpp"

namespace lazybreaker::registry {

// The text exposition format 0.0.4; throws std::bad_alloc when out of memory.
std::string prometheus_text(Registry &reg);

}  // namespace lazybreaker::registry
