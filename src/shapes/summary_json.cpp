// The summary document (docs/summary_format.md): a recorded state written as JSON and read back, so that states
// recorded in other processes or on other machines merge (merge.cpp). Values, signatures and calls are written and
// read by the record format's own code (json_writer.hpp, record_parts.hpp); what is read is checked as far as the
// inference relies on it (indices in range, leaves and dims that match their counts), so a damaged or hand-edited
// summary gives a format_error naming the JSON path, never a crash.
#include "engine_state.hpp"
#include "summary_checks.hpp"

#include "../json_document.hpp"
#include "../json_writer.hpp"
#include "../record_parts.hpp"

#include <boost/json.hpp>  // compiled into the library by src/boost_json.cpp

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <map>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace json = boost::json;

namespace {

constexpr std::uint64_t summary_version = 1;

//=== writing ===//

class writer {
 public:
  std::string out;

  void key(std::string_view k) {
    if (!out.empty() && out.back() != '{' && out.back() != '[') out.push_back(',');
    append_json_string(out, k);
    out.push_back(':');
  }
  void number(std::string_view k, std::uint64_t n) { key(k), out += std::to_string(n); }
  void integer(std::string_view k, std::int64_t n) { key(k), out += std::to_string(n); }
  void boolean(std::string_view k, bool b) { key(k), out += b ? "true" : "false"; }
  void optional_number(std::string_view k, std::optional<std::size_t> n) {
    key(k);
    out += n ? std::to_string(*n) : "null";
  }
  void comma_if_needed() {
    if (out.back() != '[' && out.back() != '{') out.push_back(',');
  }
  // [a,b,...]. Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict for `"[" + std::to_string(n)`.
  template <class Integers>
  void numbers(const Integers& values) {
    out.push_back('[');
    bool first = true;
    for (const auto v : values) {
      if (!first) out.push_back(',');
      first = false;
      out += std::to_string(v);
    }
    out.push_back(']');
  }
  void numbers(std::initializer_list<std::uint64_t> values) { numbers<std::initializer_list<std::uint64_t>>(values); }
  void shape(const shape_t& shape) { numbers(shape); }
};

std::string hex(std::uint64_t h) {
  char text[17];
  const auto end = std::to_chars(text, text + 16, h, 16).ptr;
  return std::string(16 - static_cast<std::size_t>(end - text), '0') + std::string(text, end);
}

void write_dim(writer& w, const dim_summary& d) {
  w.out.push_back('{');
  w.integer("first", d.first);
  w.integer("min", d.min);
  w.integer("max", d.max);
  w.boolean("varies", d.varies);
  w.key("sequence");
  append_json_string(w.out, hex(d.sequence.value));
  w.key("counts");
  w.out.push_back('[');
  for (const auto& [v, n] : d.counts) {
    w.comma_if_needed();
    w.out.push_back('[');
    w.out += std::to_string(v);
    w.out.push_back(',');
    w.out += std::to_string(n);
    w.out.push_back(']');
  }
  w.out.push_back(']');
  w.boolean("counts_truncated", d.counts_truncated);
  w.out.push_back('}');
}

void write_leaf(writer& w, const leaf_summary& l) {
  w.out.push_back('{');
  w.number("observed", l.observed);
  w.number("rank", l.rank);
  w.key("dtype");
  append_json_string(w.out, to_string(l.dtype));
  w.key("dtypes");
  w.out.push_back('[');
  for (const hookscope::dtype t : l.dtypes) w.comma_if_needed(), append_json_string(w.out, to_string(t));
  w.out.push_back(']');
  w.number("first_tensor_call", l.first_tensor_call);
  w.key("dims");
  w.out.push_back('[');
  for (const dim_summary& d : l.dims) w.comma_if_needed(), write_dim(w, d);
  w.out.push_back(']');
  w.key("shapes_seen");
  w.out.push_back('[');
  for (const shape_t& s : l.shapes_seen) w.comma_if_needed(), w.shape(s);
  w.out.push_back(']');
  w.boolean("shapes_truncated", l.shapes_truncated);
  w.key("rank_conflict");
  if (l.rank_conflict_call) {
    w.out.push_back('[');
    w.out += std::to_string(*l.rank_conflict_call);
    w.out.push_back(',');
    w.shape(l.rank_conflict_shape);
    w.out.push_back(']');
  } else {
    w.out += "null";
  }
  w.key("last_tensor");
  if (l.has_tensor) {
    append_json(w.out, value(l.last_tensor));
  } else {
    w.out += "null";
  }
  w.key("last_other");
  if (l.last_other) {
    append_json(w.out, *l.last_other);
  } else {
    w.out += "null";
  }
  w.out.push_back('}');
}

void write_key(writer& w, const key_summary& k) {
  w.out.push_back('{');
  if (k.position) {
    w.number("position", *k.position);
  } else {
    w.key("name");
    append_json_string(w.out, k.name);
  }
  w.number("present", k.present);
  w.number("constant_present", k.constant_present);
  if (k.if_missing > 0) w.number("if_missing", k.if_missing);  // optional: absent means 0
  w.number("provided", k.provided);
  if (k.left_out_empty > 0) w.number("left_out_empty", k.left_out_empty);  // optional: absent means 0
  if (k.provided_empty) w.boolean("provided_empty", true);                 // optional: absent means false
  w.number("leaf_count", k.leaf_count);
  w.number("first_provided_call", k.first_provided_call);
  w.optional_number("first_kwarg_call", k.first_kwarg_call);
  w.key("count_conflict");
  if (k.count_conflict) {
    w.numbers({k.count_conflict->first, k.count_conflict->second});
  } else {
    w.out += "null";
  }
  w.key("leaves");
  w.out.push_back('[');
  for (const leaf_summary& l : k.leaves) w.comma_if_needed(), write_leaf(w, l);
  w.out.push_back(']');
  w.out.push_back('}');
}

void write_input_key(std::string& out, const input_key& k) {
  if (k.is_position()) {
    out += std::to_string(k.position());
  } else {
    append_json_string(out, k.name());
  }
}

// The stored calls once each (best, first_by_counts and the combinations share them), referred to by position.
class call_table {
 public:
  std::size_t operator()(const call_ptr& c) {
    const auto [it, added] = ids_.emplace(c.get(), calls_.size());
    if (added) calls_.push_back(c.get());
    return it->second;
  }
  const std::vector<const stored_call*>& calls() const noexcept { return calls_; }

 private:
  std::map<const stored_call*, std::size_t> ids_;
  std::vector<const stored_call*> calls_;
};

void write_state(writer& w, const recorded_state& s) {
  if (s.sig_set) {
    w.key("signature");
    append_json_signature(w.out, s.sig);
  }
  w.key("value_if_missing");
  w.out.push_back('[');
  for (const auto& [key, v] : s.if_missing) {
    w.comma_if_needed();
    w.out.push_back('[');
    write_input_key(w.out, key);
    w.out.push_back(',');
    append_json(w.out, v);
    w.out.push_back(']');
  }
  w.out.push_back(']');
  w.number("calls", s.n_calls);
  call_table table;
  std::string refs;  // best, first_by_counts and combinations, written after the table they refer to
  writer r;
  r.out = "{";
  r.key("best");
  r.out += s.best ? std::to_string(table(s.best)) : "null";
  r.key("first_by_counts");
  r.out.push_back('[');
  for (const auto& [counts, c] : s.first_by_counts) {
    r.comma_if_needed();
    r.numbers({counts.first, counts.second, table(c)});
  }
  r.out.push_back(']');
  r.key("combinations");
  r.out.push_back('[');
  for (const combination& c : s.combos) {
    r.comma_if_needed();
    r.numbers({table(c.call), c.count});
  }
  r.out.push_back(']');
  w.key("stored_calls");
  w.out.push_back('[');
  for (const stored_call* c : table.calls()) {
    w.comma_if_needed();
    w.out.push_back('{');
    w.number("index", c->index);
    w.key("args");
    w.out.push_back('[');
    for (const value& a : c->inputs.args) w.comma_if_needed(), append_json(w.out, a);
    w.out.push_back(']');
    w.key("kwargs");
    append_json_fields(w.out, c->inputs.kwargs);
    w.key("constants");
    append_json_fields(w.out, c->constants);
    w.out.push_back('}');
  }
  w.out.push_back(']');
  w.out.push_back(',');
  w.out += r.out.substr(1);  // "best", "first_by_counts", "combinations" as members of this object
  w.boolean("combinations_truncated", s.combos_truncated);
  w.key("constant_sets");
  w.out.push_back('[');
  for (const constant_set& c : s.constant_sets) {
    w.comma_if_needed();
    w.out += "{\"first_call\":";
    w.out += std::to_string(c.first_call);
    w.out += ",\"values\":";
    append_json_fields(w.out, c.values);
    w.out.push_back('}');
  }
  w.out.push_back(']');
  w.key("arguments");
  w.out.push_back('[');
  for (const key_summary& k : s.keys) w.comma_if_needed(), write_key(w, k);
  w.out.push_back(']');
  w.key("dim_pairs");
  write_dim_pairs(w.out, s);
}

//=== reading ===//

[[noreturn]] void fail(const json_path& at, const std::string& what) { fail_at(at, what); }

const json::object& object_at(const json::value& j, const json_path& at) {
  if (!j.is_object()) fail(at, "expected an object, found " + json_kind_of(j));
  return j.get_object();
}

const json::array& array_at(const json::value& j, const json_path& at) {
  if (!j.is_array()) fail(at, "expected an array, found " + json_kind_of(j));
  return j.get_array();
}

std::uint64_t count_at(const json::value& j, const json_path& at) {
  const std::int64_t n = read_json_integer(j, at);
  if (n < 0) fail(at, "expected a count (an integer >= 0), found " + std::to_string(n));
  return static_cast<std::uint64_t>(n);
}

bool bool_at(const json::value& j, const json_path& at) {
  if (!j.is_bool()) fail(at, "expected true or false, found " + json_kind_of(j));
  return j.get_bool();
}

// Members of one object, with the path of each.
class members {
 public:
  members(const json::value& j, json_path at) : o_(object_at(j, at)), at_(at) {}
  const json::value& operator[](std::string_view k) const { return json_required(o_, k, at_); }
  const json::value* find(std::string_view k) const { return o_.if_contains(k); }
  json_path at(std::string_view k) const { return at_ / k; }
  const json_path& path() const noexcept { return at_; }
  std::uint64_t count(std::string_view k) const { return count_at((*this)[k], at(k)); }
  std::size_t size(std::string_view k) const { return static_cast<std::size_t>(count(k)); }
  std::int64_t integer(std::string_view k) const { return read_json_integer((*this)[k], at(k)); }
  bool flag(std::string_view k) const { return bool_at((*this)[k], at(k)); }
  const json::array& array(std::string_view k) const { return array_at((*this)[k], at(k)); }
  std::optional<std::size_t> optional_size(std::string_view k) const {
    const json::value& v = (*this)[k];
    if (v.is_null()) return std::nullopt;
    return static_cast<std::size_t>(count_at(v, at(k)));
  }

 private:
  const json::object& o_;
  json_path at_;  // its parent outlives it: members live in the frames below the root's
};

hookscope::dtype dtype_at(const json::value& j, const json_path& at) {
  const std::string_view name = read_json_string(j, at);
  const auto t = parse_dtype(name);
  if (!t) fail(at, "unknown dtype " + json_quoted(name));
  return *t;
}

shape_t shape_at(const json::value& j, const json_path& at) {
  shape_t out;
  const json::array& a = array_at(j, at);
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(static_cast<std::int64_t>(count_at(a[i], at[i])));
  return out;
}

std::uint64_t hex_at(const json::value& j, const json_path& at) {
  const std::string_view text = read_json_string(j, at);
  std::uint64_t h = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), h, 16);
  if (text.size() != 16 || ec != std::errc() || end != text.data() + text.size()) {
    fail(at, "expected 16 hexadecimal digits, found " + json_quoted(text));
  }
  return h;
}

dim_summary read_dim(const json::value& j, const json_path& at) {
  const members m(j, at);
  dim_summary d;
  d.first = m.integer("first");
  d.min = m.integer("min");
  d.max = m.integer("max");
  d.varies = m.flag("varies");
  d.sequence.value = hex_at(m["sequence"], m.at("sequence"));
  const json::array& counts = m.array("counts");
  if (counts.size() > max_distinct_values)
    fail(m.at("counts"), "more than " + std::to_string(max_distinct_values) + " sizes");
  const json_path counts_at = m.at("counts");
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const json_path pat = counts_at[i];
    const json::array& pair = array_at(counts[i], pat);
    if (pair.size() != 2) fail(pat, "expected [size, calls]");
    const std::int64_t v = read_json_integer(pair[0], pat[0]);
    if (!d.counts.empty() && v <= d.counts.back().first) fail(pat[0], "sizes must be distinct and ascending");
    d.counts.emplace_back(v, count_at(pair[1], pat[1]));
  }
  d.counts_truncated = m.flag("counts_truncated");
  if (d.min > d.max || d.first < d.min || d.first > d.max) fail(at, "first, min and max are inconsistent");
  return d;
}

leaf_summary read_leaf(const json::value& j, const json_path& at) {
  const members m(j, at);
  leaf_summary l;
  l.observed = m.count("observed");
  l.rank = m.size("rank");
  l.dtype = dtype_at(m["dtype"], m.at("dtype"));
  const json::array& dtypes = m.array("dtypes");
  const json_path dtypes_at = m.at("dtypes");
  for (std::size_t i = 0; i < dtypes.size(); ++i) l.dtypes.push_back(dtype_at(dtypes[i], dtypes_at[i]));
  l.first_tensor_call = m.size("first_tensor_call");
  const json::array& dims = m.array("dims");
  if (dims.size() != (l.observed > 0 ? l.rank : 0)) {
    fail(m.at("dims"), std::to_string(dims.size()) + " dims for a leaf of rank " + std::to_string(l.rank) + " seen " +
                           std::to_string(l.observed) + " times");
  }
  const json_path dims_at = m.at("dims");
  for (std::size_t i = 0; i < dims.size(); ++i) l.dims.push_back(read_dim(dims[i], dims_at[i]));
  const json::array& shapes = m.array("shapes_seen");
  if (shapes.size() > max_shapes_seen)
    fail(m.at("shapes_seen"), "more than " + std::to_string(max_shapes_seen) + " shapes");
  const json_path shapes_at = m.at("shapes_seen");
  for (std::size_t i = 0; i < shapes.size(); ++i) l.shapes_seen.push_back(shape_at(shapes[i], shapes_at[i]));
  l.shapes_truncated = m.flag("shapes_truncated");
  index_largest_shape(l);
  if (const json::value& c = m["rank_conflict"]; !c.is_null()) {
    const json::array& pair = array_at(c, m.at("rank_conflict"));
    if (pair.size() != 2) fail(m.at("rank_conflict"), "expected [call, shape] or null");
    l.rank_conflict_call = static_cast<std::size_t>(count_at(pair[0], m.at("rank_conflict")[0]));
    l.rank_conflict_shape = shape_at(pair[1], m.at("rank_conflict")[1]);
  }
  if (const json::value& t = m["last_tensor"]; !t.is_null()) {
    const value v = read_json_value(t, m.at("last_tensor"));
    if (!v.is_tensor()) fail(m.at("last_tensor"), "expected a tensor or null");
    l.has_tensor = true;
    l.last_tensor = v.as_tensor();
  }
  if (l.observed > 0 && !l.has_tensor) fail(m.at("last_tensor"), "a leaf seen as a tensor needs its last tensor");
  if (const json::value& o = m["last_other"]; !o.is_null()) l.last_other = read_json_value(o, m.at("last_other"));
  return l;
}

key_summary read_key(const json::value& j, const json_path& at) {
  const members m(j, at);
  key_summary k;
  const json::value* position = m.find("position");
  if (position != nullptr) {
    k.position = static_cast<std::size_t>(count_at(*position, m.at("position")));
  } else {
    k.name = read_json_string(m["name"], m.at("name"));
    if (k.name.empty()) fail(m.at("name"), "empty argument name");
  }
  k.present = m.count("present");
  k.constant_present = m.count("constant_present");
  if (m.find("if_missing") != nullptr) k.if_missing = m.count("if_missing");
  k.provided = m.count("provided");
  if (m.find("left_out_empty") != nullptr) k.left_out_empty = m.count("left_out_empty");
  if (m.find("provided_empty") != nullptr) k.provided_empty = m.flag("provided_empty");
  k.leaf_count = m.size("leaf_count");
  k.first_provided_call = m.size("first_provided_call");
  k.first_kwarg_call = m.optional_size("first_kwarg_call");
  if (const json::value& c = m["count_conflict"]; !c.is_null()) {
    const json::array& pair = array_at(c, m.at("count_conflict"));
    if (pair.size() != 2) fail(m.at("count_conflict"), "expected [call, leaves] or null");
    k.count_conflict = std::pair{static_cast<std::size_t>(count_at(pair[0], m.at("count_conflict")[0])),
                                 static_cast<std::size_t>(count_at(pair[1], m.at("count_conflict")[1]))};
  }
  const json::array& leaves = m.array("leaves");
  if (leaves.size() != (k.provided > 0 ? k.leaf_count : 0)) {
    fail(m.at("leaves"), std::to_string(leaves.size()) + " leaves for an argument of " + std::to_string(k.leaf_count) +
                             " leaves provided " + std::to_string(k.provided) + " times");
  }
  const json_path leaves_at = m.at("leaves");
  for (std::size_t i = 0; i < leaves.size(); ++i) k.leaves.push_back(read_leaf(leaves[i], leaves_at[i]));
  return k;
}

input_key input_key_at(const json::value& j, const json_path& at) {
  if (j.is_string()) return input_key(std::string(read_json_string(j, at)));
  return input_key(static_cast<std::size_t>(count_at(j, at)));
}

std::vector<call_ptr> read_stored_calls(const members& m) {
  std::vector<call_ptr> calls;
  const json::array& a = m.array("stored_calls");
  const json_path calls_at = m.at("stored_calls");
  for (std::size_t i = 0; i < a.size(); ++i) {
    const json_path at = calls_at[i];
    const members c(a[i], at);
    auto call = std::make_shared<stored_call>();
    call->index = c.size("index");
    read_json_inputs(object_at(a[i], at), call->inputs, at);
    read_json_fields_into(call->constants, c["constants"], c.at("constants"), field_names::parameters);
    call->leaf_count = call_leaf_count(call->inputs);
    calls.push_back(std::move(call));
  }
  return calls;
}

call_ptr call_at(const std::vector<call_ptr>& calls, const json::value& j, const json_path& at) {
  const std::uint64_t i = count_at(j, at);
  if (i >= calls.size())
    fail(at, "call " + std::to_string(i) + " is not among the " + std::to_string(calls.size()) + " stored calls");
  return calls[i];
}

void read_refs(const members& m, recorded_state& s, const std::vector<call_ptr>& calls) {
  if (const json::value& b = m["best"]; !b.is_null()) s.best = call_at(calls, b, m.at("best"));
  const json::array& firsts = m.array("first_by_counts");
  const json_path firsts_at = m.at("first_by_counts");
  for (std::size_t i = 0; i < firsts.size(); ++i) {
    const json_path at = firsts_at[i];
    const json::array& e = array_at(firsts[i], at);
    if (e.size() != 3) fail(at, "expected [positional, keyword, call]");
    const count_pair counts{count_at(e[0], at[0]), count_at(e[1], at[1])};
    call_ptr c = call_at(calls, e[2], at[2]);
    if (counts != count_pair{c->inputs.args.size(), c->inputs.kwargs.size()}) fail(at, "the counts are not the call's");
    s.first_by_counts.emplace_back(counts, std::move(c));
  }
  const json::array& combos = m.array("combinations");
  if (combos.size() > max_combinations) fail(m.at("combinations"), "more than " + std::to_string(max_combinations));
  const json_path combos_at = m.at("combinations");
  for (std::size_t i = 0; i < combos.size(); ++i) {
    const json_path at = combos_at[i];
    const json::array& e = array_at(combos[i], at);
    if (e.size() != 2) fail(at, "expected [call, count]");
    call_ptr c = call_at(calls, e[0], at[0]);
    const std::uint64_t h = call_hash(c->inputs);
    if (find_combo(s, h, c->inputs, c->constants)) fail(at, "the same call as an earlier combination");
    if (!s.combos.empty() && c->index <= s.combos.back().call->index) fail(at, "combinations are in first-call order");
    add_combo(s, {std::move(c), count_at(e[1], at[1]), h});
  }
  s.combos_truncated = m.flag("combinations_truncated");
}

// The inference flattens the best call's arguments over their summaries' leaves: they must be there.
void check_best(const recorded_state& s, const json_path& at) {
  std::vector<slot> slots;
  try {
    slots = best_slots(s);
  } catch (const std::exception& e) {  // inference_error, or bad_optional_access for an argument not summarised
    fail(at, std::string("the best call does not fit the summaries of the arguments: ") + std::string(sentence_of(e)));
  }
  for (const slot& sl : slots) {
    const key_summary& k = s.keys.at(sl.key);
    // With a count conflict the inference stops at it (rule B4) before looking at leaves.
    if (k.provided > 0 && !k.count_conflict && sl.best_value->leaf_count() > k.leaves.size()) {
      fail(at, "the best call gives " + slot_text(sl) + " more leaves than its summary has");
    }
  }
}

void read_state(const members& m, recorded_state& s) {
  if (const json::value* sig = m.find("signature")) {
    try {
      set_parameters(s, read_json_signature(*sig, m.at("signature")));
    } catch (const inference_error& e) {  // the results' signature is fixed: (result)
      fail(m.at("signature"), std::string(e.sentence()));
    }
  }
  const json::array& missing = m.array("value_if_missing");
  const json_path missing_at = m.at("value_if_missing");
  for (std::size_t i = 0; i < missing.size(); ++i) {
    const json_path at = missing_at[i];
    const json::array& e = array_at(missing[i], at);
    if (e.size() != 2) fail(at, "expected [key, value]");
    value_if_missing(s, input_key_at(e[0], at[0]), read_json_value(e[1], at[1]));
  }
  s.n_calls = m.size("calls");
  const std::vector<call_ptr> calls = read_stored_calls(m);
  for (const call_ptr& c : calls) {
    if (c->index >= s.n_calls)
      fail(m.at("stored_calls"), "a call index beyond the " + std::to_string(s.n_calls) + " calls");
  }
  read_refs(m, s, calls);
  const json::array& sets = m.array("constant_sets");
  const json_path sets_at = m.at("constant_sets");
  if (sets.size() > max_constant_sets) fail(sets_at, "more than " + std::to_string(max_constant_sets) + " sets");
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const members c(sets[i], sets_at[i]);
    constant_set set;
    set.first_call = c.size("first_call");
    read_json_fields_into(set.values, c["values"], c.at("values"), field_names::parameters);
    s.constant_sets.push_back(std::move(set));
  }
  const json::array& keys = m.array("arguments");
  const json_path keys_at = m.at("arguments");
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const json_path at = keys_at[i];
    key_summary k = read_key(keys[i], at);
    const bool repeated = k.position ? std::any_of(s.keys.begin(), s.keys.end(),
                                                   [&](const key_summary& e) { return e.position == k.position; })
                                     : !s.name_keys.emplace(k.name, s.keys.size()).second;
    if (repeated) fail(at, "an argument summarised twice");
    s.keys.push_back(std::move(k));
  }
  if (const json::value* pairs = m.find("dim_pairs")) {
    read_dim_pairs(*pairs, m.at("dim_pairs"), s);
  } else {
    s.pairs.truncated = true;  // no dim tracked: labels are not shared (C3)
  }
  if (s.n_calls > 0 && !s.best) fail(m.at("best"), "calls were recorded but no best call is given");
  if (s.best) check_best(s, m.at("best"));
  check_summary_state(s, m.path());
  begin_recording(s);
}

}  // namespace

std::string to_summary_json(const recorded_state& state, const recorded_state& results, std::string_view function) {
  writer w;
  w.out = "{";
  w.key("format");
  append_json_string(w.out, summary_format_name);
  w.number("version", summary_version);
  w.key("function");
  append_json_string(w.out, function);
  write_state(w, state);
  if (results.n_calls > 0) {
    w.key("results");
    writer r;
    r.out = "{";
    write_state(r, results);
    w.out += r.out + "}";
  }
  w.out += "}";
  return w.out;
}

void from_summary_json(std::string_view text, recorded_state& state, recorded_state& results, std::string& function) {
  // A summary holds values as deep as records do (max_value_json_levels) inside its own few levels: whatever
  // to_summary_json writes reads back. The error says what and where, not the parser's source location.
  // A byte-order mark an editor put before the document, as the record reader skips it.
  if (constexpr std::string_view bom = "\xEF\xBB\xBF"; text.substr(0, bom.size()) == bom)
    text.remove_prefix(bom.size());
  json::parse_options options;
  options.max_depth = max_summary_json_levels;
  boost::system::error_code ec;
  // The document lives only in this function: its nodes come from one growing buffer, freed at once (a summary of
  // many calls is ~10^5 small nodes; merging a thousand of them spent a third of its time in malloc and free).
  json::monotonic_resource memory;
  json_document_parser parser(options);
  parser.reset(&memory);
  const std::size_t used = parser.write(text, ec);
  if (ec) {
    // Where the parser stopped, as line:column: a summary spans lines once a pretty printer has been at it.
    const std::string_view read = text.substr(0, used);
    const std::size_t line_start = read.rfind('\n') == std::string_view::npos ? 0 : read.rfind('\n') + 1;
    throw format_error("not JSON: " + ec.message() + " at line " +
                       std::to_string(1 + std::count(read.begin(), read.end(), '\n')) + ", column " +
                       std::to_string(used - line_start + 1));
  }
  if (parser.repeated_key()) {
    parser.reset();  // drops the document while its memory is alive
    const auto repeated = json_key_checker().find(text);
    throw format_error(repeated ? repeated->path + ": duplicate key " + repeated->key : "$: a key given twice");
  }
  json::value doc = parser.release();
  const json_path root;
  const members m(doc, root);
  if (const json::value* f = m.find("format");
      f == nullptr || !f->is_string() || f->get_string() != summary_format_name) {
    fail(root / "format", "not a summary (expected \"format\":\"" + std::string(summary_format_name) + "\")");
  }
  if (const std::uint64_t v = m.count("version"); v != summary_version) {
    fail(root / "version",
         "summary version " + std::to_string(v) + ", this hookscope reads version " + std::to_string(summary_version));
  }
  function = read_json_string(m["function"], m.at("function"));
  read_state(m, state);
  if (const json::value* r = m.find("results")) read_state(members(*r, root / "results"), results);
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
