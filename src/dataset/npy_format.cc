// Copyright 2026 The shoal Authors.

#include "dataset/npy_format.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "dataset/layout.h"
#include "util/coding.h"
#include "util/string_view.h"

namespace shoal::dataset_internal {
namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
constexpr uint64_t kVersionOffset = 6;
constexpr uint64_t kLengthOffset = 8;

// Parses the header dict. Every error names the byte (in the file) where the
// parse stopped.
class DictParser {
 public:
  DictParser(std::string_view text, uint64_t base, const std::string& context)
      : text_(text), base_(base), context_(context) {}

  absl::Status Parse(NpyHeader* out) {
    SkipSpace();
    if (!Consume('{')) return Error("the npy header does not start with '{'");
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      const uint64_t key_offset = Offset();
      absl::StatusOr<std::string> key = String("a quoted key or '}'");
      if (!key.ok()) return key.status();
      SkipSpace();
      if (!Consume(':')) return Error(absl::StrCat("expected ':' after key '", *key, "'"));
      SkipSpace();
      bool* seen = *key == "descr"           ? &seen_descr
                   : *key == "fortran_order" ? &seen_fortran
                   : *key == "shape"         ? &seen_shape
                                             : nullptr;
      if (seen == nullptr) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, context_, key_offset,
                       absl::StrCat("unexpected key '", *key, "' in the npy header (it has "
                                    "exactly 'descr', 'fortran_order' and 'shape')"));
      }
      if (*seen) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, context_, key_offset,
                       absl::StrCat("key '", *key, "' appears twice in the npy header"));
      }
      *seen = true;
      absl::Status s = Value(*key, out);
      if (!s.ok()) return s;
      SkipSpace();
      if (Consume('}')) break;
      if (!Consume(',')) return Error(absl::StrCat("expected ',' or '}' after '", *key, "'"));
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the npy header's '}'");
    const char* missing = !seen_descr ? "descr" : !seen_fortran ? "fortran_order"
                        : !seen_shape ? "shape" : nullptr;
    if (missing != nullptr) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, context_, base_,
                     absl::StrCat("the npy header has no '", missing, "'"));
    }
    return absl::OkStatus();
  }

 private:
  uint64_t Offset() const { return base_ + pos_; }
  absl::Status Error(const std::string& what) const {
    return ErrorAt(absl::StatusCode::kInvalidArgument, context_, Offset(), what);
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  bool ConsumeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  absl::Status Value(const std::string& key, NpyHeader* out) {
    if (key == "descr") {
      out->descr_offset = Offset();
      absl::StatusOr<std::string> descr =
          String("a dtype string such as '<f4' for 'descr' (structured dtypes are not "
                 "supported)");
      if (!descr.ok()) return descr.status();
      out->descr = *std::move(descr);
    } else if (key == "fortran_order") {
      out->fortran_order_offset = Offset();
      if (ConsumeWord("True")) {
        out->fortran_order = true;
      } else if (ConsumeWord("False")) {
        out->fortran_order = false;
      } else {
        return Error("'fortran_order' must be True or False");
      }
    } else {
      out->shape_offset = Offset();
      return Tuple(&out->shape);
    }
    return absl::OkStatus();
  }

  // A quoted string; NumPy never writes escapes, so a backslash is refused.
  absl::StatusOr<std::string> String(const std::string& expected) {
    if (!Peek('\'') && !Peek('"')) return Error(absl::StrCat("expected ", expected));
    const char quote = text_[pos_++];
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return Error("escape sequences are not supported in npy headers");
      ++pos_;
    }
    if (pos_ == text_.size()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, context_, base_ + start - 1,
                     "unterminated string in the npy header");
    }
    std::string s(text_.substr(start, pos_ - start));
    ++pos_;
    return s;
  }

  absl::Status Tuple(std::vector<uint64_t>* out) {
    if (!Consume('(')) return Error("'shape' must be a tuple such as (1000, 128)");
    while (true) {
      SkipSpace();
      if (Consume(')')) return absl::OkStatus();
      if (out->size() == kMaxNpyDims) {
        return Error(absl::StrCat("'shape' has more than ", kMaxNpyDims, " dims"));
      }
      absl::Status s = Integer(out);
      if (!s.ok()) return s;
      SkipSpace();
      if (Consume(')')) return absl::OkStatus();
      if (!Consume(',')) return Error("expected ',' or ')' in 'shape'");
    }
  }

  absl::Status Integer(std::vector<uint64_t>* out) {
    if (pos_ == text_.size() || text_[pos_] < '0' || text_[pos_] > '9') {
      return Error("expected a non-negative integer in 'shape'");
    }
    const uint64_t start = Offset();
    uint64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (__builtin_mul_overflow(v, 10, &v) ||
          __builtin_add_overflow(v, uint64_t(text_[pos_] - '0'), &v)) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, context_, start,
                       "a 'shape' value does not fit 64 bits");
      }
      ++pos_;
    }
    Consume('L');  // Python 2 longs, in files NumPy wrote long ago
    out->push_back(v);
    return absl::OkStatus();
  }

  std::string_view text_;
  uint64_t base_;  // the file offset of text_[0]
  const std::string& context_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view bytes, const std::string& context) {
  const uint64_t size = bytes.size();
  if (bytes.substr(0, kMagic.size()) != kMagic.substr(0, std::min<size_t>(size, kMagic.size()))) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, context, 0,
                   "not an npy file: it does not start with the magic \"\\x93NUMPY\"");
  }
  if (size < kLengthOffset) {
    return ErrorAt(absl::StatusCode::kDataLoss, context, 0,
                   absl::StrCat("the npy magic and version are cut short: the file has ", size,
                                " bytes"));
  }
  const uint8_t major = static_cast<uint8_t>(bytes[kVersionOffset]);
  const uint8_t minor = static_cast<uint8_t>(bytes[kVersionOffset + 1]);
  if (major < 1 || major > 3 || minor != 0) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, context, kVersionOffset,
                   absl::StrCat("npy version ", int{major}, ".", int{minor},
                                " is not supported (1.0, 2.0 and 3.0 are)"));
  }
  const uint64_t length_size = major == 1 ? 2 : 4;
  const uint64_t header_offset = kLengthOffset + length_size;
  if (size < header_offset) {
    return ErrorAt(absl::StatusCode::kDataLoss, context, kLengthOffset,
                   absl::StrCat("the ", length_size, "-byte npy header length is cut short"));
  }
  const uint64_t header_length = major == 1 ? DecodeFixed16(bytes.data() + kLengthOffset)
                                            : DecodeFixed32(bytes.data() + kLengthOffset);
  if (size - header_offset < header_length) {
    return ErrorAt(absl::StatusCode::kDataLoss, context, header_offset,
                   absl::StrCat("the npy header of ", header_length,
                                " bytes is cut short: the file ends at byte ", size));
  }
  NpyHeader header;
  DictParser parser(bytes.substr(header_offset, header_length), header_offset, context);
  absl::Status s = parser.Parse(&header);
  if (!s.ok()) return s;
  header.data_offset = header_offset + header_length;
  return header;
}

std::string EncodeNpyHeader(std::string_view descr, uint64_t rows, uint32_t cols) {
  std::string dict = absl::StrCat("{'descr': '", AsAbsl(descr),
                                  "', 'fortran_order': False, 'shape': (", rows, ", ", cols,
                                  "), }");
  constexpr size_t kPreamble = kLengthOffset + 2;  // version 1.0
  const size_t unpadded = kPreamble + dict.size() + 1;  // + the final '\n'
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  std::string out(kMagic);
  out.push_back(1);
  out.push_back(0);
  char length[2];
  EncodeFixed16(length, static_cast<uint16_t>(dict.size()));  // < 200 bytes
  out.append(length, 2);
  out += dict;
  return out;
}

}  // namespace shoal::dataset_internal
