// Copyright 2026 The shoal Authors.
// Fixed-width little-endian encoding. Every on-disk integer is little-endian;
// shoal only builds on little-endian hosts, so these are plain memcpy.
#ifndef SHOAL_SRC_UTIL_CODING_H_
#define SHOAL_SRC_UTIL_CODING_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace shoal {

static_assert(std::endian::native == std::endian::little,
              "shoal's on-disk formats assume a little-endian host");

inline void EncodeFixed16(char* dst, uint16_t v) { std::memcpy(dst, &v, 2); }
inline void EncodeFixed32(char* dst, uint32_t v) { std::memcpy(dst, &v, 4); }
inline void EncodeFixed64(char* dst, uint64_t v) { std::memcpy(dst, &v, 8); }
inline uint16_t DecodeFixed16(const char* p) { uint16_t v; std::memcpy(&v, p, 2); return v; }
inline uint32_t DecodeFixed32(const char* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline uint64_t DecodeFixed64(const char* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }

inline void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  dst->append(buf, 4);
}
inline void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  dst->append(buf, 8);
}

// Reads fixed-width fields from a byte string, remembering whether it ran
// past the end (then every later read returns 0 and ok() is false).
class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}
  uint8_t U8() { return Take(1) ? static_cast<uint8_t>(last_[0]) : 0; }
  uint32_t U32() { return Take(4) ? DecodeFixed32(last_) : 0; }
  uint64_t U64() { return Take(8) ? DecodeFixed64(last_) : 0; }
  float F32() {
    uint32_t bits = U32();
    return std::bit_cast<float>(bits);
  }
  std::string_view Bytes(size_t n) {
    return Take(n) ? std::string_view(last_, n) : std::string_view();
  }
  bool ok() const { return ok_; }
  size_t remaining() const { return in_.size(); }

 private:
  bool Take(size_t n) {
    if (!ok_ || in_.size() < n) {
      ok_ = false;
      return false;
    }
    last_ = in_.data();
    in_.remove_prefix(n);
    return true;
  }
  std::string_view in_;
  const char* last_ = nullptr;
  bool ok_ = true;
};

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_CODING_H_
