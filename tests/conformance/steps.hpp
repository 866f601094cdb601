// The step streams (README.md, "Step streams"): a scenario file as every
// binding's runner reads it, one validated step per line, every default
// spelled out.
#pragma once

#include <cstdint>
#include <string>

#include "scenario.hpp"

namespace lb_conformance {

// Writes the file's step stream to out_path, and nothing when the file is
// malformed (kMalformed) or a scenario cannot run as written (kMismatch).
Exit emit_file(const std::string &path, uint64_t clock_offset, const std::string &out_path);

}  // namespace lb_conformance
