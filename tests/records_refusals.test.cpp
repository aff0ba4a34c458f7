// What the record writer refuses (docs/record_format.md): to_record_line, and so HOOKSCOPE_RECORD and call_recorder,
// refuse exactly the values the record reader would refuse, naming the first refused part by its path, and every
// value written reads back equal. Checked against an oracle written from the format's description. Part of the
// `records` test.
#include "hookscope/records.hpp"

#include "hookscope/value_errors.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

using hookscope::call_record;
using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;

// An oracle of the writer's refusals written from docs/record_format.md alone (not from src/records.cpp): what the
// reader refuses in a value, in the order of the line, with the path and reason to_record_line names; and random value
// trees of every kind with refused parts anywhere, repeated keys among few and many, nestings at the limit.
namespace refusal_oracle {

using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
inline bool strict_utf8(const std::string& s) {
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  while (i < s.size()) {
    const unsigned char c = byte(i);
    std::size_t n = 0;
    std::uint32_t cp = 0, min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      if ((byte(i + k) & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (byte(i + k) & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

// The JSON nesting of a value's encoding, from docs/record_format.md's table: objects and arrays.
inline std::size_t encoded_levels(const value& v) {
  const auto text = [](const std::string& s) -> std::size_t { return strict_utf8(s) ? 0 : 1; };  // {"base64":..}
  switch (v.type()) {
    case value::kind::none: return 0;  // null
    case value::kind::integer:         // {"int":N}
    case value::kind::floating:
    case value::kind::boolean:
    case value::kind::bytes: return 1;
    case value::kind::string: return 1 + text(v.as_string());    // {"str":"..."} or {"str":{"base64":..}}
    case value::kind::opaque: return 1 + text(v.opaque_type());  // {"opaque":...}
    case value::kind::tensor: return 2;                          // {"shape":[...]}
    case value::kind::variant: return 1 + encoded_levels(v.alternative());
    case value::kind::tuple:
    case value::kind::list: {  // {"list":[V,...]}
      std::size_t deepest = 0;
      for (const value& item : v.items()) deepest = std::max(deepest, encoded_levels(item));
      return 2 + deepest;
    }
    case value::kind::dict:
    case value::kind::structure: {  // {"dict":[["k",V],...]}, {"struct":name,"fields":[...]}
      std::size_t levels = v.type() == value::kind::structure ? 1 + text(v.struct_name()) : 1;
      levels = std::max<std::size_t>(levels, 2);
      for (const auto& [name, field] : v.fields()) {
        levels = std::max(levels, 3 + std::max(text(name), encoded_levels(field)));
      }
      return levels;
    }
  }
  return 0;
}

// The actual nesting of a JSON text (outside strings).
inline std::size_t text_levels(const std::string& json) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[')
      deepest = std::max(deepest, ++depth);
    else if (c == '}' || c == ']')
      --depth;
  }
  return deepest;
}

inline std::size_t dtype_bytes(dtype d) {
  switch (d) {
    case dtype::float64:
    case dtype::int64: return 8;
    case dtype::float32:
    case dtype::int32: return 4;
    case dtype::float16:
    case dtype::bfloat16:
    case dtype::int16: return 2;
    default: return 1;
  }
}

// Why the reader refuses the first refused part of `v` (in the order of the line), its path appended to `path`.
inline std::optional<std::string> first_refusal(const value& v, std::string& path) {
  switch (v.type()) {
    case value::kind::tensor: {
      const tensor_spec& t = v.as_tensor();
      for (std::size_t i = 0; i < t.shape.size(); ++i) {
        if (t.shape[i] < 0) {
          path += ".shape[" + std::to_string(i) + "]";
          return "negative dimension " + std::to_string(t.shape[i]) +
                 " (a tensor's dimensions are sizes: the record format and its reader refuse it)";
        }
      }
      if (t.data.empty()) return std::nullopt;
      if (t.data_too_large) return "contents given and marked too large at once";
      std::uint64_t bytes = dtype_bytes(t.dtype);
      bool zero = false, overflow = false;
      for (const std::int64_t d : t.shape) zero = zero || d == 0;
      for (const std::int64_t d : t.shape) {
        const auto size = static_cast<std::uint64_t>(d);
        if (size != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / size) {
          overflow = true;
          break;
        }
        bytes *= size;
      }
      if (zero) bytes = 0;
      if (!zero && overflow) return "too many elements";
      if (t.data.size() == bytes) return std::nullopt;
      path += ".data";
      if (bytes == 0) return std::to_string(t.data.size()) + " bytes of contents for a tensor of no element";
      return std::to_string(t.data.size()) + " bytes of contents for a tensor that holds " + std::to_string(bytes);
    }
    case value::kind::opaque: {
      const hookscope::opaque_leaf& o = v.as_opaque();
      if (o.unreadable && !o.address) return "an unreadable leaf without its address";
      if (o.length && !o.too_large) return "a length without too_large";
      if (o.length && *o.length >= (std::uint64_t{1} << 63)) return "a length past 2^63 - 1";
      return std::nullopt;
    }
    case value::kind::variant: {
      const std::size_t at = path.size();
      path += ".value";
      if (auto why = first_refusal(v.alternative(), path)) return why;
      path.resize(at);
      return std::nullopt;
    }
    case value::kind::tuple:
    case value::kind::list:
      for (std::size_t i = 0; i < v.items().size(); ++i) {
        const std::size_t at = path.size();
        path += "[" + std::to_string(i) + "]";
        if (auto why = first_refusal(v.items()[i], path)) return why;
        path.resize(at);
      }
      return std::nullopt;
    case value::kind::dict:
    case value::kind::structure:
      for (std::size_t i = 0; i < v.fields().size(); ++i) {
        const std::string& name = v.fields()[i].first;
        for (std::size_t j = 0; j < i; ++j) {
          if (v.fields()[j].first == name) return "the key \"" + name + "\" given twice";
        }
        const std::size_t at = path.size();
        path += "." + name;
        if (auto why = first_refusal(v.fields()[i].second, path)) return why;
        path.resize(at);
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

constexpr std::size_t max_levels = 125;

inline hookscope::opaque_leaf length_without_too_large() {
  hookscope::opaque_leaf o;
  o.type_name = "p";
  o.length = 1;
  return o;
}

inline hookscope::opaque_leaf unreadable_without_address() {
  hookscope::opaque_leaf o;
  o.type_name = "p";
  o.unreadable = true;
  return o;
}

// What to_record_line must do with a record of these values: "" to accept, else "<type>|<what()>".
inline std::string expected_outcome(const hookscope::call_record& r) {
  // A message is what() of an exception: a C string, which ends at a NUL a key may hold.
  const auto message = [](const std::string& s) { return s.substr(0, s.find('\0')); };
  const auto one = [&](const value& v, const std::string& where) -> std::string {
    if (encoded_levels(v) > max_levels) {
      return "format_error|$: the value nests deeper than 125 JSON levels, more than value_from_json and the record "
             "reader accept";
    }
    std::string path = where;
    if (auto why = first_refusal(v, path)) return message("value_error|" + path + ": " + *why);
    return "";
  };
  for (const value& a : r.inputs.args) {
    if (auto o = one(a, "args"); !o.empty()) return o;
  }
  for (const auto& [name, v] : r.inputs.kwargs) {
    if (auto o = one(v, name); !o.empty()) return o;
  }
  if (r.result) return one(*r.result, "result");
  return "";
}

inline std::string observed_outcome(const hookscope::call_record& r, std::string* line = nullptr) {
  try {
    std::string written = hookscope::to_record_line(r);
    if (line) *line = std::move(written);
    return "";
  } catch (const hookscope::value_error& e) {
    return std::string(typeid(e) == typeid(hookscope::value_error) ? "value_error|" : "value_error subclass|") +
           std::string(e.sentence());
  } catch (const hookscope::format_error& e) {
    return std::string(typeid(e) == typeid(hookscope::format_error) ? "format_error|" : "format_error subclass|") +
           std::string(e.sentence());
  } catch (const std::exception& e) {
    return std::string("other|") + e.what();
  }
}

// Random values of every kind; `hostile` puts refused parts (anywhere, deep) and repeated keys among them.
class generator {
 public:
  explicit generator(std::uint64_t seed) : rng_(seed) {}

  std::uint64_t pick(std::uint64_t n) { return rng_() % n; }

  std::string text() {
    static const char* const pool[] = {"a",
                                       "b",
                                       "k",
                                       "",
                                       "\xc3\xa9",
                                       "\xff",
                                       "\xed\xa0\x80",
                                       "\xc0\xaf",
                                       "\xf4\x90\x80\x80",
                                       "\xe2\x82\xac",
                                       "a\"b",
                                       "\\",
                                       "x\n",
                                       "\xf0\x9f\x98\x80"};
    std::string s = pool[pick(std::size(pool))];
    if (pick(3) == 0) s += std::to_string(pick(4));
    return s;
  }

  tensor_spec tensor(bool hostile) {
    tensor_spec t{{}, static_cast<dtype>(pick(10))};
    for (std::uint64_t d = pick(4); d > 0; --d) {
      const std::uint64_t k = pick(10);
      t.shape.push_back(k == 0   ? 0
                        : k == 1 ? static_cast<std::int64_t>(rng_() >> 2)
                                 : static_cast<std::int64_t>(pick(4)));
    }
    if (hostile && pick(4) == 0) {  // a refused tensor, or one at the edge of a refusal
      switch (pick(6)) {
        case 0:
          if (!t.shape.empty())
            t.shape[pick(t.shape.size())] = -static_cast<std::int64_t>(1 + pick(3));
          else
            t.shape.push_back(std::numeric_limits<std::int64_t>::min());
          break;
        case 1: t.data.resize(1 + pick(20)); break;  // right size by chance
        case 2: {
          std::size_t n = dtype_bytes(t.dtype);
          bool huge = false;
          for (auto d : t.shape) {
            if (d > 64) huge = true;
            n *= static_cast<std::size_t>(d < 0 ? 0 : d);
          }
          if (!huge && n > 0 && n < 4096)
            t.data.resize(n);  // exactly right
          else
            t.data.resize(4);
          if (pick(2) == 0) t.data_too_large = true;
          break;
        }
        case 3: t.data_too_large = true; break;  // accepted: no contents
        case 4:
          t.shape = {std::int64_t{1} << 40, std::int64_t{1} << 40, static_cast<std::int64_t>(pick(2))};
          t.data.resize(2);
          break;
        default:
          t.shape.push_back(-1);
          t.data.resize(3);
          t.data_too_large = pick(2) == 0;
          break;
      }
    }
    return t;
  }

  hookscope::opaque_leaf leaf(bool hostile) {
    hookscope::opaque_leaf o;
    o.type_name = text();
    o.depth_limited = pick(2) == 0;
    if (pick(2) == 0) o.address = pick(2) == 0 ? 0 : rng_();
    o.unreadable = o.address && pick(2) == 0;
    o.too_large = pick(2) == 0;
    if (o.too_large && pick(2) == 0) o.length = pick(2) ? (std::uint64_t{1} << 63) - 1 : rng_() >> 1;
    if (hostile && pick(3) == 0) {
      switch (pick(3)) {
        case 0: o.unreadable = true, o.address.reset(); break;
        case 1: o.length = pick(100), o.too_large = false; break;
        default: o.length = (std::uint64_t{1} << 63) + pick(3), o.too_large = pick(4) != 0; break;
      }
    }
    return o;
  }

  value leaf_value(bool hostile) {
    switch (pick(10)) {
      case 0: return {};
      case 1: return value(static_cast<std::int64_t>(rng_()));
      case 2: return value(pick(2) ? -0.0 : 1.5e300);
      case 3: return value(pick(2) == 0);
      case 4: return value(text());
      case 5: {
        const std::string raw = text();
        return value::bytes(std::as_bytes(std::span<const char>(raw.data(), raw.size())));
      }
      case 6: return value::opaque(leaf(hostile));
      default: return value(tensor(hostile));
    }
  }

  hookscope::value_fields fields(int depth, bool hostile) {
    hookscope::value_fields out;
    const std::uint64_t n = pick(8) == 0 ? 14 + pick(6) : pick(4);  // around the 16 keys compared pairwise
    for (std::uint64_t i = 0; i < n; ++i) {
      out.emplace_back("f" + std::to_string(i) + (pick(4) == 0 ? text() : std::string()), any(depth - 1, hostile));
    }
    if (hostile && n >= 2 && pick(4) == 0) {  // a repeated key: any two positions
      const std::size_t a = pick(n), b = pick(n);
      if (a != b) out[std::max(a, b)].first = out[std::min(a, b)].first;
    }
    return out;
  }

  value any(int depth, bool hostile) {
    if (depth <= 0 || pick(3) == 0) return leaf_value(hostile);
    switch (pick(5)) {
      case 0:
      case 1: {
        std::vector<value> items;
        for (std::uint64_t i = pick(4); i > 0; --i) items.push_back(any(depth - 1, hostile));
        return pick(2) ? value::list(std::move(items)) : value::tuple(std::move(items));
      }
      case 2: return value::dict(fields(depth, hostile));
      case 3: return value::structure(text(), fields(depth, hostile));
      default: return value::variant(pick(5), any(depth - 1, hostile));
    }
  }

  // `inner` wrapped in containers until its encoding takes `levels` JSON levels (or one past, where a step of two or
  // three cannot land exactly): the nesting limit and one past it, through every container kind.
  value wrapped_to(value inner, std::size_t levels, bool hostile) {
    while (encoded_levels(inner) < levels) {
      const std::size_t have = encoded_levels(inner);
      const std::size_t room = levels - have;
      const std::uint64_t k = pick(room >= 3 ? 6 : room == 2 ? 4 : 1);
      if (k == 0) {
        inner = value::variant(pick(3), std::move(inner));
      } else if (k <= 1 || k == 3) {
        std::vector<value> items{std::move(inner)};
        if (pick(2)) items.insert(items.begin() + static_cast<std::ptrdiff_t>(pick(2)), leaf_value(hostile));
        inner = pick(2) ? value::list(std::move(items)) : value::tuple(std::move(items));
      } else {
        hookscope::value_fields f;
        f.emplace_back(pick(2) ? "x" : text(), std::move(inner));
        if (pick(2)) f.emplace_back("y" + std::to_string(pick(3)), leaf_value(hostile));
        if (hostile && pick(8) == 0) f.emplace_back(f.front().first, value());
        inner = pick(2) ? value::dict(std::move(f)) : value::structure(text(), std::move(f));
      }
    }
    return inner;
  }

  hookscope::call_record record(bool hostile) {
    hookscope::call_record r;
    r.function = "f";
    for (std::uint64_t i = pick(3); i > 0; --i) r.inputs.args.push_back(value_for(hostile));
    for (std::uint64_t i = pick(3); i > 0; --i)
      r.inputs.kwargs.emplace_back("k" + std::to_string(i), value_for(hostile));
    if (pick(2)) r.result = value_for(hostile);
    return r;
  }

  value value_for(bool hostile) {
    if (pick(6) == 0) {  // at the limit, one past it, and a little further
      const std::size_t target = max_levels - 1 + pick(4);
      const value bottom = pick(4) == 0 ? value(std::string("\xff")) : pick(2) ? leaf_value(hostile) : value();
      return wrapped_to(bottom, target, hostile);
    }
    return any(5, hostile);
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace refusal_oracle

TEST_CASE("to_record_line: refuses exactly what the reader refuses and names the first refused part") {
  using refusal_oracle::encoded_levels;
  using refusal_oracle::expected_outcome;
  using refusal_oracle::observed_outcome;
  const std::string too_deep =
      "format_error|$: the value nests deeper than 125 JSON levels, more than value_from_json and the record reader "
      "accept";
  // One keyword argument `x` holding `v`: the outcome, and (accepted) the line read back equal at the depth expected.
  auto check_one = [&](const value& v) {
    call_record r;
    r.function = "f";
    r.inputs.kwargs.push_back({"x", v});
    std::string line;
    const std::string got = observed_outcome(r, &line);
    CHECK(got == expected_outcome(r));
    if (got.empty()) {
      INFO(line);
      call_record back;
      REQUIRE_NOTHROW(back = hookscope::parse_record(line));
      REQUIRE(back.inputs.kwargs.size() == 1);
      CHECK(back.inputs.kwargs[0].second == v);
      // The record, the kwargs array and the pair around the value: the encoding's levels as the oracle counts them.
      CHECK(refusal_oracle::text_levels(line) == 3 + encoded_levels(v));
    }
    return got;
  };

  SECTION("random trees of every kind, refused parts anywhere, in args, kwargs and the result") {
    refusal_oracle::generator g(Catch::rngSeed() ^ 0x5783e4f);
    std::string text;
    std::vector<call_record> written;
    std::size_t refused_deep = 0, refused_value = 0;
    for (int i = 0; i < 2500; ++i) {
      const call_record r = g.record(i % 2 == 0);
      std::string line;
      const std::string got = observed_outcome(r, &line);
      const std::string expected = expected_outcome(r);
      INFO("record " << i);
      REQUIRE(got == expected);
      if (got.starts_with("format_error|")) ++refused_deep;
      if (got.starts_with("value_error|")) ++refused_value;
      if (!got.empty()) continue;
      INFO(line);
      call_record back;
      REQUIRE_NOTHROW(back = hookscope::parse_record(line));
      CHECK(back.inputs == r.inputs);
      CHECK(back.result == r.result);
      text += line + "\n";
      written.push_back(r);
    }
    CHECK(refused_deep > 100);  // the generator reaches each outcome often
    CHECK(refused_value > 300);
    CHECK(written.size() > 1000);
    std::istringstream in(text);
    hookscope::record_reader reader(in, "random.jsonl");
    call_record r;
    std::size_t n = 0;
    while (reader.next(r)) {
      REQUIRE(n < written.size());
      CHECK(r.inputs == written[n].inputs);
      CHECK(r.result == written[n].result);
      ++n;
    }
    CHECK(n == written.size());
  }

  SECTION("the nesting limit and one past it, through every container kind and bottom") {
    const std::byte raw[] = {std::byte{1}};
    const value bottoms[] = {value(),
                             value(1),
                             value(std::string("\xff")),
                             value::bytes(raw),
                             value::opaque("\xc0\xaf"),
                             value(tensor_spec{{2, 0}, dtype::int8}),
                             value::dict({}),
                             value::structure("\xff", {}),
                             value::list({})};
    using wrap = value (*)(value);
    const wrap wraps[] = {
        [](value v) { return value::variant(3, std::move(v)); },
        [](value v) {
          return value::list({value(0), std::move(v)});
        },
        [](value v) { return value::tuple({std::move(v)}); },
        [](value v) {
          return value::dict({{"a", value()}, {"b", std::move(v)}});
        },
        [](value v) {
          return value::structure("s", {{"\xff", std::move(v)}});
        },
    };
    for (std::size_t b = 0; b < std::size(bottoms); ++b) {
      for (std::size_t w = 0; w < std::size(wraps); ++w) {
        // Wrapped, mixing `w` with variants to land on 125 exactly and on 126 exactly.
        for (const std::size_t target : {std::size_t{125}, std::size_t{126}}) {
          value v = bottoms[b];
          while (encoded_levels(v) < target) {
            const std::size_t room = target - encoded_levels(v);
            v = room >= 4 ? wraps[w](std::move(v)) : wraps[0](std::move(v));
          }
          INFO("bottom " << b << ", wrap " << w << ", " << target << " levels");
          REQUIRE(encoded_levels(v) == target);
          CHECK(check_one(v) == (target == 125 ? std::string() : too_deep));
          // A refused part beside the deepest one: named at the limit, the depth named past it.
          const value refused = value::list({v, value::opaque(refusal_oracle::length_without_too_large())});
          if (target == 125) {
            CHECK(check_one(value::variant(0, v)) == too_deep);
          } else {
            CHECK(check_one(refused) == too_deep);
          }
        }
      }
    }
    // A refused leaf at the very bottom of 125 levels: its whole path named.
    value v = value(tensor_spec{{-2}, dtype::int8});
    std::string suffix;
    for (int i = 0; i < 40; ++i) {
      v = value::dict({{"k", std::move(v)}});
      suffix = ".k" + suffix;
    }
    v = value::list({value(), value::variant(0, std::move(v))});  // 2 + 1 + 40 * 3 + 2 = 125 levels
    REQUIRE(encoded_levels(v) == 125);
    CHECK(check_one(v) == "value_error|x[1].value" + suffix +
                              ".shape[0]: negative dimension -2 (a tensor's dimensions are sizes: the record format "
                              "and its reader refuse it)");
    CHECK(check_one(value::variant(0, v)) == too_deep);
  }

  SECTION("a key repeated among 2 to 40 keys, at every pair of positions, in dicts and structures") {
    for (const std::size_t n : {2u, 3u, 15u, 16u, 17u, 18u, 40u}) {
      hookscope::value_fields distinct;
      for (std::size_t i = 0; i < n; ++i) {
        // Keys that share a prefix, differ in their last byte, hold NULs or are not UTF-8.
        std::string name = i % 3 == 0 ? "key" + std::to_string(i) : std::string("k\0", 2) + char('A' + i % 26);
        if (i % 5 == 4) name += "\xff" + std::to_string(i);
        if (i >= 26 && i % 3 != 0) name += "~";
        distinct.push_back({std::move(name), value(static_cast<std::int64_t>(i))});
      }
      INFO(n << " keys");
      REQUIRE(check_one(value::dict(distinct)).empty());
      REQUIRE(check_one(value::structure("S", distinct)).empty());
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
          hookscope::value_fields repeated = distinct;
          repeated[j].first = repeated[i].first;
          INFO("key " << i << " given again at " << j);
          std::string want = "value_error|x[0].value: the key \"" + repeated[i].first + "\" given twice";
          want = want.substr(0, want.find('\0'));  // what() ends at a NUL
          CHECK(check_one(value::list({value::variant(1, value::dict(repeated))})) == want);
          CHECK(check_one(value::list({value::variant(1, value::structure("S", repeated))})) == want);
        }
      }
    }
  }

  SECTION("the first refused part in the order of the line is named") {
    const value bad_leaf = value::opaque(refusal_oracle::unreadable_without_address());
    hookscope::value_fields fields;
    for (int i = 0; i < 20; ++i) fields.push_back({"f" + std::to_string(i), value(i)});
    SECTION("a refused field before a repeated key") {
      fields[3].second = value::list({value(), bad_leaf});
      fields[19].first = "f1";
      CHECK(check_one(value::dict(fields)) == "value_error|x.f3[1]: an unreadable leaf without its address");
    }
    SECTION("a repeated key before a refused field") {
      fields[5].first = "f1";
      fields[19].second = bad_leaf;
      CHECK(check_one(value::structure("s", fields)) == "value_error|x: the key \"f1\" given twice");
    }
    SECTION("a repeated key inside a refused field's sibling, deeper than it") {
      hookscope::value_fields inner = fields;
      inner[17].first = "f16";
      fields[0].second = value::variant(0, value::dict(inner));
      fields[1].second = bad_leaf;
      CHECK(check_one(value::dict(fields)) == "value_error|x.f0.value: the key \"f16\" given twice");
    }
  }
}
