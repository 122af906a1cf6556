// Copyright 2026 The shoal Authors.
//
// The fuzz targets, as plain functions: the libFuzzer binaries
// (tests/fuzz/*_fuzzer.cc, built with -DSHOAL_BUILD_FUZZERS=ON and clang) call
// them, and so does tests/fuzz_corpus_test.cc, which replays every file of
// tests/fuzz/corpus/<target>/ in the default (GCC, ASan) suite, so every
// input that once crashed stays a regression test. The targets are
// SHOAL_FUZZERS in CMakeLists.txt; each is <target>_fuzzer.cc (the entry
// point) and a function here, defined in fuzz_targets.cc (WAL, manifest)
// or <target>_target.cc.
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

// Segment::Open on a segment file served from memory (OneFileSystem), then
// ForEachVector, ForEachTombstone, Find, Search and VerifyAll. Input: flags
// byte (bit 0: fix the header, node block, id table and footer checksums;
// bit 1: expect a dim one more than the header's, else the header's dim and
// metric), search byte (bits 0-3: k - 1; bits 4-5: beam_width - 1; bits
// 6-7: list_size / 16), then the file.
// Checks: no out-of-bounds read; a failed Open is DataLoss or
// FailedPrecondition (InvalidArgument only for the wrong dim) naming the
// file; reads of an opened segment fail only with DataLoss; Find knows
// every tombstone ForEachTombstone lists; once ForEachVector has listed all
// vector_count() nodes no read fails and Search returns at most k of the
// listed ids (only visible ones); VerifyAll passes only if, besides, Find
// agrees with the listing (id, sequence, vector) and finds no other id.
int FuzzSegmentReader(const uint8_t* data, size_t size);

// ParseVectors and ParseNeighbors (src/dataset/) in every format: fvecs,
// ivecs, bvecs, fbin, ibin, u8bin, npy and unknown. Input: a byte selecting
// max_rows (< 0x80: that many rows; else no limit), then the file.
// Checks: no out-of-bounds read or overflow; a failure is InvalidArgument or
// DataLoss and its message starts with the file name; a success has
// data.size() == rows * cols, rows <= max_rows, cols in [1, kMaxDatasetDim]
// unless empty, is what an unlimited read gives in its first rows, and
// re-encodes to bytes of the same format that parse to the same values, bit
// for bit.
int FuzzDatasetReaders(const uint8_t* data, size_t size);

}  // namespace shoal::fuzz

#endif  // SHOAL_TESTS_FUZZ_FUZZ_TARGETS_H_
