#include "hookscope/value.hpp"

#include <catch2/catch.hpp>

#include "random_values.hpp"

#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;
using hookscope::value_fields;

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
    return std::string(e.sentence());
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
          kv_cache(),
          value::bytes(std::as_bytes(std::span<const char>("\0\xff", 2))),
          value::opaque("std::mutex"),
          value::variant(1, value::list({2}))};
}
}  // namespace

TEST_CASE("value copy, move and assignment") {
  const std::vector<value> originals = one_of_each_kind();
  REQUIRE(originals.size() == 13);  // every value::kind once
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
  CHECK(value::bytes({}).leaf_count() == 1);
  CHECK(value::opaque("handle*").leaf_count() == 1);
  CHECK(value::variant(2, value::tuple({1, 2})).leaf_count() == 2);
}

TEST_CASE("value equality") {
  CHECK(value() == value());
  CHECK(value(1) == value(std::int64_t{1}));
  CHECK_FALSE(value(1) == value(1.0));  // int and float are different kinds
  CHECK_FALSE(value::tuple({1}) == value::list({1}));
  CHECK_FALSE(value::dict({{"a", 1}, {"b", 2}}) == value::dict({{"b", 2}, {"a", 1}}));  // dicts are ordered
  CHECK(kv_cache() == kv_cache());
  CHECK_FALSE(value::opaque("a") == value::opaque("b"));
  CHECK_FALSE(value::opaque("node") == value::opaque("node", true));
  CHECK_FALSE(value::variant(0, 1) == value::variant(1, 1));
  CHECK_FALSE(value::variant(0, 1) == value::variant(0, 2));
  CHECK_FALSE(value::bytes({}) == value(""));  // bytes and str are different kinds
}

TEST_CASE("value kinds of C++ captures: bytes, opaque, variant") {
  const std::byte raw[] = {std::byte{0}, std::byte{0xff}, std::byte{'a'}};
  const value b = value::bytes(raw);
  CHECK(b.type() == value::kind::bytes);
  REQUIRE(b.as_bytes().size() == 3);
  CHECK(b.as_bytes()[1] == std::byte{0xff});
  const value o = value::opaque("std::mutex");
  CHECK(o.opaque_type() == "std::mutex");
  CHECK_FALSE(o.depth_limited());
  CHECK(value::opaque("node", true).depth_limited());
  const value v = value::variant(2, tensor_spec{{3}, dtype::int8});
  CHECK(v.variant_index() == 2);
  CHECK(v.alternative() == value(tensor_spec{{3}, dtype::int8}));
  CHECK(hookscope::is_container(v));
  CHECK_FALSE(hookscope::is_container(o));
  CHECK(hookscope::to_string(value::kind::variant) == "variant");

  SECTION("a variant's leaf path holds the alternative's index") {
    std::vector<std::string> path, seen;
    hookscope::for_each_leaf(
        value::variant(3, value::tuple({1})), [&](const value&) { seen.push_back(path.at(0) + "." + path.at(1)); },
        &path);
    CHECK(seen == std::vector<std::string>{"3.0"});
  }
  SECTION("using them as another kind names both") {
    CHECK_THROWS_WITH(o.as_bytes(), "hookscope: value: expected bytes, found opaque");
    CHECK_THROWS_WITH(b.variant_index(), "hookscope: value: expected variant, found bytes");
    CHECK_THROWS_WITH(v.items(), "hookscope: value: expected a tuple or a list, found variant");
  }
}

TEST_CASE("value JSON encoding, every kind both ways") {
  check_both_ways(value(), "null");
  check_both_ways(tensor_spec{{1, 7}, dtype::int64}, R"({"shape":[1,7],"dtype":"int64"})");
  check_both_ways(tensor_spec{{}, dtype::boolean}, R"({"shape":[],"dtype":"bool"})");
  check_both_ways(value(3), R"({"int":3})");
  check_both_ways(value(-9007199254740993LL), R"({"int":-9007199254740993})");
  check_both_ways(value(0.5), R"({"float":0.5})");
  check_both_ways(value(0.1), R"({"float":0.1})");  // shortest round-trip form
  // Doubles Boost.JSON 1.81's parser reads 1 ulp off on its own, and the negative zero ("-0" would be the int 0).
  check_both_ways(value(1.8527975993091913e-06), R"({"float":1.8527975993091913e-06})");
  check_both_ways(value(2.2255303899866114e-05), R"({"float":2.2255303899866114e-05})");
  check_both_ways(value(-0.0), R"({"float":-0.0})");
  CHECK(std::signbit(hookscope::value_from_json(R"({"float":-0.0})").as_float()));
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

  check_both_ways(value::bytes(std::as_bytes(std::span<const char>("\x01\x00\x00", 3))), R"({"bytes":"AQAA"})");
  check_both_ways(value::bytes({}), R"({"bytes":""})");
  check_both_ways(value::opaque("std::mutex"), R"({"opaque":"std::mutex"})");
  check_both_ways(value::opaque("node", true), R"({"opaque":"node","depth_limited":true})");
  check_both_ways(value::opaque({"const float*", false, 0x7f3a2c001000, false, {}, false}),
                  R"({"opaque":"const float*","address":"0x7f3a2c001000"})");
  check_both_ways(value::opaque({"const char*", false, 0, true, {}, false}),
                  R"({"opaque":"const char*","address":"0x0","unreadable":true})");
  check_both_ways(value::opaque({"std::vector<float>", false, {}, false, 2500000, true}),
                  R"({"opaque":"std::vector<float>","length":2500000,"too_large":true})");
  check_both_ways(value::opaque({"list", false, {}, false, {}, true}), R"({"opaque":"list","too_large":true})");
  check_both_ways(value::opaque({"T*", true, 0xffffffffffffffff, true, 0, true}),
                  R"({"opaque":"T*","depth_limited":true,"address":"0xffffffffffffffff","unreadable":true,)"
                  R"("length":0,"too_large":true})");
  check_both_ways(value::variant(1, value(0.5)), R"({"variant":1,"value":{"float":0.5}})");
  check_both_ways(value::variant(0, value()), R"({"variant":0,"value":null})");

  SECTION("text that is not UTF-8 is written as {\"base64\": ...} wherever the program supplies it") {
    // "a\xff" is 61 ff: base64 Yf8=; "\xc3\x28" (a cut two-byte sequence) is wyg=.
    check_both_ways(value(std::string("a\xff")), R"({"str":{"base64":"Yf8="}})");
    check_both_ways(value::dict({{std::string("\xc3\x28"), 1}}), R"({"dict":[[{"base64":"wyg="},{"int":1}]]})");
    check_both_ways(value::structure("S", {{std::string("\xff"), value()}}),
                    R"({"struct":"S","fields":[[{"base64":"/w=="},null]]})");
    check_both_ways(value::opaque(std::string("\xfe")), R"({"opaque":{"base64":"/g=="}})");
    // UTF-8 text stays text, also beyond the BMP; control characters are escaped.
    check_both_ways(value(std::string("\xc3\xa9\xf0\x9f\x98\x80\x01")),
                    "{\"str\":\"\xc3\xa9\xf0\x9f\x98\x80\\u0001\"}");
    // Overlong forms, encoded surrogates and code points above U+10FFFF are not UTF-8.
    for (const char* bad :
         {"\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xe2\x82"}) {
      CHECK(hookscope::to_json(value(std::string(bad))).find("base64") != std::string::npos);
      CHECK(hookscope::value_from_json(hookscope::to_json(value(std::string(bad)))) == value(std::string(bad)));
    }
  }

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

  SECTION("contents left out of a record line they would have made too long: \"data_too_large\"") {
    tensor_spec t{{2, 3}, dtype::float32};
    t.data_too_large = true;
    check_both_ways(t, R"({"shape":[2,3],"dtype":"float32","data_too_large":true})");
    CHECK(hookscope::value_from_json(R"({"shape":[2],"dtype":"uint8","data_too_large":false})") ==
          value(tensor_spec{{2}, dtype::uint8}));
    CHECK(error_of(R"({"shape":[2],"dtype":"uint8","data":"YWI=","data_too_large":true})") ==
          "$.data_too_large: a tensor left without its \"data\" has none");
    CHECK(error_of(R"({"shape":[2],"dtype":"uint8","data_too_large":1})") ==
          "$.data_too_large: expected true or false, found a number");
  }

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
        "$: a tensor has the keys \"shape\" and \"dtype\" (and \"data\" when its contents were captured, or "
        "\"data_too_large\" when they were left out of the record)");
  CHECK(error_of(R"({"shape":"1x2","dtype":"int64"})") == "$.shape: expected an array of dimensions, found a string");
  CHECK(error_of(R"({"tuple":[{"int":1},{"int":"2"}]})") == "$.tuple[1].int: expected an integer, found a string");
  CHECK(error_of(R"({"dict":[["a"]]})") == "$.dict[0]: expected a [\"name\", value] pair");
  CHECK(error_of(R"({"set":[]})") == "$: unknown value kind \"set\"");
  CHECK(error_of(R"({"int":1,"float":2})") ==
        "$: expected one key (int, float, bool, str, bytes, tuple, list, dict), found 2");
  CHECK(error_of(R"({"str":{"base64":"Y"}})") == "$.str.base64: base64 text of 1 characters (not a multiple of 4)");
  CHECK(error_of(R"({"str":{"hex":"00"}})") ==
        "$.str: expected a string (or {\"base64\":\"...\"} for bytes that are not UTF-8), found an object");
  CHECK(error_of(R"({"dict":[[1,null]]})") == "$.dict[0]: expected a [\"name\", value] pair");
  CHECK(error_of(R"({"dict":[[{"b64":"AA=="},null]]})") ==
        "$.dict[0][0]: expected a string (or {\"base64\":\"...\"} for bytes that are not UTF-8), found an object");
  CHECK(error_of(R"({"bytes":3})") == "$.bytes: expected base64 text, found a number");
  CHECK(error_of(R"({"opaque":"T","depth_limited":1})") == "$.depth_limited: expected true or false, found a number");
  CHECK(error_of(R"({"opaque":"T","x":1})") ==
        "$: an opaque leaf has the key \"opaque\" and may have \"depth_limited\", \"address\", \"unreadable\", "
        "\"length\" and \"too_large\"; found \"x\"");
  CHECK(error_of(R"({"variant":-1,"value":null})") == "$.variant: negative alternative index -1");
  CHECK(error_of(R"({"variant":0})") == "$: a variant has exactly the keys \"variant\" and \"value\"");
  CHECK(error_of(R"({"struct":"C"})") == "$: a struct has exactly the keys \"struct\" and \"fields\"");
  CHECK(error_of(R"({"bool":1})") == "$.bool: expected true or false, found a number");
}

TEST_CASE("value_from_json: an opaque leaf's address, markers and length are checked") {
  const std::string address_expected =
      "$.address: expected an address as \"0x\" and lowercase hexadecimal digits without leading zeros, found ";
  CHECK(error_of(R"({"opaque":"T*","address":"0x7F00"})") == address_expected + "\"0x7F00\"");
  CHECK(error_of(R"({"opaque":"T*","address":"0x07f"})") == address_expected + "\"0x07f\"");
  CHECK(error_of(R"({"opaque":"T*","address":"0x"})") == address_expected + "\"0x\"");
  CHECK(error_of(R"({"opaque":"T*","address":"7f"})") == address_expected + "\"7f\"");
  CHECK(error_of(R"({"opaque":"T*","address":"0x-1"})") == address_expected + "\"0x-1\"");
  CHECK(error_of(R"({"opaque":"T*","address":"0x10000000000000000"})") == address_expected + "\"0x10000000000000000\"");
  CHECK(error_of(R"({"opaque":"T*","address":140234})") == address_expected + "a number");
  CHECK(error_of(R"({"opaque":"T*","unreadable":true})") == "$.unreadable: an unreadable leaf has its \"address\"");
  CHECK(error_of(R"({"opaque":"T*","address":"0x1","unreadable":"yes"})") ==
        "$.unreadable: expected true or false, found a string");
  CHECK(error_of(R"({"opaque":"list","length":3})") == "$.length: a \"length\" is given with \"too_large\": true");
  CHECK(error_of(R"({"opaque":"list","length":-3,"too_large":true})") == "$.length: negative length -3");
  CHECK(error_of(R"({"opaque":"list","length":1.5,"too_large":true})") == "$.length: expected an integer, found 1.5");
  CHECK(error_of(R"({"opaque":"list","too_large":1})") == "$.too_large: expected true or false, found a number");
  CHECK(error_of(R"({"opaque":"T*","address":"0x1","address":"0x2"})") == "$: duplicate key \"address\"");
  // Absent markers are false, as written.
  CHECK(hookscope::value_from_json(R"({"opaque":"T*","address":"0x1","unreadable":false,"too_large":false})") ==
        value::opaque({"T*", false, 1, false, {}, false}));
}

TEST_CASE("value == of opaque leaves compares everything they record") {
  CHECK_FALSE(value::opaque({"T*", false, 1, false, {}, false}) == value::opaque({"T*", false, 2, false, {}, false}));
  CHECK_FALSE(value::opaque({"T*", false, 1, false, {}, false}) == value::opaque({"T*", false, 1, true, {}, false}));
  CHECK_FALSE(value::opaque({"L", false, {}, false, 3, true}) == value::opaque({"L", false, {}, false, {}, true}));
  CHECK(value::opaque({"T*", false, 1, false, {}, false}).as_opaque().address == 1U);
  CHECK_THROWS_WITH(value(1).as_opaque(), "hookscope: value: expected opaque, found int");
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

TEST_CASE("value JSON encoding: whatever to_json writes, value_from_json reads back equal") {
  std::mt19937_64 rng(Catch::rngSeed());
  for (int i = 0; i < 2000; ++i) {
    const value v = random_values::random_value(rng, 6, {.nan = false});
    const std::string json = hookscope::to_json(v);
    INFO(json);
    value back;
    REQUIRE_NOTHROW(back = hookscope::value_from_json(json));  // strict UTF-8 (Boost.JSON refuses anything else)
    CHECK(back == v);
    CHECK(hookscope::to_json(back) == json);
  }
  SECTION("NaN reads back as NaN") {
    CHECK(std::isnan(hookscope::value_from_json(hookscope::to_json(value(std::nan("")))).as_float()));
  }
}

namespace {
// What a writer promises of a value it accepts: value_from_json reads its text back equal. A writer may refuse
// instead (format_error), never write what the reader then refuses.
void check_written_reads_back(const value& v) {
  std::string json;
  try {
    json = hookscope::to_json(v);
  } catch (const hookscope::format_error&) {
    SUCCEED("to_json refused it");
    return;
  }
  INFO(json);
  value back;
  REQUIRE_NOTHROW(back = hookscope::value_from_json(json));
  CHECK(back == v);
}
}  // namespace

TEST_CASE("value::variant: an alternative index above INT64_MAX is refused by to_json or read back") {
  // value::variant takes any std::size_t; value_from_json reads an index only up to INT64_MAX.
  SECTION("2^63") { check_written_reads_back(value::variant(std::size_t{1} << 63, value())); }
  SECTION("SIZE_MAX") { check_written_reads_back(value::variant(SIZE_MAX, value(1))); }
  SECTION("INT64_MAX reads back") {
    check_written_reads_back(value::variant(static_cast<std::size_t>(INT64_MAX), value()));
  }
}

TEST_CASE("value_from_json: a key repeated under a \\u escape leaves the other floats of the document as written") {
  // "\u0066loat" is "float": Boost.JSON keeps one of the two entries. A key check that compared keys as written would
  // let it through, and exact doubles paired with the text's number tokens in order would then give the second
  // element the first object's second number.
  const std::string json = R"({"tuple":[{"float":1.5,"\u0066loat":2.5},{"float":0.1}]})";
  value back;
  try {
    back = hookscope::value_from_json(json);
  } catch (const hookscope::format_error& e) {
    SUCCEED(e.what());  // refusing the repeated key keeps the promise too
    return;
  }
  REQUIRE(back.items().size() == 2);
  CHECK(back.items()[1] == value(0.1));
}

TEST_CASE("value_from_json refuses a key repeated under a \\u escape (a JSON library keeps one of the two)") {
  // The promise: no JSON object gives a key twice, since a reader would silently keep one. Comparing keys as
  // written lets "\u0069nt" through as a key other than "int"; every JSON parser decodes it to "int".
  CHECK(error_of(R"({"int":1,"\u0069nt":2})") != "no error");
  CHECK(error_of(R"({"opaque":"A","\u006fpaque":"B"})") != "no error");
  CHECK(error_of(R"({"variant":1,"value":null,"\u0076ariant":7})") != "no error");
  CHECK(error_of(R"({"str":{"base64":"AA==","\u0062ase64":"AQ=="}})") != "no error");
}

TEST_CASE("value JSON encoding of the new kinds at the nesting limit (125 levels), both ways") {
  // Each kind at the bottom of a chain of variants (one level each) exactly 125 levels deep reads back; one more
  // level is refused by to_json. The base64 object of text that is not UTF-8 is a level of its own.
  struct leaf_case {
    const char* name;
    value leaf;
    std::size_t levels;
  };
  const std::byte raw[] = {std::byte{0xff}};
  const leaf_case leaves[] = {
      {"bytes", value::bytes(raw), 1},
      {"opaque", value::opaque("T", true), 1},
      {"opaque not UTF-8", value::opaque("\xff"), 2},
      {"str not UTF-8", value(std::string("\xc0\x80")), 2},
      {"dict key not UTF-8", value::dict({{"\xed\xa0\x80", value(1)}}), 4},
      {"struct name and field not UTF-8", value::structure("\xf5", {{"\xff", value()}}), 4},
  };
  for (const leaf_case& c : leaves) {
    SECTION(c.name) {
      value v = c.leaf;
      for (std::size_t levels = c.levels; levels < 125; ++levels) v = value::variant(levels % 3, std::move(v));
      const std::string json = hookscope::to_json(v);
      CHECK(hookscope::value_from_json(json) == v);
      CHECK_THROWS_AS(hookscope::to_json(value::variant(0, v)), hookscope::format_error);
    }
  }
}

TEST_CASE("value_from_json: number spellings and floats at the edges read as the double they spell") {
  CHECK(hookscope::value_from_json(R"({"float":1E+2})") == value(100.0));
  CHECK(hookscope::value_from_json(R"({"float":-0})").as_float() == 0.0);
  CHECK(std::signbit(hookscope::value_from_json(R"({"float":-0.0})").as_float()));
  CHECK(hookscope::value_from_json(R"({"float":1.0e-400})") == value(0.0));
  CHECK(hookscope::value_from_json(R"({"float":4.9406564584124654e-324})") == value(5e-324));
  CHECK(hookscope::value_from_json(R"({"float":1e999})") == value(HUGE_VAL));
  CHECK(hookscope::value_from_json(R"({"float":2.2250738585072011e-308})").as_float() == 2.2250738585072011e-308);
  CHECK(hookscope::value_from_json(R"({"variant":1e0,"value":{"float":0.1}})") == value::variant(1, value(0.1)));
  CHECK(error_of(R"({"variant":1.5,"value":null})") == "$.variant: expected an integer, found 1.5");
  CHECK(error_of(R"({"str":"\ud800"})").rfind("$: not JSON", 0) == 0);
  CHECK(error_of(R"({"bytes":"AA= ="})") == "$.bytes: base64 text of 5 characters (not a multiple of 4)");
  CHECK(error_of(R"({"bytes":"A=AA"})") == "$.bytes: invalid base64 character at offset 1");
  CHECK(error_of(R"({"str":{"base64":"AA==","x":1}})").rfind("$.str: expected a string", 0) == 0);
  CHECK(error_of(R"({"opaque":"T","depth_limited":null})") == "$.depth_limited: expected true or false, found null");
  CHECK(hookscope::value_from_json(R"({"str":"a\u0000b"})") == value(std::string("a\0b", 3)));
}

TEST_CASE("to_json refuses exactly what value_from_json cannot read: an empty dict or struct at the limit") {
  // {"dict":[]} nests 2 JSON levels, not 3 (no [name, value] pair inside): 123 variants around it are 125 levels,
  // which value_from_json reads; to_json must then write the value it read.
  for (const std::string empty :
       {R"({"dict":[]})", R"({"struct":"S","fields":[]})", R"({"struct":{"base64":"/w=="},"fields":[]})"}) {
    std::string json = empty;
    for (int i = 0; i < 123; ++i) json = R"({"variant":0,"value":)" + json + "}";
    INFO(empty);
    value v;
    REQUIRE_NOTHROW(v = hookscope::value_from_json(json));
    std::string written;
    CHECK_NOTHROW(written = hookscope::to_json(v));
    CHECK(written == json);
  }
}
