// Pairs of dims (rule C3, docs/input_observer_rules.md): for every pair of tracked dims, whether some call gave both
// and whether some call gave both with different sizes. Labels are shared only by dims given together and never
// different (absent is not different), so a per-pair state over every call is what C3 needs: hashes of each dim's
// values in call order cannot tell "equal where both are present" from "equal sequences over different calls".
// The state is bounded (max_label_dims dims, two bits per pair), merges by OR, and is written in summaries.
#include "engine_state.hpp"

#include "../json_reader.hpp"
#include "../json_writer.hpp"
#include "../record_parts.hpp"

#include <boost/json.hpp>  // compiled into the library by src/boost_json.cpp

#include <algorithm>
#include <bit>
#include <iterator>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

using bits = std::vector<std::uint64_t>;
constexpr std::size_t words = dim_pairs::words;

dim_id id_of(const key_summary& k, std::size_t leaf, std::size_t dim) {
  return {leaf, k.position, k.position ? std::string() : k.name, dim};
}

std::optional<std::size_t> key_of(const recorded_state& s, const dim_id& id) {
  if (!id.position) return s.find_name(id.name);
  for (std::size_t k = 0; k < s.keys.size(); ++k) {
    if (s.keys[k].position == id.position) return k;
  }
  return std::nullopt;
}

template <class State>  // recorded_state, const or not
auto* find_dim(State& s, const dim_id& id) {
  const auto k = key_of(s, id);
  decltype(&s.keys[0].leaves[0].dims[0]) none = nullptr;
  if (!k || id.leaf >= s.keys[*k].leaves.size()) return none;
  auto& l = s.keys[*k].leaves[id.leaf];
  return id.dim < l.dims.size() ? &l.dims[id.dim] : none;
}

void set_bit(bits& m, std::size_t i, std::size_t j) { m[i * words + j / 64] |= std::uint64_t{1} << (j % 64); }

// Moves slot `from`'s row and column to slot `to` in both matrices; `from`'s are cleared.
void move_slot(dim_pairs& p, std::size_t from, std::size_t to) {
  for (bits* m : {&p.together, &p.differ}) {
    const bool self = dim_pairs::bit(*m, from, from);
    std::copy_n(m->begin() + static_cast<std::ptrdiff_t>(from * words), words,
                m->begin() + static_cast<std::ptrdiff_t>(to * words));
    std::fill_n(m->begin() + static_cast<std::ptrdiff_t>(from * words), words, 0);
    for (std::size_t r = 0; r < p.dims.size(); ++r) {
      std::uint64_t& from_word = (*m)[r * words + from / 64];
      std::uint64_t& to_word = (*m)[r * words + to / 64];
      const std::uint64_t b = (from_word >> (from % 64)) & 1U;
      from_word &= ~(std::uint64_t{1} << (from % 64));
      to_word = (to_word & ~(std::uint64_t{1} << (to % 64))) | (b << (to % 64));
    }
    if (self) set_bit(*m, to, to);
  }
}

// Forgets the dim in slot `gone`: the last slot takes its place.
void drop_slot(recorded_state& s, std::size_t gone) {
  dim_pairs& p = s.pairs;
  const std::size_t last = p.dims.size() - 1;
  if (dim_summary* d = find_dim(s, p.dims[gone])) d->pair_slot = untracked_dim;
  if (gone != last) {
    move_slot(p, last, gone);
    p.dims[gone] = std::move(p.dims[last]);
    if (dim_summary* d = find_dim(s, p.dims[gone])) d->pair_slot = static_cast<std::uint32_t>(gone);
  } else {
    for (bits* m : {&p.together, &p.differ}) {
      for (std::size_t r = 0; r < p.dims.size(); ++r) (*m)[r * words + last / 64] &= ~(std::uint64_t{1} << (last % 64));
    }
  }
  p.dims.pop_back();
  p.together.resize(p.dims.size() * words);
  p.differ.resize(p.dims.size() * words);
}

// A dim at its first call: tracked if it is among the max_label_dims smallest seen (the largest tracked one goes).
void track(recorded_state& s, dim_summary& d, dim_id id) {
  dim_pairs& p = s.pairs;
  if (p.dims.size() == max_label_dims) {
    p.truncated = true;
    if (!p.largest)
      p.largest = static_cast<std::size_t>(std::max_element(p.dims.begin(), p.dims.end()) - p.dims.begin());
    if (!(id < p.dims[*p.largest])) return;
    drop_slot(s, *p.largest);
    p.largest.reset();
  }
  d.pair_slot = static_cast<std::uint32_t>(p.dims.size());
  p.dims.push_back(std::move(id));
  p.together.resize(p.dims.size() * words);
  p.differ.resize(p.dims.size() * words);
}

// The pairs of `from` into `out` (whose dims are sorted), OR-ed. When `from`'s slots are `out`'s (shards with the same
// dims, read in dim_id order), rows are OR-ed a word at a time; else only the set bits of `from` are visited.
void fold(dim_pairs& out, const dim_pairs& from) {
  const std::size_t none = out.dims.size();
  std::vector<std::size_t> to(from.dims.size(), none);
  bool same_slots = true;
  for (std::size_t i = 0; i < from.dims.size(); ++i) {
    const auto it = std::lower_bound(out.dims.begin(), out.dims.end(), from.dims[i]);
    if (it != out.dims.end() && *it == from.dims[i]) to[i] = static_cast<std::size_t>(it - out.dims.begin());
    same_slots = same_slots && to[i] == i;
  }
  for (const auto& [into_m, from_m] :
       {std::pair{&out.together, &from.together}, std::pair{&out.differ, &from.differ}}) {
    for (std::size_t i = 0; i < from.dims.size(); ++i) {
      if (to[i] == none) continue;
      const std::size_t row = i * words;
      if (same_slots) {  // bits beyond from.dims.size() are never set
        for (std::size_t w = 0; w < words; ++w) (*into_m)[row + w] |= (*from_m)[row + w];
        continue;
      }
      for (std::size_t w = 0; w < words; ++w) {
        for (std::uint64_t b = (*from_m)[row + w]; b != 0; b &= b - 1) {
          const std::size_t j = w * 64 + static_cast<std::size_t>(std::countr_zero(b));
          if (j < to.size() && to[j] != none) set_bit(*into_m, to[i], to[j]);
        }
      }
    }
  }
}

dim_pairs sorted_with(std::vector<dim_id> dims, bool truncated) {
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  dim_pairs out;
  out.truncated = truncated || dims.size() > max_label_dims;
  if (dims.size() > max_label_dims) dims.resize(max_label_dims);
  out.dims = std::move(dims);
  out.together.assign(out.dims.size() * words, 0);
  out.differ.assign(out.dims.size() * words, 0);
  return out;
}

}  // namespace

void observe_pairs(recorded_state& s, const call_inputs& in) {
  const std::size_t stamp = s.n_calls + 1;
  std::vector<std::size_t> keys;
  for (std::size_t i = 0; i < in.args.size(); ++i) keys.push_back(s.position_keys[i]);
  keys.insert(keys.end(), s.kwarg_keys.begin(), s.kwarg_keys.end());
  // First the dims seen for the first time (tracking one may move another's slot), then the slots.
  for (const std::size_t k : keys) {
    for (std::size_t j = 0; j < s.keys[k].leaves.size(); ++j) {
      leaf_summary& l = s.keys[k].leaves[j];
      if (l.stamp != stamp || l.observed != 1) continue;
      for (std::size_t d = 0; d < l.rank; ++d) track(s, l.dims[d], id_of(s.keys[k], j, d));
    }
  }
  std::vector<std::pair<std::int64_t, std::size_t>> present;  // (size, slot)
  for (const std::size_t k : keys) {
    for (const leaf_summary& l : s.keys[k].leaves) {
      if (l.stamp != stamp) continue;
      for (std::size_t d = 0; d < l.rank; ++d) {
        if (l.dims[d].pair_slot != untracked_dim) present.emplace_back(l.last_tensor.shape[d], l.dims[d].pair_slot);
      }
    }
  }
  std::sort(present.begin(), present.end());
  bits all(words, 0), same(words, 0);
  for (const auto& [v, slot] : present) all[slot / 64] |= std::uint64_t{1} << (slot % 64);
  dim_pairs& p = s.pairs;
  for (std::size_t g = 0; g < present.size();) {
    std::size_t e = g;
    std::fill(same.begin(), same.end(), 0);
    for (; e < present.size() && present[e].first == present[g].first; ++e) {
      same[present[e].second / 64] |= std::uint64_t{1} << (present[e].second % 64);
    }
    for (std::size_t i = g; i < e; ++i) {
      const std::size_t row = present[i].second * words;
      for (std::size_t w = 0; w < words; ++w) {
        p.together[row + w] |= all[w];
        p.differ[row + w] |= all[w] & ~same[w];
      }
    }
    g = e;
  }
}

void index_pairs(recorded_state& s) {
  for (key_summary& k : s.keys) {
    for (leaf_summary& l : k.leaves) {
      for (dim_summary& d : l.dims) d.pair_slot = untracked_dim;
    }
  }
  // A dim the summaries no longer have (a merge kept another rank for its leaf, whose inference fails) goes.
  // (Checked before copying any id: after a merge every dim is usually alive.)
  const auto is_alive = [&](const dim_id& id) { return find_dim(s, id) != nullptr; };
  if (!std::all_of(s.pairs.dims.begin(), s.pairs.dims.end(), is_alive)) {
    std::vector<dim_id> alive;
    std::copy_if(s.pairs.dims.begin(), s.pairs.dims.end(), std::back_inserter(alive), is_alive);
    dim_pairs old = std::move(s.pairs);
    s.pairs = sorted_with(std::move(alive), old.truncated);
    fold(s.pairs, old);
  }
  for (std::size_t i = 0; i < s.pairs.dims.size(); ++i) {
    find_dim(s, s.pairs.dims[i])->pair_slot = static_cast<std::uint32_t>(i);
  }
}

void merge_pairs(recorded_state& into, const recorded_state& later) {
  // A dim the other state saw without tracking it has pairs nobody knows: it goes. (With the smallest ids tracked
  // it would not be among the union's smallest anyway; a summary without dim_pairs tracks nothing.)
  const auto known_in = [](const recorded_state& other, const dim_id& id) {
    const dim_summary* d = find_dim(other, id);
    return d == nullptr || d->pair_slot != untracked_dim;
  };
  // Shards of one recording mostly track the same dims, each read in dim_id order: then the union is those dims in
  // the same slots, and merging is OR-ing the matrices word by word (what the general path below gives).
  const auto strictly_sorted = [](const std::vector<dim_id>& d) {
    return std::adjacent_find(d.begin(), d.end(), [](const dim_id& a, const dim_id& b) { return !(a < b); }) == d.end();
  };
  if (into.pairs.dims == later.pairs.dims && strictly_sorted(into.pairs.dims) &&
      std::all_of(into.pairs.dims.begin(), into.pairs.dims.end(),
                  [&](const dim_id& id) { return known_in(later, id) && known_in(into, id); })) {
    dim_pairs& p = into.pairs;
    for (std::size_t w = 0; w < p.together.size(); ++w) p.together[w] |= later.pairs.together[w];
    for (std::size_t w = 0; w < p.differ.size(); ++w) p.differ[w] |= later.pairs.differ[w];
    p.truncated = p.truncated || later.pairs.truncated;
    p.largest.reset();
    return;
  }
  std::vector<dim_id> dims;
  for (const dim_id& id : into.pairs.dims) {
    if (known_in(later, id)) dims.push_back(id);
  }
  bool dropped = dims.size() != into.pairs.dims.size();
  for (const dim_id& id : later.pairs.dims) {
    if (known_in(into, id)) {
      dims.push_back(id);
    } else {
      dropped = true;
    }
  }
  dim_pairs out = sorted_with(std::move(dims), into.pairs.truncated || later.pairs.truncated || dropped);
  fold(out, into.pairs);
  fold(out, later.pairs);
  into.pairs = std::move(out);
}

void forget_removed_pairs(recorded_state& s) {
  // The arguments kept still carry their slots; their ids follow their (possibly shifted) positions.
  std::vector<std::optional<dim_id>> now(s.pairs.dims.size());
  for (const key_summary& k : s.keys) {
    for (std::size_t j = 0; j < k.leaves.size(); ++j) {
      for (std::size_t d = 0; d < k.leaves[j].dims.size(); ++d) {
        const std::uint32_t slot = k.leaves[j].dims[d].pair_slot;
        if (slot != untracked_dim && slot < now.size()) now[slot] = id_of(k, j, d);
      }
    }
  }
  dim_pairs old = std::move(s.pairs);
  std::vector<dim_id> kept;
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (now[i]) kept.push_back(*now[i]);
  }
  dim_pairs out = sorted_with(kept, old.truncated);
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (now[i]) old.dims[i] = *now[i];
  }
  fold(out, old);  // the removed dims' old ids are not among out's
  s.pairs = std::move(out);
  index_pairs(s);
}

//=== in summary documents ===//

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// Bit order[j] of row order[i] as hex digit j / 4, bit j % 4: one string per row.
std::string row_text(const bits& m, const std::vector<std::size_t>& order, std::size_t i) {
  std::vector<unsigned> nibbles((order.size() + 3) / 4, 0);
  for (std::size_t j = 0; j < order.size(); ++j) {
    if (dim_pairs::bit(m, order[i], order[j])) nibbles[j / 4] |= 1U << (j % 4);
  }
  std::string out;
  for (const unsigned v : nibbles) out.push_back(hex_digits[v]);
  return out;
}

void write_rows(std::string& out, const bits& m, const std::vector<std::size_t>& order) {
  out.push_back('[');
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i) out.push_back(',');
    append_json_string(out, row_text(m, order, i));
  }
  out.push_back(']');
}

void read_rows(const boost::json::value& j, const json_path& at, bits& m, std::size_t n) {
  if (!j.is_array()) fail_at(at, "expected an array, found " + json_kind_of(j));
  const boost::json::array& rows = j.get_array();
  if (rows.size() != n) fail_at(at, std::to_string(rows.size()) + " rows for " + std::to_string(n) + " dims");
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view text = read_json_string(rows[i], at[i]);
    if (text.size() != (n + 3) / 4) {
      fail_at(at[i], "expected " + std::to_string((n + 3) / 4) + " hexadecimal digits, found " + json_quoted(text));
    }
    for (std::size_t c = 0; c < text.size(); ++c) {
      const char* digit = std::find(hex_digits, hex_digits + 16, text[c]);
      if (digit == hex_digits + 16) fail_at(at[i], "not a hexadecimal digit in " + json_quoted(text));
      const unsigned v = static_cast<unsigned>(digit - hex_digits);
      for (unsigned b = 0; b < 4; ++b) {
        if (!((v >> b) & 1U)) continue;
        if (c * 4 + b >= n) fail_at(at[i], "a bit beyond the " + std::to_string(n) + " dims in " + json_quoted(text));
        set_bit(m, i, c * 4 + b);
      }
    }
  }
}

}  // namespace

// In dim_id order, so that a document does not depend on the order in which the dims were first seen.
void write_dim_pairs(std::string& out, const recorded_state& s) {
  const dim_pairs& p = s.pairs;
  std::vector<std::size_t> order(p.dims.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p.dims[a] < p.dims[b]; });
  out += "{\"dims\":[";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const dim_id& id = p.dims[order[i]];
    const auto k = key_of(s, id);  // a tracked dim's argument is summarised
    if (i) out.push_back(',');
    out += '[' + std::to_string(k.value_or(s.keys.size())) + ',' + std::to_string(id.leaf) + ',' +
           std::to_string(id.dim) + ']';
  }
  out += "],\"together\":";
  write_rows(out, p.together, order);
  out += ",\"differ\":";
  write_rows(out, p.differ, order);
  out += ",\"truncated\":";
  out += p.truncated ? "true" : "false";
  out.push_back('}');
}

void read_dim_pairs(const boost::json::value& j, const json_path& at, recorded_state& s) {
  if (!j.is_object()) fail_at(at, "expected an object, found " + json_kind_of(j));
  const boost::json::object& o = j.get_object();
  const json_path dims_at = at / "dims";
  const boost::json::value& dims_value = json_required(o, "dims", at);
  if (!dims_value.is_array()) fail_at(dims_at, "expected an array, found " + json_kind_of(dims_value));
  const boost::json::array& dims = dims_value.get_array();
  if (dims.size() > max_label_dims) fail_at(dims_at, "more than " + std::to_string(max_label_dims) + " dims");
  dim_pairs p;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const json_path e = dims_at[i];
    if (!dims[i].is_array() || dims[i].get_array().size() != 3) fail_at(e, "expected [argument, leaf, dim]");
    const boost::json::array& a = dims[i].get_array();
    std::uint64_t n[3];
    for (std::size_t c = 0; c < 3; ++c) {
      const std::int64_t v = read_json_integer(a[c], e[c]);
      if (v < 0) fail_at(e[c], "expected an index (an integer >= 0), found " + std::to_string(v));
      n[c] = static_cast<std::uint64_t>(v);
    }
    if (n[0] >= s.keys.size()) fail_at(e[0], "no argument " + std::to_string(n[0]) + " in \"arguments\"");
    const key_summary& k = s.keys[n[0]];
    if (n[1] >= k.leaves.size() || n[2] >= k.leaves[n[1]].dims.size() || k.leaves[n[1]].observed == 0) {
      fail_at(e, "no dim " + std::to_string(n[2]) + " of leaf " + std::to_string(n[1]) + " in argument " +
                     std::to_string(n[0]) + "'s summary");
    }
    p.dims.push_back(id_of(k, n[1], n[2]));
  }
  std::vector<dim_id> sorted = p.dims;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) fail_at(dims_at, "a dim listed twice");
  p.together.assign(p.dims.size() * words, 0);
  p.differ.assign(p.dims.size() * words, 0);
  read_rows(json_required(o, "together", at), at / "together", p.together, p.dims.size());
  read_rows(json_required(o, "differ", at), at / "differ", p.differ, p.dims.size());
  for (std::size_t i = 0; i < p.dims.size(); ++i) {
    if (!dim_pairs::bit(p.together, i, i) || dim_pairs::bit(p.differ, i, i)) {
      fail_at(at, "dim " + std::to_string(i) + " is never given, or differs from itself");
    }
    for (std::size_t c = 0; c < p.dims.size(); ++c) {
      if (dim_pairs::bit(p.together, i, c) != dim_pairs::bit(p.together, c, i) ||
          dim_pairs::bit(p.differ, i, c) != dim_pairs::bit(p.differ, c, i)) {
        fail_at(at, "the pairs of dims " + std::to_string(i) + " and " + std::to_string(c) + " are not symmetric");
      }
      if (dim_pairs::bit(p.differ, i, c) && !dim_pairs::bit(p.together, i, c)) {
        fail_at(at, "dims " + std::to_string(i) + " and " + std::to_string(c) + " differ but are never together");
      }
    }
  }
  const boost::json::value& truncated = json_required(o, "truncated", at);
  if (!truncated.is_bool()) fail_at(at / "truncated", "expected true or false, found " + json_kind_of(truncated));
  p.truncated = truncated.get_bool();
  s.pairs = std::move(p);
  index_pairs(s);
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
