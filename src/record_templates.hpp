// Record templates: a record line whose bytes equal an earlier line's except for its tensors' sizes and its latency is
// read from that line's template, without parsing: one pass comparing bytes and reading the sizes' digits.
// Internal to the library (records.cpp's record_reader).
//
// Why the match is exact: a template is a line the full parse accepted (valid JSON, no duplicate key, strict UTF-8,
// within the nesting limit, every value well formed). A line matching it holds the same bytes everywhere but in its
// slots, and each slot holds a non-negative integer token of at most 18 digits (no sign, no leading zero, no fraction
// or exponent), where the template held one too: the line is the same JSON document with other sizes, so every check
// the full parse makes passes as it did, and the record read is the template's with those sizes. A token the slot
// does not take (a minus sign, a fraction, a 19th digit) makes the line miss, and the full parse reads it and says
// what is wrong. Slots are the sizes of tensors without contents (a size of a tensor holding "data" decides how many
// bytes the data must have: those stay part of the template) and "latency_ns".
#pragma once

#include "hookscope/records.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// One structure: the line that made it, where its sizes are, and its record, into which each matching line's sizes
/// are written.
class record_template {
 public:
  /// The template of `line`, read as `record` by the full parse; nullopt when its numbers do not map onto the record's
  /// tensors one to one (a key spelled with escapes, say): such a line is always parsed.
  static std::unique_ptr<record_template> of(std::string_view line, const call_record& record);

  /// Reads `line` into record() and sizes() when it matches; false (record() and sizes() unspecified) otherwise.
  bool match(std::string_view line);

  const call_record& record() const noexcept { return record_; }
  /// Every tensor's sizes in leaf order: the arguments' (args, then kwargs), then the result's.
  std::span<const std::int64_t> sizes() const noexcept { return sizes_; }

 private:
  enum class role : std::uint8_t { size, latency };
  struct slot {
    std::uint32_t begin = 0;  // the token's bytes in text_
    std::uint32_t end = 0;
    role what = role::size;
    std::uint32_t index = 0;  // into sizes_ (role::size)
  };

  record_template() = default;
  void write_sizes();

  std::string text_;
  std::vector<slot> slots_;                         // in line order
  std::vector<std::int64_t> sizes_;                 // the last line's
  std::vector<std::vector<std::int64_t>*> shapes_;  // record_'s tensors' shapes, in leaf order
  call_record record_;
};

/// What record_templates::read gives: the record of a line read by a template, and the template's number.
struct template_read {
  const record_template* from = nullptr;
  std::size_t structure = 0;  // the slot it holds in record_templates (reused when a template is replaced)
  bool fresh = false;         // made from this line (a structure not held before in that slot)
};

/// The templates of one reader: at most `capacity` of them, of lines at most `longest_line` bytes long (so that what
/// they hold stays small), found by the bytes of a line with its digits left out (its skeleton). A line makes a
/// template the second time its skeleton is met: a recording whose lines never repeat a structure makes none.
class record_templates {
 public:
  static constexpr std::size_t capacity = 64;
  static constexpr std::size_t longest_line = 8 * 1024;
  static constexpr std::size_t per_skeleton = 16;  // names that differ only in digits: `layers.3.forward`

  /// The template `line` matches, if one does.
  std::optional<template_read> match(std::string_view line);
  /// After the full parse read `line` as `record`: a template of it, when one can be made.
  std::optional<template_read> learn(std::string_view line, const call_record& record);

 private:
  static std::uint64_t skeleton_hash(std::string_view line) noexcept;
  template_read now(std::size_t structure);            // the structure a line matched becomes the last one
  std::size_t free_structure(std::uint64_t skeleton);  // the number a new template of `skeleton` takes

  std::vector<std::unique_ptr<record_template>> held_;                       // by structure number
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_skeleton_;  // oldest first
  std::vector<std::uint64_t> skeleton_of_;                                   // by structure number
  std::unordered_set<std::uint64_t> sighted_;  // skeletons met once, without a template yet (bounded)
  std::size_t last_ = 0;                       // the structure the last line matched: tried first
  std::size_t before_last_ = 0;                // and the one before, second
  std::size_t next_replaced_ = 0;              // once full, templates are replaced in turn
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
