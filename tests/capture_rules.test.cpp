// The capture rules that make the classification total (hookscope/detail/capture_*.hpp): opaque leaves, C arrays,
// bases, std::variant, bytes, proxy references, recursive types and their depth bound, capture_as_opaque, and the
// tensor rule's refusal of negative dimensions. Properties on random values, JSON round trips, hostile inputs.
#include "hookscope/capture.hpp"

#include "hookscope/detail/format.hpp"
#include "hookscope/value_errors.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <iterator>
#include <list>
#include <optional>
#include <random>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

using hookscope::capturable;
using hookscope::tensor_spec;
using hookscope::value;

namespace odd {
struct incomplete;
class abstract {
 public:
  virtual ~abstract() = default;
  virtual int f() const = 0;
};
class concrete : public abstract {
 public:
  int f() const override { return 1; }
};
class with_private {
 public:
  explicit with_private(int v) : v_(v) {}
  int v() const { return v_; }

 private:
  int v_;
};
union number {
  int i;
  float f;
};
struct opted_out {  // an aggregate, captured as opaque on the user's word
  int key;
};
struct opted_out_but_flattened {  // flatten_traits wins over capture_as_opaque
  int key;
};
}  // namespace odd

template <>
inline constexpr bool hookscope::capture_as_opaque<odd::opted_out> = true;
template <>
inline constexpr bool hookscope::capture_as_opaque<odd::opted_out_but_flattened> = true;
template <>
struct hookscope::flatten_traits<odd::opted_out_but_flattened> {
  static std::vector<std::pair<std::string, int>> flatten(const odd::opted_out_but_flattened& o) {
    return {{"key", o.key}};
  }
};

int odd_function(int x) { return x; }

TEST_CASE("capturable: a constant expression for every type") {
  STATIC_REQUIRE_FALSE(capturable<odd::incomplete>);
  STATIC_REQUIRE_FALSE(capturable<odd::incomplete*>);
  STATIC_REQUIRE_FALSE(capturable<const odd::incomplete&>);
  STATIC_REQUIRE_FALSE(capturable<odd::abstract>);
  STATIC_REQUIRE_FALSE(capturable<void>);
  STATIC_REQUIRE_FALSE(capturable<const volatile void>);
  STATIC_REQUIRE_FALSE(capturable<int(int)>);
  STATIC_REQUIRE_FALSE(capturable<int (&)(int)>);
  STATIC_REQUIRE_FALSE(capturable<int[]>);
  STATIC_REQUIRE_FALSE(capturable<odd::number>);
  STATIC_REQUIRE_FALSE(capturable<odd::with_private>);
  STATIC_REQUIRE_FALSE(capturable<int odd::number::*>);
  STATIC_REQUIRE(capturable<int[3]>);
  STATIC_REQUIRE(capturable<const int(&)[2][3]>);
  STATIC_REQUIRE(capturable<char[16]>);
  STATIC_REQUIRE(capturable<int&&>);
  STATIC_REQUIRE(capturable<const volatile int>);
}

TEST_CASE("opaque leaves: the type's name, no value") {
  SECTION("classes that are none of the rules") {
    STATIC_REQUIRE(std::is_same_v<hookscope::captured_t<odd::with_private>, hookscope::captured_opaque>);
    CHECK(hookscope::capture(odd::with_private(3)) == hookscope::captured_opaque{"odd::with_private"});
    CHECK(hookscope::capture_value(odd::with_private(3)) == value::opaque("odd::with_private"));
    CHECK(hookscope::capture_value(odd::number{1}) == value::opaque("odd::number"));
    const odd::concrete c;
    CHECK(hookscope::capture_value(static_cast<const odd::abstract&>(c)) == value::opaque("odd::abstract"));
  }
  SECTION("functions themselves") {
    int (&function)(int) = odd_function;
    CHECK(hookscope::capture_value(function).type() == value::kind::opaque);
  }
  SECTION("pointers to incomplete types, void and wide characters: their address; functions: no address") {
    int i = 0;
    auto* handle = reinterpret_cast<odd::incomplete*>(&i);
    CHECK(hookscope::capture_value(handle).opaque_type().find("odd::incomplete") != std::string::npos);
    CHECK(hookscope::capture_value(handle).as_opaque().address == reinterpret_cast<std::uintptr_t>(&i));
    CHECK(hookscope::capture_value(static_cast<odd::incomplete*>(nullptr)) == value());  // null: none
    CHECK(hookscope::capture_value(static_cast<void*>(&i)).as_opaque().address == reinterpret_cast<std::uintptr_t>(&i));
    const value function = hookscope::capture_value(+[](int x) { return x; });
    CHECK(function.type() == value::kind::opaque);
    CHECK_FALSE(function.as_opaque().address.has_value());  // code, not data
    CHECK(hookscope::capture_value(static_cast<const wchar_t*>(L"w")).as_opaque().address.has_value());
  }
  SECTION("a pointer to a complete opaque class: none when null, else its address; read, the class's leaf") {
    const odd::with_private p(1);
    CHECK(hookscope::capture_value(&p).as_opaque().address == reinterpret_cast<std::uintptr_t>(&p));
    CHECK(hookscope::capture_value(&p, {.read_pointee = true}) == value::opaque("odd::with_private"));
    CHECK(hookscope::capture_value(static_cast<const odd::with_private*>(nullptr)) == value());
  }
  SECTION("capture_as_opaque: the user's opt-out; flatten_traits still wins") {
    STATIC_REQUIRE_FALSE(capturable<odd::opted_out>);
    CHECK(hookscope::capture_value(odd::opted_out{1}) == value::opaque("odd::opted_out"));
    STATIC_REQUIRE(capturable<odd::opted_out_but_flattened>);
    CHECK(hookscope::capture_value(odd::opted_out_but_flattened{2}) ==
          value::structure("odd::opted_out_but_flattened", {{"key", 2}}));
  }
  SECTION("an opaque leaf survives the JSON round trip") {
    const value v = hookscope::capture_value(std::vector<odd::with_private>{odd::with_private(1)});
    CHECK(hookscope::to_json(v) == R"({"list":[{"opaque":"odd::with_private"}]})");
    CHECK(hookscope::value_from_json(hookscope::to_json(v)) == v);
  }
}

namespace carrays {
struct c_header {
  int id;
  char name[16];
  float weights[3];
};
struct with_reference_and_no_array {
  int& r;
  int n;
};
struct tagged {  // an anonymous union member: no structured binding decomposes it
  int kind;
  union {
    int i;
    float f;
  };
};
union payload {
  int i;
  float f;
};
struct with_named_union {
  int kind;
  payload p;
};
struct with_bit_fields {
  unsigned a : 2;
  int b : 7;
};
}  // namespace carrays

TEST_CASE("C arrays: char[N] as a string up to its first NUL, never past N; T[N] as lists") {
  SECTION("examples") {
    const char exact[4] = {'a', 'b', 'c', 'd'};  // no NUL at all: all N characters, nothing past them
    CHECK(hookscope::capture_value(exact) == value("abcd"));
    const char middle[6] = {'a', '\0', 'b', 'c', '\0', 'd'};
    CHECK(hookscope::capture_value(middle) == value("a"));
    const char empty[3] = {};
    CHECK(hookscope::capture_value(empty) == value(""));
    const int numbers[3] = {1, 2, 3};
    CHECK(hookscope::capture_value(numbers) == value::list({1, 2, 3}));
    const char names[2][3] = {{'a', 'b', 'c'}, {'d', '\0', 'e'}};
    CHECK(hookscope::capture_value(names) == value::list({"abc", "d"}));
  }
  SECTION("an array member counts as one field (not one per element, as brace elision would count it)") {
    STATIC_REQUIRE(hookscope::detail::count_fields<carrays::c_header>() == 3);
    STATIC_REQUIRE(hookscope::detail::count_fields<carrays::with_reference_and_no_array>() == 2);
    carrays::c_header h{7, "conv1", {0.5F, 1.0F, 2.0F}};
    CHECK(hookscope::capture_value(h) ==
          value::structure("carrays::c_header", {{"0", 7}, {"1", "conv1"}, {"2", value::list({0.5, 1.0, 2.0})}}));
  }
  SECTION("a union member makes an aggregate opaque (an anonymous one would not bind); bit-fields bind") {
    STATIC_REQUIRE(hookscope::detail::has_union_field<carrays::tagged, 2>());
    STATIC_REQUIRE(hookscope::detail::has_union_field<carrays::with_named_union, 2>());
    STATIC_REQUIRE_FALSE(hookscope::detail::has_union_field<carrays::c_header, 3>());
    CHECK(hookscope::capture_value(carrays::tagged{1, {2}}) == value::opaque("carrays::tagged"));
    CHECK(hookscope::capture_value(carrays::with_named_union{1, {2}}) == value::opaque("carrays::with_named_union"));
    CHECK(hookscope::capture_value(carrays::with_bit_fields{3, -64}) ==
          value::structure("carrays::with_bit_fields", {{"0", 3}, {"1", -64}}));
  }
  SECTION("property: random bytes in a char[16], NULs and bytes >= 0x80 among them") {
    std::mt19937 rng(20261203);
    for (int round = 0; round < 500; ++round) {
      carrays::c_header h{round, {}, {}};
      for (char& c : h.name) c = static_cast<char>(rng() % 4 == 0 ? 0 : rng() % 256);
      std::string want;
      for (char c : h.name) {
        if (c == '\0') break;
        want += c;
      }
      const value v = hookscope::capture_value(h);
      REQUIRE(v.fields()[1].second == value(want));
      REQUIRE(hookscope::value_from_json(hookscope::to_json(v)) == v);  // non-UTF-8 names too
    }
  }
}

namespace bases {
struct empty_base {};
struct tagged : empty_base {
  int v;
};
struct fields_base {  // an aggregate base with fields: what Boost.PFR 1.81 stops at with a static_assert
  int a;
  int b;
};
struct derived : fields_base {
  int c;
};
struct plain {
  int a;
};
struct flattened : fields_base {
  int c;
};
}  // namespace bases

template <>
struct hookscope::flatten_traits<bases::flattened> {
  static constexpr std::string_view name = "flattened";
  static std::vector<std::pair<std::string, int>> flatten(const bases::flattened& f) {
    return {{"a", f.a}, {"b", f.b}, {"c", f.c}};
  }
};

TEST_CASE("aggregates with a base class: detected before anything is bound; opaque unless flatten_traits") {
  STATIC_REQUIRE(hookscope::detail::has_base<bases::tagged>);
  STATIC_REQUIRE(hookscope::detail::has_base<bases::derived>);
  STATIC_REQUIRE_FALSE(hookscope::detail::has_base<bases::plain>);
  CHECK(hookscope::capture_value(bases::tagged{{}, 1}) == value::opaque("bases::tagged"));
  CHECK(hookscope::capture_value(bases::derived{{1, 2}, 3}) == value::opaque("bases::derived"));
  CHECK(hookscope::capture_value(bases::flattened{{1, 2}, 3}) ==
        value::structure("flattened", {{"a", 1}, {"b", 2}, {"c", 3}}));
}

TEST_CASE("std::variant: the index of its active alternative and that alternative") {
  using v_t = std::variant<int, std::string, std::monostate>;
  STATIC_REQUIRE(capturable<v_t>);
  STATIC_REQUIRE_FALSE(capturable<std::variant<int, odd::with_private>>);
  CHECK(hookscope::capture_value(v_t(3)) == value::variant(0, 3));
  CHECK(hookscope::capture_value(v_t("s")) == value::variant(1, "s"));
  CHECK(hookscope::capture_value(v_t(std::monostate{})) == value::variant(2, value()));
  CHECK(hookscope::capture_value(std::variant<int, odd::with_private>(odd::with_private(1))) ==
        value::variant(1, value::opaque("odd::with_private")));
  SECTION("property: the same alternative type at several indices keeps its index") {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
      const int x = static_cast<int>(rng() % 1000) - 500;
      std::variant<int, int, int> v;
      const std::size_t index = rng() % 3;
      if (index == 0) v.emplace<0>(x);
      if (index == 1) v.emplace<1>(x);
      if (index == 2) v.emplace<2>(x);
      const value captured = hookscope::capture_value(v);
      REQUIRE(captured == value::variant(index, x));
      REQUIRE(hookscope::value_from_json(hookscope::to_json(captured)) == captured);
    }
  }
  SECTION("valueless by exception: none") {
    struct throws_on_copy {
      throws_on_copy() = default;
      throws_on_copy(const throws_on_copy&) { throw std::runtime_error("copy"); }
      throws_on_copy& operator=(const throws_on_copy&) = default;
    };
    std::variant<int, throws_on_copy> v;
    CHECK_THROWS(v.emplace<1>(throws_on_copy()));
    REQUIRE(v.valueless_by_exception());
    CHECK(hookscope::capture_value(v) == value());
  }
}

TEST_CASE("ranges of std::byte: bytes") {
  SECTION("contiguous or not, empty or not") {
    const std::vector<std::byte> v{std::byte{0}, std::byte{0xff}};
    CHECK(hookscope::capture_value(v) == value::bytes(v));
    CHECK(hookscope::capture_value(std::span<const std::byte>(v)) == value::bytes(v));
    CHECK(hookscope::capture_value(std::list<std::byte>(v.begin(), v.end())) == value::bytes(v));
    CHECK(hookscope::capture_value(std::vector<std::byte>()) == value::bytes({}));
    CHECK(hookscope::to_json(hookscope::capture_value(v)) == R"({"bytes":"AP8="})");
  }
  SECTION("property: random bytes, written and read back") {
    std::mt19937 rng(11);
    for (int round = 0; round < 300; ++round) {
      std::vector<std::byte> raw(rng() % 70);
      for (std::byte& b : raw) b = static_cast<std::byte>(rng() % 256);
      const value v = hookscope::capture_value(raw);
      REQUIRE(std::vector<std::byte>(v.as_bytes().begin(), v.as_bytes().end()) == raw);
      REQUIRE(hookscope::value_from_json(hookscope::to_json(v)) == v);
    }
  }
}

namespace proxies {
// A range whose reference is a proxy class convertible to its value type (as std::vector<bool>'s).
struct bit {
  const std::uint8_t* byte;
  int index;
  operator bool() const { return ((*byte >> index) & 1) != 0; }
};
struct bits {
  std::uint8_t byte;
  struct iterator {
    using value_type = bool;
    using difference_type = std::ptrdiff_t;
    const std::uint8_t* byte;
    int index;
    bit operator*() const { return {byte, index}; }
    iterator& operator++() {
      ++index;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++index;
      return old;
    }
    bool operator==(const iterator& o) const { return index == o.index; }
  };
  iterator begin() const { return {&byte, 0}; }
  iterator end() const { return {&byte, 8}; }
};
}  // namespace proxies

TEST_CASE("ranges of proxy references: std::vector<bool>'s elements as bools, no other proxy converted") {
  STATIC_REQUIRE(std::is_same_v<hookscope::captured_t<std::vector<bool>>, hookscope::or_opaque<std::vector<bool>>>);
  SECTION("another proxy is captured by its own type's rule: its conversion (the program's code) is never called") {
    const value captured = hookscope::capture_value(proxies::bits{0b101});
    REQUIRE(captured.items().size() == 8);
    CHECK(captured.items()[2].type() == value::kind::structure);  // a proxies::bit: its pointer and index
    CHECK(captured.items()[2].fields()[1].second == value(2));
  }
  SECTION("property: random std::vector<bool>") {
    std::mt19937 rng(3);
    for (int round = 0; round < 200; ++round) {
      std::vector<bool> bools(rng() % 40);
      std::vector<value> want;
      for (std::size_t i = 0; i < bools.size(); ++i) {
        bools[i] = rng() % 2 == 0;
        want.emplace_back(static_cast<bool>(bools[i]));
      }
      REQUIRE(hookscope::capture_value(bools) == value::list(want));
    }
  }
}

namespace tree {
struct item;
}
template <>  // a list item's successor is captured as its pointee: the user's word that it points to an item
inline constexpr bool hookscope::capture_pointee<tree::item> = true;

namespace tree {
struct node {
  std::string op;
  std::vector<node> inputs;
};
struct item {
  int v;
  const item* next;
};
struct a;
struct b {
  std::vector<a> as;
};
struct a {
  int n;
  std::vector<b> bs;
};

// What the capture of `n` must be, written from the rule: a node at value-tree level `level` (its list of inputs
// one level below it, the inputs two), and a node at level max_capture_depth is the depth marker.
value expected(const node& n, unsigned level) {
  if (level >= hookscope::max_capture_depth) return value::opaque("tree::node", true);
  std::vector<value> inputs;
  for (const node& i : n.inputs) inputs.push_back(expected(i, level + 2));
  return value::structure("tree::node", {{"0", n.op}, {"1", value::list(std::move(inputs))}});
}

node random_tree(std::mt19937& rng, unsigned depth) {
  node n{std::string(1, static_cast<char>('a' + rng() % 26)), {}};
  if (depth > 0) {
    const unsigned children = depth > 25 ? 1 : rng() % 3;  // deep chains, bushy tops
    for (unsigned i = 0; i < children; ++i) n.inputs.push_back(random_tree(rng, depth - 1));
  }
  return n;
}

node chain(unsigned length) {
  node n{"leaf", {}};
  for (unsigned i = 1; i < length; ++i) n = node{"op", {std::move(n)}};
  return n;
}
}  // namespace tree

TEST_CASE("recursive types: a depth bound and a marker, no infinite instantiation") {
  STATIC_REQUIRE(capturable<tree::node>);
  STATIC_REQUIRE(capturable<tree::item>);
  STATIC_REQUIRE(capturable<tree::a>);
  STATIC_REQUIRE(capturable<std::vector<tree::node>>);
  STATIC_REQUIRE(hookscope::max_capture_depth == 32);

  SECTION("chains around the bound") {
    for (unsigned length : {1U, 2U, 15U, 16U, 17U, 18U, 200U, 5000U}) {
      const tree::node n = tree::chain(length);
      REQUIRE(hookscope::capture_value(n) == tree::expected(n, 0));
    }
  }
  SECTION("property: random trees, captured as the rule says, written and read back") {
    std::mt19937 rng(5);
    for (int round = 0; round < 40; ++round) {
      const tree::node n = tree::random_tree(rng, rng() % 40);
      const value v = hookscope::capture_value(n);
      REQUIRE(v == tree::expected(n, 0));
      REQUIRE(hookscope::value_from_json(hookscope::to_json(v)) == v);
    }
  }
  SECTION("a cyclic linked list ends at the bound") {
    tree::item x{1, nullptr};
    const tree::item y{2, &x};
    x.next = &y;
    value v = hookscope::capture_value(x);
    unsigned structs = 0;
    while (v.type() == value::kind::structure) {
      ++structs;
      v = value(v.fields()[1].second);
    }
    CHECK(structs == hookscope::max_capture_depth);  // at levels 0 .. 31: a struct is one level, its pointee the next
    CHECK(v == value::opaque("tree::item", true));
  }
  SECTION("mutual recursion") {
    const tree::a inner{2, {}};
    const tree::a outer{1, {tree::b{{inner}}}};
    CHECK(hookscope::capture_value(outer) ==
          value::structure(
              "tree::a",
              {{"0", 1},
               {"1", value::list({value::structure(
                         "tree::b",
                         {{"0", value::list({value::structure("tree::a", {{"0", 2}, {"1", value::list({})}})})}})})}}));
  }
  SECTION("threads: each capture counts its own depth") {
    std::vector<std::thread> threads;
    std::array<bool, 4> ok{};
    for (unsigned t = 0; t < ok.size(); ++t) {
      threads.emplace_back([t, &ok] {
        const tree::node n = tree::chain(12 + 3 * t);
        bool all = true;
        for (int i = 0; i < 20; ++i) all = all && hookscope::capture_value(n) == tree::expected(n, 0);
        ok[t] = all;
      });
    }
    for (std::thread& th : threads) th.join();
    CHECK(ok == std::array<bool, 4>{true, true, true, true});
  }
}

namespace tensors {
struct dynamic_tensor {  // an ONNX-style shape, -1 for unknown
  std::vector<std::int64_t> dims;
};
}  // namespace tensors

template <>
struct hookscope::tensor_traits<tensors::dynamic_tensor> {
  static const std::vector<std::int64_t>& shape(const tensors::dynamic_tensor& t) { return t.dims; }
  static hookscope::dtype dtype(const tensors::dynamic_tensor&) { return hookscope::dtype::float32; }
};

TEST_CASE("tensors: a negative dimension is refused, naming it and the shape") {
  const auto message = [](std::vector<std::int64_t> dims) {
    try {
      (void)hookscope::capture_value(tensors::dynamic_tensor{std::move(dims)});
    } catch (const hookscope::value_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message({-1, 7}) ==
        "hookscope: capture: tensor_traits<T>::shape gave the negative dimension -1 at index 0 of [-1,7]");
  CHECK(message({2, 3, -9223372036854775807 - 1}) ==
        "hookscope: capture: tensor_traits<T>::shape gave the negative dimension -9223372036854775808 at index 2 of "
        "[2,3,-9223372036854775808]");
  CHECK(message({0, 5}) == "no error");  // zero is a dimension
  CHECK(message({}) == "no error");      // a scalar
  CHECK_THROWS_AS(hookscope::capture_value(std::vector<tensors::dynamic_tensor>{{{1}}, {{-2}}}),
                  hookscope::value_error);
}

TEST_CASE("scalars and strings: the hostile ones") {
  CHECK(hookscope::capture_value(static_cast<const char*>(nullptr)) == value());  // never read through
  CHECK(hookscope::capture_value(static_cast<const char*>("a\xff"), {.read_pointee = true}) ==
        value(std::string("a\xff")));
  enum class small : std::uint8_t { a = 255 };
  CHECK(hookscope::capture_value(small::a) == value(255));
  enum class flag : bool { yes = true };
  CHECK(hookscope::capture_value(flag::yes) == value(true));
  CHECK(hookscope::capture_value(std::numeric_limits<std::int64_t>::min()) ==
        value(std::numeric_limits<std::int64_t>::min()));
  CHECK(hookscope::capture_value(std::u8string(u8"\u00e9")) == value(std::string("\xc3\xa9")));
}

namespace {
struct incomplete_element;

// An endless range as std::views::iota(0) is one; written by hand because Clang 14 cannot compile libstdc++ 12's
// iota_view. `bound` makes the same counter end, to show that only the unreachable end makes it opaque.
struct counter_iterator {
  using value_type = int;
  using difference_type = std::ptrdiff_t;
  int at = 0;
  int operator*() const { return at; }
  counter_iterator& operator++() {
    ++at;
    return *this;
  }
  counter_iterator operator++(int) {
    counter_iterator before = *this;
    ++at;
    return before;
  }
  bool operator==(const counter_iterator&) const = default;
};
template <class End>
struct counter {
  End last{};
  counter_iterator begin() const { return {}; }
  End end() const { return last; }
};
using endless_counter = counter<std::unreachable_sentinel_t>;
using bounded_counter = counter<counter_iterator>;
}  // namespace

TEST_CASE("capturable: a span of an incomplete type and an endless range are opaque, asked without error") {
  // std::span<T>'s end() needs sizeof(T): asking whether it is a range would not compile.
  STATIC_REQUIRE_FALSE(hookscope::capturable<std::span<incomplete_element>>);
  STATIC_REQUIRE_FALSE(hookscope::capturable<std::span<const incomplete_element>>);
  // An endless range would capture for ever.
  STATIC_REQUIRE(std::ranges::range<const endless_counter>);
  STATIC_REQUIRE_FALSE(hookscope::capturable<endless_counter>);
  CHECK(hookscope::to_json(hookscope::capture_value(endless_counter{})).starts_with(R"({"opaque":)"));
  STATIC_REQUIRE(hookscope::capturable<bounded_counter>);
  CHECK(hookscope::capture_value(bounded_counter{{3}}) == hookscope::value::list({0, 1, 2}));
}

namespace hostile {
int side_effects = 0;

struct overloads_address_of {  // as ATL's CComPtr: unary & gives something else
  int v;
  const overloads_address_of* operator&() const {
    ++side_effects;
    return nullptr;
  }
};
struct deletes_address_of {
  int v;
  const deletes_address_of* operator&() const = delete;
};
struct takes_comma {
  int v;
};
// A catch-all comma operator in the class's namespace: argument-dependent lookup finds it for any expression `a, b`
// whose operand is of one of its types.
template <class A, class B>
int operator,(const A&, const B&) {
  ++side_effects;
  return 0;
}
// Converts to std::string_view, with a side effect: the string rule takes only the standard string types.
class string_like {
 public:
  explicit string_like(std::string s) : s_(std::move(s)) {}
  operator std::string_view() const {
    ++side_effects;
    return s_;
  }

 private:
  std::string s_;
};
struct holds_them {
  overloads_address_of a;
  deletes_address_of d;
  takes_comma c;
};
}  // namespace hostile

TEST_CASE("no operator of the program is called: unary operator&, operator, and conversions") {
  hostile::side_effects = 0;
  SECTION("operator& overloaded or deleted, a catch-all operator, in aggregates, variants, ranges, optionals") {
    const hostile::holds_them held{{1}, {2}, {3}};
    CHECK(hookscope::capture_value(held).fields()[1].second.fields()[0].second == value(2));
    using each = std::variant<hostile::overloads_address_of, hostile::deletes_address_of, hostile::takes_comma>;
    CHECK(hookscope::capture_value(each(hostile::deletes_address_of{4})).alternative().fields()[0].second == value(4));
    CHECK(hookscope::capture_value(std::vector<hostile::overloads_address_of>{{5}, {6}}).items().size() == 2);
    CHECK(hookscope::capture_value(std::optional<hostile::takes_comma>(hostile::takes_comma{7})).fields().size() == 1);
    CHECK(hookscope::capture_value(std::make_tuple(hostile::takes_comma{8}, hostile::overloads_address_of{9}))
              .items()
              .size() == 2);
    CHECK(hookscope::detail::format_value(held).starts_with("<"));
    CHECK(hostile::side_effects == 0);
  }
  SECTION("a class convertible to std::string_view: captured by its own rule (here opaque), never converted") {
    const hostile::string_like s("text");
    STATIC_REQUIRE_FALSE(capturable<hostile::string_like>);
    CHECK(hookscope::capture_value(s).type() == value::kind::opaque);
    CHECK(hookscope::capture_value(std::vector<hostile::string_like>{s}).items()[0].type() == value::kind::opaque);
    CHECK(hookscope::detail::format_value(s).starts_with("<"));  // no operator<<: its type, not the conversion
    CHECK(hostile::side_effects == 0);
  }
}
