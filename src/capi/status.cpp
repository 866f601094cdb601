#include "capi/status.hpp"

#include "capi/errors.hpp"

namespace lazybreaker::capi {

using core::Result;
using core::State;
using registry::Registry;
using registry::Space;
using registry::Status;

int status_to_code(Status s, const char *what) noexcept {
  switch (s) {
    case Status::Ok:
      return CB_OK;
    case Status::Full:
      return fail(CB_EFULL, "%s: the registry holds its capacity", what);
    case Status::NoMemory:
      return fail(CB_ENOMEM, "%s: out of memory or address space", what);
    case Status::Exists:
      return fail(CB_EEXIST, "%s: the name is taken in this registry", what);
    case Status::NameHeldUp:
      return fail(CB_ECORRUPT,
                  "%s: the registry file's name index holds the name, but no breaker has it, "
                  "and it has not changed for a second (a damaged file?)",
                  what);
    case Status::NoFileStripes:
      return fail(CB_EFULL,
                  "%s: the registry file's %u counter stripes are all taken by live processes, "
                  "and this process's threads already count in more",
                  what, lazybreaker::registry::kFileStripes);
    case Status::FileError:
      return fail(CB_EIO, "%s: the registry file could not be opened", what);
    case Status::ExistsOtherwise:
      return fail(CB_EEXIST, "%s: a breaker of that name exists with another configuration", what);
    case Status::NotFound:
      return fail(CB_ENOENT, "%s: no breaker has that name", what);
    case Status::BadHandle:
      return fail(CB_EHANDLE, "%s: zero, unknown, destroyed or stale handle", what);
    case Status::TooManyRegistries:
      return fail(CB_EFULL, "%s: %u registries are open in this process, the most there may be",
                  what, Registry::kMaxRegistryIds - 1);
    case Status::SpaceFull:
      return fail(CB_EFULL,
                  "%s: the open registries of this process hold %u breakers between them, the "
                  "most they may",
                  what, Space::kSlots);
  }
  return fail(CB_EINTERNAL, "%s: unexpected registry status", what);
}

int bad_handle(cb_handle h, const char *what) noexcept {
  return fail(CB_EHANDLE, "%s: handle 0x%016llx is zero, unknown, destroyed or stale", what,
              (unsigned long long)h);
}

int result_to_code(Result r, cb_handle h, const char *what) noexcept {
  switch (r) {
    case Result::Ok:
      return CB_OK;
    case Result::Rejected:
      return CB_REJECTED;
    case Result::WrongIncarnation:
      return bad_handle(h, what);
    case Result::BadTicket:
      return fail(CB_EINVAL, "%s: the ticket was not issued by cb_allow", what);
    case Result::NotOpen:
      return fail(CB_ESTATE, "%s: the breaker is not OPEN", what);
  }
  return fail(CB_EINTERNAL, "%s: unexpected result", what);
}

int public_state(State s) noexcept {
  switch (s) {
    case State::Closed:
      return CB_STATE_CLOSED;
    case State::Open:
      return CB_STATE_OPEN;
    case State::HalfOpen:
      return CB_STATE_HALF_OPEN;
    case State::ForcedOpen:
      return CB_STATE_FORCED_OPEN;
    case State::Disabled:
      return CB_STATE_DISABLED;
    case State::Free:
      break;
  }
  return CB_EHANDLE;
}

}  // namespace lazybreaker::capi
