// inference_error's kind and facts: what a front end decides from and composes its own sentence with (Python's
// InputObserver gives the reference observers' sentences), never the message.
#include "hookscope/shapes.hpp"

#include <catch2/catch.hpp>

#include "shapes_scenarios.hpp"

#include <cstddef>
#include <string>
#include <variant>

using namespace shapes_test;

TEST_CASE("inference_error: kinds and facts") {
  const auto caught = [](auto&& f) {
    try {
      f();
    } catch (const hookscope::inference_error& e) {
      return e;
    }
    FAIL("no inference_error");
    return hookscope::inference_error("unreachable");
  };
  const auto fact = [](const hookscope::inference_error& e, const std::string& name) {
    for (const auto& f : e.facts()) {
      if (f.name == name) return f.value;
    }
    FAIL("no fact " << name);
    return std::variant<std::size_t, std::string>{};
  };
  using kind = hookscope::inference_error_kind;
  using fact_value = std::variant<std::size_t, std::string>;
  SECTION("leaves that differ: the argument, its position, the counts, the call") {
    shape_engine e;
    e.set_parameters({param("x"), param("y")});
    e.add_call(positional({t({5, 7}), value::list({t({1, 7})})}));
    e.add_call(positional({t({5, 7}), value::list({t({1, 7}), t({1, 7})})}));
    const auto error = caught([&] { (void)e.infer_dynamic_shapes(); });
    CHECK(error.kind() == kind::leaf_count_differs);
    CHECK(fact(error, "argument") == fact_value(std::string("y")));
    CHECK(fact(error, "position") == fact_value(std::size_t{1}));
    CHECK(fact(error, "count") == fact_value(std::size_t{2}));
    CHECK(fact(error, "previous") == fact_value(std::size_t{1}));
    CHECK(fact(error, "call") == fact_value(std::size_t{1}));
  }
  SECTION("a keyword the best candidate lacks") {
    shape_engine e;
    e.set_parameters({param("x", value()), param("y", value())});
    e.add_call(named({{"x", t({5, 6})}}));
    e.add_call(named({{"y", t({1, 7})}}));
    const auto error = caught([&] { (void)e.infer_dynamic_shapes(); });
    CHECK(error.kind() == kind::named_argument_missing);
    CHECK(fact(error, "argument") == fact_value(std::string("y")));
    CHECK(fact(error, "best_keywords") == fact_value(std::string("x")));
  }
  SECTION("different constants") {
    shape_engine e;
    e.set_parameters({param("x"), param("add", value(true))});
    e.add_call(named({{"x", t({5, 6})}}));
    e.add_call(named({{"x", t({5, 6})}, {"add", false}}));
    const auto error = caught([&] { (void)e.infer_dynamic_shapes(); });
    CHECK(error.kind() == kind::constants_differ);
    CHECK(fact(error, "call") == fact_value(std::size_t{1}));
    CHECK(fact(error, "best_call") == fact_value(std::size_t{0}));
  }
  SECTION("calls the references cannot align on the best candidate, which leaves the argument out, align (B5)") {
    shape_engine e;
    e.set_parameters({param("x"), param("y", value()), param("z", value())});
    e.add_call(positional({t({2, 3}), value::list({t({2}), t({2})})}));
    e.add_call(positional({t({3, 3}), value(), t({3}), t({3})}));
    CHECK_NOTHROW((void)e.infer_dynamic_shapes());
  }
  SECTION("a value_if_missing position the call does not give") {
    shape_engine e;
    e.set_parameters({param("x"), param("y", value())});
    e.value_if_missing(1, t({0}));
    const auto error = caught([&] { e.add_call(positional({t({5, 6})})); });
    CHECK(error.kind() == kind::if_missing_position_not_given);
    CHECK(fact(error, "position") == fact_value(std::size_t{1}));
    CHECK(fact(error, "given") == fact_value(std::size_t{1}));
  }
  SECTION("any other refusal: kind other, no facts") {
    shape_engine e;
    const auto error = caught([&] { (void)e.infer_dynamic_shapes(); });
    CHECK(error.kind() == kind::other);
    CHECK(error.facts().empty());
  }
}
