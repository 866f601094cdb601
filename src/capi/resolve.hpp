// From the C ABI's registry pointers to registries, and back.
#pragma once

#include "lazybreaker/lazybreaker.h"
#include "registry/registry.hpp"

namespace lazybreaker::capi {

cb_registry *to_public(const registry::Registry *r);
// nullptr for anything that is not an open registry's pointer.
registry::Registry *from_public(const cb_registry *p);
// Created on first use; nullptr if its memory could not be reserved.
registry::Registry *default_registry() noexcept;
// Whether r is the default registry (without creating it).
bool is_default_registry(const registry::Registry *r) noexcept;
// NULL = the default registry. CB_OK, or CB_EINVAL / CB_ENOMEM with a message.
int resolve_registry(cb_registry *p, registry::Registry **out);

}  // namespace lazybreaker::capi
