// Copyright 2026 The shoal Authors.
//
// A minimal streaming JSON writer for benchmark reports: objects, arrays,
// strings (escaped per RFC 8259), numbers, booleans and null, pretty-printed
// with two-space indentation. Non-finite doubles are written as null, since
// JSON has no NaN or infinity. Misuse (a value without a key inside an
// object, unbalanced End*) is the caller's bug and is not detected.

#ifndef SHOAL_BENCH_COMMON_JSON_WRITER_H_
#define SHOAL_BENCH_COMMON_JSON_WRITER_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/core.h"

namespace shoal_bench {

class JsonWriter {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }

  // Inside an object: the key of the next value.
  void Key(std::string_view key) {
    BeforeValue();
    AppendEscaped(key);
    out_ += ": ";
    after_key_ = true;
  }

  void String(std::string_view s) { BeforeValue(); AppendEscaped(s); }
  void Int(int64_t v) { BeforeValue(); out_ += fmt::format("{}", v); }
  void Uint(uint64_t v) { BeforeValue(); out_ += fmt::format("{}", v); }
  void Bool(bool v) { BeforeValue(); out_ += v ? "true" : "false"; }
  void Null() { BeforeValue(); out_ += "null"; }
  // Shortest text that reads back as the same double; null when not finite.
  void Double(double v) {
    BeforeValue();
    out_ += std::isfinite(v) ? fmt::format("{}", v) : "null";
  }

  // Key and value in one call.
  void Field(std::string_view key, std::string_view v) { Key(key); String(v); }
  void Field(std::string_view key, const char* v) { Key(key); String(v); }
  void Field(std::string_view key, double v) { Key(key); Double(v); }
  void Field(std::string_view key, bool v) { Key(key); Bool(v); }
  void Field(std::string_view key, int v) { Key(key); Int(v); }
  void Field(std::string_view key, uint32_t v) { Key(key); Uint(v); }
  void Field(std::string_view key, uint64_t v) { Key(key); Uint(v); }
  void Field(std::string_view key, const std::vector<double>& values) {
    Key(key);
    BeginArray();
    for (double v : values) Double(v);
    EndArray();
  }

  // The document so far, with a trailing newline once it is complete.
  std::string str() const { return out_ + (empty_.empty() ? "\n" : ""); }

 private:
  void Open(char bracket) {
    BeforeValue();
    out_ += bracket;
    empty_.push_back(true);
  }
  void Close(char bracket) {
    const bool was_empty = empty_.back();
    empty_.pop_back();
    if (!was_empty) NewLine();
    out_ += bracket;
  }
  // Writes the separator that precedes a value (or key) in its container.
  void BeforeValue() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (empty_.empty()) return;  // the top-level value
    if (!empty_.back()) out_ += ',';
    empty_.back() = false;
    NewLine();
  }
  void NewLine() {
    out_ += '\n';
    out_.append(2 * empty_.size(), ' ');
  }
  void AppendEscaped(std::string_view s) {
    out_ += '"';
    for (const char c : s) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\b': out_ += "\\b"; break;
        case '\f': out_ += "\\f"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            out_ += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
          } else {
            out_ += c;  // UTF-8 passes through unchanged
          }
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> empty_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_JSON_WRITER_H_
