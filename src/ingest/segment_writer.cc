// Copyright 2026 The shoal Authors.
//
// The public SegmentWriter (shoal/segment_writer.h): rows checked as the
// database checks them, routed by id, kept per shard until Finish, then
// built by the one segment builder every flush and bulk load uses
// (BuildSegment), with the file's origin (shard count, shard, attribute
// names) in its header for DB::IngestSegments to check.

#include "shoal/segment_writer.h"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "db/validate.h"
#include "distance/distance.h"
#include "record/record_format.h"
#include "segment/segment.h"
#include "shoal/file_system.h"
#include "util/file_system.h"
#include "util/hash.h"
#include "util/status_macros.h"
#include "util/thread_pool.h"
#include "version/validate_collection.h"

namespace shoal {
namespace {

// One shard's rows, in the order added.
struct ShardRows {
  std::vector<uint64_t> ids;
  std::vector<float> vectors;
  // Each row's extras encoded, back to back (empty while no row has any;
  // then filled with empty extras up to the row that first has some).
  std::string extras;
  std::vector<uint64_t> extras_end;  // per row, once has_extras
  // A row with extras was added: extras_end has one entry a row from then
  // on. Not `!extras_end.empty()`, which is also false right before the
  // first row is appended (that row's extras were lost when it had some).
  bool has_extras = false;
};

absl::Status CheckPrefix(const std::string& prefix) {
  if (prefix.empty() || prefix.size() > 128) {
    return absl::InvalidArgumentError("file_prefix must have 1..128 characters");
  }
  for (char c : prefix) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return absl::InvalidArgumentError("file_prefix must be of [A-Za-z0-9_.-]");
  }
  return absl::OkStatus();
}

class SegmentWriterImpl final : public SegmentWriter {
 public:
  SegmentWriterImpl(FileSystem* fs, std::string dir, const SegmentWriterOptions& options,
                    std::unique_ptr<ThreadPool> pool)
      : fs_(fs), dir_(std::move(dir)), options_(options), pool_(std::move(pool)),
        shards_(options.collection.shard_count) {}

  std::string FilePath(uint32_t shard) const {
    return JoinPath(dir_, options_.one_graph
                              ? absl::StrCat(options_.file_prefix, "-all.vamana")
                              : absl::StrCat(options_.file_prefix, "-shard-", shard, ".vamana"));
  }

  absl::Status Add(std::span<const uint64_t> ids, std::span<const float> vectors) override {
    SHOAL_RETURN_IF_ERROR(CheckOpen());
    const CollectionOptions& c = options_.collection;
    SHOAL_RETURN_IF_ERROR(ValidateVectors(vectors, ids.size(), c.dim, c.metric, "vectors"));
    std::vector<float> row(c.dim);
    for (size_t i = 0; i < ids.size(); ++i) {
      std::memcpy(row.data(), vectors.data() + i * c.dim, c.dim * sizeof(float));
      if (c.metric == Metric::kCosine && !NormalizeInPlace(row.data(), c.dim)) {
        return absl::InvalidArgumentError(
            absl::StrCat("row ", i, ": a zero vector has no direction under kCosine"));
      }
    }
    // Checked whole: now append.
    for (size_t i = 0; i < ids.size(); ++i) {
      std::memcpy(row.data(), vectors.data() + i * c.dim, c.dim * sizeof(float));
      if (c.metric == Metric::kCosine) NormalizeInPlace(row.data(), c.dim);
      Append(ids[i], row.data(), std::string_view());
    }
    return absl::OkStatus();
  }

  absl::Status Add(std::span<const Record> records) override {
    SHOAL_RETURN_IF_ERROR(CheckOpen());
    const CollectionOptions& c = options_.collection;
    record::NormalizeStore store;
    std::vector<std::string> encoded(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      const Record& r = records[i];
      auto fail = [&](const absl::Status& s) {
        return absl::Status(s.code(),
                            absl::StrCat("record ", i, " (id ", r.id, "): ", s.message()));
      };
      absl::Status s = ValidateVectors(r.vector, 1, c.dim, c.metric, "vector");
      if (!s.ok()) return fail(s);
      if (c.metric == Metric::kCosine) {
        std::vector<float> v(r.vector.begin(), r.vector.end());
        if (!NormalizeInPlace(v.data(), c.dim)) {
          return fail(absl::InvalidArgumentError("a zero vector has no direction under kCosine"));
        }
      }
      record::Extras extras;
      s = record::NormalizeRecord(r, c.attributes.size(), &store, &extras);
      if (!s.ok()) return fail(s);
      if (!extras.empty()) record::AppendEncoded(extras, &encoded[i]);
    }
    std::vector<float> row(c.dim);
    for (size_t i = 0; i < records.size(); ++i) {
      std::memcpy(row.data(), records[i].vector.data(), c.dim * sizeof(float));
      if (c.metric == Metric::kCosine) NormalizeInPlace(row.data(), c.dim);
      Append(records[i].id, row.data(), encoded[i]);
    }
    return absl::OkStatus();
  }

  uint64_t rows() const override { return rows_; }

  absl::StatusOr<std::vector<std::string>> Finish() override {
    SHOAL_RETURN_IF_ERROR(CheckOpen());
    finished_ = true;
    std::vector<std::string> written;
    bool ok = false;
    absl::Cleanup remove_written = [&] {
      if (ok) return;
      for (const std::string& path : written) (void)fs_->RemoveFile(path);
    };
    if (options_.one_graph) {
      if (rows_ > 0) {
        SHOAL_RETURN_IF_ERROR(Build(shards_, segment::SegmentOrigin::kAllShards));
        written.push_back(FilePath(0));
      }
    } else {
      for (uint32_t s = 0; s < shards_.size(); ++s) {
        if (shards_[s].ids.empty()) continue;
        SHOAL_RETURN_IF_ERROR(Build(std::span<ShardRows>(&shards_[s], 1), s));
        written.push_back(FilePath(s));
        shards_[s] = ShardRows();  // its memory back before the next build
      }
    }
    ok = true;
    return written;
  }

 private:
  absl::Status CheckOpen() const {
    if (finished_) return absl::FailedPreconditionError("SegmentWriter: Finish was called");
    return absl::OkStatus();
  }

  void Append(uint64_t id, const float* row, std::string_view extras) {
    ShardRows& to = shards_[ShardOf(id, options_.collection.shard_count)];
    const size_t at = to.ids.size();
    to.ids.push_back(id);
    to.vectors.insert(to.vectors.end(), row, row + options_.collection.dim);
    if (!extras.empty() && !to.has_extras) {
      // The first row with parts: the rows before it have none.
      to.has_extras = true;
      std::string none;
      record::AppendEncoded(record::Extras(), &none);
      for (size_t i = 0; i < at; ++i) {
        to.extras += none;
        to.extras_end.push_back(to.extras.size());
      }
    }
    if (to.has_extras) {
      if (extras.empty()) {
        record::AppendEncoded(record::Extras(), &to.extras);
      } else {
        to.extras.append(extras);
      }
      to.extras_end.push_back(to.extras.size());
    }
    ++rows_;
  }

  // Builds the file of `parts` (one shard's rows, or every shard's in
  // shard order for one graph), keeping the last row of each id.
  absl::Status Build(std::span<ShardRows> parts, uint32_t shard) {
    const uint32_t dim = options_.collection.dim;
    std::vector<uint64_t> ids;
    std::vector<float> vectors;
    std::vector<std::string_view> extras;
    bool any_extras = false;
    for (const ShardRows& p : parts) any_extras |= !p.extras_end.empty();
    std::string none;
    record::AppendEncoded(record::Extras(), &none);
    // Each part's last row of each id; one part without repeats is built
    // from its rows as they are (no second copy of the vectors).
    std::vector<std::vector<bool>> keep(parts.size());
    bool repeats = false;
    for (size_t j = 0; j < parts.size(); ++j) {
      const ShardRows& p = parts[j];
      absl::flat_hash_map<uint64_t, size_t> last;
      last.reserve(p.ids.size());
      for (size_t i = 0; i < p.ids.size(); ++i) last[p.ids[i]] = i;
      keep[j].resize(p.ids.size());
      for (size_t i = 0; i < p.ids.size(); ++i) keep[j][i] = last[p.ids[i]] == i;
      repeats |= last.size() != p.ids.size();
    }
    const bool in_place = parts.size() == 1 && !repeats;
    for (size_t j = 0; j < parts.size(); ++j) {
      const ShardRows& p = parts[j];
      for (size_t i = 0; i < p.ids.size(); ++i) {
        if (!keep[j][i]) continue;
        if (!in_place) {
          ids.push_back(p.ids[i]);
          vectors.insert(vectors.end(), p.vectors.begin() + i * dim,
                         p.vectors.begin() + (i + 1) * dim);
        }
        if (!any_extras) continue;
        if (p.extras_end.empty()) {
          extras.push_back(none);
        } else {
          const size_t begin = i == 0 ? 0 : p.extras_end[i - 1];
          extras.emplace_back(p.extras.data() + begin, p.extras_end[i] - begin);
        }
      }
    }
    const std::span<const uint64_t> row_ids = in_place ? parts[0].ids : ids;
    // IngestSegments ranks the file by the sequence it takes, not these.
    const std::vector<uint64_t> sequences(row_ids.size(), 0);
    SegmentContents contents;
    contents.dim = dim;
    contents.metric = options_.collection.metric;
    contents.ids = row_ids;
    contents.sequences = sequences;
    contents.vectors = in_place ? parts[0].vectors.data() : vectors.data();
    contents.extras = extras;
    SegmentBuildOptions build;
    build.graph = options_.collection.graph;
    build.code = options_.collection.code;
    build.origin.shard_count = options_.collection.shard_count;
    build.origin.shard = shard;
    build.origin.attribute_count = static_cast<uint32_t>(options_.collection.attributes.size());
    build.origin.attributes_fingerprint =
        segment::AttributesFingerprint(options_.collection.attributes);
    return BuildSegment(fs_, pool_.get(), FilePath(shard), contents, build);
  }

  FileSystem* const fs_;
  const std::string dir_;
  const SegmentWriterOptions options_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<ShardRows> shards_;
  uint64_t rows_ = 0;
  bool finished_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SegmentWriter>> SegmentWriter::Create(
    const std::string& dir, const SegmentWriterOptions& options) {
  const CollectionOptions& c = options.collection;
  SHOAL_RETURN_IF_ERROR(ValidateCollectionOptions(c));
  if (c.shard_count == 0) {
    return absl::InvalidArgumentError(
        "SegmentWriter: collection.shard_count must be the collection's (1..256), not 0");
  }
  if (c.dim == 0) return absl::InvalidArgumentError("SegmentWriter: collection.dim is required");
  SHOAL_RETURN_IF_ERROR(CheckPrefix(options.file_prefix));
  FileSystem* fs = options.file_system != nullptr ? options.file_system : FileSystem::Default();
  SHOAL_RETURN_IF_ERROR(fs->CreateDir(dir));
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<ThreadPool> pool, ThreadPool::Create(options.threads));
  auto writer = std::make_unique<SegmentWriterImpl>(fs, dir, options, std::move(pool));
  for (uint32_t s = 0; s < (options.one_graph ? 1 : c.shard_count); ++s) {
    if (fs->Exists(writer->FilePath(s))) {
      return absl::AlreadyExistsError(
          absl::StrCat("SegmentWriter: ", writer->FilePath(s), " exists"));
    }
  }
  return writer;
}

}  // namespace shoal
