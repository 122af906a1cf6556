// Copyright 2026 The shoal Authors.
//
// The fuzz targets, as plain functions: the libFuzzer binaries
// (tests/fuzz/*_fuzzer.cc, built with -DSHOAL_BUILD_FUZZERS=ON and clang) call
// them, and so does tests/fuzz_corpus_test.cc, which replays every file of
// tests/fuzz/corpus/<target>/ in the default (GCC, ASan) suite, so every
// input that once crashed stays a regression test.
//
// Each target feeds the bytes to a reader and checks what the reader
// promises (see each function); a broken promise aborts with a message.
// Input layout: the first bytes select options (documented per target),
// the rest is the file. With the "fix checksums" option the target first
// recomputes the checksums the format has, so that the fuzzer gets past them
// into the parsing behind them.

#ifndef SHOAL_TESTS_FUZZ_FUZZ_TARGETS_H_
#define SHOAL_TESTS_FUZZ_FUZZ_TARGETS_H_

#include <cstddef>
#include <cstdint>

namespace shoal::fuzz {

// wal::ReadWalFile. Input: flags byte (bit 0: fix the header and record
// checksums; bit 1: expect the shard and file number the header names, else
// shard 0, file 1), dim byte (0 counts as 1), then the log file.
// Checks: no out-of-bounds read (ASan); records handed out in increasing,
// 8-aligned offsets, inside the file, with payloads that fit their counts;
// valid_end within the file and at/after the last record; a corrupt offset
// equal to valid_end; the same answer twice.
int FuzzWalReader(const uint8_t* data, size_t size);

// DecodeManifest. Input: flags byte (bit 0: fix the trailing checksum), then
// the MANIFEST file. Checks: no out-of-bounds read; a manifest that decodes
// re-encodes to bytes that decode to the same manifest (encoding is stable).
int FuzzManifest(const uint8_t* data, size_t size);

// ---- To come (the readers do not exist yet or are still changing) ----
// FuzzSegmentReader: Segment::Open + VerifyAll + Find/Search/ForEachVector on
//   a segment file served from memory by a FileSystem whose
//   OpenReadOnlyMapped returns the input. Add it here, a segment_reader
//   line to SHOAL_FUZZERS in CMakeLists.txt, and seeds made by BuildSegment
//   to tests/fuzz/corpus/segment_reader/ (tests/fuzz/make_corpus.cc).
// FuzzDatasetReaders: the fvecs/bvecs/ivecs/hdf5 readers of the benchmark
//   tools, same pattern.

}  // namespace shoal::fuzz

#endif  // SHOAL_TESTS_FUZZ_FUZZ_TARGETS_H_
