#include "hookscope/capture.hpp"

#include <catch2/catch.hpp>

#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/define_struct.hpp>
#include <boost/pfr/core.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;

namespace model {

struct generation_config {  // an aggregate: captured field by field with Boost.PFR
  int max_new_tokens = 0;
  std::optional<double> temperature;
  std::optional<tensor_spec> pixel_values;
};

struct sampling {  // a Hana-defined struct: captured with its field names
  BOOST_HANA_DEFINE_STRUCT(sampling, (int, top_k), (double, top_p));
};

struct legacy_options {  // adapted after the fact
  bool use_cache;
  std::string attention;
};

// A KV cache with private members: it names its children through flatten_traits (a registered pytree node).
class kv_cache {
 public:
  void append(tensor_spec key, tensor_spec value) {
    keys_.push_back(std::move(key));
    values_.push_back(std::move(value));
  }
  std::size_t layers() const { return keys_.size(); }
  const tensor_spec& key(std::size_t i) const { return keys_[i]; }
  const tensor_spec& value(std::size_t i) const { return values_[i]; }

 private:
  std::vector<tensor_spec> keys_;
  std::vector<tensor_spec> values_;
};

}  // namespace model

BOOST_HANA_ADAPT_STRUCT(model::legacy_options, use_cache, attention);

template <>
struct hookscope::flatten_traits<model::kv_cache> {
  static constexpr std::string_view name = "DynamicCache";
  static std::vector<std::pair<std::string, tensor_spec>> flatten(const model::kv_cache& c) {
    std::vector<std::pair<std::string, tensor_spec>> children;
    for (std::size_t i = 0; i < c.layers(); ++i) {
      children.emplace_back("key_" + std::to_string(i), c.key(i));
      children.emplace_back("value_" + std::to_string(i), c.value(i));
    }
    return children;
  }
};

namespace {
const tensor_spec ids{{1, 7}, dtype::int64};
const tensor_spec kv{{1, 8, 7, 64}, dtype::float16};
}  // namespace

TEST_CASE("captured_t maps every parameter type at compile time") {
  using hookscope::captured_t;
  using hookscope::or_opaque;  // what may be left out at run time: over the bounds, a pointer's address
  STATIC_REQUIRE(std::is_same_v<captured_t<const tensor_spec&>, tensor_spec>);
  STATIC_REQUIRE(std::is_same_v<captured_t<int>, std::int64_t>);
  STATIC_REQUIRE(std::is_same_v<captured_t<float>, double>);
  STATIC_REQUIRE(std::is_same_v<captured_t<bool>, bool>);
  STATIC_REQUIRE(std::is_same_v<captured_t<const char*>, std::optional<or_opaque<std::string>>>);  // null: none
  STATIC_REQUIRE(std::is_same_v<captured_t<std::string_view>, or_opaque<std::string>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::optional<int>>, std::optional<std::int64_t>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<const tensor_spec*>, std::optional<or_opaque<tensor_spec>>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<void*>, std::optional<hookscope::captured_opaque>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::unique_ptr<int>>, std::optional<std::int64_t>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::vector<tensor_spec>>, or_opaque<std::vector<tensor_spec>>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::array<int, 3>>, or_opaque<std::vector<std::int64_t>>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::span<const tensor_spec>>, or_opaque<std::vector<tensor_spec>>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::pair<int, bool>>, std::tuple<std::int64_t, bool>>);
  STATIC_REQUIRE(
      std::is_same_v<captured_t<std::map<std::string, int>>, or_opaque<hookscope::captured_dict<std::int64_t>>>);
}

namespace model {
struct engine_handle {  // polymorphic: an opaque leaf
  virtual ~engine_handle() = default;
};
struct holds_handle {  // an aggregate with a field that is not structural
  int id;
  engine_handle* handle;
};
}  // namespace model

TEST_CASE("capturable") {
  using hookscope::capturable;
  SECTION("types captured structurally, all the way down") {
    STATIC_REQUIRE(capturable<const tensor_spec&>);
    STATIC_REQUIRE(capturable<std::vector<std::pair<tensor_spec, tensor_spec>>>);
    STATIC_REQUIRE(capturable<std::map<std::string, std::vector<int>>>);
    STATIC_REQUIRE(capturable<model::generation_config>);
    STATIC_REQUIRE(capturable<model::sampling>);
    STATIC_REQUIRE(capturable<model::legacy_options>);
    STATIC_REQUIRE(capturable<model::kv_cache>);
    STATIC_REQUIRE(capturable<std::unique_ptr<int>>);  // owns its object: captured as it
  }
  SECTION("an opaque type anywhere inside makes the whole type not structural, without a compile error") {
    STATIC_REQUIRE_FALSE(capturable<model::engine_handle>);
    STATIC_REQUIRE_FALSE(capturable<std::vector<model::engine_handle>>);
    STATIC_REQUIRE_FALSE(capturable<std::optional<std::vector<model::engine_handle>>>);
    STATIC_REQUIRE_FALSE(capturable<std::tuple<int, model::engine_handle>>);
    STATIC_REQUIRE_FALSE(capturable<std::map<std::string, model::engine_handle>>);
    STATIC_REQUIRE_FALSE(capturable<model::holds_handle>);
    STATIC_REQUIRE_FALSE(capturable<void*>);
    STATIC_REQUIRE_FALSE(capturable<void (*)(int)>);
  }
  SECTION("raw pointers hold an address, no value (but where the user opts in for their pointee type)") {
    STATIC_REQUIRE_FALSE(capturable<const char*>);
    STATIC_REQUIRE_FALSE(capturable<const tensor_spec*>);
    STATIC_REQUIRE_FALSE(capturable<int* const&>);
  }
}

TEST_CASE("capture of tensors, scalars and strings") {
  CHECK(hookscope::capture_value(ids) == value(ids));
  CHECK(hookscope::capture_value(3) == value(3));
  CHECK(hookscope::capture_value(2.5f) == value(2.5));
  CHECK(hookscope::capture_value(true) == value(true));
  CHECK(hookscope::capture_value("sdpa") == value("sdpa"));
  CHECK(hookscope::capture_value(std::string_view("eager")) == value("eager"));
}

TEST_CASE("capture of optionals and pointers") {
  CHECK(hookscope::capture_value(std::optional<tensor_spec>{}) == value());
  CHECK(hookscope::capture_value(std::optional<tensor_spec>{ids}) == value(ids));
  const tensor_spec* none = nullptr;
  CHECK(hookscope::capture_value(none) == value());
  CHECK(hookscope::capture_value(std::make_shared<int>(4)) == value(4));  // owning: its object
  CHECK(hookscope::capture_value(nullptr) == value());
  SECTION("a raw pointer: its address, the pointee only when asked for") {
    const value captured = hookscope::capture_value(&ids);
    REQUIRE(captured.type() == value::kind::opaque);
    CHECK(captured.as_opaque().type_name.find("tensor_spec") != std::string::npos);  // "*" or " *": the compiler's
    CHECK(captured.as_opaque().address == reinterpret_cast<std::uintptr_t>(&ids));
    CHECK(hookscope::capture_value(&ids, {.read_pointee = true}) == value(ids));
  }
}

TEST_CASE("capture of ranges, tuples and maps") {
  CHECK(hookscope::capture_value(std::vector<int>{1, 2}) == value::list({1, 2}));
  CHECK(hookscope::capture_value(std::array<tensor_spec, 1>{ids}) == value::list({ids}));
  const std::vector<tensor_spec> both{ids, kv};
  CHECK(hookscope::capture_value(std::span<const tensor_spec>(both)) == value::list({ids, kv}));
  CHECK(hookscope::capture_value(std::make_tuple(1, std::string("a"), ids)) == value::tuple({1, "a", ids}));
  CHECK(hookscope::capture_value(std::map<std::string, int>{{"b", 2}, {"a", 1}}) ==
        value::dict({{"a", 1}, {"b", 2}}));  // in the map's iteration order

  SECTION("a legacy KV cache: a vector of (key, value) pairs") {
    const std::vector<std::pair<tensor_spec, tensor_spec>> cache{{kv, kv}, {kv, kv}};
    const value captured = hookscope::capture_value(cache);
    CHECK(captured == value::list({value::tuple({kv, kv}), value::tuple({kv, kv})}));
    CHECK(captured.leaf_count() == 4);
  }
}

TEST_CASE("capture of aggregates via Boost.PFR, with optionals inside") {
  const model::generation_config config{16, std::nullopt, tensor_spec{{1, 3, 224, 224}, dtype::float32}};
  const value captured = hookscope::capture_value(config);
#if HOOKSCOPE_DETAIL_PFR_NAMES  // Boost >= 1.84 reads the field names
  const char* names[] = {"max_new_tokens", "temperature", "pixel_values"};
#else
  const char* names[] = {"0", "1", "2"};
#endif
  CHECK(captured ==
        value::structure(
            "model::generation_config",
            {{names[0], 16}, {names[1], value()}, {names[2], tensor_spec{{1, 3, 224, 224}, dtype::float32}}}));
  CHECK(hookscope::to_json(captured) == R"({"struct":"model::generation_config","fields":[[")" + std::string(names[0]) +
                                            R"(",{"int":16}],[")" + names[1] + R"(",null],[")" + names[2] +
                                            R"(",{"shape":[1,3,224,224],"dtype":"float32"}]]})");
}

TEST_CASE("capture of Hana structs, with their field names") {
  CHECK(hookscope::capture_value(model::sampling{40, 0.9}) ==
        value::structure("model::sampling", {{"top_k", 40}, {"top_p", 0.9}}));
  CHECK(hookscope::capture_value(model::legacy_options{true, "sdpa"}) ==
        value::structure("model::legacy_options", {{"use_cache", true}, {"attention", "sdpa"}}));
}

TEST_CASE("capture of a class through flatten_traits") {
  model::kv_cache cache;
  cache.append(kv, kv);
  cache.append(tensor_spec{{1, 8, 9, 64}, dtype::float16}, tensor_spec{{1, 8, 9, 64}, dtype::float16});
  const value captured = hookscope::capture_value(cache);
  REQUIRE(captured.type() == value::kind::structure);
  CHECK(captured.struct_name() == "DynamicCache");
  REQUIRE(captured.fields().size() == 4);
  CHECK(captured.fields()[0].first == "key_0");
  CHECK(captured.fields()[3].first == "value_1");
  CHECK(captured.fields()[3].second.as_tensor().shape == std::vector<std::int64_t>{1, 8, 9, 64});
  CHECK(captured.leaf_count() == 4);

  SECTION("nested in an optional and a tuple") {
    const value nested = hookscope::capture_value(std::make_tuple(ids, std::optional<model::kv_cache>(cache)));
    CHECK(nested.leaf_count() == 5);
    CHECK(hookscope::capture_value(std::optional<model::kv_cache>()) == value());
  }
}

namespace user {
struct grid {  // a tensor whose traits give its contents
  std::vector<float> cells;
  std::int64_t rows = 0;
};
struct shape_only {  // a tensor without data(): contents are never captured
  std::int64_t n = 0;
};
}  // namespace user

template <>
struct hookscope::tensor_traits<user::grid> {
  static std::array<std::int64_t, 2> shape(const user::grid& g) {
    return {g.rows, static_cast<std::int64_t>(g.cells.size()) / std::max<std::int64_t>(g.rows, 1)};
  }
  static hookscope::dtype dtype(const user::grid&) { return hookscope::dtype::float32; }
  static const std::vector<float>& data(const user::grid& g) { return g.cells; }
};
template <>
struct hookscope::tensor_traits<user::shape_only> {
  static std::array<std::int64_t, 1> shape(const user::shape_only& s) { return {s.n}; }
  static hookscope::dtype dtype(const user::shape_only&) { return hookscope::dtype::int64; }
};

TEST_CASE("capture_options::tensor_data") {
  const user::grid g{{1.0F, 2.0F, 3.0F, 4.0F}, 2};
  SECTION("off by default: shapes and dtypes only") {
    CHECK(hookscope::capture(g) == tensor_spec{{2, 2}, dtype::float32});
    CHECK(hookscope::capture(g, {}).data.empty());
  }
  SECTION("on request: the contents' bytes, everywhere in the value") {
    const auto captured =
        hookscope::capture_value(std::make_tuple(g, std::optional<user::grid>(g)), {.tensor_data = true});
    for (const value& item : captured.items()) {
      REQUIRE(item.as_tensor().data.size() == 4 * sizeof(float));
      std::array<float, 4> cells{};
      std::memcpy(cells.data(), item.as_tensor().data.data(), sizeof cells);
      CHECK(cells == std::array<float, 4>{1.0F, 2.0F, 3.0F, 4.0F});
    }
    CHECK(hookscope::capture(g).data.empty());  // the option held for that capture only
  }
  SECTION("tensors without data() in their traits keep shapes only") {
    CHECK(hookscope::capture(user::shape_only{5}, {.tensor_data = true}) == tensor_spec{{5}, dtype::int64});
  }
  SECTION("contents that do not fit the shape are an error naming both") {
    const user::grid odd{{1.0F, 2.0F, 3.0F}, 2};  // shape {2, 1}: 2 elements, 3 given
    CHECK_THROWS_WITH(hookscope::capture(odd, {.tensor_data = true}),
                      "hookscope: capture: tensor_traits<T>::data gave 12 bytes for a tensor of shape [2,1] and dtype "
                      "float32, which holds 8");
  }
}

TEST_CASE("captured values outlive the argument") {
  hookscope::captured_t<std::vector<tensor_spec>> kept;
  {
    std::vector<tensor_spec> temporary{ids};
    kept = hookscope::capture(temporary);
    temporary[0].shape[1] = 99;
  }
  CHECK(hookscope::to_value(kept) == value::list({ids}));
}

namespace rules {
// An owning pointer of another library, declaring what std::unique_ptr declares.
template <class T>
struct owning {
  using element_type = T;
  using deleter_type = void (*)(T*);
  T* raw = nullptr;
  T* get() const noexcept { return raw; }
  T& operator*() const noexcept { return *raw; }
  friend bool operator==(const owning& p, std::nullptr_t) noexcept { return p.raw == nullptr; }
};
// A handle with get() that owns nothing: no deleter, no weak type.
struct handle_like {
  using element_type = int;
  int* get() const noexcept { return nullptr; }
  int& operator*() const noexcept;
};
// Convertible to std::string_view *and* named through flatten_traits: the explicit specialisation wins
// (both rules matched before, and capture was ambiguous).
struct token {
  std::string text;
  int id = 0;
  operator std::string_view() const { return text; }
};

// A tensor that is also a range and has flatten_traits: tensor_traits comes first.
struct tiles {
  std::vector<float> cells;
  auto begin() const { return cells.begin(); }
  auto end() const { return cells.end(); }
};

// flatten_traits whose children have no names: not capturable, and capturing it is a compile error (a misuse:
// tests/compile_fail/capture_unnamed_children.cpp).
struct unnamed {
  int a = 0;
};

// An aggregate that is also a range: the range rule comes first.
struct row {
  std::array<int, 2> cells;
  const int* begin() const { return cells.data(); }
  const int* end() const { return cells.data() + cells.size(); }
};

struct wide {  // 33 fields: more than aggregates may have
  int f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24,
      f25, f26, f27, f28, f29, f30, f31, f32;
};
struct empty {};
}  // namespace rules

template <>
struct hookscope::flatten_traits<rules::token> {
  static constexpr std::string_view name = "Token";
  static std::map<std::string, int> flatten(const rules::token& t) { return {{"id", t.id}}; }
};
template <>
struct hookscope::tensor_traits<rules::tiles> {
  static std::array<std::int64_t, 1> shape(const rules::tiles& t) {
    return {static_cast<std::int64_t>(t.cells.size())};
  }
  static hookscope::dtype dtype(const rules::tiles&) { return hookscope::dtype::float32; }
};
template <>
struct hookscope::flatten_traits<rules::tiles> {
  static std::vector<std::pair<std::string, int>> flatten(const rules::tiles&) { return {}; }
};
template <>
struct hookscope::flatten_traits<rules::unnamed> {
  static std::vector<int> flatten(const rules::unnamed& u) { return {u.a}; }
};

TEST_CASE("one precedence order: tensor_traits, flatten_traits, then the structural rules") {
  using hookscope::detail::capture_kind;
  using hookscope::detail::classify;
  STATIC_REQUIRE(classify<rules::token>() == capture_kind::flattened);
  STATIC_REQUIRE(classify<rules::tiles>() == capture_kind::tensor);
  STATIC_REQUIRE(classify<rules::row>() == capture_kind::range);
  STATIC_REQUIRE(classify<std::nullptr_t>() == capture_kind::null);  // before strings: it converts to string_view
  STATIC_REQUIRE(classify<std::map<std::string, int>>() == capture_kind::string_map);
  STATIC_REQUIRE(classify<std::map<int, int>>() == capture_kind::range);  // a list of (key, value) tuples
  STATIC_REQUIRE(classify<std::array<int, 2>>() == capture_kind::range);  // a range before a tuple-like
  STATIC_REQUIRE(classify<model::sampling>() == capture_kind::hana_struct);
  STATIC_REQUIRE(classify<model::generation_config>() == capture_kind::aggregate);
  STATIC_REQUIRE(classify<rules::wide>() == capture_kind::opaque);
  STATIC_REQUIRE(classify<void*>() == capture_kind::address);
  STATIC_REQUIRE(classify<const char*>() == capture_kind::c_string);
  STATIC_REQUIRE(classify<int*>() == capture_kind::raw_pointer);
  STATIC_REQUIRE(classify<void (*)()>() == capture_kind::opaque);
  STATIC_REQUIRE(classify<std::unique_ptr<int[]>>() == capture_kind::opaque);

  SECTION("smart pointers are recognised by what they declare, not by name") {
    STATIC_REQUIRE(classify<std::unique_ptr<int>>() == capture_kind::pointer);
    STATIC_REQUIRE(classify<std::unique_ptr<tensor_spec, void (*)(tensor_spec*)>>() == capture_kind::pointer);
    STATIC_REQUIRE(classify<std::shared_ptr<const tensor_spec>>() == capture_kind::pointer);
    STATIC_REQUIRE(classify<std::shared_ptr<int[]>>() == capture_kind::opaque);  // not dereferenceable
    STATIC_REQUIRE(classify<std::weak_ptr<int>>() == capture_kind::opaque);      // no get(): must be locked
    STATIC_REQUIRE(classify<rules::owning<int>>() == capture_kind::pointer);     // a unique_ptr lookalike
    STATIC_REQUIRE(classify<rules::handle_like>() != capture_kind::pointer);     // get() but owns nothing
    rules::owning<int> empty;
    CHECK(hookscope::capture_value(empty) == value());
  }

  SECTION("a string-convertible class with flatten_traits is captured through flatten_traits") {
    STATIC_REQUIRE(hookscope::capturable<rules::token>);
    CHECK(hookscope::capture_value(rules::token{"hello", 7}) == value::structure("Token", {{"id", 7}}));
  }
  SECTION("a tensor that is also a range, with flatten_traits, is a tensor") {
    CHECK(hookscope::capture_value(rules::tiles{{1.0F, 2.0F, 3.0F}}) == value(tensor_spec{{3}, dtype::float32}));
  }
  SECTION("an aggregate that is also a range is a list") {
    CHECK(hookscope::capture_value(rules::row{{4, 5}}) == value::list({4, 5}));
  }
  SECTION("an empty aggregate is a struct without fields") {
    CHECK(hookscope::capture_value(rules::empty{}) == value::structure("rules::empty", {}));
  }
}

namespace {
bool has_opaque_leaf(const value& v) {
  bool found = v.type() == value::kind::opaque;
  hookscope::for_each_child(
      v, [&](std::size_t, const std::string*, const value& c) { found = found || has_opaque_leaf(c); });
  return found;
}

// capturable<T> must be `expected`; capture<T>, capture_value<T> and to_value of the captured type are instantiated
// here for every T (a compile error would be a failure), both paths to the value tree agree, and the value holds an
// opaque leaf exactly when T is not structural (for values that reach the part that is not).
template <class T, bool expected>
struct agrees {
  static_assert(hookscope::capturable<T> == expected);
  static_assert(hookscope::capturable<const T&> == expected);
  static bool check(const T& v, bool reaches_opaque_part = true) {
    const hookscope::captured_t<T> typed = hookscope::capture(v);
    const value captured = hookscope::capture_value(v);
    return hookscope::to_value(typed) == captured &&
           hookscope::to_value(hookscope::capture(v, {.tensor_data = true})) ==
               hookscope::capture_value(v, {.tensor_data = true}) &&
           (!reaches_opaque_part || has_opaque_leaf(captured) == !expected);
  }
};
}  // namespace

TEST_CASE("capturable<T> and capture<T> agree") {
  CHECK(agrees<int, true>::check(1));
  CHECK(agrees<bool, true>::check(true));
  CHECK(agrees<double, true>::check(0.5));
  CHECK(agrees<std::string, true>::check("s"));
  CHECK(agrees<const char*, false>::check("c"));  // an address
  CHECK(agrees<std::nullptr_t, true>::check(nullptr));
  CHECK(agrees<tensor_spec, true>::check(ids));
  CHECK(agrees<std::optional<tensor_spec>, true>::check(kv));
  CHECK(agrees<const tensor_spec*, false>::check(&ids));
  CHECK(agrees<const tensor_spec*, false>::check(nullptr, false));  // none
  CHECK(agrees<std::shared_ptr<int>, true>::check(std::make_shared<int>(3)));
  CHECK(agrees<std::unique_ptr<int>, true>::check(nullptr));
  CHECK(agrees<std::vector<std::pair<tensor_spec, tensor_spec>>, true>::check({{ids, kv}}));
  CHECK(agrees<std::map<std::string, std::vector<int>>, true>::check({{"a", {1}}}));
  CHECK(agrees<std::map<int, std::string>, true>::check({{1, "one"}}));
  CHECK(agrees<std::tuple<int, std::string, tensor_spec>, true>::check({1, "a", ids}));
  CHECK(agrees<std::array<tensor_spec, 2>, true>::check({ids, kv}));
  CHECK(agrees<model::generation_config, true>::check({16, 0.5, ids}));
  CHECK(agrees<model::sampling, true>::check({40, 0.9}));
  CHECK(agrees<model::legacy_options, true>::check({true, "sdpa"}));
  CHECK(agrees<model::kv_cache, true>::check({}));
  CHECK(agrees<user::grid, true>::check({{1.0F}, 1}));
  CHECK(agrees<rules::token, true>::check({"t", 1}));
  CHECK(agrees<rules::tiles, true>::check({}));
  CHECK(agrees<rules::row, true>::check({}));
  CHECK(agrees<rules::empty, true>::check({}));

  CHECK(agrees<std::filesystem::path, true>::check("/a/b"));  // a range of itself, with string()

  model::engine_handle handle;
  CHECK(agrees<model::engine_handle, false>::check({}));
  CHECK(agrees<model::holds_handle, false>::check({1, &handle}));
  CHECK(agrees<model::holds_handle, false>::check({1, nullptr}, false));  // a null pointer holds no value
  CHECK(agrees<std::vector<model::engine_handle>, false>::check(std::vector<model::engine_handle>(2)));
  CHECK(agrees<std::optional<model::holds_handle>, false>::check(model::holds_handle{2, &handle}));
  CHECK(agrees<std::map<std::string, model::engine_handle*>, false>::check({{"h", &handle}}));
  CHECK(agrees<std::tuple<int, model::engine_handle>, false>::check({}));
  CHECK(agrees<rules::wide, false>::check({}));
  CHECK(agrees<std::unique_ptr<int[]>, false>::check({}));
  CHECK(agrees<void*, false>::check(&handle));
  CHECK(agrees<void*, false>::check(nullptr, false));
  CHECK(agrees<void (*)(int), false>::check(nullptr));  // a function pointer: opaque, null or not
  CHECK(agrees<std::vector<void*>, false>::check({&handle}));
  CHECK(agrees<std::shared_ptr<void>, false>::check({}));  // not dereferenceable
  STATIC_REQUIRE_FALSE(hookscope::capturable<rules::unnamed>);
}

namespace fields {
struct nested {
  model::generation_config config;
  std::pair<int, int> p;
};
struct with_reference {
  const int& r;
  std::string s;
};
struct move_only {
  std::unique_ptr<int> p;
  std::vector<std::unique_ptr<int>> ps;
  int n;
};
struct with_const {
  const double d;
  std::map<std::string, std::vector<int>> m;
  std::optional<std::string> o;
  std::tuple<int, bool> t;
};
class base {  // not an aggregate
 public:
  explicit base(int b) : b_(b) {}

 private:
  int b_;
};
struct derived : base {  // an aggregate with a base class: not captured (a structured binding could not see b_)
  int d;
};
}  // namespace fields

TEST_CASE("aggregates: fields counted as Boost.PFR counts them (arrays aside), captured through a structured binding") {
  using hookscope::detail::count_fields;
  STATIC_REQUIRE(count_fields<model::generation_config>() == boost::pfr::tuple_size_v<model::generation_config>);
  STATIC_REQUIRE(count_fields<model::holds_handle>() == boost::pfr::tuple_size_v<model::holds_handle>);
  STATIC_REQUIRE(count_fields<fields::nested>() == boost::pfr::tuple_size_v<fields::nested>);
  STATIC_REQUIRE(count_fields<fields::with_reference>() == boost::pfr::tuple_size_v<fields::with_reference>);
  STATIC_REQUIRE(count_fields<fields::move_only>() == boost::pfr::tuple_size_v<fields::move_only>);
  STATIC_REQUIRE(count_fields<fields::with_const>() == boost::pfr::tuple_size_v<fields::with_const>);
  STATIC_REQUIRE(count_fields<rules::empty>() == 0);
  STATIC_REQUIRE(count_fields<rules::wide>() == 33);             // more than max_aggregate_fields: counting stops there
  STATIC_REQUIRE(hookscope::detail::has_base<fields::derived>);  // detected before anything is counted or bound
  STATIC_REQUIRE_FALSE(hookscope::detail::has_base<fields::nested>);
  STATIC_REQUIRE_FALSE(hookscope::capturable<fields::derived>);

  const int seven = 7;
  CHECK(hookscope::capture_value(fields::with_reference{seven, "s"}) ==
        value::structure("fields::with_reference", {{"0", 7}, {"1", "s"}}));
  fields::move_only m{std::make_unique<int>(1), {}, 2};
  m.ps.push_back(nullptr);
  CHECK(hookscope::capture_value(m) ==
        value::structure("fields::move_only", {{"0", 1}, {"1", value::list({value()})}, {"2", 2}}));
  const fields::with_const c{0.5, {{"k", {1}}}, "o", {3, true}};
  CHECK(hookscope::capture_value(c) ==
        value::structure(
            "fields::with_const",
            {{"0", 0.5}, {"1", value::dict({{"k", value::list({1})}})}, {"2", "o"}, {"3", value::tuple({3, true})}}));
  CHECK(hookscope::capture_value(fields::nested{{1, std::nullopt, std::nullopt}, {2, 3}}).leaf_count() == 5);
}
