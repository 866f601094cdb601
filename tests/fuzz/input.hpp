// Reads a fuzz input front to back as little-endian integers; past its end
// every read is 0, so any input is a whole program. The seed generator
// (make_seeds.cpp) writes inputs with Writer, the same layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace lbfuzz {

class Reader {
 public:
  Reader(const uint8_t *data, size_t size) : p_(data), left_(size) {}
  bool done() const { return left_ == 0; }
  size_t left() const { return left_; }
  uint8_t u8() { return uint8_t(read(1)); }
  uint16_t u16() { return uint16_t(read(2)); }
  uint32_t u32() { return uint32_t(read(4)); }
  uint64_t u64() { return read(8); }
  double f64() {
    const uint64_t bits = u64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  // Up to n bytes (fewer at the end of the input).
  std::string bytes(size_t n) {
    if (n > left_) n = left_;
    std::string s(reinterpret_cast<const char *>(p_), n);
    p_ += n;
    left_ -= n;
    return s;
  }

 private:
  uint64_t read(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n && left_ > 0; ++i, ++p_, --left_) v |= uint64_t(*p_) << (8 * i);
    return v;
  }
  const uint8_t *p_;
  size_t left_;
};

class Writer {
 public:
  Writer &u8(uint64_t v) { return put(v, 1); }
  Writer &u16(uint64_t v) { return put(v, 2); }
  Writer &u32(uint64_t v) { return put(v, 4); }
  Writer &u64(uint64_t v) { return put(v, 8); }
  Writer &f64(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof d);
    return put(bits, 8);
  }
  Writer &bytes(const std::string &s) {
    out.insert(out.end(), s.begin(), s.end());
    return *this;
  }
  std::vector<uint8_t> out;

 private:
  Writer &put(uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) out.push_back(uint8_t(v >> (8 * i)));
    return *this;
  }
};

}  // namespace lbfuzz
