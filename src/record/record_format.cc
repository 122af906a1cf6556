// Copyright 2026 The shoal Authors.

#include "record/record_format.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "util/coding.h"

namespace shoal::record {

char* Encode(const Extras& e, char* out) {
  EncodeFixed16(out, static_cast<uint16_t>(e.labels.size()));
  EncodeFixed16(out + 2, static_cast<uint16_t>(e.attributes.size()));
  EncodeFixed32(out + 4, static_cast<uint32_t>(e.payload.size()));
  out += kHeaderSize;
  if (!e.labels.empty()) std::memcpy(out, e.labels.data(), e.labels.size() * 4);
  out += e.labels.size() * 4;
  for (const AttributeValue& a : e.attributes) {
    EncodeFixed32(out, a.attribute);
    EncodeFixed64(out + 4, static_cast<uint64_t>(a.value));
    out += kAttributeSize;
  }
  if (!e.payload.empty()) std::memcpy(out, e.payload.data(), e.payload.size());
  return out + e.payload.size();
}

void AppendEncoded(const Extras& e, std::string* out) {
  const size_t at = out->size();
  out->resize(at + EncodedSize(e));
  Encode(e, out->data() + at);
}

uint32_t ExtrasView::label(size_t i) const { return DecodeFixed32(labels_ + 4 * i); }

AttributeValue ExtrasView::attribute(size_t i) const {
  const char* p = attributes_ + kAttributeSize * i;
  return {DecodeFixed32(p), static_cast<int64_t>(DecodeFixed64(p + 4))};
}

void ExtrasView::CopyTo(uint32_t parts, RecordData* out) const {
  if (parts & kLabelsPart) {
    out->labels.resize(label_count_);
    if (label_count_ > 0) std::memcpy(out->labels.data(), labels_, 4 * label_count_);
  }
  if (parts & kAttributesPart) {
    out->attributes.resize(attribute_count_);
    for (size_t i = 0; i < attribute_count_; ++i) out->attributes[i] = attribute(i);
  }
  if (parts & kPayloadPart) out->payload.assign(payload_);
}

absl::Status Parse(std::string_view in, ExtrasView* out, size_t* consumed) {
  *out = ExtrasView();
  if (in.empty()) {
    if (consumed != nullptr) *consumed = 0;
    return absl::OkStatus();
  }
  if (in.size() < kHeaderSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("record extras: ", in.size(), " bytes, shorter than their header"));
  }
  const size_t labels = DecodeFixed16(in.data());
  const size_t attributes = DecodeFixed16(in.data() + 2);
  const size_t payload = DecodeFixed32(in.data() + 4);
  if (labels > kMaxLabels || attributes > kMaxAttributes || payload > kMaxPayloadBytes) {
    return absl::InvalidArgumentError(absl::StrCat("record extras: ", labels, " labels, ",
                                                   attributes, " attributes, ", payload,
                                                   " payload bytes: over the limits"));
  }
  const size_t size = kHeaderSize + 4 * labels + kAttributeSize * attributes + payload;
  if (in.size() < size) {
    return absl::InvalidArgumentError(absl::StrCat("record extras: ", size, " bytes, only ",
                                                   in.size(), " left"));
  }
  out->labels_ = in.data() + kHeaderSize;
  out->attributes_ = out->labels_ + 4 * labels;
  out->label_count_ = labels;
  out->attribute_count_ = attributes;
  out->payload_ = std::string_view(out->attributes_ + kAttributeSize * attributes, payload);
  out->bytes_ = in.substr(0, size);
  for (size_t i = 1; i < labels; ++i) {
    if (out->label(i - 1) >= out->label(i)) {
      return absl::InvalidArgumentError("record extras: labels not ascending and distinct");
    }
  }
  for (size_t i = 0; i < attributes; ++i) {
    const uint32_t index = out->attribute(i).attribute;
    if (index >= kMaxAttributes || (i > 0 && out->attribute(i - 1).attribute >= index)) {
      return absl::InvalidArgumentError(
          "record extras: attribute indices not ascending, distinct and below the limit");
    }
  }
  if (consumed != nullptr) *consumed = size;
  return absl::OkStatus();
}

absl::Status NormalizeRecord(const Record& record, size_t attribute_count,
                             NormalizeStore* store, Extras* out) {
  *out = Extras();
  if (record.payload.size() > kMaxPayloadBytes) {
    return absl::InvalidArgumentError(absl::StrCat("payload of ", record.payload.size(),
                                                   " bytes is over the limit of ",
                                                   kMaxPayloadBytes, " (kMaxPayloadBytes)"));
  }
  out->payload = record.payload;

  std::span<const uint32_t> labels = record.labels;
  bool sorted = true;
  for (size_t i = 1; i < labels.size() && sorted; ++i) sorted = labels[i - 1] < labels[i];
  if (!sorted) {
    std::vector<uint32_t>& copy = store->labels.emplace_back(labels.begin(), labels.end());
    std::sort(copy.begin(), copy.end());
    copy.erase(std::unique(copy.begin(), copy.end()), copy.end());
    labels = copy;
  }
  if (labels.size() > kMaxLabels) {
    return absl::InvalidArgumentError(absl::StrCat(labels.size(),
                                                   " distinct labels; at most ", kMaxLabels,
                                                   " (kMaxLabels)"));
  }
  out->labels = labels;

  std::span<const AttributeValue> attributes = record.attributes;
  if (attributes.size() > attribute_count) {
    return absl::InvalidArgumentError(
        absl::StrCat(attributes.size(), " attribute values; the collection declares ",
                     attribute_count, " attributes"));
  }
  for (const AttributeValue& a : attributes) {
    if (a.attribute >= attribute_count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attribute ", a.attribute, " is not declared: the collection declares ",
          attribute_count, " attributes (CollectionOptions::attributes)"));
    }
  }
  sorted = true;
  for (size_t i = 1; i < attributes.size() && sorted; ++i) {
    sorted = attributes[i - 1].attribute < attributes[i].attribute;
  }
  if (!sorted) {
    std::vector<AttributeValue>& copy =
        store->attributes.emplace_back(attributes.begin(), attributes.end());
    std::sort(copy.begin(), copy.end(), [](const AttributeValue& a, const AttributeValue& b) {
      return a.attribute < b.attribute;
    });
    for (size_t i = 1; i < copy.size(); ++i) {
      if (copy[i - 1].attribute == copy[i].attribute) {
        return absl::InvalidArgumentError(
            absl::StrCat("attribute ", copy[i].attribute, " is given twice"));
      }
    }
    attributes = copy;
  }
  out->attributes = attributes;
  return absl::OkStatus();
}

}  // namespace shoal::record
