// Fitting a record into the line limit (to_record_line, record_line_writer.cpp): which of its values are written
// elided, and as what. Internal to the library.
#pragma once

#include "hookscope/value.hpp"

#include "json_writer.hpp"

#include <cstddef>
#include <deque>
#include <span>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The elisions that make a record's values `excess` bytes shorter, the largest values first (docs/record_format.md,
/// "Lines"):
///
/// - the record's values (its args, its kwargs' values, its result) are taken from the largest down, until the line
///   fits;
/// - a value larger than what is still to save is fitted within: if it is a container, its large parts (each at
///   least 1/8 of it, or the largest when that one alone is larger than what is still to save) are fitted in turn, the
///   largest first, so that its other parts stay; when its parts cannot save enough, or none of them would stay, it
///   is elided whole;
/// - a value elided whole is written as its marker: `{"opaque":"<kind>","length":N,"too_large":true}`, or for a
///   tensor its shape and dtype with `"data_too_large":true`; a value whose marker would not be shorter (a number, a
///   tensor without data, an opaque leaf) is not elided.
///
/// Cost: sizes come from the counter that measured the line (it remembers every value of 64 KiB or more), so each
/// value is counted at most once more, when the children of a container fitted within are sized; the fitting
/// follows one path down the tree. Linear in the record's size.
class record_elisions {
 public:
  /// Values of at least this many bytes are remembered by the counter that measures the line.
  static constexpr std::size_t remembered_size = std::size_t{64} << 10;

  /// `values`: the record's values in the line's order; `sizes`: the json_counter (with remembered_size) that counted
  /// them.
  record_elisions(std::span<const value* const> values, std::size_t excess, json_counter& sizes);

  /// The bytes the elisions save: at least `excess`, unless the values cannot give up that much.
  std::size_t saved() const noexcept { return saved_; }

  /// For json_replacing_writer: the markers, and the containers on the way to them.
  const value_replacements& replacements() const noexcept { return replacements_; }

 private:
  struct step {
    const value* node;
    const value* marker;  // null: a container with markers below it
  };
  std::size_t fit(const value& v, std::size_t size, std::size_t need);
  std::size_t fit_parts(const value& v, std::size_t size, std::size_t need, bool& every_part);
  std::size_t elide(const value& v, std::size_t size);
  std::size_t saving(const value& v, std::size_t size, value& marker);
  void undo(std::size_t steps);

  json_counter& sizes_;
  std::size_t saved_ = 0;
  std::vector<step> steps_;  // in the order taken, so that a container elided whole drops its own
  std::deque<value> markers_;
  value_replacements replacements_;
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
