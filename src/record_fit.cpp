// Fitting a record into the line limit: the elisions (record_fit.hpp).
#include "record_fit.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

// A part of at least 1/large_part of its container is fitted on its own; smaller ones go with their container (a
// list of a million floats is elided whole, never float by float).
constexpr std::size_t large_part = 8;

struct part {
  std::size_t size;
  const value* node;
};

// Largest first; among equals, the first in the line first (stable).
void sort_largest_first(std::vector<part>& parts) {
  std::stable_sort(parts.begin(), parts.end(), [](const part& a, const part& b) { return a.size > b.size; });
}

value too_large(std::string kind, std::optional<std::uint64_t> length) {
  opaque_leaf leaf;
  leaf.type_name = std::move(kind);
  leaf.length = length;
  leaf.too_large = true;
  return value::opaque(std::move(leaf));
}

// What `v` is written as when elided whole; nothing for the values that have nothing to give up.
std::optional<value> marker_of(const value& v) {
  using marker = std::optional<value>;
  return visit(v, value_handlers{
                      [](value_node::tensor n) -> marker {
                        if (n.spec.data.empty()) return std::nullopt;
                        tensor_spec t{n.spec.shape, n.spec.dtype};
                        t.data_too_large = true;
                        return value(std::move(t));
                      },
                      [](value_node::string s) -> marker { return too_large("str", s.text.size()); },
                      [](value_node::bytes b) -> marker { return too_large("bytes", b.raw.size()); },
                      [](value_node::tuple t) -> marker { return too_large("tuple", t.items.size()); },
                      [](value_node::list l) -> marker { return too_large("list", l.items.size()); },
                      [](value_node::dict d) -> marker { return too_large("dict", d.entries.size()); },
                      [](value_node::structure s) -> marker { return too_large("struct " + s.name, s.fields.size()); },
                      [](value_node::variant) -> marker { return too_large("variant", std::nullopt); },
                      [](value_node::none) -> marker { return std::nullopt; },
                      [](value_node::integer) -> marker { return std::nullopt; },
                      [](value_node::floating) -> marker { return std::nullopt; },
                      [](value_node::boolean) -> marker { return std::nullopt; },
                      [](value_node::opaque) -> marker { return std::nullopt; }});
}

}  // namespace

record_elisions::record_elisions(std::span<const value* const> values, std::size_t excess, json_counter& sizes)
    : sizes_(sizes) {
  std::vector<part> parts;
  parts.reserve(values.size());
  for (const value* v : values) parts.push_back({sizes_.size_of(*v), v});
  sort_largest_first(parts);
  for (const part& p : parts) {
    if (saved_ >= excess) break;
    saved_ += fit(*p.node, p.size, excess - saved_);
  }
  for (const step& s : steps_) replacements_.emplace(s.node, s.marker);
}

// Saves at least `need` bytes within `v` (of `size` bytes) if it can, giving up as little as it takes; returns what
// it saved.
std::size_t record_elisions::fit(const value& v, std::size_t size, std::size_t need) {
  if (!is_container(v)) return elide(v, size);
  const std::size_t before = steps_.size();
  steps_.push_back({&v, nullptr});
  bool every_part = false;
  const std::size_t within = fit_parts(v, size, need, every_part);
  value marker;
  const std::size_t whole = saving(v, size, marker);
  // Within it when something of it stays; whole when nothing would (its marker says what it was) or when that saves
  // more. (Within saves more only for a struct whose long name makes its marker long.)
  if (within >= need && !(every_part && whole >= need)) return within;
  if (whole < within) return within;
  undo(before);
  if (whole == 0) return 0;
  markers_.push_back(std::move(marker));
  steps_.push_back({&v, &markers_.back()});
  return whole;
}

// The large parts of the container `v`, the largest first: one larger than what is still to save is fitted within,
// any other large one elided whole.
std::size_t record_elisions::fit_parts(const value& v, std::size_t size, std::size_t need, bool& every_part) {
  std::vector<part> parts;
  part largest_small{0, nullptr};
  std::size_t children = 0;
  for_each_child(v, [&](std::size_t, const std::string*, const value& child) {
    ++children;
    const std::size_t s = sizes_.size_of(child);
    if (s >= size / large_part) {
      parts.push_back({s, &child});
    } else if (s > largest_small.size) {
      largest_small = {s, &child};
    }
  });
  if (largest_small.node != nullptr) parts.push_back(largest_small);  // smaller than every large part: the last
  sort_largest_first(parts);
  std::size_t saved = 0;
  std::size_t elided = 0;  // parts elided whole
  for (const part& p : parts) {
    if (saved >= need) break;
    const std::size_t rest = need - saved;
    const std::size_t steps = steps_.size();
    if (p.size > rest) {
      saved += fit(*p.node, p.size, rest);
    } else if (p.size >= size / large_part) {
      saved += elide(*p.node, p.size);
    }
    if (steps_.size() > steps && steps_.back().node == p.node && steps_.back().marker != nullptr) ++elided;
  }
  every_part = children > 0 && elided == children && v.type() != value::kind::variant;  // a variant keeps its index
  return saved;
}

std::size_t record_elisions::elide(const value& v, std::size_t size) {
  value marker;
  const std::size_t saved = saving(v, size, marker);
  if (saved == 0) return 0;
  markers_.push_back(std::move(marker));
  steps_.push_back({&v, &markers_.back()});
  return saved;
}

// The bytes saved by writing `v` (of `size` bytes) as its marker, which is put in `marker`; 0 when it would not be
// shorter.
std::size_t record_elisions::saving(const value& v, std::size_t size, value& marker) {
  std::optional<value> m = marker_of(v);
  if (!m) return 0;
  const std::size_t marker_size = sizes_.size_of(*m);
  if (marker_size >= size) return 0;
  marker = std::move(*m);
  return size - marker_size;
}

void record_elisions::undo(std::size_t steps) {
  while (steps_.size() > steps) {
    if (steps_.back().marker != nullptr) markers_.pop_back();
    steps_.pop_back();
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
