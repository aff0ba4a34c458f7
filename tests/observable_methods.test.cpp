// Member functions annotated with HOOKSCOPE_OBSERVABLE_METHOD, HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD or by hand
// (hookscope/observable.hpp) that a plain call treats with care: classes with their own unary operator& (overloaded
// or deleted), and methods with ref-qualifiers, each called on the objects the method itself accepts.
#include "hookscope/observable.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace methods {

// A smart pointer's shape (ATL's CComPtr): its unary operator& gives another object's address (the address of the
// interface pointer it holds).
struct com_ptr {
  int id;
  com_ptr* decoy;
  std::vector<int> queried;  // what this object's query_impl was given

  explicit com_ptr(int i, com_ptr* d = nullptr) : id(i), decoy(d) {}

  com_ptr* operator&() noexcept { return decoy; }
  const com_ptr* operator&() const noexcept { return decoy; }

  int query_impl(int iid, int flags = 0) {
    queried.push_back(iid);
    return id * 100 + iid + flags;
  }
  int count_impl() const noexcept { return static_cast<int>(queried.size()) + id * 100; }
  HOOKSCOPE_OBSERVABLE_METHOD(com_ptr, query, query_impl, iid, flags = 0);
  HOOKSCOPE_OBSERVABLE_METHOD(com_ptr, count, count_impl);
};

// A class whose address cannot be taken with `&` at all.
struct sealed {
  int id = 0;
  void operator&() const = delete;

  int read_impl(int offset, int scale = 1) const { return (id + offset) * scale; }
  int bump_impl(int by) && noexcept { return id += by; }
  HOOKSCOPE_OBSERVABLE_METHOD(sealed, read, read_impl, offset, scale = 1);
  HOOKSCOPE_OBSERVABLE_METHOD(sealed, bump, bump_impl, by);
};

// Every ref-qualifier, with and without noexcept; each implementation records that it ran, on what.
struct qualified {
  static inline std::vector<std::string> ran;
  int base = 0;

  int lvalue_impl(int x) & {
    ran.push_back("&");
    return base + x;
  }
  int lvalue_noexcept_impl(int x) & noexcept {
    ran.push_back("& noexcept");
    return base + x;
  }
  int const_lvalue_impl(int x) const& {
    ran.push_back("const&");
    return base + x;
  }
  int const_lvalue_noexcept_impl(int x) const& noexcept {
    ran.push_back("const& noexcept");
    return base + x;
  }
  int rvalue_impl(int x) && {
    ran.push_back("&&");
    return base + x;
  }
  int rvalue_noexcept_impl(int x) && noexcept {
    ran.push_back("&& noexcept");
    return base + x;
  }
  int const_rvalue_impl(int x) const&& {
    ran.push_back("const&&");
    return base + x;
  }
  int const_rvalue_noexcept_impl(int x) const&& noexcept {
    ran.push_back("const&& noexcept");
    return base + x;
  }
  int finish_impl(int x, int y = 7) && {
    ran.push_back("&& finish");
    return base + x * 10 + y;
  }
  int check_impl(int x) && {
    if (x < 0) throw std::invalid_argument("negative");
    return x;
  }

  HOOKSCOPE_OBSERVABLE_METHOD(qualified, lvalue, lvalue_impl, x);
  HOOKSCOPE_OBSERVABLE_METHOD(qualified, lvalue_noexcept, lvalue_noexcept_impl, x);
  HOOKSCOPE_OBSERVABLE_METHOD(qualified, const_lvalue, const_lvalue_impl, x);
  HOOKSCOPE_OBSERVABLE_METHOD(qualified, const_lvalue_noexcept, const_lvalue_noexcept_impl, x);
  HOOKSCOPE_OBSERVABLE_METHOD(qualified, rvalue, rvalue_impl, x);
  HOOKSCOPE_OBSERVABLE_METHOD(qualified, rvalue_noexcept, rvalue_noexcept_impl, x);
  HOOKSCOPE_OBSERVABLE_METHOD(qualified, const_rvalue, const_rvalue_impl, x);
  HOOKSCOPE_OBSERVABLE_METHOD(qualified, const_rvalue_noexcept, const_rvalue_noexcept_impl, x);
  HOOKSCOPE_OBSERVABLE_METHOD(qualified, finish, finish_impl, x, y = 7);
  HOOKSCOPE_OBSERVABLE_METHOD(qualified, check, check_impl, x);
};

// A pair of overloads by ref-qualifier, as containers write them: a copy from an lvalue, a move from an rvalue, each
// with a default of its own (a call by name that reached the wrong overload would take the other default).
struct reader {
  static inline std::vector<std::string> ran;
  std::string text;

  std::string take(std::size_t n = 3) const& {
    ran.push_back("copy");
    return text.substr(0, n);
  }
  std::string take(std::size_t n = 5) && {
    ran.push_back("move");
    std::string out = std::move(text);
    out.resize(std::min(n, out.size()));
    return out;
  }
  HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(reader, take_copy, std::string(std::size_t) const&, take, n = 3);
  HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(reader, take_moved, std::string(std::size_t) &&, take, n = 5);
};

// An observable written by hand for one of them.
using moved_by_hand = hookscope::observable<static_cast<int (qualified::*)(int) &&>(&qualified::rvalue_impl),
                                            "methods::qualified_rvalue_by_hand", "x">;

// Whether the observable `Observable` takes `Object` as its method's object (a refused object has hookscope's message
// instead: tests/compile_fail/observable_method_*).
template <class Observable, class Object>
inline constexpr bool takes_object = std::is_same_v<std::invoke_result_t<Observable, Object, int>, int>;

}  // namespace methods

using methods::com_ptr;
using methods::qualified;
using methods::reader;
using methods::sealed;

TEST_CASE("HOOKSCOPE_OBSERVABLE_METHOD on a class with its own operator&") {
  SECTION("overloaded operator&: the method runs on the object it is called on, and its callbacks see that call") {
    com_ptr decoy(9);
    com_ptr ptr(1, std::addressof(decoy));
    REQUIRE(&ptr == std::addressof(decoy));  // what the class's own operator& gives
    std::vector<int> results;
    std::vector<std::size_t> queried_before;
    auto pre = com_ptr::query_observers().pre.add([&](const auto& ctx) {
      CHECK(ctx.template arg<"iid">() == 5);
      queried_before.push_back(ptr.queried.size());
    });
    auto post = com_ptr::query_observers().post.add([&](const auto& ctx) { results.push_back(*ctx.return_value()); });
    CHECK(ptr.query(5) == 105);     // flags left to its default
    CHECK(ptr.query(5, 2) == 107);  // every argument given
    CHECK(std::as_const(ptr).count() == 102);
    CHECK(ptr.queried == std::vector<int>{5, 5});
    CHECK(decoy.queried.empty());
    CHECK(results == (hookscope::hooks_enabled ? std::vector<int>{105, 107} : std::vector<int>{}));
    CHECK(queried_before == (hookscope::hooks_enabled ? std::vector<std::size_t>{0, 1} : std::vector<std::size_t>{}));
  }
  SECTION("deleted operator&: the annotations compile and run, arguments omitted or not") {
    sealed s{.id = 4};
    int seen = 0;
    auto post = sealed::read_observers().post.add([&](const auto& ctx) { seen = *ctx.return_value(); });
    CHECK(s.read(1) == 5);
    CHECK(seen == (hookscope::hooks_enabled ? 5 : 0));
    CHECK(std::as_const(s).read(1, 3) == 15);
    CHECK(seen == (hookscope::hooks_enabled ? 15 : 0));
    CHECK(std::move(s).bump(2) == 6);
    CHECK(s.id == 6);
  }
}

TEST_CASE("HOOKSCOPE_OBSERVABLE_METHOD with ref-qualified methods") {
  qualified::ran.clear();
  qualified q{.base = 100};
  std::vector<int> args;
  std::vector<int> results;
  // Every annotation's callbacks record the argument and the result they see.
  const auto watch = [&](const auto& observers) {
    return std::pair{observers.pre.add([&](const auto& ctx) { args.push_back(ctx.template arg<"x">()); }),
                     observers.post.add([&](const auto& ctx) { results.push_back(*ctx.return_value()); })};
  };
  const auto seen = [](std::vector<int> values) { return hookscope::hooks_enabled ? values : std::vector<int>{}; };

  SECTION("&: on a non-const lvalue") {
    auto subs = watch(qualified::lvalue_observers());
    auto subs_noexcept = watch(qualified::lvalue_noexcept_observers());
    CHECK(q.lvalue(1) == 101);
    CHECK(q.lvalue_noexcept(2) == 102);
    STATIC_REQUIRE(!noexcept(qualified::lvalue_observable{}(q, 1)));
    STATIC_REQUIRE(noexcept(qualified::lvalue_noexcept_observable{}(q, 1)));
    CHECK(qualified::ran == std::vector<std::string>{"&", "& noexcept"});
    CHECK(args == seen({1, 2}));
    CHECK(results == seen({101, 102}));
  }
  SECTION("const&: on any object") {
    auto subs = watch(qualified::const_lvalue_observers());
    auto subs_noexcept = watch(qualified::const_lvalue_noexcept_observers());
    CHECK(q.const_lvalue(1) == 101);
    CHECK(std::as_const(q).const_lvalue(2) == 102);
    CHECK(std::move(q).const_lvalue(3) == 103);
    CHECK(std::move(std::as_const(q)).const_lvalue_noexcept(4) == 104);
    STATIC_REQUIRE(noexcept(qualified::const_lvalue_noexcept_observable{}(std::as_const(q), 1)));
    CHECK(qualified::ran == std::vector<std::string>{"const&", "const&", "const&", "const& noexcept"});
    CHECK(args == seen({1, 2, 3, 4}));
    CHECK(results == seen({101, 102, 103, 104}));
  }
  SECTION("&&: on a non-const rvalue") {
    auto subs = watch(qualified::rvalue_observers());
    auto subs_noexcept = watch(qualified::rvalue_noexcept_observers());
    CHECK(std::move(q).rvalue(1) == 101);
    CHECK(qualified{.base = 200}.rvalue_noexcept(2) == 202);
    STATIC_REQUIRE(!noexcept(qualified::rvalue_observable{}(std::move(q), 1)));
    STATIC_REQUIRE(noexcept(qualified::rvalue_noexcept_observable{}(std::move(q), 1)));
    CHECK(qualified::ran == std::vector<std::string>{"&&", "&& noexcept"});
    CHECK(args == seen({1, 2}));
    CHECK(results == seen({101, 202}));
  }
  SECTION("const&&: on an rvalue, const or not") {
    auto subs = watch(qualified::const_rvalue_observers());
    auto subs_noexcept = watch(qualified::const_rvalue_noexcept_observers());
    CHECK(std::move(q).const_rvalue(1) == 101);
    CHECK(std::move(std::as_const(q)).const_rvalue_noexcept(2) == 102);
    STATIC_REQUIRE(noexcept(qualified::const_rvalue_noexcept_observable{}(std::move(std::as_const(q)), 1)));
    CHECK(qualified::ran == std::vector<std::string>{"const&&", "const&& noexcept"});
    CHECK(args == seen({1, 2}));
    CHECK(results == seen({101, 102}));
  }
  SECTION("the objects each observable takes: those its method is called on") {
    using qualified_ref = qualified&;
    using const_ref = const qualified&;
    using rvalue = qualified&&;
    using const_rvalue = const qualified&&;
    STATIC_REQUIRE(methods::takes_object<qualified::lvalue_observable, qualified_ref>);
    STATIC_REQUIRE(!methods::takes_object<qualified::lvalue_observable, const_ref>);
    STATIC_REQUIRE(!methods::takes_object<qualified::lvalue_observable, rvalue>);
    STATIC_REQUIRE(!methods::takes_object<qualified::lvalue_observable, const_rvalue>);
    STATIC_REQUIRE(methods::takes_object<qualified::const_lvalue_observable, qualified_ref>);
    STATIC_REQUIRE(methods::takes_object<qualified::const_lvalue_observable, const_ref>);
    STATIC_REQUIRE(methods::takes_object<qualified::const_lvalue_observable, rvalue>);
    STATIC_REQUIRE(methods::takes_object<qualified::const_lvalue_observable, const_rvalue>);
    STATIC_REQUIRE(!methods::takes_object<qualified::rvalue_observable, qualified_ref>);
    STATIC_REQUIRE(!methods::takes_object<qualified::rvalue_observable, const_ref>);
    STATIC_REQUIRE(methods::takes_object<qualified::rvalue_observable, rvalue>);
    STATIC_REQUIRE(!methods::takes_object<qualified::rvalue_observable, const_rvalue>);
    STATIC_REQUIRE(!methods::takes_object<qualified::const_rvalue_observable, qualified_ref>);
    STATIC_REQUIRE(!methods::takes_object<qualified::const_rvalue_observable, const_ref>);
    STATIC_REQUIRE(methods::takes_object<qualified::const_rvalue_observable, rvalue>);
    STATIC_REQUIRE(methods::takes_object<qualified::const_rvalue_observable, const_rvalue>);
  }
  SECTION("trailing arguments left to their defaults") {
    auto subs = watch(qualified::finish_observers());
    bool y_given = true;
    auto given = qualified::finish_observers().pre.add([&](const auto& ctx) { y_given = ctx.has_arg(1); });
    CHECK(std::move(q).finish(1) == 117);
    CHECK(y_given == !hookscope::hooks_enabled);
    CHECK(std::move(q).finish(1, 2) == 112);
    CHECK(qualified::ran == std::vector<std::string>{"&& finish", "&& finish"});
    CHECK(args == seen({1, 1}));
    CHECK(results == seen({117, 112}));
  }
  SECTION("post callbacks when it throws, then the exception propagates") {
    bool threw = false;
    auto post = qualified::check_observers().post.add([&](const auto& ctx) { threw = ctx.exception() != nullptr; });
    CHECK_THROWS_AS(std::move(q).check(-1), std::invalid_argument);
    CHECK(threw == hookscope::hooks_enabled);
    CHECK(std::move(q).check(3) == 3);
    CHECK_FALSE(threw);
  }
  SECTION("registry names and signatures") {
    CHECK(qualified::rvalue_observable::info.name == "methods::qualified::rvalue");
    CHECK(qualified::const_rvalue_noexcept_observable::info.signature ==
          "int (methods::qualified::*)(int) const && noexcept");
  }
}

TEST_CASE("HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD") {
  reader::ran.clear();
  std::vector<std::string> results;
  std::vector<bool> n_given;
  const auto watch = [&](const auto& observers) {
    return std::pair{observers.pre.add([&](const auto& ctx) { n_given.push_back(ctx.has_arg(0)); }),
                     observers.post.add([&](const auto& ctx) { results.push_back(*ctx.return_value()); })};
  };
  auto copies = watch(reader::take_copy_observers());
  auto moves = watch(reader::take_moved_observers());

  SECTION("a pair by ref-qualifier: the overload of the object's value category runs, with its own defaults") {
    reader r{.text = "abcdefgh"};
    CHECK(r.take_copy() == "abc");
    CHECK(r.take_copy(1) == "a");
    CHECK(std::move(r).take_moved() == "abcde");
    CHECK(r.text.empty());  // moved from
    CHECK(reader{.text = "xyz"}.take_moved(2) == "xy");
    CHECK(reader::ran == std::vector<std::string>{"copy", "copy", "move", "move"});
    if (hookscope::hooks_enabled) {
      CHECK(results == std::vector<std::string>{"abc", "a", "abcde", "xy"});
      CHECK(n_given == std::vector<bool>{false, true, false, true});
    } else {
      CHECK(results.empty());
    }
  }
  SECTION("a const& overload takes rvalues too, as the method does") {
    CHECK(reader{.text = "abcdefgh"}.take_copy() == "abc");
    CHECK(reader::ran == std::vector<std::string>{"copy"});
  }
}

TEST_CASE("observable written by hand for a ref-qualified method") {
  qualified::ran.clear();
  int seen = 0;
  auto pre = methods::moved_by_hand::observers.pre.add([&](const auto& ctx) { seen = ctx.template arg<"x">(); });
  CHECK(methods::moved_by_hand{}(qualified{.base = 10}, 5) == 15);
  CHECK(qualified::ran == std::vector<std::string>{"&&"});
  CHECK(seen == (hookscope::hooks_enabled ? 5 : 0));
  STATIC_REQUIRE(methods::takes_object<methods::moved_by_hand, qualified&&>);
  STATIC_REQUIRE(!methods::takes_object<methods::moved_by_hand, qualified&>);
}

// Issue 36's adversary: docs/observable.md (Methods) says "`noexcept` is kept", and the observables are noexcept
// (the STATIC_REQUIREs above), but the member `name(args...)` the annotation adds to the class, the one a program
// calls, is not: noexcept(q.lvalue_noexcept(1)) is false where noexcept(q.lvalue_noexcept_impl(1)) is true, in enabled
// and disabled builds alike, so code choosing by noexcept (std::move_if_noexcept, noexcept(noexcept(...)) wrappers,
// static_asserts) changes with the annotation.
TEST_CASE("HOOKSCOPE_OBSERVABLE_METHOD keeps noexcept on the member a program calls", "[!shouldfail]") {
  qualified q;
  const sealed s{};
  CHECK(noexcept(q.lvalue_noexcept_impl(1)));
  CHECK(noexcept(q.lvalue_noexcept(1)));
  CHECK(noexcept(std::as_const(q).const_lvalue_noexcept(1)));
  CHECK(noexcept(std::move(q).rvalue_noexcept(1)));
  CHECK(noexcept(std::move(std::as_const(q)).const_rvalue_noexcept(1)));
  CHECK(noexcept(sealed{}.bump(1)));
  CHECK(!noexcept(q.lvalue(1)));  // holds today: a method without noexcept stays so
  (void)s;
}
