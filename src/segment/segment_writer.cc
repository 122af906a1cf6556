// Copyright 2026 The shoal Authors.
//
// BuildSegment: validates the contents, builds the graph (VamanaBuilder) and
// writes the file (format in segment_format.h) atomically: `path`.tmp is
// written front to back, fdatasync'ed and closed, renamed to `path`, and the
// directory is fsync'ed. A crash leaves either no file at `path` or a
// complete one; a stray .tmp is garbage for the caller to remove.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distance/distance.h"
#include "record/record_format.h"
#include "segment/block_layout.h"
#include "segment/record_regions.h"
#include "graph/build_distance.h"
#include "graph/locality_order.h"
#include "segment/segment.h"
#include "segment/segment_format.h"
#include "codes/sq8.h"
#include "graph/vamana_builder.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace shoal {
namespace {

using segment::kNoNode;

// Node blocks are encoded and appended about this many bytes at a time.
constexpr size_t kWriteChunkBytes = 1 << 20;

struct IdEntry {
  uint64_t id;
  uint64_t sequence;
  uint32_t node;  // kNoNode for a tombstone
};

absl::Status Validate(const SegmentContents& c, const GraphOptions& g) {
  if (c.dim < 1 || c.dim > segment::kMaxDim) {
    return absl::InvalidArgumentError(absl::StrCat("segment dim ", c.dim, " not in 1..",
                                                   segment::kMaxDim));
  }
  if (static_cast<uint8_t>(c.metric) > static_cast<uint8_t>(Metric::kCosine)) {
    return absl::InvalidArgumentError("segment metric unknown");
  }
  if (c.ids.size() != c.sequences.size() ||
      c.tombstone_ids.size() != c.tombstone_sequences.size()) {
    return absl::InvalidArgumentError("segment ids and sequences differ in length");
  }
  if (c.ids.size() > segment::kMaxVectors) {
    return absl::InvalidArgumentError("segment has too many vectors");
  }
  if (!c.ids.empty() &&
      (c.vectors == nullptr || !AllFinite(c.vectors, c.ids.size() * c.dim))) {
    return absl::InvalidArgumentError("segment vectors missing or not finite");
  }
  if (g.max_degree < 1 || g.max_degree > segment::kMaxDegree) {
    return absl::InvalidArgumentError(absl::StrCat("graph max_degree ", g.max_degree,
                                                   " not in 1..", segment::kMaxDegree));
  }
  if (g.build_list_size < 1) {
    return absl::InvalidArgumentError("graph build_list_size must be >= 1");
  }
  if (!(g.alpha >= 1.0f) || !std::isfinite(g.alpha)) {
    return absl::InvalidArgumentError("graph alpha must be finite and >= 1");
  }
  return absl::OkStatus();
}

// Parses each row's extras (record/record_format.h): InvalidArgument naming
// the row when malformed, or when extras and ids differ in length.
absl::StatusOr<std::vector<record::ExtrasView>> ParseExtras(const SegmentContents& c,
                                                            uint32_t format_version) {
  std::vector<record::ExtrasView> rows;
  if (c.extras.empty()) return rows;
  if (c.extras.size() != c.ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat("segment contents have ", c.extras.size(),
                                                   " extras for ", c.ids.size(), " vectors"));
  }
  rows.resize(c.ids.size());
  bool any = false;
  for (size_t row = 0; row < c.extras.size(); ++row) {
    size_t consumed = 0;
    absl::Status s = record::Parse(c.extras[row], &rows[row], &consumed);
    if (s.ok() && consumed != c.extras[row].size()) {
      s = absl::InvalidArgumentError("record extras: bytes after the record");
    }
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("segment contents row ", row, " (id ",
                                                     c.ids[row], "): ", s.message()));
    }
    any = any || !rows[row].empty();
  }
  if (any && format_version < segment::kFirstRecordsVersion) {
    return absl::InvalidArgumentError(absl::StrCat("segment format version ", format_version,
                                                   " cannot hold record extras"));
  }
  return rows;
}

// The nodes, in graph order: graph node i is contents row order[i], whose
// vector store.vector(i) is a copy of. With a seed, the first `seeded` nodes
// are the seed's kept nodes in their old order. The file stores them in
// block order (block_layout.h): file node p is graph node graph_node[p].
struct Nodes {
  std::vector<uint32_t> order;
  std::vector<uint32_t> graph_node;  // file node -> graph node
  std::vector<uint32_t> file_node;   // graph node -> file node
  size_t seeded = 0;
  std::unique_ptr<graph::NodeStore> store;
  // With VectorCode::kSq8: the quantizer and every node's code, in node
  // order, made before the build (which navigates on them) and written
  // into the file as they are.
  std::unique_ptr<codes::Sq8> sq8;
  std::vector<uint8_t> codes;
};

// Trains SQ8 over the contents and encodes every node (on `pool`).
void EncodeCodes(const SegmentContents& c, ThreadPool* pool, Nodes* nodes) {
  nodes->sq8 = std::make_unique<codes::Sq8>(codes::Sq8::Train(c.vectors, c.ids.size(), c.dim));
  const size_t code_bytes = codes::Sq8::CodeBytes(c.dim);
  const size_t n = nodes->store->size();
  nodes->codes.resize(n * code_bytes);
  constexpr size_t kPerTask = 4096;
  auto encode = [&](size_t task) {
    const size_t end = std::min(n, (task + 1) * kPerTask);
    for (size_t i = task * kPerTask; i < end; ++i) {
      nodes->sq8->Encode(nodes->store->vector(static_cast<uint32_t>(i)),
                         nodes->codes.data() + i * code_bytes);
    }
  };
  const size_t tasks = (n + kPerTask - 1) / kPerTask;
  if (pool != nullptr && tasks > 1) {
    pool->ParallelFor(tasks, encode);
  } else {
    for (size_t t = 0; t < tasks; ++t) encode(t);
  }
}

// A seed's graph, read once: node b's out-neighbours are
// neighbors[offsets[b], offsets[b + 1]), and new_node[b] is its node in the
// new file (kDroppedNode when dropped).
struct SeedGraph {
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> neighbors;
  std::vector<uint32_t> new_node;
};

// The file order with a seed: its kept nodes first, in their old order (the
// old file's locality), then the other rows in locality order.
// InvalidArgument when the seed does not name a row (or kDroppedNode) for
// each of its nodes, or names a row twice or out of range.
absl::StatusOr<std::vector<uint32_t>> SeededOrder(const SegmentContents& c, uint64_t seed,
                                                  ThreadPool* pool, size_t* seeded) {
  const GraphSeed& g = *c.seed;
  if (g.segment == nullptr || g.row_of_node.size() != g.segment->vector_count()) {
    return absl::InvalidArgumentError("graph seed does not name a row for every node");
  }
  std::vector<uint32_t> order;
  std::vector<bool> taken(c.ids.size(), false);
  for (uint32_t row : g.row_of_node) {
    if (row == GraphSeed::kDroppedNode) continue;
    if (row >= c.ids.size() || taken[row]) {
      return absl::InvalidArgumentError("graph seed names a row twice or out of range");
    }
    order.push_back(row);
    taken[row] = true;
  }
  *seeded = order.size();
  std::vector<uint32_t> rest;
  for (uint32_t row = 0; row < c.ids.size(); ++row) {
    if (!taken[row]) rest.push_back(row);
  }
  if (rest.empty()) return order;  // nothing new (a merge of the seed and tombstones)
  std::vector<float> rows(rest.size() * c.dim);
  for (size_t i = 0; i < rest.size(); ++i) {
    std::memcpy(&rows[i * c.dim], c.vectors + size_t{rest[i]} * c.dim, c.dim * sizeof(float));
  }
  for (uint32_t i : graph::LocalityOrder(rows.data(), rest.size(), c.dim, seed, pool)) {
    order.push_back(rest[i]);
  }
  return order;
}

absl::StatusOr<SeedGraph> ReadSeedGraph(const SegmentContents& c) {
  const GraphSeed& seed = *c.seed;
  SeedGraph g;
  const size_t n = seed.row_of_node.size();
  g.new_node.assign(n, GraphSeed::kDroppedNode);
  for (size_t b = 0, next = 0; b < n; ++b) {
    if (seed.row_of_node[b] != GraphSeed::kDroppedNode) g.new_node[b] = next++;
  }
  g.offsets.reserve(n + 1);
  g.offsets.push_back(0);
  SHOAL_RETURN_IF_ERROR(seed.segment->ForEachNode(
      [&](uint32_t, uint64_t, uint64_t, const float*, std::span<const uint32_t> neighbors) {
        g.neighbors.insert(g.neighbors.end(), neighbors.begin(), neighbors.end());
        g.offsets.push_back(g.neighbors.size());
      }));
  return g;
}

// Every entry, sorted by id. InvalidArgument when an id repeats.
absl::StatusOr<std::vector<IdEntry>> SortedIdTable(const SegmentContents& c,
                                                   const Nodes& nodes) {
  std::vector<IdEntry> entries;
  entries.reserve(c.ids.size() + c.tombstone_ids.size());
  for (size_t i = 0; i < nodes.order.size(); ++i) {
    const uint32_t row = nodes.order[i];
    entries.push_back({c.ids[row], c.sequences[row], static_cast<uint32_t>(i)});
  }
  for (size_t i = 0; i < c.tombstone_ids.size(); ++i) {
    entries.push_back({c.tombstone_ids[i], c.tombstone_sequences[i], kNoNode});
  }
  std::sort(entries.begin(), entries.end(),
            [](const IdEntry& a, const IdEntry& b) { return a.id < b.id; });
  for (size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].id == entries[i - 1].id) {
      return absl::InvalidArgumentError(
          absl::StrCat("segment contents hold id ", entries[i].id, " twice"));
    }
  }
  return entries;
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Encodes graph node `node` at `out` (layout.node_bytes bytes, already
// zero), its neighbours as file nodes.
void EncodeNode(const SegmentContents& c, const Nodes& nodes,
                const segment::NodeLayout& layout, const graph::VamanaBuilder& graph,
                uint32_t node, char* out) {
  std::memcpy(out, nodes.store->vector(node), size_t{c.dim} * sizeof(float));
  EncodeFixed64(out + layout.id_offset(), c.ids[nodes.order[node]]);
  EncodeFixed64(out + layout.sequence_offset(), c.sequences[nodes.order[node]]);
  const std::span<const uint32_t> neighbors = graph.neighbors(node);
  EncodeFixed32(out + layout.degree_offset(), static_cast<uint32_t>(neighbors.size()));
  char* at = out + layout.neighbors_offset();
  for (size_t k = 0; k < neighbors.size(); ++k) {
    EncodeFixed32(at + 4 * k, nodes.file_node[neighbors[k]]);
  }
}

absl::Status WriteNodeBlocks(WritableFile* file, const SegmentContents& c,
                             const Nodes& nodes, const segment::Header& h,
                             const graph::VamanaBuilder& graph) {
  const segment::NodeLayout& layout = h.layout;
  const size_t block_bytes = layout.block_bytes();
  const size_t blocks_per_chunk = std::max<size_t>(1, kWriteChunkBytes / block_bytes);
  std::string chunk;
  for (uint64_t first = 0; first < h.block_count; first += blocks_per_chunk) {
    const uint64_t blocks = std::min<uint64_t>(blocks_per_chunk, h.block_count - first);
    chunk.assign(blocks * block_bytes, '\0');
    for (uint64_t b = 0; b < blocks; ++b) {
      char* block = chunk.data() + b * block_bytes;
      for (uint32_t slot = 0; slot < layout.nodes_per_block; ++slot) {
        const uint64_t node = (first + b) * layout.nodes_per_block + slot;
        if (node >= h.vector_count) break;
        EncodeNode(c, nodes, layout, graph, nodes.graph_node[node],
                   block + size_t{slot} * layout.node_bytes);
      }
      const size_t body = block_bytes - segment::kChecksumSize;
      EncodeFixed64(block + body, Checksum64(block, body));
    }
    SHOAL_RETURN_IF_ERROR(file->Append(chunk));
  }
  return absl::OkStatus();
}

std::string EncodeIdTable(const std::vector<IdEntry>& entries) {
  std::string out(entries.size() * segment::kIdEntrySize, '\0');
  for (size_t i = 0; i < entries.size(); ++i) {
    char* e = out.data() + i * segment::kIdEntrySize;
    EncodeFixed64(e, entries[i].id);
    EncodeFixed64(e + 8, entries[i].sequence);
    EncodeFixed32(e + 16, entries[i].node);
    // e + 20: reserved, zero.
  }
  return out;
}

// The codes area (SQ8): the ranges, then each node's code in file order.
// Returns its checksum in *checksum.
absl::Status WriteCodes(WritableFile* file, const SegmentContents& c, const Nodes& nodes,
                        const segment::Header& h, uint64_t* checksum) {
  Checksum64Builder sum;
  const codes::Sq8& sq8 = *nodes.sq8;
  std::string ranges(8 * size_t{c.dim}, '\0');
  std::memcpy(ranges.data(), sq8.lo().data(), 4 * size_t{c.dim});
  std::memcpy(ranges.data() + 4 * size_t{c.dim}, sq8.scale().data(), 4 * size_t{c.dim});
  sum.Update(ranges.data(), ranges.size());
  SHOAL_RETURN_IF_ERROR(file->Append(ranges));
  const size_t per_chunk = std::max<size_t>(1, kWriteChunkBytes / h.code_bytes);
  std::string chunk;
  for (uint64_t first = 0; first < h.vector_count; first += per_chunk) {
    const uint64_t count = std::min<uint64_t>(per_chunk, h.vector_count - first);
    chunk.resize(count * h.code_bytes);
    for (uint64_t p = 0; p < count; ++p) {
      std::memcpy(chunk.data() + p * h.code_bytes,
                  nodes.codes.data() + size_t{nodes.graph_node[first + p]} * h.code_bytes,
                  h.code_bytes);
    }
    sum.Update(chunk.data(), chunk.size());
    SHOAL_RETURN_IF_ERROR(file->Append(chunk));
  }
  *checksum = sum.Digest();
  return absl::OkStatus();
}

// Zeros from `*at` up to `to`.
absl::Status Pad(WritableFile* file, uint64_t to, uint64_t* at) {
  if (*at < to) SHOAL_RETURN_IF_ERROR(file->Append(std::string(to - *at, '\0')));
  *at = to;
  return absl::OkStatus();
}

// The record regions (version 3), placed from `*at` (the end of the codes);
// leaves *at where the id table starts.
absl::Status WriteRecordRegions(WritableFile* file, segment::RecordRegionsBuild* b,
                                uint64_t* at) {
  segment::RecordsDirectory& d = b->directory;
  const uint64_t end = segment::PlaceRegions(*at, &d);
  for (size_t i = 0; i < segment::kRegionCount; ++i) {
    if (d.regions[i].length == 0) continue;
    SHOAL_RETURN_IF_ERROR(Pad(file, d.regions[i].offset, at));
    SHOAL_RETURN_IF_ERROR(file->Append(b->bytes[i]));
    *at += b->bytes[i].size();
  }
  // The payloads after their index, about kWriteChunkBytes an Append.
  std::string chunk;
  for (const std::string_view payload : b->payloads) {
    chunk.append(payload);
    if (chunk.size() >= kWriteChunkBytes) {
      SHOAL_RETURN_IF_ERROR(file->Append(chunk));
      *at += chunk.size();
      chunk.clear();
    }
  }
  SHOAL_RETURN_IF_ERROR(file->Append(chunk));
  *at += chunk.size();
  return Pad(file, end, at);
}

absl::Status WriteFile(WritableFile* file, const SegmentContents& c, const Nodes& nodes,
                       const segment::Header& h,
                       const graph::VamanaBuilder& graph,
                       const std::vector<IdEntry>& entries,
                       segment::RecordRegionsBuild* records) {
  SHOAL_RETURN_IF_ERROR(file->Append(segment::EncodeHeader(h)));
  SHOAL_RETURN_IF_ERROR(WriteNodeBlocks(file, c, nodes, h, graph));
  segment::Footer f;
  if (h.code == VectorCode::kSq8) {
    SHOAL_RETURN_IF_ERROR(WriteCodes(file, c, nodes, h, &f.code_checksum));
  }
  f.nodes_offset = segment::kHeaderSize;
  f.nodes_bytes = h.block_count * h.layout.block_bytes();
  uint64_t at = f.nodes_offset + f.nodes_bytes + h.CodeAreaBytes();
  if (h.has_records_directory()) SHOAL_RETURN_IF_ERROR(WriteRecordRegions(file, records, &at));
  const std::string id_table = EncodeIdTable(entries);
  SHOAL_RETURN_IF_ERROR(file->Append(id_table));
  f.id_table_offset = at;
  f.id_table_bytes = id_table.size();
  f.id_table_checksum = Checksum64(id_table.data(), id_table.size());
  if (h.has_records_directory()) {
    SHOAL_RETURN_IF_ERROR(file->Append(segment::EncodeRecordsDirectory(records->directory)));
  }
  SHOAL_RETURN_IF_ERROR(file->Append(segment::EncodeFooter(f)));
  SHOAL_RETURN_IF_ERROR(file->Sync());
  return file->Close();
}

}  // namespace

absl::Status BuildSegment(FileSystem* fs, ThreadPool* pool, const std::string& path,
                          const SegmentContents& contents, const SegmentBuildOptions& options,
                          SegmentBuildStats* stats) {
  SHOAL_RETURN_IF_ERROR(Validate(contents, options.graph));
  if (options.code != VectorCode::kNone && options.code != VectorCode::kSq8) {
    return absl::InvalidArgumentError("segment code kind unknown");
  }
  if (options.format_version != 2 && options.format_version != segment::kFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("segment format version ", options.format_version, " cannot be written"));
  }
  SHOAL_ASSIGN_OR_RETURN(const std::vector<record::ExtrasView> row_extras,
                         ParseExtras(contents, options.format_version));
  const size_t n = contents.ids.size();
  Nodes nodes;
  if (contents.seed != nullptr) {
    SHOAL_ASSIGN_OR_RETURN(nodes.order,
                           SeededOrder(contents, options.seed, pool, &nodes.seeded));
  } else {
    nodes.order = graph::LocalityOrder(contents.vectors, n, contents.dim, options.seed, pool);
  }
  nodes.store = std::make_unique<graph::NodeStore>(
      contents.vectors, nodes.order, contents.dim,
      graph::VamanaBuilder::ListCapacity(options.graph.max_degree), pool);
  SHOAL_ASSIGN_OR_RETURN(std::vector<IdEntry> entries, SortedIdTable(contents, nodes));

  graph::BuildDistance distance(*nodes.store, contents.metric);
  if (options.code == VectorCode::kSq8) {
    EncodeCodes(contents, pool, &nodes);
    if (nodes.store->size() > 0) distance.AttachCodes(nodes.sq8.get(), nodes.codes.data());
  }
  graph::VamanaBuilder graph(nodes.store.get(), distance, options.graph, options.seed);
  if (!options.connect) graph.TEST_SkipConnect();
  if (contents.seed != nullptr) {
    SHOAL_ASSIGN_OR_RETURN(const SeedGraph seed, ReadSeedGraph(contents));
    // Seeded node i is old node old_node[i].
    std::vector<uint32_t> old_node(nodes.seeded);
    for (size_t b = 0; b < seed.new_node.size(); ++b) {
      if (seed.new_node[b] != GraphSeed::kDroppedNode) old_node[seed.new_node[b]] = b;
    }
    graph.Extend(
        nodes.seeded,
        [&](uint32_t node, std::vector<uint32_t>* candidates) {
          // Its kept neighbours first; then, for each dropped one, that
          // one's kept neighbours (FreshDiskANN's consolidation candidates).
          candidates->clear();
          const uint32_t b = old_node[node];
          for (uint64_t k = seed.offsets[b]; k < seed.offsets[b + 1]; ++k) {
            const uint32_t v = seed.neighbors[k];
            if (seed.new_node[v] != GraphSeed::kDroppedNode) {
              candidates->push_back(seed.new_node[v]);
            }
          }
          const size_t kept = candidates->size();
          for (uint64_t k = seed.offsets[b]; k < seed.offsets[b + 1]; ++k) {
            const uint32_t v = seed.neighbors[k];
            if (seed.new_node[v] != GraphSeed::kDroppedNode) continue;
            for (uint64_t j = seed.offsets[v]; j < seed.offsets[v + 1]; ++j) {
              const uint32_t w = seed.neighbors[j];
              if (seed.new_node[w] != GraphSeed::kDroppedNode) {
                candidates->push_back(seed.new_node[w]);
              }
            }
          }
          return kept;
        },
        pool, stats);
  } else {
    graph.Build(pool, stats);
  }

  const auto start = std::chrono::steady_clock::now();
  segment::Header h;
  h.metric = contents.metric;
  h.dim = contents.dim;
  h.max_degree = options.graph.max_degree;
  h.vector_count = n;
  h.tombstone_count = contents.tombstone_ids.size();
  h.layout = segment::NodeLayout::For(h.dim, h.max_degree);
  nodes.graph_node = segment::BlockLayout(
      static_cast<uint32_t>(n), h.layout.nodes_per_block,
      [&](uint32_t u) { return graph.neighbors(u); });
  nodes.file_node.resize(n);
  for (uint32_t p = 0; p < n; ++p) nodes.file_node[nodes.graph_node[p]] = p;
  for (IdEntry& e : entries) {
    if (e.node != kNoNode) e.node = nodes.file_node[e.node];
  }
  h.medoid = n == 0 ? kNoNode : nodes.file_node[graph.medoid()];
  h.block_count = h.layout.BlockCount(n);
  h.build_list_size = options.graph.build_list_size;
  h.alpha = options.graph.alpha;
  h.code = options.code;
  h.code_bytes = options.code == VectorCode::kSq8 ? codes::Sq8::CodeBytes(h.dim) : 0;
  h.version = options.format_version;
  h.origin = options.origin;
  // Each file node's extras: file node p is graph node graph_node[p], which
  // is contents row order[graph_node[p]] (locality or seeded order).
  segment::RecordRegionsBuild records;
  if (!row_extras.empty()) {
    std::vector<record::ExtrasView> node_extras(n);
    for (uint32_t p = 0; p < n; ++p) node_extras[p] = row_extras[nodes.order[nodes.graph_node[p]]];
    records = segment::BuildRecordRegions(node_extras);
  }

  const std::string tmp = path + std::string(kTempSuffix);
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs->NewWritableFile(tmp));
  absl::Status s = WriteFile(file.get(), contents, nodes, h, graph, entries, &records);
  file.reset();
  if (s.ok()) s = fs->Rename(tmp, path);
  if (!s.ok()) {
    fs->RemoveFile(tmp).IgnoreError();  // best effort: the error above is what matters
    return s;
  }
  SHOAL_RETURN_IF_ERROR(fs->SyncDir(DirName(path)));
  if (stats != nullptr) {
    stats->write_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return absl::OkStatus();
}

}  // namespace shoal
