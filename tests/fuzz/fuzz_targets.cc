// Copyright 2026 The shoal Authors.

#include "fuzz/fuzz_targets.h"

#include <cstring>
#include <string>
#include <string_view>

#include "record/record_format.h"
#include "version/manifest.h"
#include "fuzz/fuzz_check.h"
#include "util/coding.h"
#include "util/hash.h"
#include "wal/wal_format.h"
#include "wal/wal_reader.h"

namespace shoal::fuzz {
namespace {

// Recomputes the header checksum and every record checksum, walking records
// by their length fields as the reader does.
void FixWalChecksums(std::string* file) {
  char* d = file->data();
  const size_t n = file->size();
  if (n < wal::kFileHeaderSize) return;
  EncodeFixed32(d + 28, static_cast<uint32_t>(Checksum64(d, 28)));
  size_t off = wal::kFileHeaderSize;
  while (off + wal::kRecordHeaderSize <= n) {
    const uint64_t length = DecodeFixed32(d + off + 8);
    if (length > n - off - wal::kRecordHeaderSize) break;
    EncodeFixed64(d + off, Checksum64(d + off + 8, wal::kRecordHeaderSize - 8 + length));
    off += wal::AlignRecord(wal::kRecordHeaderSize + length);
  }
}

// Reads every byte of a record so that ASan sees any out-of-bounds pointer.
uint64_t Touch(const char* p, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<unsigned char>(p[i]);
  return sum;
}

// A kPutRecords record the reader handed out: its extras fill the payload
// after the vectors exactly, and each of the count parses (the reader
// checked them). Returns a sum over their parts.
uint64_t CheckExtras(const wal::RecordView& rec) {
  const size_t vectors = wal::PutPayloadSize(rec.count, rec.dim);
  FUZZ_CHECK(vectors + rec.extras.size() == rec.payload_length);
  FUZZ_CHECK(rec.extras.data() == rec.ids + vectors);
  std::string_view rest = rec.extras;
  uint64_t sum = 0;
  for (uint32_t i = 0; i < rec.count; ++i) {
    FUZZ_CHECK(rest.size() >= record::kHeaderSize);
    record::ExtrasView view;
    size_t used = 0;
    FUZZ_CHECK(record::Parse(rest, &view, &used).ok());
    RecordData data;
    view.CopyTo(kAllParts, &data);
    sum += data.labels.size() + data.attributes.size() + data.payload.size();
    for (uint32_t label : data.labels) sum += label;
    rest.remove_prefix(used);
  }
  FUZZ_CHECK(rest.empty());
  return sum;
}

struct WalRun {
  absl::StatusCode code;
  wal::ReadResult result;
  uint64_t callbacks = 0;
  uint64_t sum = 0;
};

WalRun ReadOnce(const std::string& file, uint32_t shard, uint64_t number, uint32_t dim) {
  WalRun run;
  size_t last_end = 0;
  absl::StatusOr<wal::ReadResult> r = wal::ReadWalFile(
      file, "fuzz.log", shard, number, dim, [&](const wal::RecordView& rec) {
        const char* base = file.data();
        FUZZ_CHECK(rec.offset % wal::kRecordAlignment == 0);
        FUZZ_CHECK(rec.offset >= wal::kFileHeaderSize);
        FUZZ_CHECK(rec.offset >= last_end);
        const size_t end = rec.offset + wal::kRecordHeaderSize + rec.payload_length;
        FUZZ_CHECK(end <= file.size());
        last_end = end;
        FUZZ_CHECK(rec.count >= 1);
        FUZZ_CHECK(rec.ids == base + rec.offset + wal::kRecordHeaderSize);
        if (rec.type == wal::RecordType::kBarrier) {
          FUZZ_CHECK(rec.count == 1 && rec.payload_length == 0);
        } else {
          FUZZ_CHECK(uint64_t{rec.count} * 8 <= rec.payload_length);
        }
        if (rec.type == wal::RecordType::kShardRecord) {
          // Commit logs only; the shard record inside is checked apart.
          FUZZ_CHECK(shard == wal::kCommitLogShard);
          uint32_t inner_shard = 0;
          wal::RecordView inner;
          const absl::Status decoded = wal::DecodeShardRecord(rec, dim, &inner_shard, &inner);
          if (decoded.ok()) {
            const char* payload_end = rec.ids + rec.payload_length;
            FUZZ_CHECK(inner.ids > rec.ids && inner.ids + inner.payload_length <= payload_end);
            FUZZ_CHECK(inner.count >= 1 && inner.type != wal::RecordType::kShardRecord);
            if (inner.type == wal::RecordType::kPut) {
              FUZZ_CHECK(inner.dim == dim &&
                         wal::PutPayloadSize(inner.count, dim) == inner.payload_length);
            }
            if (inner.type == wal::RecordType::kPutRecords) run.sum += CheckExtras(inner);
            run.sum += inner_shard + inner.sequence + Touch(inner.ids, inner.payload_length);
          } else {
            FUZZ_CHECK(absl::IsDataLoss(decoded));
          }
        } else if (rec.type == wal::RecordType::kPut) {
          FUZZ_CHECK(rec.dim == dim);
          FUZZ_CHECK(rec.vectors == rec.ids + uint64_t{rec.count} * 8);
          FUZZ_CHECK(wal::PutPayloadSize(rec.count, rec.dim) == rec.payload_length);
        } else if (rec.type == wal::RecordType::kPutRecords) {
          FUZZ_CHECK(rec.dim == dim && rec.version >= 2);
          FUZZ_CHECK(rec.vectors == rec.ids + uint64_t{rec.count} * 8);
          run.sum += CheckExtras(rec);
        } else if (rec.type == wal::RecordType::kDelete) {
          FUZZ_CHECK(uint64_t{rec.count} * 8 == rec.payload_length);
        }
        run.sum += Touch(rec.ids, rec.payload_length) + rec.sequence;
        ++run.callbacks;
        return absl::OkStatus();
      });
  run.code = r.status().code();
  if (!r.ok()) return run;
  run.result = *r;
  const wal::ReadResult& res = run.result;
  FUZZ_CHECK(res.valid_end <= file.size());
  FUZZ_CHECK(res.valid_end >= last_end);
  FUZZ_CHECK(run.callbacks <= res.records);
  if (res.corrupted) FUZZ_CHECK(res.corrupt_offset == res.valid_end);
  if (res.records > 0) FUZZ_CHECK(res.valid_end >= wal::kFileHeaderSize);
  return run;
}

}  // namespace

int FuzzWalReader(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0];
  const uint32_t dim = data[1] == 0 ? 1 : data[1];
  std::string file(reinterpret_cast<const char*>(data) + 2, size - 2);
  if (flags & 1) FixWalChecksums(&file);
  uint32_t shard = 0;
  uint64_t number = 1;
  if ((flags & 2) && file.size() >= wal::kFileHeaderSize) {
    shard = DecodeFixed32(file.data() + 12);
    number = DecodeFixed64(file.data() + 16);
  }
  const WalRun a = ReadOnce(file, shard, number, dim);
  const WalRun b = ReadOnce(file, shard, number, dim);
  FUZZ_CHECK(a.code == b.code);
  FUZZ_CHECK(a.callbacks == b.callbacks && a.sum == b.sum);
  FUZZ_CHECK(a.result.valid_end == b.result.valid_end);
  FUZZ_CHECK(a.result.torn_tail == b.result.torn_tail);
  FUZZ_CHECK(a.result.corrupted == b.result.corrupted);
  return 0;
}

int FuzzManifest(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) && bytes.size() >= 8) {
    const size_t body = bytes.size() - 8;
    EncodeFixed64(bytes.data() + body, Checksum64(bytes.data(), body));
  }
  absl::StatusOr<Manifest> m = DecodeManifest(bytes, "fuzz/MANIFEST");
  if (!m.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(m.status()) || absl::IsFailedPrecondition(m.status()));
    return 0;
  }
  const std::string once = EncodeManifest(*m);
  absl::StatusOr<Manifest> again = DecodeManifest(once, "fuzz/MANIFEST");
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(EncodeManifest(*again) == once);
  FUZZ_CHECK(again->collections.size() == m->collections.size());
  for (const CollectionMeta& c : again->collections) {
    FUZZ_CHECK(c.options.shard_count >= 1);
    FUZZ_CHECK(c.shards.size() == c.options.shard_count);
  }
  return 0;
}

}  // namespace shoal::fuzz
