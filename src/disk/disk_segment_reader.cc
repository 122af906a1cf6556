// Copyright 2026 The shoal Authors.

#include "disk/disk_segment_reader.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "disk/disk_search_scratch.h"
#include "graph/entry_points.h"
#include "segment/segment_checks.h"
#include "util/aligned_buffer.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/status_macros.h"
#include "util/thread_pool.h"

namespace shoal::disk {

using codes::ResidualSq4;
using graph::EntryPointCount;
using graph::SpreadEntryPoints;
using segment::CheckIdTable;
using segment::CheckLayout;
using segment::CheckNodeBlock;
using segment::CheckRecordMatches;
using segment::CheckShape;
using segment::Corruption;
using segment::DecodeFooter;
using segment::DecodeHeader;
using segment::DecodeNodeRecord;
using segment::EntryId;
using segment::EntryNode;
using segment::EntrySequence;
using segment::FindEntry;
using segment::Footer;
using segment::Header;
using segment::NodeLayout;
using segment::NodeRecordFields;
using segment::ParseCodeRanges;
using segment::ReadCodes;
using segment::kFooterSize;
using segment::kHeaderSize;
using segment::kIdEntrySize;
using segment::kNoNode;
namespace {

// Sequential scans (ForEachVector, ForEachNode, VerifyAll) read about this
// many bytes of blocks per pread.
constexpr size_t kScanBytes = size_t{1} << 20;

// Buffer for a lookup's block (Find): a lookup never nests in another.
thread_local AlignedBuffer tls_find_buffer;

// The status of a read of [offset, offset + n) of `path` that returned `s`:
// the file ending early is DataLossError; any error names the file and the
// offset.
absl::Status ReadStatus(const std::string& path, uint64_t offset, size_t n, absl::Status s) {
  if (s.ok()) return s;
  if (absl::IsOutOfRange(s)) {
    return Corruption(path, absl::StrCat("file ends before offset ", offset + n,
                                         " (truncated since it was opened?)"));
  }
  return absl::Status(s.code(), absl::StrCat("segment ", path, ": read of ", n,
                                             " bytes at offset ", offset, ": ", s.message()));
}

// Reads [offset, offset + n) of `file` into dst (errors as ReadStatus).
absl::Status ReadFileAt(const RandomAccessFile& file, const std::string& path, uint64_t offset,
                        size_t n, char* dst) {
  return ReadStatus(path, offset, n, file.Read(offset, n, dst));
}

}  // namespace

DiskSegmentReader::DiskSegmentReader(std::string path, std::unique_ptr<RandomAccessFile> file,
                                     const Header& header, const Footer& footer,
                                     std::string id_table)
    : SegmentFile(std::move(path), header, footer, std::move(id_table)),
      file_(std::move(file)) {}

absl::Status DiskSegmentReader::LoadCodes(MemoryBudget* budget, ThreadPool* pool) {
  const uint64_t offset = footer_.nodes_offset + footer_.nodes_bytes;
  const size_t range_bytes = 8 * size_t{header_.dim};
  std::string ranges(range_bytes, '\0');
  SHOAL_RETURN_IF_ERROR(ReadAt(offset, range_bytes, ranges.data(), nullptr));
  SHOAL_ASSIGN_OR_RETURN(sq8_, ParseCodeRanges(ranges.data(), offset, header_, path_));
  const size_t sq8_bytes = header_.code_bytes;
  const uint64_t n = header_.vector_count;
  // Both passes below stream the codes in chunks of whole codes, and check
  // the area's checksum as they go.
  const size_t per_chunk = std::max<size_t>(1, kScanBytes / sq8_bytes);
  std::vector<uint8_t> chunk;
  const auto stream = [&](const std::function<void(uint64_t first, uint64_t count,
                                                   const uint8_t* codes)>& fn) -> absl::Status {
    Checksum64Builder sum;
    sum.Update(ranges.data(), ranges.size());
    for (uint64_t first = 0; first < n; first += per_chunk) {
      const uint64_t count = std::min<uint64_t>(per_chunk, n - first);
      chunk.resize(count * sq8_bytes);
      SHOAL_RETURN_IF_ERROR(ReadAt(offset + range_bytes + first * sq8_bytes, chunk.size(),
                                   reinterpret_cast<char*>(chunk.data()), nullptr));
      sum.Update(chunk.data(), chunk.size());
      fn(first, count, chunk.data());
    }
    if (sum.Digest() != footer_.code_checksum) {
      return Corruption(path_, absl::StrCat("codes checksum mismatch (offset ", offset, ")"));
    }
    return absl::OkStatus();
  };
  MemoryBudget::Reservation reservation;
  if (budget == nullptr || budget->TryReserve(n * sq8_bytes, &reservation)) {
    code_bytes_ = sq8_bytes;
    codes_.resize(n * sq8_bytes);
    SHOAL_RETURN_IF_ERROR(stream([&](uint64_t first, uint64_t, const uint8_t* codes) {
      std::memcpy(codes_.data() + first * sq8_bytes, codes, chunk.size());
    }));
  } else {
    // SQ8 does not fit: 4-bit residual codes fitted to the vectors these
    // decode to (residual_sq4.h), on a sample spread evenly over the nodes.
    code_bytes_ = ResidualSq4::CodeBytes(header_.dim);
    if (!budget->TryReserve(n * code_bytes_, &reservation)) {
      reservation = budget->ReserveAnyway(n * code_bytes_);
      static std::atomic<bool> said{false};
      if (!said.exchange(true)) {
        std::fprintf(stderr,
                     "shoal: %s: its 4-bit codes (%llu bytes) exceed what is left of "
                     "Options::memory_budget_bytes; kept anyway (a search needs them)\n",
                     path_.c_str(), static_cast<unsigned long long>(n * code_bytes_));
      }
    }
    const uint32_t dim = header_.dim;
    const uint32_t groups = ResidualSq4::ChooseGroups(n);
    const uint64_t samples = ResidualSq4::SampleCount(n, dim, groups);
    std::vector<float> sample(samples * dim);
    uint64_t next = 0;  // sample `next` is node next * n / samples
    SHOAL_RETURN_IF_ERROR(stream([&](uint64_t first, uint64_t count, const uint8_t* codes) {
      for (; next < samples && next * n / samples < first + count; ++next) {
        sq8_->Decode(codes + (next * n / samples - first) * sq8_bytes, &sample[next * dim]);
      }
    }));
    residual_ =
        std::make_unique<ResidualSq4>(ResidualSq4::Fit(sample.data(), samples, dim, groups, pool));
    std::vector<float>().swap(sample);
    codes_.resize(n * code_bytes_);
    // Each chunk's codes are encoded in parts on the pool (~5 us a code at
    // 128-d), into their own places in codes_.
    const size_t parts = pool == nullptr ? 1 : pool->size() + 1;
    SHOAL_RETURN_IF_ERROR(stream([&](uint64_t first, uint64_t count, const uint8_t* codes) {
      const auto encode = [&](size_t part) {
        std::vector<float> vector(dim);
        for (uint64_t i = count * part / parts; i < count * (part + 1) / parts; ++i) {
          sq8_->Decode(codes + i * sq8_bytes, vector.data());
          residual_->Encode(vector.data(), codes_.data() + (first + i) * code_bytes_);
        }
      };
      if (parts == 1) {
        encode(0);
      } else {
        pool->ParallelFor(parts, encode);
      }
    }));
    // Each group's entry node: its member nearest the centre (the smallest
    // scale; the first on a tie).
    group_nodes_.assign(residual_->groups(), kNoGroupNode);
    std::vector<float> nearest(residual_->groups(), std::numeric_limits<float>::infinity());
    for (uint64_t v = 0; v < n; ++v) {
      const uint8_t* code = codes_.data() + v * code_bytes_;
      const uint16_t g = ResidualSq4::Group(code, dim);
      const float scale = ResidualSq4::Scale(code, dim);
      if (scale < nearest[g] || group_nodes_[g] == kNoGroupNode) {
        nearest[g] = scale;
        group_nodes_[g] = static_cast<uint32_t>(v);
      }
    }
#if defined(__GLIBC__)
    // The fit's sample (at most 4 MiB) and scratch, freed by now, would
    // otherwise stay resident in the opening thread's malloc arena: with two
    // shards fitted at once and a 16 MiB sample, 16 MiB of a process whose
    // budget is the point (1M x 128, docs/performance-history.md).
    malloc_trim(0);
#endif
  }
  reservation_.Merge(std::move(reservation));
  return absl::OkStatus();
}

void DiskSegmentReader::ChooseEntryPoints(MemoryBudget* budget) {
  // With 4-bit codes the groups' nodes serve (StartWalk).
  const size_t count = residual_ != nullptr ? 0 : EntryPointCount(header_.vector_count);
  if (count == 0) return;
  if (budget != nullptr) {
    MemoryBudget::Reservation r;
    if (!budget->TryReserve(count * (code_bytes_ + sizeof(uint32_t)), &r)) return;
    reservation_.Merge(std::move(r));
  }
  SpreadEntryPoints(header_.vector_count, count, codes_.data(), code_bytes_, &entry_points_,
                    &entry_point_codes_);
}

absl::StatusOr<std::shared_ptr<Segment>> DiskSegmentReader::Open(
    FileSystem* fs, const std::string& path, uint32_t dim, Metric metric,
    const SegmentOpenOptions& options) {
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file,
                         fs->OpenRandomAccess(path, /*direct=*/true));
  const uint64_t size = file->size();
  if (size < kHeaderSize + kFooterSize) {
    return Corruption(path, absl::StrCat("truncated: ", size, " bytes"));
  }
  AlignedBuffer sector;
  Header header;
  Footer footer;
  std::string footer_bytes(kFooterSize, '\0');
  SHOAL_RETURN_IF_ERROR(ReadFileAt(*file, path, 0, kHeaderSize, sector.Reserve(kHeaderSize)));
  SHOAL_RETURN_IF_ERROR(
      DecodeHeader(std::string_view(sector.data(), kHeaderSize), path, &header));
  SHOAL_RETURN_IF_ERROR(
      ReadFileAt(*file, path, size - kFooterSize, kFooterSize, footer_bytes.data()));
  SHOAL_RETURN_IF_ERROR(DecodeFooter(footer_bytes, path, &footer));
  SHOAL_RETURN_IF_ERROR(CheckShape(header, dim, metric, path));
  SHOAL_RETURN_IF_ERROR(CheckLayout(header, footer, size, path));
  if (header.code != VectorCode::kSq8 && header.vector_count > 0) {
    return std::shared_ptr<Segment>();  // no codes to navigate on: the caller maps it
  }
  std::string id_table(footer.id_table_bytes, '\0');
  SHOAL_RETURN_IF_ERROR(
      ReadFileAt(*file, path, footer.id_table_offset, id_table.size(), id_table.data()));
  if (Checksum64(id_table.data(), id_table.size()) != footer.id_table_checksum) {
    return Corruption(path, absl::StrCat("id table checksum mismatch (offset ",
                                         footer.id_table_offset, ")"));
  }
  std::shared_ptr<DiskSegmentReader> segment(
      new DiskSegmentReader(path, std::move(file), header, footer, std::move(id_table)));
  SHOAL_RETURN_IF_ERROR(CheckIdTable(segment->id_table_, header, path));
  SHOAL_RETURN_IF_ERROR(segment->LoadRecords());
  if (options.budget != nullptr && segment->record_bytes_held() > 0) {
    segment->reservation_.Merge(options.budget->ReserveAnyway(segment->record_bytes_held()));
  }
  if (header.vector_count > 0) {
    DiskSegmentReader* s = segment.get();
    SHOAL_RETURN_IF_ERROR(s->LoadCodes(options.budget.get(), options.pool));
    s->ChooseEntryPoints(options.budget.get());
    // The cache takes what the budget has left, up to node_cache_bytes, and
    // never more than this segment's records.
    size_t cache_bytes = static_cast<size_t>(std::min<uint64_t>(
        options.node_cache_bytes, header.vector_count * uint64_t{header.layout.node_bytes}));
    if (options.budget != nullptr) {
      cache_bytes = std::min(cache_bytes, options.budget->available());
      MemoryBudget::Reservation r;
      if (!options.budget->TryReserve(cache_bytes, &r)) cache_bytes = 0;  // raced: none
      s->reservation_.Merge(std::move(r));
    }
    // Walks start at the medoid and the entry points (or the groups'
    // nodes): the cache holds them first, then their neighbourhoods.
    std::vector<uint32_t> seeds{header.medoid};
    seeds.insert(seeds.end(), s->entry_points_.begin(), s->entry_points_.end());
    static_assert(kNoGroupNode == kNoNode, "Build skips groups without a node");
    seeds.insert(seeds.end(), s->group_nodes_.begin(), s->group_nodes_.end());
    absl::Status filled = s->cache_.Build(
        header.layout, seeds, cache_bytes,
        [s](uint32_t node, char* out) { return s->ReadRecord(node, out); });
    // A block that fails its checks is damage in the file: the open fails,
    // as before. Any other failed read only leaves the cache short (it is
    // an optimisation): the segment opens with the records read so far,
    // and a search that needs the others reads them from the file, and
    // reports an error then if the read fails again.
    if (absl::IsDataLoss(filled)) return filled;
    if (!filled.ok()) s->NoteCacheFillError(filled, cache_bytes);
  }
  return segment;
}

namespace {
std::atomic<uint64_t> cache_fill_errors{0};
}  // namespace

uint64_t DiskSegmentReader::CacheFillErrors() { return cache_fill_errors.load(); }

void DiskSegmentReader::NoteCacheFillError(const absl::Status& error, size_t cache_bytes) {
  cache_fill_failed_ = true;
  cache_fill_errors.fetch_add(1, std::memory_order_relaxed);
  // Said once per process: a failing disk would say it for every segment.
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    std::fprintf(stderr,
                 "shoal: %s: filling the node cache failed after %zu of up to %zu bytes (%s); "
                 "opened with the records read, the rest are read when searched\n",
                 path_.c_str(), cache_.bytes(), cache_bytes, error.ToString().c_str());
  }
}

absl::Status DiskSegmentReader::ReadAt(uint64_t offset, size_t n, char* dst,
                                       IoCounts* io) const {
  if (io == nullptr) return ReadFileAt(*file_, path_, offset, n, dst);
  const uint64_t start = MonotonicNs();
  absl::Status s = ReadFileAt(*file_, path_, offset, n, dst);
  io->wait_ns += MonotonicNs() - start;
  ++io->reads;
  return s;
}

absl::Status DiskSegmentReader::ReadBlocks(std::span<const uint32_t> blocks, char* dst,
                                           IoCounts* io) const {
  const size_t block_bytes = header_.layout.block_bytes();
  if (blocks.size() == 1) {
    SHOAL_RETURN_IF_ERROR(ReadAt(BlockOffset(blocks[0]), block_bytes, dst, io));
    return CheckBlock(dst, blocks[0]);
  }
  // All at once: the hop waits for its slowest read, not for their sum.
  const uint64_t start = io == nullptr ? 0 : MonotonicNs();
  absl::Status status;
  {
    // Destroyed before `dst` is used again: it waits for reads in flight.
    std::unique_ptr<ReadQueue> queue = file_->NewReadQueue(blocks.size());
    std::vector<ReadQueue::Completion> done;
    size_t next = 0;
    while (status.ok() && (next < blocks.size() || queue->in_flight() > 0)) {
      for (; next < blocks.size() && queue->in_flight() < queue->depth(); ++next) {
        queue->Submit(BlockOffset(blocks[next]), block_bytes, dst + next * block_bytes, next);
      }
      done.clear();
      queue->Wait(&done);
      for (const ReadQueue::Completion& c : done) {
        const uint32_t block = blocks[c.tag];
        status = ReadStatus(path_, BlockOffset(block), block_bytes, c.status);
        if (status.ok()) status = CheckBlock(dst + c.tag * block_bytes, block);
        if (!status.ok()) break;
      }
    }
  }
  if (io != nullptr) {
    io->wait_ns += MonotonicNs() - start;
    io->reads += blocks.size();
  }
  return status;
}

absl::Status DiskSegmentReader::ReadResult(uint64_t offset, size_t n, absl::Status s) const {
  return ReadStatus(path_, offset, n, std::move(s));
}

absl::Status DiskSegmentReader::CheckBlock(const char* bytes, uint32_t block) const {
  return CheckNodeBlock(bytes, block, header_, footer_, path_);
}

absl::Status DiskSegmentReader::ReadBlockRun(uint64_t first, uint64_t count, char* dst) const {
  const size_t block_bytes = header_.layout.block_bytes();
  SHOAL_RETURN_IF_ERROR(ReadAt(BlockOffset(first), count * block_bytes, dst, nullptr));
  for (uint64_t i = 0; i < count; ++i) {
    SHOAL_RETURN_IF_ERROR(CheckNodeBlock(dst + i * block_bytes, static_cast<uint32_t>(first + i),
                                         header_, footer_, path_));
  }
  return absl::OkStatus();
}

absl::Status DiskSegmentReader::ReadRecord(uint32_t node, char* out) const {
  AlignedBuffer& buffer = tls_find_buffer;
  char* block = buffer.Reserve(header_.layout.block_bytes());
  const uint32_t b = BlockOf(node);
  SHOAL_RETURN_IF_ERROR(ReadBlocks(std::span<const uint32_t>(&b, 1), block, nullptr));
  std::memcpy(out, block + OffsetInBlock(node), header_.layout.node_bytes);
  return absl::OkStatus();
}

absl::StatusOr<Segment::Lookup> DiskSegmentReader::Find(uint64_t id, uint64_t* sequence,
                                                        std::vector<float>* vector) const {
  const uint64_t i = FindEntry(id_table_, entry_count_, id);
  if (i == entry_count_) return Lookup::kAbsent;
  const uint32_t node = EntryNode(id_table_, i);
  if (node != kNoNode && vector != nullptr) {
    std::vector<char> record(header_.layout.node_bytes);
    SHOAL_RETURN_IF_ERROR(ReadRecord(node, record.data()));
    SHOAL_RETURN_IF_ERROR(CheckRecordMatches(record.data(), node, id,
                                             EntrySequence(id_table_, i), header_, path_));
    const float* v = reinterpret_cast<const float*>(record.data());
    vector->assign(v, v + header_.dim);
  }
  if (sequence != nullptr) *sequence = EntrySequence(id_table_, i);
  return node == kNoNode ? Lookup::kDeleted : Lookup::kLive;
}

absl::Status DiskSegmentReader::ForEachNodeRecordIn(
    uint64_t begin, uint64_t end_node,
    const std::function<void(uint32_t node, const char* record)>& fn) const {
  if (begin >= end_node) return absl::OkStatus();
  const NodeLayout& layout = header_.layout;
  const uint64_t run = std::max<uint64_t>(1, kScanBytes / layout.block_bytes());
  // The blocks that hold nodes [begin, end_node).
  const uint64_t last_block = (end_node - 1) / layout.nodes_per_block + 1;
  AlignedBuffer buffer;
  char* blocks = buffer.Reserve(std::min(run, last_block) * layout.block_bytes());
  for (uint64_t first = begin / layout.nodes_per_block; first < last_block; first += run) {
    const uint64_t count = std::min(run, last_block - first);
    SHOAL_RETURN_IF_ERROR(ReadBlockRun(first, count, blocks));
    const uint64_t end = std::min<uint64_t>(end_node, (first + count) * layout.nodes_per_block);
    for (uint64_t node = std::max(begin, first * layout.nodes_per_block); node < end; ++node) {
      const uint64_t b = node / layout.nodes_per_block - first;
      fn(static_cast<uint32_t>(node),
         blocks + b * layout.block_bytes() + OffsetInBlock(static_cast<uint32_t>(node)));
    }
  }
  return absl::OkStatus();
}

absl::Status DiskSegmentReader::VerifyAll() const {
  // Re-reads everything from the file: it may have changed since Open.
  AlignedBuffer sector;
  SHOAL_RETURN_IF_ERROR(ReadAt(0, kHeaderSize, sector.Reserve(kHeaderSize), nullptr));
  Header header;
  SHOAL_RETURN_IF_ERROR(DecodeHeader(std::string_view(sector.data(), kHeaderSize), path_,
                                     &header));
  std::string footer_bytes(kFooterSize, '\0');
  SHOAL_RETURN_IF_ERROR(
      ReadAt(file_->size() - kFooterSize, kFooterSize, footer_bytes.data(), nullptr));
  Footer footer;
  SHOAL_RETURN_IF_ERROR(DecodeFooter(footer_bytes, path_, &footer));
  if (std::memcmp(&footer, &footer_, sizeof(Footer)) != 0 ||
      header.vector_count != header_.vector_count ||
      header.tombstone_count != header_.tombstone_count || header.medoid != header_.medoid) {
    return Corruption(path_, "header or footer changed since the segment was opened");
  }
  // The codes, then the id table (version 3 has the record regions between).
  const uint64_t codes_offset = footer_.nodes_offset + footer_.nodes_bytes;
  std::string tail(footer_.id_table_bytes, '\0');
  SHOAL_RETURN_IF_ERROR(ReadAt(footer_.id_table_offset, tail.size(), tail.data(), nullptr));
  const char* table = tail.data();
  if (Checksum64(table, footer_.id_table_bytes) != footer_.id_table_checksum) {
    return Corruption(path_, absl::StrCat("id table checksum mismatch (offset ",
                                          footer_.id_table_offset, ")"));
  }
  if (header_.code != VectorCode::kNone) {
    std::string codes(header_.CodeAreaBytes(), '\0');
    SHOAL_RETURN_IF_ERROR(ReadAt(codes_offset, codes.size(), codes.data(), nullptr));
    SHOAL_RETURN_IF_ERROR(ReadCodes(codes.data(), codes_offset, header_, footer_, path_).status());
  }
  SHOAL_RETURN_IF_ERROR(CheckIdTable(table, header_, path_));
  // Every block, and that each record holds its id table entry's id and
  // sequence (searches take them from the records, Find from the table).
  std::vector<uint64_t> entry_of_node(header_.vector_count);
  for (uint64_t i = 0; i < entry_count_; ++i) {
    const uint32_t node = EntryNode(table, i);
    if (node != kNoNode) entry_of_node[node] = i;
  }
  absl::Status mismatch;
  SHOAL_RETURN_IF_ERROR(ForEachNodeRecord([&](uint32_t node, const char* record) {
    if (!mismatch.ok()) return;
    const uint64_t i = entry_of_node[node];
    if (!CheckRecordMatches(record, node, EntryId(table, i), EntrySequence(table, i), header_,
                            path_)
             .ok()) {
      mismatch = Corruption(path_, absl::StrCat("node ", node, " does not hold the id and "
                                                "sequence of id table entry ", i, " (offset ",
                                                footer_.id_table_offset + i * kIdEntrySize,
                                                ")"));
    }
  }));
  SHOAL_RETURN_IF_ERROR(mismatch);
  return VerifyRecords();
}

absl::Status DiskSegmentReader::ReadBytes(uint64_t offset, size_t n, std::string* scratch,
                                          std::string_view* out) const {
  scratch->resize(n);
  SHOAL_RETURN_IF_ERROR(ReadAt(offset, n, scratch->data(), nullptr));
  *out = *scratch;
  return absl::OkStatus();
}

}  // namespace shoal::disk
