// Copyright 2026 The shoal Authors.
// xxh3 hashing: record checksums and id-to-shard routing.
#ifndef SHOAL_SRC_UTIL_HASH_H_
#define SHOAL_SRC_UTIL_HASH_H_

#include <cstddef>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace shoal {

// 64-bit xxh3 of `n` bytes: the checksum of every on-disk record and block.
inline uint64_t Checksum64(const void* data, size_t n) {
  return XXH3_64bits(data, n);
}

// Checksum64 of bytes given in pieces: the same value as one call over
// their concatenation.
class Checksum64Builder {
 public:
  Checksum64Builder() { XXH3_64bits_reset(&state_); }
  void Update(const void* data, size_t n) { XXH3_64bits_update(&state_, data, n); }
  uint64_t Digest() const { return XXH3_64bits_digest(&state_); }

 private:
  XXH3_state_t state_;
};

// The shard that owns `id`: xxh3(id as 8 little-endian bytes) % shard_count.
inline uint32_t ShardOf(uint64_t id, uint32_t shard_count) {
  return static_cast<uint32_t>(XXH3_64bits(&id, sizeof(id)) % shard_count);
}

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_HASH_H_
