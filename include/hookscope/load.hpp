// hookscope/load.hpp — the one front door from recorded calls to the shape engine: record files, summaries or
// standard input, read with one set of load options, give an engine, the function it holds and the warnings met.
// `hookscope-shapes`, the Python package and C++ programs all go through it, so they read the same sources alike.
//
// ```cpp
// hookscope::loaded_engine loaded = hookscope::load_engine({"forward.jsonl"}, {.function = "Model::forward"});
// for (const auto& w : loaded.warnings) std::cerr << w.text() << '\n';
// std::cout << loaded.engine.infer_dynamic_shapes({.dim_names = true}).to_json();
// ```
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/exceptions.hpp"
#include "hookscope/records.hpp"
#include "hookscope/shapes.hpp"
#include "hookscope/value.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// How sources are read into an engine: the options `hookscope-shapes` takes before it infers.
struct load_options {
  /// The function whose calls to use; required when the records hold several.
  std::optional<std::string> function{};
  /// Calls kept: the first N (default 3), or `hookscope::unlimited` (every call, summarised as it streams in
  /// constant memory). Summaries hold every call: only unlimited (or nothing) is accepted with them.
  std::optional<std::size_t> store_n_calls{};
  /// Values for inputs some calls leave out, applied as the calls are read (summaries hold theirs).
  std::vector<std::pair<input_key, value>> values_if_missing{};
  /// A record file whose first record of the function carries the signature the sources lack (a part of a file
  /// split by lines).
  std::optional<std::string> signature_from{};
  /// Inputs forgotten once every call is read (as if no call had given them).
  std::vector<std::string> remove_inputs{};
  /// The option that will pick a stored call (option_id::candidate, option_id::avoid_specialization), if any:
  /// summaries and unlimited recordings keep no call, so the load refuses it up front.
  std::optional<option_id> stored_call_option{};
  /// For a summary (`summarize`): every call is kept, and with `function` given, sources without its calls give an
  /// empty engine (a shard without it summarises to nothing) instead of an error.
  bool for_summary = false;
  /// Called with each warning as it is met (before a later source fails, say); every warning is also returned. A
  /// warning that names an option keeps it apart (option_sentence), for each front end to spell.
  std::function<void(const option_sentence&)> on_warning{};
};

/// An engine with every call of the sources, and what was met reading them.
struct loaded_engine {
  shape_engine engine;
  std::string function{};  ///< the function whose calls the engine holds ("" when none)
  /// The readers' warnings ("<source>:<line>: ...") in reading order, then "kept the first 3 of 5 calls of F; ..."
  /// when store_n_calls left calls out (`text()`: with the options' library names; `spelled()`: a front end's).
  std::vector<option_sentence> warnings{};
  /// The records the writers dropped, per function (every function's, not only the chosen one's): the notes' counts
  /// summed (record_reader::dropped_records); empty for summaries.
  dropped_record_counts dropped_records{};
  std::size_t calls_read = 0;  ///< every call of the function read, kept or not
  bool from_summaries = false;
};

/// The option of `arguments` that will pick a stored call (load_options::stored_call_option): a candidate given as a
/// stored call's index, or avoid_specialization; none otherwise (check_options refuses the two together).
std::optional<option_id> stored_call_option(const argument_options& arguments) noexcept;

/// Throws load_error (bad_option) for options that contradict each other whatever the sources: store_n_calls 0,
/// a stored call asked for with every call summarised, a summary asked to keep fewer calls or to remove inputs.
/// load_engine checks them; a front end may check them before it opens any source.
void check_options(const load_options& options);

/// The sources ("-" is standard input; summaries are recognised by their first bytes) read into one engine. Throws
/// load_error for a source or option that does not fit, record_error for a bad record line ("<file>:<line>: ..."),
/// inference_error when no call was recorded or the calls do not fit together.
loaded_engine load_engine(const std::vector<std::string>& sources, const load_options& options = {});

/// Every record of the sources read as one stream (a function's signature binds across files), as load_engine
/// reads them; returns the readers' warnings, and sets `*dropped_records` (when given) to the records their writers
/// dropped, per function. Throws as load_engine does.
std::vector<std::string> for_each_record(const std::vector<std::string>& sources,
                                         const std::function<void(const call_record&)>& f,
                                         dropped_record_counts* dropped_records = nullptr);

/// Summary documents given as text (e.g. computed on other machines), merged in order: `name` of each names it in
/// errors. Same rules as summaries read by load_engine (one function, recorded alike).
loaded_engine load_summaries(const std::vector<std::pair<std::string, std::string>>& named_summaries,
                             const load_options& options = {});

HOOKSCOPE_DETAIL_END_NAMESPACE
