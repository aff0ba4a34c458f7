#include "hookscope/capture.hpp"

#include <catch2/catch.hpp>

#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/define_struct.hpp>

#include <algorithm>
#include <array>
#include <cstring>
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
  STATIC_REQUIRE(std::is_same_v<captured_t<const tensor_spec&>, tensor_spec>);
  STATIC_REQUIRE(std::is_same_v<captured_t<int>, std::int64_t>);
  STATIC_REQUIRE(std::is_same_v<captured_t<float>, double>);
  STATIC_REQUIRE(std::is_same_v<captured_t<bool>, bool>);
  STATIC_REQUIRE(std::is_same_v<captured_t<const char*>, std::string>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::string_view>, std::string>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::optional<int>>, std::optional<std::int64_t>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<const tensor_spec*>, std::optional<tensor_spec>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::unique_ptr<int>>, std::optional<std::int64_t>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::vector<tensor_spec>>, std::vector<tensor_spec>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::array<int, 3>>, std::vector<std::int64_t>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::span<const tensor_spec>>, std::vector<tensor_spec>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::pair<int, bool>>, std::tuple<std::int64_t, bool>>);
  STATIC_REQUIRE(std::is_same_v<captured_t<std::map<std::string, int>>, hookscope::captured_dict<std::int64_t>>);
}

namespace model {
struct engine_handle {  // nothing can capture it
  virtual ~engine_handle() = default;
};
struct holds_handle {  // an aggregate with an uncapturable field
  int id;
  engine_handle* handle;
};
}  // namespace model

TEST_CASE("capturable") {
  using hookscope::capturable;
  SECTION("capturable types, all the way down") {
    STATIC_REQUIRE(capturable<const tensor_spec&>);
    STATIC_REQUIRE(capturable<std::vector<std::pair<tensor_spec, tensor_spec>>>);
    STATIC_REQUIRE(capturable<std::map<std::string, std::vector<int>>>);
    STATIC_REQUIRE(capturable<model::generation_config>);
    STATIC_REQUIRE(capturable<model::sampling>);
    STATIC_REQUIRE(capturable<model::legacy_options>);
    STATIC_REQUIRE(capturable<model::kv_cache>);
    STATIC_REQUIRE(capturable<const char*>);
  }
  SECTION("an uncapturable type anywhere inside makes the whole type uncapturable, without a compile error") {
    STATIC_REQUIRE_FALSE(capturable<model::engine_handle>);
    STATIC_REQUIRE_FALSE(capturable<std::vector<model::engine_handle>>);
    STATIC_REQUIRE_FALSE(capturable<std::optional<std::vector<model::engine_handle>>>);
    STATIC_REQUIRE_FALSE(capturable<std::tuple<int, model::engine_handle>>);
    STATIC_REQUIRE_FALSE(capturable<std::map<std::string, model::engine_handle>>);
    STATIC_REQUIRE_FALSE(capturable<model::holds_handle>);
    STATIC_REQUIRE_FALSE(capturable<void*>);
    STATIC_REQUIRE_FALSE(capturable<void (*)(int)>);
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
  CHECK(hookscope::capture_value(&ids) == value(ids));
  CHECK(hookscope::capture_value(std::make_shared<int>(4)) == value(4));
  CHECK(hookscope::capture_value(nullptr) == value());
}

TEST_CASE("capture of ranges, tuples and maps") {
  CHECK(hookscope::capture_value(std::vector<int>{1, 2}) == value::list({1, 2}));
  CHECK(hookscope::capture_value(std::array<tensor_spec, 1>{ids}) == value::list({ids}));
  const std::vector<tensor_spec> both{ids, kv};
  CHECK(hookscope::capture_value(std::span<const tensor_spec>(both)) == value::list({ids, kv}));
  CHECK(hookscope::capture_value(std::make_tuple(1, "a", ids)) == value::tuple({1, "a", ids}));
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
  CHECK(captured == value::structure("model::generation_config", {{names[0], 16},
                                                                  {names[1], value()},
                                                                  {names[2], tensor_spec{{1, 3, 224, 224}, dtype::float32}}}));
  CHECK(hookscope::to_json(captured) ==
        R"({"struct":"model::generation_config","fields":[[")" + std::string(names[0]) + R"(",{"int":16}],[")" +
            names[1] + R"(",null],[")" + names[2] + R"(",{"shape":[1,3,224,224],"dtype":"float32"}]]})");
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
    const auto captured = hookscope::capture_value(std::make_tuple(g, std::optional<user::grid>(g)), {.tensor_data = true});
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
