// Copyright 2026 The shoal Authors.
//
// FileSystem::CopyFile: the POSIX one (direct I/O from a mapping, sendfile
// for the rest) and the default through the seam (which the fault-injecting
// file system uses) copy exactly the prefix asked for, to the same or
// another file system, and refuse a prefix longer than the file.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testutil/fault_injection_fs.h"
#include "testutil/temp_dir.h"
#include "util/file_copy.h"

namespace shoal::test {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

void WriteWhole(FileSystem* fs, const std::string& path, const std::string& content) {
  ASSERT_OK_AND_ASSIGN(auto file, fs->NewWritableFile(path));
  ASSERT_OK(file->Append(content));
  ASSERT_OK(file->Close());
}

// (destination on a disk or in memory) x (POSIX or the default).
struct CopyCase {
  TempDir::Storage to;
  bool through_seam;
};

class FileCopyTest : public ::testing::TestWithParam<CopyCase> {
 protected:
  FileSystem* fs() { return GetParam().through_seam ? &faulty_ : FileSystem::Default(); }

  TempDir from_dir_{TempDir::Storage::kMemory};
  TempDir to_dir_{GetParam().to};
  FaultInjectionFileSystem faulty_;
};

TEST_P(FileCopyTest, CopiesExactlyThePrefixAsked) {
  // Around the 4 KiB alignment of direct I/O and the 8 MiB run.
  const std::string content = RandomBytes((size_t{8} << 20) + 3 * 4096 + 123, 7);
  const std::string from = from_dir_.Sub("from");
  WriteWhole(FileSystem::Default(), from, content);
  const std::vector<uint64_t> lengths = {0,    1,        4095, 4096, 4097, 3 * 4096 + 5,
                                         size_t{8} << 20, (size_t{8} << 20) + 1,
                                         content.size()};
  for (uint64_t length : lengths) {
    const std::string to = to_dir_.Sub("to-" + std::to_string(length));
    uint64_t reported = 0;
    ASSERT_OK(fs()->CopyFile(from, to, length, [&](uint64_t n) { reported += n; }));
    ASSERT_OK_AND_ASSIGN(std::string copy, FileSystem::Default()->ReadFile(to));
    EXPECT_EQ(copy.size(), length);
    EXPECT_TRUE(copy == content.substr(0, length)) << "length " << length;
    EXPECT_EQ(reported, length);
  }
}

TEST_P(FileCopyTest, APrefixLongerThanTheFileIsOutOfRange) {
  const std::string from = from_dir_.Sub("from");
  WriteWhole(FileSystem::Default(), from, RandomBytes(5000, 1));
  const absl::Status s = fs()->CopyFile(from, to_dir_.Sub("to"), 5001, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
}

TEST_P(FileCopyTest, AMissingSourceIsNotFound) {
  const absl::Status s =
      fs()->CopyFile(from_dir_.Sub("absent"), to_dir_.Sub("to"), 10, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
}

TEST_P(FileCopyTest, LinkOrCopyFallsBackToACopyAcrossFileSystems) {
  const std::string content = RandomBytes(10000, 3);
  const std::string from = from_dir_.Sub("from");
  WriteWhole(FileSystem::Default(), from, content);
  bool try_link = true;
  ASSERT_OK(LinkOrCopyFile(fs(), from, to_dir_.Sub("to"), content.size(), &try_link, nullptr));
  ASSERT_OK_AND_ASSIGN(std::string copy, FileSystem::Default()->ReadFile(to_dir_.Sub("to")));
  EXPECT_TRUE(copy == content);
  // Same tmpfs: a link. Disk: a copy, and links are not tried again.
  EXPECT_EQ(try_link, GetParam().to == TempDir::Storage::kMemory);
}

INSTANTIATE_TEST_SUITE_P(
    All, FileCopyTest,
    ::testing::Values(CopyCase{TempDir::Storage::kDisk, false},
                      CopyCase{TempDir::Storage::kMemory, false},
                      CopyCase{TempDir::Storage::kDisk, true},
                      CopyCase{TempDir::Storage::kMemory, true}),
    [](const ::testing::TestParamInfo<CopyCase>& info) {
      return std::string(info.param.to == TempDir::Storage::kDisk ? "ToDisk" : "ToMemory") +
             (info.param.through_seam ? "ThroughSeam" : "Posix");
    });

}  // namespace
}  // namespace shoal::test
