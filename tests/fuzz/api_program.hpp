// The program a fuzz_api input is: a sequence of operations, each an opcode
// byte (taken modulo kOps) and its arguments, read by fuzz_api.cpp and
// written by make_seeds.cpp. Argument bytes that pick something:
//   registry byte  % 8: 0..3 a registry slot (its pointer even once closed;
//                  NULL if never opened), 4 NULL (the default registry),
//                  5 cb_default_registry(), 6 a u64 that follows (garbage),
//                  7 the last closed registry's pointer
//   handle byte    < 0xe0: a tracked breaker (modulo how many), 0xe0..0xef
//                  0, 0xf0..0xf7 a u64 that follows (garbage), else a
//                  tracked breaker's handle with one bit flipped (a u8
//                  follows: the breaker, then a u8: the bit)
//   name byte      0: NULL (anonymous), 1..8: one of a few fixed names,
//                  else (byte - 8) raw bytes follow (any bytes: invalid
//                  UTF-8 and too long are both reachable)
#pragma once

#include <cstdint>

namespace lbfuzz {

enum Op : uint8_t {
  kOpenPrivate,    // slot u8, options (see read_options)
  kOpenShared,     // slot u8, path u8, options
  kClose,          // registry
  kCreate,         // registry, name, config
  kGetOrCreate,    // registry, name, config
  kLookup,         // registry, name
  kDestroy,        // handle
  kAllow,          // handle, u8 (1: a NULL ticket pointer)
  kDone,           // ticket u8 (< 0xf0 a kept ticket, else a u64 follows), handle u8 (0: the
                   // ticket's own, else a handle byte follows), outcome u8 (< 3 or a raw i32)
  kState,          // handle
  kRetryAfter,     // handle
  kStats,          // handle, size u8
  kForceOpen,      // handle
  kDisable,        // handle
  kReset,          // handle
  kTrip,           // handle, ns u8 selector (+ u64)
  kName,           // handle, size u16
  kEventsSelect,   // registry, kinds u8
  kEventsPoll,     // registry, max u8, stride u8
  kEventsDropped,  // registry
  kMetrics,        // registry, size u16 selector
  kList,           // registry, max u8
  kClockAdvance,   // registry, ns u8 selector (+ u64)
  kClockNow,       // registry
  kInitSizes,      // u16 config size, u16 options size
  kStrerror,       // i32
  kBurst,          // handle, log2 count u8, outcome u8, advance u8: many allow/done pairs
  kOps
};

}  // namespace lbfuzz
