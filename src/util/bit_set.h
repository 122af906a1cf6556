// Copyright 2026 The shoal Authors.
//
// A fixed-size set of small integers (a segment's node numbers), one bit
// each: what a filtered search computes per segment from the filter's
// posting lists and attribute columns (filter/compiled_filter.h), then
// counts, walks with and scans. Reset reuses the words, so a thread that
// keeps one allocates only when segments grow.
//
// Not thread-safe; one per search thread.

#ifndef SHOAL_SRC_UTIL_BIT_SET_H_
#define SHOAL_SRC_UTIL_BIT_SET_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace shoal {

class BitSet {
 public:
  // Makes the set {} over [0, n).
  void Reset(size_t n) {
    size_ = n;
    words_.assign((n + 63) / 64, 0);
  }
  // Makes the set [0, size()).
  void Fill() {
    for (uint64_t& w : words_) w = ~uint64_t{0};
    ClearTail();
  }
  size_t size() const { return size_; }

  bool Test(size_t i) const { return (words_[i >> 6] >> (i & 63)) & 1; }
  void Set(size_t i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }
  // Members [64 w, 64 w + 64) |= bits (bit j: member 64 w + j). REQUIRES:
  // no bit at or past size().
  void OrWord(size_t w, uint64_t bits) { words_[w] |= bits; }
  void Clear(size_t i) { words_[i >> 6] &= ~(uint64_t{1} << (i & 63)); }

  // this = this ∩ other, this ∪ other, [0, size()) \ this. REQUIRES: equal sizes.
  void And(const BitSet& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] &= other.words_[w];
  }
  void Or(const BitSet& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
  }
  void Complement() {
    for (uint64_t& w : words_) w = ~w;
    ClearTail();
  }

  // Members (bit_set.cc: the popcnt instruction where the CPU has it; the
  // build targets baseline x86-64, where std::popcount is a library call a
  // word, which cost a filtered search ~2 us a 50K-node segment).
  size_t Count() const;
  // The least member >= i, or size() when there is none.
  size_t Next(size_t i) const {
    if (i >= size_) return size_;
    size_t w = i >> 6;
    uint64_t bits = words_[w] & (~uint64_t{0} << (i & 63));
    while (bits == 0) {
      if (++w == words_.size()) return size_;
      bits = words_[w];
    }
    return (w << 6) + static_cast<size_t>(std::countr_zero(bits));
  }
  // Calls fn(i) for every member, ascending.
  template <class Fn>
  void ForEach(const Fn& fn) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      for (uint64_t bits = words_[w]; bits != 0; bits &= bits - 1) {
        fn((w << 6) + static_cast<size_t>(std::countr_zero(bits)));
      }
    }
  }

 private:
  void ClearTail() {
    if (size_ % 64 != 0) words_.back() &= (uint64_t{1} << (size_ % 64)) - 1;
  }

  std::vector<uint64_t> words_;
  size_t size_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_BIT_SET_H_
