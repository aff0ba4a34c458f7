// Record templates (record_templates.hpp): made from a line the full parse read, matched by comparing bytes.
#include "record_templates.hpp"

#include "fnv1a.hpp"

#include "hookscope/value.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

namespace {

// A record's parts that hold tensors, in the order their sizes are given.
enum class section : std::int8_t { none = -1, args = 0, kwargs = 1, result = 2 };
constexpr std::size_t section_count = 3;

// A tensor object met in a line: its sizes' tokens, and whether it holds more than its shape and dtype.
struct scanned_tensor {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sizes;  // token bounds in the line
  bool more_than_shape = false;
};

struct scanned_line {
  std::vector<scanned_tensor> tensors[section_count];  // each section's, in line order
  std::optional<std::pair<std::uint32_t, std::uint32_t>> latency;
};

// A token that reads as a size the way a slot reads it: digits only, no leading zero, at most 18 of them.
// A slot's token: "0", or a digit 1-9 and at most 17 more digits (a plain non-negative count that an int64_t holds).
// Reads it from `at`, which it moves past the digits; false when no such token starts there. What may follow is the
// caller's to check: a template compares the bytes after it, which never start with a digit.
[[gnu::always_inline]] inline bool read_count(const char*& at, const char* end, std::int64_t& n) noexcept {
  if (at == end || *at < '0' || *at > '9') return false;
  n = *at++ - '0';
  if (n == 0) return true;
  const char* const most = at + std::min<std::ptrdiff_t>(17, end - at);
  while (at != most && *at >= '0' && *at <= '9') n = n * 10 + (*at++ - '0');
  return at == end || *at < '0' || *at > '9';  // not a 19th digit
}

bool plain_count(std::string_view token) {
  const char* at = token.data();
  const char* const end = at + token.size();
  std::int64_t n = 0;
  return read_count(at, end, n) && at == end;
}

// Walks a line the full parse accepted (so valid JSON: no error to look for) and finds the tensor objects of the
// record's args, kwargs and result, and its latency. A tensor object is an object with a "shape" key (the record
// format gives that key to tensors only); a key spelled with escapes is not recognised, which makes the counts
// disagree with the record and no template is made.
class line_scanner {
 public:
  explicit line_scanner(std::string_view line) : line_(line) {}

  scanned_line scan() {
    for (std::size_t i = 0; i < line_.size();) i = step(i);
    return std::move(out_);
  }

 private:
  struct frame {
    bool object = false;
    bool expect_key = false;
    section part = section::none;
    std::string_view key{};
    std::optional<std::size_t> tensor;  // into out_.tensors[part], once its "shape" array opened
    bool shape_array = false;           // an array whose numbers are a tensor's sizes
    bool more_than_shape = false;
  };

  std::size_t step(std::size_t i) {
    const char c = line_[i];
    switch (c) {
      case '{': push(true); return i + 1;
      case '[': push(false); return i + 1;
      case '}':
      case ']': pop(); return i + 1;
      case ',':
        if (!stack_.empty() && stack_.back().object) stack_.back().expect_key = true;
        return i + 1;
      case '"': return string(i);
      default: break;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number(i);
    return i + 1;  // blanks, ':', and the letters of true, false and null
  }

  void push(bool object) {
    frame f;
    f.object = object;
    f.expect_key = object;
    if (stack_.size() == 1) {
      f.part = root_part_;
    } else if (!stack_.empty()) {
      frame& parent = stack_.back();
      f.part = parent.part;
      if (!object && parent.object && parent.key == "shape" && f.part != section::none) {
        auto& list = out_.tensors[static_cast<std::size_t>(f.part)];
        parent.tensor = list.size();
        list.emplace_back();
        f.shape_array = true;
        f.tensor = parent.tensor;
      }
    }
    stack_.push_back(f);
  }

  void pop() {
    const frame f = stack_.back();
    stack_.pop_back();
    if (f.object && f.tensor)
      out_.tensors[static_cast<std::size_t>(f.part)][*f.tensor].more_than_shape = f.more_than_shape;
  }

  std::size_t string(std::size_t i) {
    std::size_t j = i + 1;
    while (line_[j] != '"') j += line_[j] == '\\' ? 2 : 1;
    if (!stack_.empty() && stack_.back().object && stack_.back().expect_key) key(line_.substr(i + 1, j - i - 1));
    return j + 1;
  }

  void key(std::string_view k) {
    frame& f = stack_.back();
    f.expect_key = false;
    f.key = k;
    if (stack_.size() == 1) {
      root_part_ = k == "args"     ? section::args
                   : k == "kwargs" ? section::kwargs
                   : k == "result" ? section::result
                                   : section::none;
      return;
    }
    if (k != "shape" && k != "dtype") f.more_than_shape = true;
  }

  std::size_t number(std::size_t i) {
    std::size_t j = i + 1;
    const auto in_number = [](char x) {
      return (x >= '0' && x <= '9') || x == '+' || x == '-' || x == '.' || x == 'e' || x == 'E';
    };
    while (j < line_.size() && in_number(line_[j])) ++j;
    const auto bounds = std::pair{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j)};
    const frame& f = stack_.back();
    if (f.shape_array) {
      out_.tensors[static_cast<std::size_t>(f.part)][*f.tensor].sizes.push_back(bounds);
    } else if (stack_.size() == 1 && f.key == "latency_ns") {
      out_.latency = bounds;
    }
    return j;
  }

  std::string_view line_;
  std::vector<frame> stack_;
  section root_part_ = section::none;
  scanned_line out_;
};

}  // namespace

std::unique_ptr<record_template> record_template::of(std::string_view line, const call_record& record) {
  if (line.size() > UINT32_MAX) return nullptr;
  std::unique_ptr<record_template> t(new record_template());
  t->text_ = std::string(line);
  t->record_ = record;
  // The record's tensors per section, in leaf order. The template owns record_, so writing a size through these is
  // writing its own data (for_each_leaf only lends const access).
  std::vector<std::vector<std::int64_t>*> shapes[section_count];
  const auto collect = [&](section part, const value& v) {
    for_each_leaf(v, [&](const value& leaf) {
      if (leaf.is_tensor())
        shapes[static_cast<std::size_t>(part)].push_back(
            const_cast<std::vector<std::int64_t>*>(&leaf.as_tensor().shape));
    });
  };
  for (const value& a : t->record_.inputs.args) collect(section::args, a);
  for (const auto& kw : t->record_.inputs.kwargs) collect(section::kwargs, kw.second);
  if (t->record_.result) collect(section::result, *t->record_.result);

  const scanned_line scanned = line_scanner(line).scan();
  for (std::size_t part = 0; part < section_count; ++part) {
    if (scanned.tensors[part].size() != shapes[part].size()) return nullptr;
    for (std::size_t k = 0; k < shapes[part].size(); ++k) {
      const scanned_tensor& tensor = scanned.tensors[part][k];
      const std::vector<std::int64_t>& shape = *shapes[part][k];
      if (tensor.sizes.size() != shape.size()) return nullptr;
      for (std::size_t d = 0; d < shape.size(); ++d) {
        const std::string_view token =
            line.substr(tensor.sizes[d].first, tensor.sizes[d].second - tensor.sizes[d].first);
        const bool slot = !tensor.more_than_shape && plain_count(token);
        if (slot && std::to_string(shape[d]) != token) return nullptr;
        if (slot) {
          t->slots_.push_back({tensor.sizes[d].first, tensor.sizes[d].second, role::size,
                               static_cast<std::uint32_t>(t->sizes_.size() + d)});
        }
      }
      t->sizes_.insert(t->sizes_.end(), shape.begin(), shape.end());
      t->shapes_.push_back(shapes[part][k]);
    }
  }
  if (scanned.latency && t->record_.latency_ns) {
    const auto [begin, end] = *scanned.latency;
    if (plain_count(line.substr(begin, end - begin))) t->slots_.push_back({begin, end, role::latency, 0});
  }
  std::sort(t->slots_.begin(), t->slots_.end(), [](const slot& a, const slot& b) { return a.begin < b.begin; });
  return t;
}

namespace {

// memcmp for the short runs between two sizes (a few to a few dozen bytes), without a call: words at a time, the last
// word overlapping the one before it rather than a loop over the bytes left.
template <class Word>
Word load(const char* p) noexcept {
  Word w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

[[gnu::always_inline]] inline bool same_bytes(const char* a, const char* b, std::size_t n) noexcept {
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      if (load<std::uint64_t>(a + i) != load<std::uint64_t>(b + i)) return false;
    }
    return load<std::uint64_t>(a + n - 8) == load<std::uint64_t>(b + n - 8);
  }
  if (n >= 4) {
    return load<std::uint32_t>(a) == load<std::uint32_t>(b) &&
           load<std::uint32_t>(a + n - 4) == load<std::uint32_t>(b + n - 4);
  }
  return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

}  // namespace

bool record_template::match(std::string_view line) {
  const char* at = line.data();
  const char* const end = at + line.size();
  std::size_t from = 0;  // in text_
  for (const slot& s : slots_) {
    const std::size_t same = s.begin - from;
    if (static_cast<std::size_t>(end - at) < same || !same_bytes(at, text_.data() + from, same)) return false;
    at += same;
    from = s.end;
    std::int64_t n = 0;
    if (!read_count(at, end, n)) return false;
    if (s.what == role::size) {
      sizes_[s.index] = n;
    } else {
      record_.latency_ns = n;
    }
  }
  const std::size_t rest = text_.size() - from;
  if (static_cast<std::size_t>(end - at) != rest || !same_bytes(at, text_.data() + from, rest)) return false;
  write_sizes();
  return true;
}

void record_template::write_sizes() {
  const std::int64_t* from = sizes_.data();
  for (std::vector<std::int64_t>* shape : shapes_) {
    for (std::int64_t& d : *shape) d = *from++;  // a few sizes: a loop, not a memmove call
  }
}

//=== record_templates ===//

std::uint64_t record_templates::skeleton_hash(std::string_view line) noexcept {
  std::uint64_t h = fnv1a_start;  // over every byte but digits
  for (const char c : line) {
    if (c < '0' || c > '9') h = fnv1a_step(h, c);
  }
  return h;
}

std::optional<template_read> record_templates::match(std::string_view line) {
  if (held_.empty()) return std::nullopt;
  // The last two structures first: a recording alternates between few (a prefill, then decode steps).
  if (held_[last_]->match(line)) return template_read{held_[last_].get(), last_, false};
  if (before_last_ != last_ && held_[before_last_]->match(line)) return now(before_last_);
  const auto it = by_skeleton_.find(skeleton_hash(line));
  if (it == by_skeleton_.end()) return std::nullopt;
  for (const std::size_t structure : it->second) {
    if (structure != last_ && structure != before_last_ && held_[structure]->match(line)) return now(structure);
  }
  return std::nullopt;
}

template_read record_templates::now(std::size_t structure) {
  before_last_ = last_;
  last_ = structure;
  return template_read{held_[structure].get(), structure, false};
}

std::size_t record_templates::free_structure(std::uint64_t skeleton) {
  std::vector<std::size_t>& same = by_skeleton_[skeleton];
  std::size_t structure = 0;
  if (same.size() == per_skeleton) {  // the oldest of its skeleton goes
    structure = same.front();
    same.erase(same.begin());
  } else if (held_.size() < capacity) {
    structure = held_.size();
    held_.emplace_back();
    skeleton_of_.push_back(skeleton);
  } else {  // the next in turn goes, and leaves its skeleton's list
    structure = next_replaced_;
    next_replaced_ = (next_replaced_ + 1) % capacity;
    if (skeleton_of_[structure] != skeleton) {
      std::vector<std::size_t>& before = by_skeleton_[skeleton_of_[structure]];
      before.erase(std::find(before.begin(), before.end(), structure));
      if (before.empty()) by_skeleton_.erase(skeleton_of_[structure]);
    } else {
      same.erase(std::find(same.begin(), same.end(), structure));
    }
  }
  skeleton_of_[structure] = skeleton;
  by_skeleton_[skeleton].push_back(structure);
  return structure;
}

std::optional<template_read> record_templates::learn(std::string_view line, const call_record& record) {
  if (line.size() > longest_line) return std::nullopt;
  const std::uint64_t h = skeleton_hash(line);
  if (!by_skeleton_.contains(h) && sighted_.insert(h).second) {
    if (sighted_.size() > 4 * 1024) sighted_.clear();  // bounded: a skeleton met long ago waits for another sighting
    return std::nullopt;
  }
  std::unique_ptr<record_template> made = record_template::of(line, record);
  if (!made) return std::nullopt;
  sighted_.erase(h);
  const std::size_t structure = free_structure(h);
  held_[structure] = std::move(made);
  before_last_ = last_;
  last_ = structure;
  return template_read{held_[structure].get(), structure, true};
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
