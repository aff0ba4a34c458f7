// The rules on options, stated once in the library (check_options): refusals that name options as data, so that
// each front end spells them its own way; the engine refusing contradictory options instead of preferring one; the
// library's prefix on every exception; warnings that carry their kind and fields.
#include "hookscope/load.hpp"
#include "hookscope/output_formats.hpp"

#include "shapes_scenarios.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <string>
#include <string_view>
#include <vector>

using hookscope::load_error;
using hookscope::load_error_kind;
using hookscope::option_id;
using hookscope::option_sentence;
using shapes_test::param;
using shapes_test::positional;
using shapes_test::t;

namespace {

// A front end's spelling, as the command's is: every option a flag.
std::string_view flags(option_id id) noexcept {
  switch (id) {
    case option_id::batch_dimension_for: return "--batch";
    case option_id::batch_dimension_for_all: return "--batch-all";
    case option_id::candidate: return "--index";
    case option_id::avoid_specialization: return "--avoid-specialization";
    case option_id::profile_phases: return "--profiles";
    case option_id::values_if_missing: return "--value-if-missing";
    case option_id::dim_labels: return "--dim-name";
    default: return "--other";
  }
}

// The refusal `f` throws (it must throw a load_error).
template <class F>
load_error refusal_of(F&& f) {
  try {
    f();
  } catch (const load_error& e) {
    return e;
  }
  FAIL("no load_error was thrown");
  return load_error(load_error_kind::unreadable, "unreachable");
}

shape_engine two_calls() {
  shape_engine e;
  e.set_parameters({param("x"), param("y")});
  e.add_call(positional({t({2, 3}), t({2, 3})}));
  e.add_call(positional({t({3, 4}), t({3, 5})}));
  return e;
}

}  // namespace

TEST_CASE("check_options") {
  SECTION("dynamic_shapes_options: batch_dimension_for and batch_dimension_for_all exclude each other") {
    const load_error e = refusal_of([] {
      hookscope::check_options(dynamic_shapes_options{.batch_dimension_for = {"x"}, .batch_dimension_for_all = true});
    });
    CHECK(e.kind() == load_error_kind::bad_option);
    CHECK(std::string(e.what()) == "hookscope: batch_dimension_for and batch_dimension_for_all exclude each other");
    CHECK(e.options() == std::vector{option_id::batch_dimension_for, option_id::batch_dimension_for_all});
    CHECK(e.spelled(flags) == "--batch and --batch-all exclude each other");
  }
  SECTION("dynamic_shapes_options: a label that is not an identifier") {
    for (const char* label : {"a-b", "seq len", "", "1x", "\xc3\xa9"}) {
      INFO(label);
      const load_error e = refusal_of([&] {
        hookscope::check_options(dynamic_shapes_options{.dim_labels = {{"x", 0, label}}});
      });
      CHECK(e.options() == std::vector{option_id::dim_labels});
      CHECK(e.sentence() == "dim_labels: the label '" + std::string(label) + "' is not an identifier");
    }
    CHECK_NOTHROW(hookscope::check_options(dynamic_shapes_options{.dim_labels = {{"x", 0, "batch"}}}));
  }
  SECTION("argument_options: a candidate and avoid_specialization, as_args_kwargs and flat") {
    const load_error by_index = refusal_of(
        [] { hookscope::check_options(argument_options{.candidate = std::size_t{0}, .avoid_specialization = true}); });
    CHECK(by_index.spelled(flags) == "--avoid-specialization and --index exclude each other");
    const load_error by_inputs = refusal_of(
        [] { hookscope::check_options(argument_options{.candidate = call_inputs{}, .avoid_specialization = true}); });
    CHECK(by_inputs.options() == std::vector{option_id::avoid_specialization, option_id::candidate});
    const load_error shapes =
        refusal_of([] { hookscope::check_options(argument_options{.flat = true, .as_args_kwargs = true}); });
    CHECK(shapes.sentence() == "as_args_kwargs and flat exclude each other");
    CHECK_NOTHROW(hookscope::check_options(argument_options{.avoid_specialization = true}));
    CHECK_NOTHROW(hookscope::check_options(argument_options{.candidate = std::size_t{2}, .flat = true}));
  }
  SECTION("engine_options and load_options: store_n_calls at least 1; a stored call needs calls stored") {
    CHECK(refusal_of([] { hookscope::check_options(engine_options{.store_n_calls = 0}); }).sentence() ==
          "store_n_calls: expected at least 1 (or all)");
    CHECK_NOTHROW(hookscope::check_options(engine_options{.store_n_calls = 1}));
    const load_error stored = refusal_of([] {
      hookscope::check_options(
          hookscope::load_options{.store_n_calls = hookscope::unlimited, .stored_call_option = option_id::candidate});
    });
    CHECK(stored.spelled(flags) == "--index needs stored calls: use --other N, not all");
    const load_error summary =
        refusal_of([] { hookscope::check_options(hookscope::load_options{.store_n_calls = 3, .for_summary = true}); });
    CHECK(summary.sentence() == "summarize keeps every call: store_n_calls all, or leave it out");
  }
}

// What the front ends hand over as text (the command's values, Python's str() of its keywords), read by the library
// alone: each refusal names its option as data, for each front end to spell.
TEST_CASE("options' values read from text") {
  SECTION("parse_count: a non-negative decimal integer below unlimited") {
    CHECK(hookscope::parse_count(option_id::candidate, "0") == 0);
    CHECK(hookscope::parse_count(option_id::candidate, "42") == 42);
    CHECK(hookscope::parse_count(option_id::dim_labels, "18446744073709551614") == hookscope::unlimited - 1);
  }
  SECTION("parse_count: anything else is refused, naming the option") {
    for (const char* text :
         {"", "-1", "+1", " 1", "1 ", "1x", "0x10", "1.0", "18446744073709551616", "1180591620717411303424"}) {
      INFO(text);
      const load_error e = refusal_of([&] { (void)hookscope::parse_count(option_id::candidate, text); });
      CHECK(e.kind() == load_error_kind::bad_option);
      CHECK(e.options() == std::vector{option_id::candidate});
      CHECK(e.sentence() == "candidate: expected a non-negative integer, got '" + std::string(text) + "'");
      CHECK(e.spelled(flags) == "--index: expected a non-negative integer, got '" + std::string(text) + "'");
    }
    // 2**64 - 1 is a count's "all" (unlimited): not an index, nor a dimension.
    const load_error large =
        refusal_of([] { (void)hookscope::parse_count(option_id::candidate, "18446744073709551615"); });
    CHECK(large.sentence() == "candidate: 18446744073709551615 is too large");
    CHECK(large.spelled(flags) == "--index: 18446744073709551615 is too large");
    CHECK(refusal_of([] { (void)hookscope::parse_count(option_id::dim_labels, "b"); }).spelled(flags) ==
          "--dim-name: expected a non-negative integer, got 'b'");
  }
  SECTION("parse_store_n_calls: all, or a count") {
    CHECK(hookscope::parse_store_n_calls("all") == hookscope::unlimited);
    CHECK(hookscope::parse_store_n_calls("5") == 5);
    CHECK(hookscope::parse_store_n_calls("0") == 0);  // check_options' to refuse
    CHECK(hookscope::parse_store_n_calls("18446744073709551614") == hookscope::unlimited - 1);
  }
  SECTION("parse_store_n_calls: the count that means all is too large; any other text is no count") {
    const load_error large = refusal_of([] { (void)hookscope::parse_store_n_calls("18446744073709551615"); });
    CHECK(large.options() == std::vector{option_id::store_n_calls});
    CHECK(large.sentence() == "store_n_calls: 18446744073709551615 is too large (all keeps every call)");
    for (const char* text : {"many", "ALL", "", "-1", "18446744073709551616"}) {
      INFO(text);
      const load_error e = refusal_of([&] { (void)hookscope::parse_store_n_calls(text); });
      CHECK(e.options() == std::vector{option_id::store_n_calls});
      CHECK(e.sentence() == "store_n_calls: expected a non-negative integer, got '" + std::string(text) + "'");
    }
  }
  SECTION("parse_profile_phases: 1 or auto") {
    CHECK_FALSE(hookscope::parse_profile_phases("1"));
    CHECK(hookscope::parse_profile_phases("auto"));
    for (const char* text : {"2", "", "Auto", "01", "True", "1.0"}) {
      INFO(text);
      const load_error e = refusal_of([&] { (void)hookscope::parse_profile_phases(text); });
      CHECK(e.options() == std::vector{option_id::profile_phases});
      CHECK(e.spelled(flags) == "--profiles: expected 1 or auto, got '" + std::string(text) + "'");
    }
  }
  SECTION("input_key::parse for an option: a name or a position; an empty text names no input") {
    CHECK(hookscope::input_key::parse("x", option_id::values_if_missing) == hookscope::input_key("x"));
    CHECK(hookscope::input_key::parse("2", option_id::dim_labels) == hookscope::input_key(std::size_t{2}));
    const load_error e = refusal_of([] { (void)hookscope::input_key::parse("", option_id::values_if_missing); });
    CHECK(e.options() == std::vector{option_id::values_if_missing});
    CHECK(e.sentence() == "values_if_missing: empty input name");
    CHECK(e.spelled(flags) == "--value-if-missing: empty input name");
    CHECK(refusal_of([] { (void)hookscope::input_key::parse("", option_id::dim_labels); }).spelled(flags) ==
          "--dim-name: empty input name");
  }
}

TEST_CASE("stored_call_option: the options that need stored calls") {
  SECTION("a stored call's index, or avoid_specialization") {
    CHECK(hookscope::stored_call_option(argument_options{.candidate = std::size_t{0}}) == option_id::candidate);
    CHECK(hookscope::stored_call_option(argument_options{.avoid_specialization = true}) ==
          option_id::avoid_specialization);
  }
  SECTION("none: no candidate, or a call given (not stored), whatever the shape of the arguments") {
    CHECK_FALSE(hookscope::stored_call_option(argument_options{}).has_value());
    CHECK_FALSE(hookscope::stored_call_option(argument_options{.candidate = call_inputs{}}).has_value());
    CHECK_FALSE(hookscope::stored_call_option(argument_options{.flat = true, .as_args_kwargs = false}).has_value());
  }
  SECTION("what the load then refuses with every call summarised") {
    const auto stored = hookscope::stored_call_option(argument_options{.candidate = std::size_t{1}});
    CHECK(refusal_of([&] {
            hookscope::check_options(
                hookscope::load_options{.store_n_calls = hookscope::unlimited, .stored_call_option = stored});
          }).options() == std::vector{option_id::candidate, option_id::store_n_calls});
  }
}

TEST_CASE("default_output_format: the table's first, the one both front ends write unasked") {
  CHECK(&hookscope::default_output_format() == &hookscope::output_formats().front());
  CHECK(hookscope::find_output_format(hookscope::default_output_format().name) == &hookscope::default_output_format());
}

TEST_CASE("option_sentence") {
  SECTION("text stays text, whatever it holds; options are spelled where they are") {
    const option_sentence s = option_sentence()
                              << "a {0} file named --batch: " << option_id::batch_dimension_for << " then "
                              << option_id::candidate << " and " << option_id::batch_dimension_for;
    CHECK(s.spelled(flags) == "a {0} file named --batch: --batch then --index and --batch");
    CHECK(s.spelled(hookscope::option_name) ==
          "a {0} file named --batch: batch_dimension_for then candidate and batch_dimension_for");
    CHECK(s.options() == std::vector{option_id::batch_dimension_for, option_id::candidate});
  }
  SECTION("every option has a name, and the name finds it") {
    for (const option_id id : hookscope::option_ids()) {
      const std::string_view name = hookscope::option_name(id);
      CHECK(name != "an option");
      CHECK(hookscope::find_option(name) == id);
    }
    CHECK_FALSE(hookscope::find_option("--batch").has_value());
  }
  SECTION("a refusal of a source names no option, and keeps its kind") {
    const load_error plain(load_error_kind::unreadable, "a.jsonl: cannot open");
    CHECK(plain.options().empty());
    CHECK(plain.spelled(flags) == "a.jsonl: cannot open");
    const load_error several(load_error_kind::several_functions,
                             option_sentence() << "choose one with " << option_id::function << " NAME");
    CHECK(several.kind() == load_error_kind::several_functions);
    CHECK(std::string(several.what()) == "hookscope: choose one with function NAME");
  }
}

TEST_CASE("shape_engine refuses contradictory options") {
  const shape_engine e = two_calls();
  SECTION("infer_arguments: a stored call and avoid_specialization (the engine used to take the call)") {
    const load_error refused =
        refusal_of([&] { (void)e.infer_arguments({.candidate = std::size_t{1}, .avoid_specialization = true}); });
    CHECK(refused.options() == std::vector{option_id::avoid_specialization, option_id::candidate});
    CHECK(e.infer_arguments({.candidate = std::size_t{1}}).call == std::optional<std::size_t>(1));
  }
  SECTION("infer_dynamic_shapes: batch_dimension_for and batch_dimension_for_all, a label not an identifier") {
    CHECK(refusal_of([&] {
            (void)e.infer_dynamic_shapes({.batch_dimension_for = {"x"}, .batch_dimension_for_all = true});
          }).kind() == load_error_kind::bad_option);
    CHECK(refusal_of([&] {
            (void)e.infer_dynamic_shapes({.dim_labels = {{"x", 0, "no good"}}});
          }).options() == std::vector{option_id::dim_labels});
  }
}

TEST_CASE("exceptions: the library's prefix, once") {
  const hookscope::inference_error inference("the calls do not align");
  CHECK(std::string(inference.what()) == "hookscope: the calls do not align");
  CHECK(inference.sentence() == "the calls do not align");
  const hookscope::merge_error merge(hookscope::merge_error::reason::signatures_differ, "the signatures differ");
  CHECK(std::string(merge.what()) == "hookscope: merge: the signatures differ");
  CHECK(merge.detail() == "the signatures differ");
  const hookscope::record_error record("a.jsonl", 3, "$.args: not a list");
  CHECK(std::string(record.what()) == "hookscope: a.jsonl:3: $.args: not a list");
  CHECK(hookscope::sentence_of(record) == "a.jsonl:3: $.args: not a list");
  const hookscope::argument_error argument("add_call: 2 sizes given for a call structure of 3 sizes");
  CHECK(std::string(argument.what()) == "hookscope: add_call: 2 sizes given for a call structure of 3 sizes");
  CHECK(hookscope::sentence_of(argument) == "add_call: 2 sizes given for a call structure of 3 sizes");
  const hookscope::limit_error limit("add_structure: too many call structures");
  CHECK(std::string(limit.what()) == "hookscope: add_structure: too many call structures");
  CHECK(hookscope::sentence_of(limit) == "add_structure: too many call structures");
  const std::runtime_error other("hookscope: not ours");
  CHECK(hookscope::sentence_of(other) == "hookscope: not ours");  // only the library's own types are cut
  SECTION("a message that quotes another quotes its sentence") {
    const std::string path = (std::filesystem::temp_directory_path() / "hookscope_options_bad.jsonl").string();
    std::ofstream(path) << "{not json\n";
    std::string error;
    try {
      (void)hookscope::load_engine({path});
    } catch (const hookscope::record_error& e) {
      error = e.what();
    }
    std::filesystem::remove(path);
    CHECK(error.rfind("hookscope: " + path + ":1: ", 0) == 0);
    CHECK(error.find("hookscope: ", 1) == std::string::npos);
  }
}

TEST_CASE("inference_warning") {
  SECTION("a batch dimension asked for an input no call gave: the input as data") {
    shape_engine e;
    e.set_parameters({param("x"), param("y")});
    e.add_call(positional({t({2, 3}), value()}));
    e.add_call(positional({t({3, 3}), value()}));
    const auto ds = e.infer_dynamic_shapes({.batch_dimension_for = {"y"}});
    REQUIRE(ds.warnings().size() == 1);
    const hookscope::inference_warning& w = ds.warnings()[0];
    CHECK(w.type == hookscope::inference_warning::kind::batch_dimension_unobserved);
    CHECK(w.input == "y");
    CHECK(w.text() == "hookscope: " + w.sentence);
    CHECK(w == w.text());
    CHECK(std::string(w) == w.text());
  }
  SECTION("a dim seen only as 0 or 1: its input and dim") {
    shape_engine e;
    e.set_parameters({param("x")});
    e.add_call(positional({t({1, 3})}));
    e.add_call(positional({t({1, 4})}));
    const auto ds = e.infer_dynamic_shapes({.batch_dimension_for_all = true});
    REQUIRE(ds.warnings().size() == 1);
    CHECK(ds.warnings()[0].type == hookscope::inference_warning::kind::dim_seen_below_two);
    CHECK(ds.warnings()[0].input == "x");
    CHECK(ds.warnings()[0].dim == std::optional<std::size_t>(0));
  }
  SECTION("every kind has a name") {
    using kind = hookscope::inference_warning::kind;
    for (int k = 0; k <= static_cast<int>(kind::export_dim_below_one); ++k) {
      CHECK(hookscope::kind_name(static_cast<kind>(k)) != "unknown");
    }
  }
}

TEST_CASE("check_options: the unnamed dimension's label is no option's") {
  const load_error e = refusal_of([] {
    hookscope::check_options(
        dynamic_shapes_options{.dim_labels = {{"x", 0, std::string(hookscope::unnamed_dim_label)}}});
  });
  CHECK(e.options() == std::vector{option_id::dim_labels});
  CHECK(e.sentence() ==
        "dim_labels: the label 'DYNAMIC' is what an unnamed dynamic dimension is called; choose another");
  CHECK_NOTHROW(hookscope::check_options(dynamic_shapes_options{.dim_labels = {{"x", 0, "dynamic"}}}));
}

TEST_CASE("shape_engine: store_n_calls 0 is refused when the engine is made") {
  CHECK(refusal_of([] { (void)shape_engine(engine_options{.store_n_calls = 0}); }).options() ==
        std::vector{option_id::store_n_calls});
}
