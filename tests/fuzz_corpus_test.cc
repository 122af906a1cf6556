// Copyright 2026 The shoal Authors.
//
// Replays every file of tests/fuzz/corpus/<target>/ through its fuzz target
// (tests/fuzz/fuzz_targets.h) in the default suite: the seeds, and every
// input a fuzzer ever crashed on (saved there as crash-*), stay regression
// tests without clang or libFuzzer. A target aborts on a broken promise.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz_targets.h"
#include "gtest/gtest.h"

namespace shoal::fuzz {
namespace {

namespace stdfs = std::filesystem;

size_t ReplayCorpus(const std::string& target, int (*fn)(const uint8_t*, size_t)) {
  const stdfs::path dir = stdfs::path(SHOAL_FUZZ_CORPUS_DIR) / target;
  size_t files = 0;
  for (const auto& entry : stdfs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    const std::string s = bytes.str();
    SCOPED_TRACE(entry.path().string());
    fn(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    ++files;
  }
  return files;
}

TEST(FuzzCorpusTest, WalReaderCorpusReplays) {
  EXPECT_GE(ReplayCorpus("wal_reader", FuzzWalReader), 10u);
}

TEST(FuzzCorpusTest, ManifestCorpusReplays) {
  EXPECT_GE(ReplayCorpus("manifest", FuzzManifest), 5u);
}

TEST(FuzzCorpusTest, SegmentReaderCorpusReplays) {
  EXPECT_GE(ReplayCorpus("segment_reader", FuzzSegmentReader), 6u);
}

TEST(FuzzCorpusTest, DatasetReaderCorpusReplays) {
  EXPECT_GE(ReplayCorpus("dataset_reader", FuzzDatasetReaders), 8u);
}

// Every prefix of each seed's first kSweep bytes, and a single-bit flip of
// each of its first and last kSweep bytes (the whole seed otherwise kept, so
// that flips reach a segment's header fields, id table and footer): a cheap
// sweep that runs in the default suite, before any fuzzer does.
TEST(FuzzCorpusTest, EveryCutAndFlipOfTheSeedsIsHandled) {
  constexpr size_t kSweep = 600;  // keeps the sweep quick
  using Target = int (*)(const uint8_t*, size_t);
  const std::pair<std::string, Target> targets[] = {{"wal_reader", &FuzzWalReader},
                                                    {"manifest", &FuzzManifest},
                                                    {"segment_reader", &FuzzSegmentReader},
                                                    {"dataset_reader", &FuzzDatasetReaders}};
  for (const auto& [target, fn] : targets) {
    for (const auto& entry :
         stdfs::directory_iterator(stdfs::path(SHOAL_FUZZ_CORPUS_DIR) / target)) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::ostringstream bytes;
      bytes << in.rdbuf();
      const std::string s = bytes.str();
      SCOPED_TRACE(entry.path().string());
      for (size_t cut = 0; cut <= std::min(s.size(), kSweep); ++cut) {
        fn(reinterpret_cast<const uint8_t*>(s.data()), cut);
      }
      std::vector<size_t> flips;
      for (size_t i = 1; i < std::min(s.size(), kSweep); ++i) flips.push_back(i);
      const size_t tail = std::max(kSweep, s.size() > kSweep ? s.size() - kSweep : 0);
      for (size_t i = tail; i < s.size(); ++i) flips.push_back(i);
      for (size_t i : flips) {
        std::string flipped = s;
        flipped[i] ^= static_cast<char>(1u << (i % 8));
        fn(reinterpret_cast<const uint8_t*>(flipped.data()), flipped.size());
      }
    }
  }
}

}  // namespace
}  // namespace shoal::fuzz
