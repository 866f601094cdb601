// A registry's breakers as Prometheus text (capi/prometheus.cpp), for
// cb_metrics_prometheus.
#pragma once

#include <string>

#include "registry/registry.hpp"

namespace lazybreaker::capi {

// The text exposition format 0.0.4; throws std::bad_alloc when out of memory.
std::string prometheus_text(registry::Registry &reg);

}  // namespace lazybreaker::capi
