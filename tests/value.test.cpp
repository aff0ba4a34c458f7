#include "hookscope/value.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;

namespace {

value kv_cache() {
  return value::structure("DynamicCache", {{"key_0", tensor_spec{{1, 8, 5, 64}, dtype::float16}},
                                           {"value_0", tensor_spec{{1, 8, 5, 64}, dtype::float16}}});
}

// Checks that `json` decodes to `v` and that `v` encodes to exactly `json` (written here by hand).
void check_both_ways(const value& v, const std::string& json) {
  CHECK(hookscope::to_json(v) == json);
  CHECK(hookscope::value_from_json(json) == v);
}

std::string error_of(const std::string& json) {
  try {
    (void)hookscope::value_from_json(json);
  } catch (const hookscope::format_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("value kinds") {
  CHECK(value().type() == value::kind::none);
  CHECK(value(tensor_spec{{2}, dtype::int32}).type() == value::kind::tensor);
  CHECK(value(3).type() == value::kind::integer);
  CHECK(value(std::int64_t{3}).as_int() == 3);
  CHECK(value(0.5).as_float() == 0.5);
  CHECK(value(true).as_bool());
  const value text("x");  // a named value: a temporary here trips GCC 12's -Wmaybe-uninitialized under TSan
  CHECK(text.as_string() == "x");
  CHECK(value::tuple({1, 2}).items().size() == 2);
  CHECK(value::list({}).type() == value::kind::list);
  CHECK(value::dict({{"a", 1}}).fields().at(0).first == "a");
  CHECK(kv_cache().struct_name() == "DynamicCache");
  CHECK(hookscope::to_string(value::kind::structure) == "struct");

  SECTION("using a value as another kind names both") {
    CHECK_THROWS_WITH(value(3).as_tensor(), "hookscope: value: expected tensor, found int");
    CHECK_THROWS_WITH(value().items(), "hookscope: value: expected a tuple or a list, found none");
    CHECK_THROWS_WITH(value::list({}).fields(), "hookscope: value: expected a dict or a struct, found list");
    CHECK_THROWS_AS(value(1.0).as_int(), hookscope::value_error);
  }
}

namespace {
// One value of every kind (the tagged union's copy, move and assignment switch over them).
std::vector<value> one_of_each_kind() {
  return {value(),
          value(tensor_spec{{2, 3}, dtype::float32}),
          value(7),
          value(2.5),
          value(false),
          value(std::string(40, 's')),
          value::tuple({1, "t"}),
          value::list({value::list({1.5})}),
          value::dict({{"k", kv_cache()}}),
          kv_cache()};
}
}  // namespace

TEST_CASE("value copy, move and assignment") {
  const std::vector<value> originals = one_of_each_kind();
  REQUIRE(originals.size() == 10);  // every value::kind once
  for (std::size_t i = 0; i < originals.size(); ++i) CHECK(static_cast<std::size_t>(originals[i].type()) == i);

  SECTION("a copy equals its original and owns its memory") {
    for (const value& v : originals) {
      value copy(v);
      CHECK(copy == v);
      value moved(std::move(copy));
      CHECK(moved == v);
    }
  }
  SECTION("assigning any kind over any kind") {
    for (const value& target : originals) {
      for (const value& source : originals) {
        value copied = target;
        copied = source;
        CHECK(copied == source);
        value moved = target;
        value from = source;
        moved = std::move(from);
        CHECK(moved == source);
      }
    }
  }
  SECTION("self-assignment keeps the value") {
    for (const value& v : originals) {
      value same = v;
      const value& alias = same;
      same = alias;
      CHECK(same == v);
      value& self = same;
      same = std::move(self);
      CHECK(same == v);
    }
  }
}

TEST_CASE("value::leaf_count") {
  CHECK(value().leaf_count() == 1);  // an absent input is one (placeholder) leaf
  CHECK(value(1).leaf_count() == 1);
  CHECK(value::tuple({}).leaf_count() == 0);
  CHECK(value::list({value(), tensor_spec{}, value::tuple({1, 2})}).leaf_count() == 4);
  CHECK(kv_cache().leaf_count() == 2);
  CHECK(value::dict({{"past_key_values", kv_cache()}, {"mask", value()}}).leaf_count() == 3);
}

TEST_CASE("value equality") {
  CHECK(value() == value());
  CHECK(value(1) == value(std::int64_t{1}));
  CHECK_FALSE(value(1) == value(1.0));  // int and float are different kinds
  CHECK_FALSE(value::tuple({1}) == value::list({1}));
  CHECK_FALSE(value::dict({{"a", 1}, {"b", 2}}) == value::dict({{"b", 2}, {"a", 1}}));  // dicts are ordered
  CHECK(kv_cache() == kv_cache());
}

TEST_CASE("value JSON encoding, every kind both ways") {
  check_both_ways(value(), "null");
  check_both_ways(tensor_spec{{1, 7}, dtype::int64}, R"({"shape":[1,7],"dtype":"int64"})");
  check_both_ways(tensor_spec{{}, dtype::boolean}, R"({"shape":[],"dtype":"bool"})");
  check_both_ways(value(3), R"({"int":3})");
  check_both_ways(value(-9007199254740993LL), R"({"int":-9007199254740993})");
  check_both_ways(value(0.5), R"({"float":0.5})");
  check_both_ways(value(0.1), R"({"float":0.1})");  // shortest round-trip form
  check_both_ways(value(true), R"({"bool":true})");
  check_both_ways(value("say \"hi\"\n"), R"({"str":"say \"hi\"\n"})");
  check_both_ways(value::tuple({1, value()}), R"({"tuple":[{"int":1},null]})");
  check_both_ways(value::list({}), R"({"list":[]})");
  check_both_ways(value::dict({{"b", 1}, {"a", value()}}), R"({"dict":[["b",{"int":1}],["a",null]]})");
  check_both_ways(kv_cache(), R"({"struct":"DynamicCache","fields":[["key_0",{"shape":[1,8,5,64],"dtype":"float16"}],)"
                              R"(["value_0",{"shape":[1,8,5,64],"dtype":"float16"}]]})");
  check_both_ways(
      value::list({value::tuple({tensor_spec{{2, 3}, dtype::float32}, tensor_spec{{2, 3}, dtype::float32}})}),
      R"({"list":[{"tuple":[{"shape":[2,3],"dtype":"float32"},{"shape":[2,3],"dtype":"float32"}]}]})");

  SECTION("reading is lenient where JSON is: spaces, key order, integral floats") {
    CHECK(hookscope::value_from_json(R"( { "dtype" : "int8", "shape" : [ 2 ] } )") ==
          value(tensor_spec{{2}, dtype::int8}));
    CHECK(hookscope::value_from_json(R"({"float":2})") == value(2.0));
  }
}

namespace {
tensor_spec with_bytes(std::vector<std::int64_t> shape, dtype type, std::initializer_list<int> bytes) {
  tensor_spec t{std::move(shape), type};
  for (int b : bytes) t.data.push_back(static_cast<std::byte>(b));
  return t;
}
}  // namespace

TEST_CASE("value JSON encoding of tensor contents (base64)") {
  // Worked out by hand from RFC 4648: 01 00 00 | 00 02 00 | 00 00 -> AQAA AAIA AAA=
  check_both_ways(with_bytes({2}, dtype::int32, {1, 0, 0, 0, 2, 0, 0, 0}),
                  R"({"shape":[2],"dtype":"int32","data":"AQAAAAIAAAA="})");
  check_both_ways(with_bytes({3}, dtype::uint8, {0xFF, 0x00, 0x7F}), R"({"shape":[3],"dtype":"uint8","data":"/wB/"})");
  check_both_ways(with_bytes({2}, dtype::uint8, {'a', 'b'}), R"({"shape":[2],"dtype":"uint8","data":"YWI="})");
  check_both_ways(with_bytes({1, 1}, dtype::int8, {'a'}), R"({"shape":[1,1],"dtype":"int8","data":"YQ=="})");

  SECTION("bad contents name the path and the fault") {
    CHECK(error_of(R"({"shape":[2],"dtype":"uint8","data":"YWI"})") ==
          "$.data: base64 text of 3 characters (not a multiple of 4)");
    CHECK(error_of(R"({"shape":[2],"dtype":"uint8","data":"YW*="})") == "$.data: invalid base64 character at offset 2");
    CHECK(error_of(R"({"shape":[2],"dtype":"uint8","data":"Y=I="})") == "$.data: invalid base64 character at offset 1");
    CHECK(error_of(R"({"shape":[3],"dtype":"uint8","data":"YWI="})") == "$.data: 2 bytes for a tensor that holds 3");
    CHECK(error_of(R"({"shape":[2],"dtype":"uint8","data":2})") == "$.data: expected base64 text, found a number");
    CHECK(error_of(R"({"shape":[4611686018427387904,8],"dtype":"int64","data":""})") ==
          "$.shape: too many elements for contents to be given");
  }
}

TEST_CASE("value_from_json errors name the path and the fault") {
  CHECK(error_of("{").find("$: not JSON") == 0);
  CHECK(error_of("3") == "$: expected null or an object, found a number");
  CHECK(error_of(R"({"shape":[1,-3],"dtype":"int64"})") == "$.shape[1]: negative dimension -3");
  CHECK(error_of(R"({"shape":[1,2.5],"dtype":"int64"})") == "$.shape[1]: expected an integer, found 2.5");
  CHECK(error_of(R"({"shape":[1],"dtype":"float8"})") ==
        "$.dtype: unknown dtype \"float8\" (expected one of float64 float32 float16 bfloat16 int64 int32 int16 int8 "
        "uint8 bool)");
  CHECK(error_of(R"({"shape":[1]})") ==
        "$: a tensor has the keys \"shape\" and \"dtype\" (and \"data\" when its contents were captured)");
  CHECK(error_of(R"({"shape":"1x2","dtype":"int64"})") == "$.shape: expected an array of dimensions, found a string");
  CHECK(error_of(R"({"tuple":[{"int":1},{"int":"2"}]})") == "$.tuple[1].int: expected an integer, found a string");
  CHECK(error_of(R"({"dict":[["a"]]})") == "$.dict[0]: expected a [\"name\", value] pair");
  CHECK(error_of(R"({"set":[]})") == "$: unknown value kind \"set\"");
  CHECK(error_of(R"({"int":1,"float":2})") ==
        "$: expected one key (int, float, bool, str, tuple, list, dict), found 2");
  CHECK(error_of(R"({"struct":"C"})") == "$: a struct has exactly the keys \"struct\" and \"fields\"");
  CHECK(error_of(R"({"bool":1})") == "$.bool: expected true or false, found a number");
}

TEST_CASE("value_from_json refuses a key given twice, as the record reader does, naming the path and the key") {
  // A JSON object's key (a JSON library would keep one of the two silently).
  CHECK(error_of(R"({"shape":[1],"shape":[2],"dtype":"int64"})") == "$: duplicate key \"shape\"");
  CHECK(error_of(R"({"tuple":[{"int":1},{"int":1,"int":2}]})") == "$.tuple[1]: duplicate key \"int\"");
  CHECK(
      error_of(
          R"({"list":[{"dict":[["a",{"struct":"C","fields":[["x",{"shape":[1],"dtype":"int8","dtype":"int8"}]]}]]}]})") ==
      "$.list[0].dict[0][1].fields[0][1]: duplicate key \"dtype\"");
  // A dict's key or a struct's field (a Python dict cannot hold a key twice).
  CHECK(error_of(R"({"dict":[["k",null],["k",{"int":1}]]})") == "$.dict[1][0]: duplicate key \"k\"");
  CHECK(error_of(R"({"struct":"C","fields":[["a",null],["b",null],["a",null]]})") ==
        "$.fields[2][0]: duplicate key \"a\"");
  CHECK(error_of(R"({"tuple":[{"dict":[["a",null]]},{"dict":[["a",null]]}]})") == "no error");
  CHECK(error_of(R"({"dict":[["a",null],["b",{"dict":[["a",null]]}]]})") == "no error");
}
