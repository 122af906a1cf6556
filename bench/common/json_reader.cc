// Copyright 2026 The shoal Authors.

#include "common/json_reader.h"

#include <cstdint>
#include <cstdlib>
#include <limits>

#include "fmt/core.h"

namespace shoal_bench {

double JsonValue::number() const {
  return kind_ == Kind::kNumber ? number_ : std::numeric_limits<double>::quiet_NaN();
}

const JsonValue& JsonValue::operator[](std::string_view key) const {
  static const JsonValue kNull;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return elements_[i];
  }
  return kNull;
}

bool JsonValue::Has(std::string_view key) const {
  for (const std::string& k : keys_) {
    if (k == key) return true;
  }
  return false;
}

// Recursive descent over `text_`; pos_ is the next unread byte.
class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> Document() {
    JsonValue v;
    if (!Value(v, 0)) return Error();
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing characters");
    return v;
  }

 private:
  absl::Status Error(std::string_view what = "") const {
    return absl::InvalidArgumentError(fmt::format(
        "JSON: {} at byte {}", what.empty() ? (error_.empty() ? "malformed" : error_) : what,
        pos_));
  }
  bool Fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
    return false;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return Fail("unknown literal");
    pos_ += word.size();
    return true;
  }

  bool Value(JsonValue& v, int depth) {
    if (depth > JsonValue::kMaxDepth) return Fail("nested too deep");
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("unexpected end");
    switch (text_[pos_]) {
      case '{': return Object(v, depth);
      case '[': return Array(v, depth);
      case '"': v.kind_ = JsonValue::Kind::kString; return String(v.string_);
      case 't': v.kind_ = JsonValue::Kind::kBool; v.bool_ = true; return Literal("true");
      case 'f': v.kind_ = JsonValue::Kind::kBool; return Literal("false");
      case 'n': return Literal("null");
      default: return Number(v);
    }
  }

  bool Object(JsonValue& v, int depth) {
    v.kind_ = JsonValue::Kind::kObject;
    ++pos_;
    if (Eat('}')) return true;
    do {
      SkipSpace();
      std::string key;
      if (pos_ >= text_.size() || text_[pos_] != '"' || !String(key)) return Fail("want a key");
      if (!Eat(':')) return Fail("want ':'");
      v.keys_.push_back(std::move(key));
      v.elements_.emplace_back();
      if (!Value(v.elements_.back(), depth + 1)) return false;
    } while (Eat(','));
    return Eat('}') || Fail("want ',' or '}'");
  }

  bool Array(JsonValue& v, int depth) {
    v.kind_ = JsonValue::Kind::kArray;
    ++pos_;
    if (Eat(']')) return true;
    do {
      v.elements_.emplace_back();
      if (!Value(v.elements_.back(), depth + 1)) return false;
    } while (Eat(','));
    return Eat(']') || Fail("want ',' or ']'");
  }

  bool Number(JsonValue& v) {
    const size_t start = pos_;
    while (pos_ < text_.size() && std::string_view("+-0123456789.eE").find(text_[pos_]) !=
                                      std::string_view::npos) {
      ++pos_;
    }
    const std::string token(text_.substr(start, pos_ - start));
    char* end = nullptr;
    v.number_ = std::strtod(token.c_str(), &end);
    v.kind_ = JsonValue::Kind::kNumber;
    if (token.empty() || end != token.c_str() + token.size()) {
      pos_ = start;
      return Fail("bad number");
    }
    return true;
  }

  // A string at pos_ (its opening quote) into `out`, as UTF-8.
  bool String(std::string& out) {
    ++pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': if (!Unicode(out)) return false; break;
        default: return Fail("bad escape");
      }
    }
    return Fail("unterminated string");
  }

  bool Hex4(uint32_t& cp) {
    if (pos_ + 4 > text_.size()) return Fail("bad \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= h - '0';
      else if (h >= 'a' && h <= 'f') cp |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') cp |= h - 'A' + 10;
      else return Fail("bad \\u escape");
    }
    return true;
  }

  // \uXXXX (pos_ after the 'u'), with a following low surrogate if needed.
  bool Unicode(std::string& out) {
    uint32_t cp = 0;
    if (!Hex4(cp)) return false;
    if (cp >= 0xD800 && cp < 0xDC00 && text_.substr(pos_, 2) == "\\u") {
      pos_ += 2;
      uint32_t low = 0;
      if (!Hex4(low) || low < 0xDC00 || low >= 0xE000) return Fail("bad surrogate pair");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;  // the first failure's reason
};

absl::StatusOr<JsonValue> ParseJson(std::string_view text) {
  return JsonParser(text).Document();
}

}  // namespace shoal_bench
