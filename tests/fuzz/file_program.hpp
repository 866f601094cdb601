// What a fuzz_registry_file input is, read by fuzz_registry_file.cpp and
// written by make_seeds.cpp. The target starts from a valid, used registry
// file (template/registry.lbr: breakers of every policy in every state,
// folded counters, a freed slot, a manual clock) and changes it as the
// input says, then opens it and calls every function on every breaker.
//
//   u8 flags      kFixChecksum: recompute the header's checksum after the
//                 changes (so that they reach past it); kThisBoot: write
//                 this boot's id into the header first (no carry-over from
//                 an earlier boot); kGiveCapacity: open with the file's
//                 capacity (else 0); kWrongClock: open asking for the
//                 monotonic clock; kRaw: the rest of the input is written
//                 over the file from offset 0, and there are no patches;
//                 kTwice: open the file a second time while the first is
//                 open, and use both.
//   patches       until the input ends, each:
//     u8 what     region = what % 8 (Region), kind = what / 8 % 8 (Kind)
//     u24 offset  within the region, modulo its size (words: aligned down)
//     ...         the kind's argument
#pragma once

#include <cstdint>

namespace lbfuzz::file {

enum Flags : uint8_t {
  kFixChecksum = 1,
  kThisBoot = 2,
  kGiveCapacity = 4,
  kWrongClock = 8,
  kRaw = 16,
  kTwice = 32,
};

// The file's sections (registry/shared_file.hpp).
enum Region : uint8_t {
  kHeader,      // the header, checksummed part and the rest
  kHeaderLive,  // from FileHeader::manual_ns on: what processes change
  kHot,
  kTotals,
  kCells,
  kHeld,
  kArena,
  kWhole,
  kRegions
};

enum Kind : uint8_t {
  kBytes,    // u8 n, then n bytes written there
  kWord64,   // u8 value selector (WordValue), + u64 for kRawValue
  kWord32,   // likewise, the low 32 bits
  kXorByte,  // u8 mask
  kZeros,    // u16 n: n zero bytes (a page that reads as a hole)
  kAdd64,    // i8 delta added to the word
  kKinds
};

enum WordValue : uint8_t {
  kZero,
  kOne,
  kAllOnes,
  kOdd,       // the word | 1 (a sequence word left mid-fold)
  kSelf,      // this process as a stripe owner (alive)
  kPid1,      // init as a stripe owner (alive, never this file's)
  kSlots,     // the header's slot count (one past the last index)
  kCapacity,  // the header's capacity
  kHighBit,   // 1 << 63
  kRawValue,  // a u64 follows
  kWordValues
};

}  // namespace lbfuzz::file
