// hookscope::load_engine (hookscope/load.hpp), the front door every front end goes through: what it reads (records,
// summaries, standard input), what it refuses and with which kind, and the properties users rely on: record files
// that call_recorder's writer writes read back; summaries of any split of a file merge into the answer of one pass.
#include "hookscope/load.hpp"

#include "hookscope/records.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using hookscope::call_record;
using hookscope::dtype;
using hookscope::load_engine;
using hookscope::load_error;
using hookscope::load_error_kind;
using hookscope::load_options;
using hookscope::tensor_spec;
using hookscope::value;

namespace {

// The load's warnings as text, the options by their library names.
std::vector<std::string> texts(const std::vector<hookscope::option_sentence>& warnings) {
  std::vector<std::string> out;
  for (const auto& w : warnings) out.push_back(w.text());
  return out;
}

namespace fs = std::filesystem;

// A directory of its own per test run, removed at the end.
class scratch {
 public:
  scratch() : dir_(fs::temp_directory_path() / ("hookscope-load-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;

  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

value t(std::vector<std::int64_t> shape, dtype type = dtype::float32) { return tensor_spec{std::move(shape), type}; }

// A decoder's calls, random but reproducible: a prefill (sequence > 1, no cache) then decode steps.
std::vector<call_record> random_records(std::mt19937& rng, std::size_t n) {
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<call_record> records;
  std::int64_t past = 0;
  std::int64_t batch = pick(1, 4);
  const int meta_kind = pick(0, 4);  // one kind per recording: a scalar in one call and a tensor in another is
                                     // refused (no call names every input)
  for (std::size_t i = 0; i < n; ++i) {
    if (pick(0, 5) == 0) batch = pick(1, 4), past = 0;
    const std::int64_t seq = past == 0 ? pick(2, 9) : 1;
    call_record r;
    r.function = "Model::forward";
    if (i == 0) {
      r.parameters = hookscope::parameter_list{{"input_ids"},
                                               {"attention_mask"},
                                               {"past", hookscope::parameter_kind::positional_or_keyword, value()},
                                               {"meta"}};
    }
    r.inputs.kwargs.emplace_back("input_ids", t({batch, seq}, dtype::int64));
    r.inputs.kwargs.emplace_back("attention_mask", t({batch, past + seq}, dtype::int64));
    if (past > 0) r.inputs.kwargs.emplace_back("past", value::tuple({t({batch, 2, past, 4}), t({batch, 2, past, 4})}));
    // The kinds of C++ captures, text that is not UTF-8, floats that must read back exactly.
    const std::string raw(static_cast<std::size_t>(pick(0, 3)), static_cast<char>(pick(0x80, 0xff)));
    const value metas[] = {value::opaque("handle*"),
                           value::bytes(std::as_bytes(std::span<const char>(raw.data(), raw.size()))),
                           value::variant(static_cast<std::size_t>(pick(0, 2)), t({batch, seq})), value(raw),
                           value::dict({{"k", value(1.8527975993091913e-06 * pick(1, 9))}, {"t", t({seq})}})};
    r.inputs.kwargs.emplace_back("meta", metas[meta_kind]);
    if (pick(0, 1)) r.result = t({batch, seq, 16});
    records.push_back(std::move(r));
    past += seq;
  }
  return records;
}

std::string lines(const std::vector<call_record>& records, std::size_t from, std::size_t to) {
  std::string text;
  for (std::size_t i = from; i < to; ++i) text += hookscope::to_record_line(records[i]) + "\n";
  return text;
}

std::string every_answer(const hookscope::shape_engine& e) {
  const hookscope::dynamic_shapes ds = e.infer_dynamic_shapes({.dim_names = true});
  return ds.to_json() + "\n" + ds.to_typed_json() + "\n" + ds.to_trtexec() + "\n" + ds.report() + "\n" +
         hookscope::to_json(e.infer_arguments().arguments);
}

load_error_kind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const load_error& e) {
    return e.kind();
  }
  FAIL("no load_error");
  return load_error_kind::bad_option;
}

const std::string record_line =
    R"({"function":"f","signature":[{"name":"x"}],"args":[],"kwargs":[["x",{"shape":[2],"dtype":"float32"}]]})";

}  // namespace

TEST_CASE("load_engine") {
  scratch dir;
  SECTION("records written by the library read back: one engine, the function, the calls counted") {
    std::mt19937 rng(7);
    const std::vector<call_record> records = random_records(rng, 12);
    const std::string file = dir.write("calls.jsonl", lines(records, 0, records.size()));
    const hookscope::loaded_engine loaded = load_engine({file}, {.store_n_calls = hookscope::unlimited});
    CHECK(loaded.function == "Model::forward");
    CHECK(loaded.calls_read == 12);
    CHECK(loaded.engine.num_obs() == 12);
    CHECK(loaded.warnings.empty());
    CHECK_FALSE(loaded.from_summaries);
  }
  SECTION("calls beyond store_n_calls: read, counted, and said") {
    std::mt19937 rng(8);
    const std::string file = dir.write("calls.jsonl", lines(random_records(rng, 5), 0, 5));
    std::vector<std::string> met;
    const auto loaded =
        load_engine({file}, {.on_warning = [&](const hookscope::option_sentence& w) { met.push_back(w.text()); }});
    CHECK(loaded.engine.num_obs() == 3);
    CHECK(loaded.calls_read == 5);
    REQUIRE(loaded.warnings.size() == 1);
    CHECK_THAT(loaded.warnings[0].text(), StartsWith("kept the first 3 of 5 calls of Model::forward"));
    CHECK(loaded.warnings[0].options() == std::vector{hookscope::option_id::store_n_calls});  // spelled by front ends
    CHECK(met == texts(loaded.warnings));
  }
  SECTION("a warning met before a later source fails is not lost") {
    const std::string cut = dir.write("cut.jsonl", record_line + "\n" + R"({"function":"f","args":[)");
    std::vector<std::string> met;
    CHECK(kind_of([&] {
            (void)load_engine({cut, dir.path("missing.jsonl")},
                              {.on_warning = [&](const hookscope::option_sentence& w) { met.push_back(w.text()); }});
          }) == load_error_kind::unreadable);
    REQUIRE(met.size() == 1);
    CHECK_THAT(met[0], Contains("cut.jsonl:2: the last line is cut"));
  }
  SECTION("signature_from gives records without one the signature a part of their file carries") {
    const std::string head = dir.write("head.jsonl", record_line + "\n");
    const std::string tail =
        dir.write("tail.jsonl", R"({"function":"f","args":[{"shape":[3],"dtype":"float32"}],"kwargs":[]})"
                                "\n");
    const auto with = load_engine({tail}, {.signature_from = head});
    CHECK(with.engine.parameters().size() == 1);
    CHECK(with.engine.parameters()[0].name == "x");
    CHECK(load_engine({tail}).engine.parameters().empty());
  }
  SECTION("notes of dropped records: counted over every source, a warning each, the engine as without them") {
    std::mt19937 rng(10);
    const std::vector<call_record> records = random_records(rng, 8);
    const auto note = [](const std::string& function, int count) {
      return R"({"function":")" + function + R"(","dropped":{"count":)" + std::to_string(count) +
             R"(,"reason":"buffer_full"}})" + "\n";
    };
    const std::string a = dir.write("a.jsonl", note("Model::forward", 3) + lines(records, 0, 4) + note("g", 2));
    const std::string b = dir.write("b.jsonl", lines(records, 4, 6) + note("Model::forward", 4) + lines(records, 6, 8));
    const std::string plain = dir.write("plain.jsonl", lines(records, 0, 8));
    std::vector<std::string> met;
    const auto loaded =
        load_engine({a, b}, {.store_n_calls = hookscope::unlimited,
                             .on_warning = [&](const hookscope::option_sentence& w) { met.push_back(w.text()); }});
    CHECK(loaded.dropped_records == hookscope::dropped_record_counts{{"Model::forward", 7}, {"g", 2}});
    CHECK(loaded.calls_read == 8);
    CHECK(loaded.function == "Model::forward");  // a note names no function of the records
    REQUIRE(loaded.warnings.size() == 3);
    CHECK(loaded.warnings[0] == a + ":1: the writer dropped 3 records of 'Model::forward' (buffer_full)");
    CHECK(loaded.warnings[2] == b + ":3: the writer dropped 4 records of 'Model::forward' (buffer_full)");
    CHECK(met == texts(loaded.warnings));
    const auto without = load_engine({plain}, {.store_n_calls = hookscope::unlimited});
    CHECK(without.dropped_records.empty());
    CHECK(every_answer(loaded.engine) == every_answer(without.engine));

    hookscope::dropped_record_counts dropped{{"stale", 1}};
    std::size_t seen = 0;
    const auto warnings = hookscope::for_each_record(
        {a, b}, [&](const call_record&) { ++seen; }, &dropped);
    CHECK(seen == 8);
    CHECK(warnings == texts(loaded.warnings));
    CHECK(dropped == loaded.dropped_records);
  }
  SECTION("remove_inputs applies once every call is read") {
    std::mt19937 rng(9);
    const std::string file = dir.write("calls.jsonl", lines(random_records(rng, 6), 0, 6));
    const auto loaded = load_engine({file}, {.remove_inputs = {"attention_mask"}});
    CHECK(loaded.engine.infer_dynamic_shapes().to_json().find("attention_mask") == std::string::npos);
  }
}

TEST_CASE("load_engine records read by the reader's templates") {
  scratch dir;
  // More structures than the reader holds (a constant that changes makes another structure), met again after being
  // replaced, interleaved with the decoder's repeating ones: the engine holds what add_call of every parsed line gives.
  std::mt19937 rng(11);
  std::vector<call_record> records = random_records(rng, 400);
  for (std::size_t i = 0; i < records.size(); ++i) {
    records[i].inputs.kwargs.emplace_back("step", value::list({value(static_cast<std::int64_t>(i % 3 ? 0 : i % 97))}));
  }
  records[0].parameters->push_back({"step", hookscope::parameter_kind::positional_or_keyword, value()});
  const std::string text = lines(records, 0, records.size());
  dir.write("calls.jsonl", text);
  for (const std::size_t store : {std::size_t{3}, hookscope::unlimited}) {
    const hookscope::loaded_engine loaded = hookscope::load_engine({dir.path("calls.jsonl")}, {.store_n_calls = store});
    hookscope::shape_engine expected({.store_n_calls = store, .keep_calls = store != hookscope::unlimited});
    expected.set_parameters(*records[0].parameters);
    expected.begin_recording();
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      const call_record r = hookscope::parse_record(line);
      if (r.result) {
        expected.add_call(r.inputs, *r.result);
      } else {
        expected.add_call(r.inputs);
      }
    }
    if (store == hookscope::unlimited) CHECK(loaded.engine.to_summary_json() == expected.to_summary_json());
    CHECK(every_answer(loaded.engine) == every_answer(expected));
  }
}

TEST_CASE("load_engine summaries") {
  scratch dir;
  SECTION("property: the summaries of any split of a file merge into the answer of one pass") {
    std::mt19937 rng(GENERATE(1u, 2u, 3u, 4u, 5u, 6u));
    const std::vector<call_record> records = random_records(rng, 3 + rng() % 20);
    const std::string whole = dir.write("whole.jsonl", lines(records, 0, records.size()));
    const std::string one_pass = every_answer(load_engine({whole}, {.store_n_calls = hookscope::unlimited}).engine);
    std::vector<std::string> parts;
    for (std::size_t from = 0; from < records.size();) {
      const std::size_t to = std::min(records.size(), from + 1 + rng() % 5);
      const std::string part = dir.write("part" + std::to_string(from) + ".jsonl", lines(records, from, to));
      // Parts after the first lack the signature: they take it from the whole file.
      const auto summary = load_engine({part}, {.signature_from = whole, .for_summary = true});
      parts.push_back(
          dir.write("part" + std::to_string(from) + ".json", summary.engine.to_summary_json(summary.function)));
      from = to;
    }
    const auto merged = load_engine(parts);
    CHECK(merged.from_summaries);
    CHECK(merged.function == "Model::forward");
    CHECK(every_answer(merged.engine) == one_pass);
  }
  SECTION("a summary pretty-printed (spaced tokens) is still a summary") {
    const std::string records = dir.write("r.jsonl", record_line + "\n");
    const auto s = load_engine({records}, {.for_summary = true});
    std::string text = s.engine.to_summary_json(s.function);
    text.replace(0, 1, "{\n  ");
    const std::size_t colon = text.find("\":");
    text.replace(colon, 2, "\" : ");
    CHECK(load_engine({dir.write("pretty.json", text)}).from_summaries);
  }
  SECTION("a summary with its keys sorted (jq -S), after a byte-order mark, on one line or several") {
    const std::string records = dir.write("r.jsonl", record_line + "\n");
    const auto s = load_engine({records}, {.for_summary = true});
    const std::string text = s.engine.to_summary_json(s.function);
    // "format" moved after every other member, as sorting the keys puts it after "arguments".
    const std::string format = R"("format":"hookscope-shapes-summary",)";
    REQUIRE(text.find(format) == 1);
    std::string sorted = text;
    sorted.erase(1, format.size());
    sorted.insert(sorted.size() - 1, "," + format.substr(0, format.size() - 1));
    const std::string one_pass = every_answer(load_engine({records}, {.store_n_calls = hookscope::unlimited}).engine);
    for (const std::string& form : {sorted, "\xEF\xBB\xBF" + text, "\xEF\xBB\xBF" + sorted}) {
      const auto loaded = load_engine({dir.write("form.json", form)});
      CHECK(loaded.from_summaries);
      CHECK(every_answer(loaded.engine) == one_pass);
    }
    // A member "format" of another value is no summary's: records (which may carry members of their own).
    const std::string other = dir.write("other.json", R"({"args":[],"format":"x","function":"f","kwargs":[]})");
    CHECK_FALSE(load_engine({other}).from_summaries);
  }
  SECTION("a byte-order mark before the first record is skipped") {
    const std::string plain = dir.write("plain.jsonl", record_line + "\n" + record_line + "\n");
    const std::string bom = dir.write("bom.jsonl", "\xEF\xBB\xBF" + record_line + "\n" + record_line + "\n");
    CHECK(every_answer(load_engine({bom}).engine) == every_answer(load_engine({plain}).engine));
  }
  SECTION("options the summaries fixed are refused, by kind") {
    const std::string records = dir.write("r.jsonl", record_line + "\n");
    const auto s = load_engine({records}, {.for_summary = true});
    const std::string summary = dir.write("s.json", s.engine.to_summary_json(s.function));
    CHECK(kind_of([&] { (void)load_engine({summary}, {.store_n_calls = 3}); }) == load_error_kind::bad_option);
    CHECK(load_engine({summary}, {.store_n_calls = hookscope::unlimited}).from_summaries);
    CHECK(kind_of([&] {
            (void)load_engine({summary}, {.values_if_missing = {{"x", value(1)}}});
          }) == load_error_kind::bad_option);
    CHECK(kind_of([&] { (void)load_engine({summary}, {.signature_from = records}); }) == load_error_kind::bad_option);
    CHECK(kind_of([&] { (void)load_engine({summary}, {.stored_call_option = hookscope::option_id::candidate}); }) ==
          load_error_kind::bad_option);
    CHECK(kind_of([&] { (void)load_engine({summary, records}); }) == load_error_kind::mixed_sources);
    CHECK(kind_of([&] { (void)load_engine({summary}, {.function = "g"}); }) == load_error_kind::no_such_function);
  }
  SECTION("summaries recorded with other signatures: signatures_differ") {
    const auto a = load_engine({dir.write("a.jsonl", record_line + "\n")}, {.for_summary = true});
    const auto b =
        load_engine({dir.write("b.jsonl", R"({"function":"f","args":[{"shape":[3],"dtype":"float32"}],"kwargs":[]})"
                                          "\n")},
                    {.for_summary = true});
    const std::string sa = dir.write("a.json", a.engine.to_summary_json("f"));
    const std::string sb = dir.write("b.json", b.engine.to_summary_json("f"));
    CHECK(kind_of([&] { (void)load_engine({sa, sb}); }) == load_error_kind::signatures_differ);
  }
}

// Hostile and odd sources: each gets one clear error of the right kind, naming the source; nothing crashes.
TEST_CASE("load_engine hostile sources") {
  scratch dir;
  SECTION("nothing to read") {
    CHECK(kind_of([&] { (void)load_engine({}); }) == load_error_kind::bad_option);
  }
  SECTION("a missing file, a directory, an empty name") {
    CHECK(kind_of([&] { (void)load_engine({dir.path("missing.jsonl")}); }) == load_error_kind::unreadable);
    CHECK(kind_of([&] { (void)load_engine({dir.path("")}); }) == load_error_kind::unreadable);
    CHECK(kind_of([&] { (void)load_engine({""}); }) == load_error_kind::unreadable);
  }
  SECTION("a device that reads empty: no call recorded, an inference_error naming it") {
    CHECK_THROWS_WITH(load_engine({"/dev/null"}), Contains("no call recorded in /dev/null"));
  }
  SECTION("several functions, none chosen; a function that is not there") {
    const std::string two = dir.write("two.jsonl", record_line + "\n" +
                                                       R"({"function":"g","args":[],"kwargs":[]})"
                                                       "\n");
    CHECK(kind_of([&] { (void)load_engine({two}); }) == load_error_kind::several_functions);
    CHECK(kind_of([&] { (void)load_engine({two}, {.function = "h"}); }) == load_error_kind::no_such_function);
    CHECK(load_engine({two}, {.function = "g"}).calls_read == 1);
  }
  SECTION("a stored call asked for with every call summarised") {
    const std::string r = dir.write("r.jsonl", record_line + "\n");
    CHECK(kind_of([&] {
            (void)load_engine(
                {r}, {.store_n_calls = hookscope::unlimited, .stored_call_option = hookscope::option_id::candidate});
          }) == load_error_kind::bad_option);
  }
  SECTION("bytes that are not UTF-8, in a name: a record_error naming the file and line") {
    const std::string bad = dir.write("bad.jsonl", "{\"function\":\"f\xff\",\"args\":[],\"kwargs\":[]}\n");
    CHECK_THROWS_AS(load_engine({bad}), hookscope::record_error);
  }
  SECTION("a huge integer dimension and a negative one") {
    const std::string huge = dir.write(
        "huge.jsonl", R"({"function":"f","args":[{"shape":[99999999999999999999],"dtype":"float32"}],"kwargs":[]})"
                      "\n");
    CHECK_THROWS_AS(load_engine({huge}), hookscope::record_error);
    const std::string negative =
        dir.write("neg.jsonl", R"({"function":"f","args":[{"shape":[-2],"dtype":"float32"}],"kwargs":[]})"
                               "\n");
    CHECK_THROWS_WITH(load_engine({negative}), Contains("neg.jsonl:1:"));
  }
  SECTION("a summary cut short is a bad summary, not records") {
    const auto s = load_engine({dir.write("r.jsonl", record_line + "\n")}, {.for_summary = true});
    const std::string text = s.engine.to_summary_json("f");
    const std::string cut = dir.write("cut.json", text.substr(0, text.size() / 2));
    CHECK(kind_of([&] { (void)load_engine({cut}); }) == load_error_kind::bad_summary);
  }
  SECTION("summarize refuses summaries as its input") {
    const auto s = load_engine({dir.write("r.jsonl", record_line + "\n")}, {.for_summary = true});
    const std::string summary = dir.write("s.json", s.engine.to_summary_json("f"));
    CHECK(kind_of([&] { (void)load_engine({summary}, {.for_summary = true}); }) == load_error_kind::bad_option);
  }
}

TEST_CASE("shape_engine::choose_arguments") {
  scratch dir;
  SECTION("property: the call reported holds the inputs the arguments start from") {
    std::mt19937 rng(GENERATE(11u, 12u, 13u));
    const std::vector<call_record> records = random_records(rng, 8);
    const auto loaded =
        load_engine({dir.write("calls.jsonl", lines(records, 0, records.size()))}, {.store_n_calls = 8});
    const hookscope::engine_info info = loaded.engine.info();
    for (std::size_t i = 0; i < info.calls.size(); ++i) {
      const hookscope::inferred_arguments chosen = loaded.engine.infer_arguments({.candidate = i});
      REQUIRE(chosen.call == std::optional<std::size_t>(i));
      CHECK(chosen.arguments.fields().front().second == info.calls[i].inputs.kwargs.front().second);
    }
    const auto fresh = loaded.engine.infer_arguments({.candidate = info.calls[0].inputs});
    CHECK_FALSE(fresh.call.has_value());
  }
}

TEST_CASE("load_engine summaries of text that is not UTF-8 and of keys repeated under escapes") {
  scratch dir;
  SECTION("a keyword argument whose name is not UTF-8 is refused by the writer, never written") {
    // Parameters' names are text in the record format: to_record_line refuses the call rather than write a name the
    // summary (JSON, UTF-8) could not hold.
    call_record r;
    r.function = "f";
    r.inputs.kwargs = {{"\xff", tensor_spec{{2, 3}, dtype::float32}}};
    CHECK_THROWS_AS(hookscope::to_record_line(r), hookscope::format_error);
  }
  SECTION("a summary giving a key twice, once under a \\u escape, is refused") {
    const auto s = load_engine({dir.write("r.jsonl", record_line + "\n")}, {.for_summary = true});
    std::string text = s.engine.to_summary_json(s.function);
    const std::size_t calls = text.find("\"calls\":");
    REQUIRE(calls != std::string::npos);
    text.insert(calls, R"("\u0063alls":7,)");
    CHECK_THROWS_WITH(load_engine({dir.write("twice.json", text)}), Contains("duplicate key"));
  }
}
