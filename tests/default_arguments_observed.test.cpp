// How callbacks, captures and records see calls that leave trailing arguments to their defaults: the omitted
// arguments are absent (call_context.hpp, erased_call.hpp). Part of the `default_arguments` test.
#include "hookscope/observable.hpp"
#include "hookscope/load.hpp"
#include "hookscope/recorder.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/value_errors.hpp"

#include <catch2/catch.hpp>

#include "default_arguments_functions.hpp"

#include <array>
#include <atomic>
#include <climits>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

using Catch::Matchers::Contains;
using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;

using namespace defaults;

#if HOOKSCOPE_ENABLED

TEST_CASE("call_context::has_arg, find_arg and arg with omitted arguments") {
  std::vector<std::string> seen;
  auto sub = defaults::scale.observers.pre.add([&](const auto& ctx) {
    std::string line = std::to_string(ctx.args_given());
    line += ctx.template has_arg<0>() ? " x" : " -";
    line += ctx.template has_arg<"factor">() ? " factor" : " -";
    line += ctx.template has_arg<2>() ? " times" : " -";
    CHECK(ctx.template find_arg<"x">() == &ctx.template arg<0>());
    CHECK((ctx.template find_arg<1>() == nullptr) == !ctx.template has_arg<1>());
    CHECK((ctx.template find_arg<"times">() == nullptr) == !ctx.has_arg(2));  // the erased form too
    if (ctx.template has_arg<"factor">()) line += " " + std::to_string(ctx.template arg<"factor">());
    seen.push_back(line);
  });
  defaults::scale(1.0);
  defaults::scale(1.0, 4.0);
  defaults::scale(1.0, 4.0, 2);
  CHECK(seen == std::vector<std::string>{"1 x - -", "2 x factor - 4.000000", "3 x factor times 4.000000"});

  SECTION("arg and args on an omitted argument throw value_error naming the function and the argument") {
    std::vector<std::string> errors;
    auto thrower = defaults::scale.observers.pre.add([&](const auto& ctx) {
      try {
        (void)ctx.template arg<"times">();
      } catch (const hookscope::value_error& e) {
        errors.emplace_back(e.what());
      }
      try {
        (void)ctx.template arg<2>();
      } catch (const hookscope::value_error& e) {
        errors.emplace_back(e.what());
      }
      try {
        (void)ctx.args();
      } catch (const hookscope::value_error& e) {
        errors.emplace_back(e.what());
      }
    });
    defaults::scale(1.0, 2.0);
    REQUIRE(errors.size() == 3);
    CHECK_THAT(errors[0], Contains("hookscope: call_context::arg<\"times\">()") &&
                              Contains("'defaults::scale' omitted argument 2 ('times')") && Contains("has_arg"));
    CHECK_THAT(errors[1], Contains("hookscope: call_context::arg<2>()") && Contains("('times')"));
    CHECK_THAT(errors[2], Contains("hookscope: call_context::args()") && Contains("argument 2 ('times')"));
    for (const std::string& e : errors) {  // the library's prefix once, at the start
      CHECK(e.rfind("hookscope: call_context::", 0) == 0);
      CHECK(e.find("hookscope: ", 1) == std::string::npos);
    }
    errors.clear();
    defaults::scale(1.0, 2.0, 3);  // nothing omitted: nothing thrown
    CHECK(errors.empty());
  }
  SECTION("post callbacks see the same arguments and the result") {
    std::vector<std::pair<std::size_t, double>> post;
    auto after = defaults::scale.observers.post.add(
        [&](const auto& ctx) { post.emplace_back(ctx.args_given(), *ctx.return_value()); });
    defaults::scale(2.0);
    CHECK(post == std::vector<std::pair<std::size_t, double>>{{1, 4.0}});
  }
}

TEST_CASE("erased_call with omitted arguments") {
  std::vector<std::string> lines;
  std::vector<std::size_t> field_counts;
  auto sub = defaults::describe.info.pre().add([&](const hookscope::erased_call& call) {
    std::string line = std::to_string(call.args_given()) + "/" + std::to_string(call.arg_count());
    for (std::size_t i = 0; i < call.arg_count(); ++i) {
      line += call.has_arg(i) ? " +" : " -";
      CHECK((call.arg_address(i) == nullptr) == !call.has_arg(i));
      if (!call.has_arg(i)) CHECK(call.format_arg(i).empty());
    }
    CHECK_FALSE(call.has_arg(call.arg_count()));
    CHECK(call.arg_address(99) == nullptr);
    const hookscope::value_fields fields = call.capture_args();
    field_counts.push_back(fields.size());
    for (std::size_t i = 0; i < fields.size(); ++i) CHECK(fields[i].first == call.arg_name(i));
    lines.push_back(line);
  });
  defaults::describe("a");
  defaults::describe("a", 1.0);
  defaults::describe("a", 1.0, 2);
  CHECK(lines == std::vector<std::string>{"1/3 + - -", "2/3 + + -", "3/3 + + +"});
  CHECK(field_counts == std::vector<std::size_t>{1, 2, 3});
}

TEST_CASE("call_recorder with omitted arguments") {
  hookscope::call_recorder rec(defaults::forward, {.store_n_calls = hookscope::unlimited});
  defaults::forward(ids(1, 5));
  defaults::forward(ids(1, 6), ids(1, 6));
  defaults::forward(ids(2, 7));
  rec.stop();
  const std::vector<hookscope::call_record> calls = rec.calls();
  REQUIRE(calls.size() == 3);
  CHECK(calls[0].inputs.kwargs == hookscope::value_fields{{"input_ids", ids(1, 5)}});
  CHECK(calls[1].inputs.kwargs == hookscope::value_fields{{"input_ids", ids(1, 6)}, {"attention_mask", ids(1, 6)}});
  CHECK(calls[2].inputs.kwargs == hookscope::value_fields{{"input_ids", ids(2, 7)}});

  SECTION("round trip: what the recorder writes, the reader reads, with no entry for the omitted argument") {
    std::vector<std::string> lines;
    const std::string text = rec.to_jsonl();
    for (std::size_t start = 0; start < text.size();) {
      const std::size_t end = text.find('\n', start);
      lines.push_back(text.substr(start, end - start));
      start = end == std::string::npos ? text.size() : end + 1;
    }
    REQUIRE(lines.size() == 3);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const hookscope::call_record read = hookscope::parse_record(lines[i]);
      CHECK(read.inputs.kwargs == calls[i].inputs.kwargs);
      INFO(lines[i]);
      CHECK((lines[i].find(R"(["attention_mask",)") != std::string::npos) == (i == 1));  // a kwargs entry
    }
  }
  SECTION("the shapes inferred from such records treat the omitted argument as an absent optional input") {
    const auto path = std::filesystem::temp_directory_path() /
                      ("hookscope_default_arguments_" + std::to_string(::getpid()) + ".jsonl");
    rec.write_jsonl(path);
    const hookscope::loaded_engine loaded = hookscope::load_engine({path.string()});
    std::filesystem::remove(path);
    CHECK(loaded.calls_read == 3);
    const std::string shapes = loaded.engine.infer_dynamic_shapes().to_json();
    // input_ids is 1x5, 1x6, 2x7: both dimensions vary; attention_mask, given once (1x6), varies in none.
    CHECK(shapes == R"({"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},"attention_mask":{}})");
  }
}

TEST_CASE("observable call with default arguments: property, random counts of arguments given") {
  // Each call gives the first k of mix's three arguments (random values); the callback must see exactly those, and
  // the result must be the plain call's with the same arguments.
  std::mt19937 random(20261203);
  std::uniform_int_distribution<int> value_of(INT_MIN / 4, INT_MAX / 4);
  std::size_t expected_given = 0;
  std::array<int, 3> given{};
  std::size_t checked = 0;
  auto sub = defaults::mix.observers.pre.add([&](const auto& ctx) {
    CHECK(ctx.args_given() == expected_given);
    CHECK(ctx.template has_arg<0>() == (expected_given > 0));
    CHECK(ctx.template has_arg<1>() == (expected_given > 1));
    CHECK(ctx.template has_arg<2>() == (expected_given > 2));
    if (const int* a = ctx.template find_arg<"a">()) CHECK(*a == given[0]);
    if (const int* b = ctx.template find_arg<"b">()) CHECK(*b == given[1]);
    if (const int* c = ctx.template find_arg<"c">()) CHECK(*c == given[2]);
    CHECK(ctx.capture_args().size() == expected_given);
    ++checked;
  });
  for (int round = 0; round < 200; ++round) {
    expected_given = static_cast<std::size_t>(round % 4);
    for (int& g : given) g = value_of(random);
    int result = 0;
    int plain = 0;
    switch (expected_given) {
      case 0:
        result = defaults::mix();
        plain = impl::mix();
        break;
      case 1:
        result = defaults::mix(given[0]);
        plain = impl::mix(given[0]);
        break;
      case 2:
        result = defaults::mix(given[0], given[1]);
        plain = impl::mix(given[0], given[1]);
        break;
      default: result = defaults::mix(given[0], given[1], given[2]); plain = impl::mix(given[0], given[1], given[2]);
    }
    CHECK(result == plain);
  }
  CHECK(checked == 200);
}

TEST_CASE("observable call with default arguments: hostile values given before the omitted ones") {
  struct row {
    std::string s;
    std::optional<double> d;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<row> table{
      {"", std::nullopt},
      {std::string("\xff\xfe\x80 not UTF-8", 13), std::nullopt},
      {std::string("nul\0inside", 10), inf},
      {"nan", std::numeric_limits<double>::quiet_NaN()},
      {"-inf", -inf},
      {std::string(10000, 'x'), std::numeric_limits<double>::max()},
      {"\"quoted\", with a comma", -0.0},
  };
  std::vector<std::string> formatted;
  std::vector<std::size_t> captured;
  auto sub = defaults::describe.info.pre().add([&](const hookscope::erased_call& call) {
    std::string all;
    for (std::size_t i = 0; i < call.args_given(); ++i) all += call.format_arg(i) + ";";
    formatted.push_back(all);
    captured.push_back(call.capture_args().size());
  });
  for (const row& r : table) {
    const std::string got = r.d ? defaults::describe(r.s, *r.d) : defaults::describe(r.s);
    CHECK(got == (r.d ? impl::describe(r.s, *r.d) : impl::describe(r.s)));
  }
  REQUIRE(captured.size() == table.size());
  for (std::size_t i = 0; i < table.size(); ++i) CHECK(captured[i] == (table[i].d ? 2u : 1u));
  CHECK(formatted[0] == "\"\";");  // the empty string given (quoted), nothing for the omitted ones
}

TEST_CASE("observable call with default arguments from many threads") {
  std::atomic<int> omitted{0};
  std::atomic<int> given{0};
  auto sub = defaults::scale.observers.pre.add_global([&](const auto& ctx) {
    (ctx.template has_arg<"factor">() ? given : omitted).fetch_add(1, std::memory_order_relaxed);
  });
  std::vector<std::thread> threads;
  std::atomic<bool> all_right{true};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const double r = (i + t) % 2 == 0 ? defaults::scale(1.0) : defaults::scale(1.0, 3.0);
        if (r != ((i + t) % 2 == 0 ? 2.0 : 3.0)) all_right = false;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(all_right);
  CHECK(omitted == 2000);
  CHECK(given == 2000);
}

TEST_CASE("observable call with default arguments: a recursion and nested callbacks") {
  std::vector<std::size_t> given;
  auto sub = defaults::countdown.observers.pre.add([&](const auto& ctx) { given.push_back(ctx.args_given()); });
  CHECK(defaults::countdown(3, 1) == 3);
  CHECK(given == std::vector<std::size_t>{2, 1, 1, 1});  // the recursion's calls omit `step`
}

TEST_CASE("observable method call with default arguments and callbacks") {
  model m;
  std::vector<std::string> seen;
  auto sub = model::step_observers().pre.add([&](const auto& ctx) {
    std::string line = std::to_string(ctx.args_given());
    for (std::size_t i = 0; i < 3; ++i) line += ctx.has_arg(i) ? "+" : "-";
    seen.push_back(line);
  });
  auto post = model::forward_observers().post.add([&](const auto& ctx) {
    seen.push_back("forward " + std::to_string(ctx.args_given()) + " " + std::to_string(*ctx.return_value()));
  });
  m.step();
  m.step(1, 2);
  std::as_const(m).forward(1);
  CHECK(seen == std::vector<std::string>{"0---", "2++-", "forward 1 109"});
}

TEST_CASE("observable call with default arguments and callbacks: references, void, noexcept") {
  std::vector<std::string> seen;
  auto on_bump = defaults::bump.observers.pre.add([&](const auto& ctx) {
    seen.push_back("bump " + std::to_string(ctx.template arg<"counter">()) +
                   (ctx.template has_arg<"by">() ? " by " + std::to_string(ctx.template arg<"by">()) : ""));
  });
  auto on_append = defaults::append.observers.post.add([&](const auto& ctx) {
    seen.push_back("append " + ctx.template arg<"out">() + (ctx.template has_arg<"s">() ? " s" : ""));
  });
  auto on_quiet = defaults::quiet.observers.post.add(
      [&](const auto& ctx) { seen.push_back("quiet " + std::to_string(*ctx.return_value())); });
  int counter = 1;
  defaults::bump(counter);  // the callback sees the caller's object, before the call changes it
  defaults::bump(counter, 3);
  std::string out = "[";
  defaults::append(out);
  CHECK(defaults::quiet(3) == 15);
  CHECK(counter == 5);
  CHECK(seen == std::vector<std::string>{"bump 1", "bump 2 by 3", "append [<default>", "quiet 15"});
}

TEST_CASE("observable call with an omitted move-only argument and callbacks") {
  std::vector<int> seen;
  auto sub = defaults::consume.observers.pre.add([&](const auto& ctx) {
    seen.push_back(**ctx.template find_arg<"p">());
    seen.push_back(ctx.template find_arg<"q">() == nullptr ? -1 : **ctx.template find_arg<"q">());
  });
  CHECK(defaults::consume(std::make_unique<int>(4)) == 104);
  CHECK(seen == std::vector<int>{4, -1});
}

#else

TEST_CASE("observable call with default arguments in a disabled build observes nothing") {
  int calls = 0;
  auto sub = defaults::scale.observers.pre.add([&](const auto&) { ++calls; });
  CHECK(defaults::scale(1.0) == 2.0);
  CHECK(calls == 0);
}

#endif
