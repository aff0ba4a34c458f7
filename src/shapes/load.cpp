// The front door (hookscope/load.hpp): record files or summaries into one engine, with the load options checked
// against what the sources are. Record files stream through one record_reader (a signature binds across files);
// summaries are merged in order, which gives exactly the engine one pass over the records they summarise gives.
#include "hookscope/load.hpp"

#include "hookscope/records.hpp"

#include "../json_head.hpp"
#include "summaries.hpp"
#include "../shown_name.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>
#include <utility>

#include <sys/stat.h>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace {

constexpr std::string_view standard_input = "-";
constexpr std::size_t max_summary_bytes = std::size_t{1} << 30;

[[noreturn]] void fail(load_error_kind kind, const std::string& message) { throw load_error(kind, message); }

std::string errno_text(int fallback) { return std::generic_category().message(errno != 0 ? errno : fallback); }

using detail::shown;

// The functions a source holds, as errors list them: the first few, in first-seen order, in constant memory and
// time per record whatever the number of functions.
class function_names {
 public:
  void note(const std::string& name) {
    if (!names_.empty() && names_.back() == name) return;  // the usual case: one function
    for (const std::string& seen : names_) {
      if (seen == name) return;
    }
    if (names_.size() < listed) {
      names_.push_back(name);
    } else {
      more_ = true;
    }
  }
  bool several() const noexcept { return names_.size() > 1; }
  bool empty() const noexcept { return names_.empty(); }
  const std::string& first() const { return names_.front(); }
  std::string text() const {
    std::string out;
    for (const std::string& name : names_) out += (out.empty() ? "'" : ", '") + shown(name) + "'";
    return more_ ? out + " and others" : out;
  }

 private:
  static constexpr std::size_t listed = 8;
  std::vector<std::string> names_;
  bool more_ = false;  // names beyond the listed ones (some may repeat: they are not kept)
};

void refuse_directory(const std::string& source) {
  std::error_code ec;
  if (std::filesystem::is_directory(source, ec))
    fail(load_error_kind::unreadable, source + ": cannot read: it is a directory");
}

std::ifstream open_source(const std::string& source) {
  refuse_directory(source);
  errno = 0;
  std::ifstream in(source, std::ios::binary);
  if (!in) fail(load_error_kind::unreadable, source + ": cannot open: " + errno_text(ENOENT));
  return in;
}

// A summary is one JSON object whose member "format" is "hookscope-shapes-summary": summarize writes it first, and a
// pretty printer may space the document over lines (`jq .`) or sort its keys (`jq -S`, which puts "format" after
// "arguments"); a byte-order mark may precede it. A record file's first value is a record, which has no "format".
// The one JSON parser reads the first value up to that member and no further. A head that is no JSON before it says
// (a damaged summary, or a damaged first record) is a summary when it begins as a pretty printer begins a document,
// which no record line does; else the other sources decide (load_engine), so that the reader of its kind says where
// the damage is.
enum class source_kind : std::uint8_t { records, summary, damaged_head };

// Only a regular file is looked at: reading the head of a pipe, a FIFO or a device would take those bytes from the
// records read after it, so such sources are records. Standard input is read as records.
source_kind kind_of_source(const std::string& source) {
  std::error_code ec;
  if (source == standard_input || !std::filesystem::is_regular_file(source, ec)) return source_kind::records;
  std::ifstream in(source, std::ios::binary);
  if (!in) return source_kind::records;  // reading it as records says why it cannot be opened
  try {
    namespace shapes = detail::shapes;
    const detail::member_head head = detail::leading_member(*in.rdbuf(), "format", shapes::summary_format_name.size(),
                                                            shapes::max_summary_json_levels);
    if (head.value == shapes::summary_format_name) return source_kind::summary;
    if (head.read) return source_kind::records;
    return head.brace_alone_first ? source_kind::summary : source_kind::damaged_head;
  } catch (const std::ios_base::failure&) {  // a read error (EIO): reading it as records reports it
    return source_kind::records;
  }
}

std::string read_summary_text(const std::string& source) {
  std::ifstream in = open_source(source);
  std::string text;
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_summary_bytes) {
      fail(load_error_kind::bad_summary, source + ": larger than 1 GiB: not a summary summarize wrote");
    }
  }
  if (in.bad()) fail(load_error_kind::unreadable, source + ": cannot read: " + errno_text(EIO));
  return text;
}

//=== options that depend on the sources ===//

// What the summaries fixed when they were written cannot be asked for again.
void check_for_summaries(const load_options& o) {
  const auto refuse = [](option_sentence sentence) { throw load_error(std::move(sentence)); };
  if (o.store_n_calls && *o.store_n_calls != unlimited) {
    refuse(option_sentence() << option_id::store_n_calls << ": summaries hold every call (" << option_id::store_n_calls
                             << " all)");
  }
  if (!o.values_if_missing.empty()) {
    refuse(option_sentence() << option_id::values_if_missing << " applies when summarising: the summaries hold theirs");
  }
  if (o.signature_from) {
    refuse(option_sentence() << option_id::signature_from << " applies when summarising: the summaries hold theirs");
  }
  if (o.stored_call_option) {
    refuse(option_sentence() << *o.stored_call_option
                             << " needs stored calls, and summaries hold none: read the record files instead");
  }
  if (o.for_summary)
    fail(load_error_kind::bad_option, "summarize reads record files, not summaries (they merge as they are)");
}

// A warning met while loading: given as it comes (load_options::on_warning), and returned.
void add_warning(loaded_engine& loaded, const load_options& o, option_sentence warning) {
  if (o.on_warning) o.on_warning(warning);
  loaded.warnings.push_back(std::move(warning));
}

// remove_inputs: a name that is no parameter and that no call gave (a typo) removes nothing; a warning says so. A
// keyword without a parameter shifts no position, so it is removed on its own first (its count says whether any call
// gave it), then the parameters and positions together.
void remove_inputs(loaded_engine& loaded, const load_options& o) {
  const std::vector<std::string>& names = o.remove_inputs;
  if (names.empty()) return;
  shape_engine& engine = loaded.engine;
  std::vector<std::string> parameters;
  for (const parameter& p : engine.info().parameters) parameters.push_back(p.name);
  std::vector<std::string> rest;
  for (const std::string& name : names) {
    const bool keyword = !input_key::parse(name).is_position() &&
                         std::find(parameters.begin(), parameters.end(), name) == parameters.end();
    if (!keyword) {
      rest.push_back(name);
    } else if (engine.remove_inputs({name}) == 0) {
      add_warning(loaded, o,
                  option_sentence() << option_id::remove_inputs << ": no call gave an input named '" << shown(name)
                                    << "' and no parameter has that name: nothing removed for it");
    }
  }
  if (!rest.empty()) engine.remove_inputs(rest);
}

//=== records ===//

// The signature the first record of `function` in `source` carries that carries one: what a part of a file split by
// lines lacks; none when its records of the function carry none (then the parts were written without one too). A
// file without a record of the function is refused: it cannot be the file the parts come from.
std::optional<parameter_list> signature_in(const std::string& source, const std::string& function) {
  if (source == standard_input) {
    throw load_error(option_sentence() << option_id::signature_from << ": give a record file, not standard input");
  }
  if (kind_of_source(source) == source_kind::summary) {
    throw load_error(option_sentence() << option_id::signature_from << " " << source
                                       << ": a summary; give the record file it summarises");
  }
  std::ifstream in = open_source(source);
  record_reader reader(in, source);
  call_record record;
  bool seen = false;
  while (reader.next(record)) {
    if (record.function != function) continue;
    if (record.parameters) return *record.parameters;
    seen = true;
  }
  if (in.bad()) fail(load_error_kind::unreadable, source + ": cannot read: " + errno_text(EIO));
  if (!seen)
    throw load_error(option_sentence() << option_id::signature_from << " " << source << ": holds no record of '"
                                       << shown(function) + "'");
  return std::nullopt;
}

// Feeds the records of the chosen function to the engine, and notes the other functions seen.
class call_feeder {
 public:
  explicit call_feeder(const load_options& o)
      : options_(o),
        loaded_{.engine = shape_engine(
                    engine_options{.store_n_calls = store_n_calls(o), .keep_calls = store_n_calls(o) != unlimited})} {}

  static std::size_t store_n_calls(const load_options& o) {
    return o.for_summary ? unlimited : o.store_n_calls.value_or(3);
  }

  void add(const record_view& view, const record_reader& where) {
    const call_record& record = *view.record;
    functions_.note(record.function);
    if (record.function != chosen()) return;
    if (loaded_.calls_read == 0) start(record);
    ++loaded_.calls_read;
    if (full_) return;  // later calls are still read, so that the whole input is checked
    try {
      full_ = !add_call(view);
    } catch (const merge_error&) {
      throw;
    } catch (const inference_error& e) {
      throw inference_error(where.source() + ":" + std::to_string(where.line()) + ": " + std::string(e.sentence()));
    }
  }

  void warn(const std::string& warning) { add_warning(loaded_, options_, option_sentence::of(warning)); }
  void warn(option_sentence warning) { add_warning(loaded_, options_, std::move(warning)); }

  // The engine with every call, once the function chosen is known to be the only one, or the one asked for.
  loaded_engine finish(const std::vector<std::string>& sources) {
    if (!options_.function && functions_.several()) {
      throw load_error(load_error_kind::several_functions,
                       option_sentence() << "the records hold several functions (" << functions_.text()
                                         << "); choose one with " << option_id::function << " NAME");
    }
    loaded_.function = options_.function ? *options_.function : functions_.empty() ? std::string() : functions_.first();
    const bool none = loaded_.calls_read == 0;
    if (none && options_.for_summary && options_.function) {  // a shard without the function: it merges as nothing
      warn("no record of '" + shown(loaded_.function) + "': the summary is empty");
      return std::move(loaded_);
    }
    if (none && options_.function && !functions_.empty()) {
      fail(load_error_kind::no_such_function,
           "no record of function '" + shown(*options_.function) + "' (the records hold " + functions_.text() + ")");
    }
    if (none) {
      std::string names;
      for (const std::string& s : sources) names += (names.empty() ? "" : ", ") + s;
      throw inference_error("no call recorded in " + names);
    }
    // A1: the calls beyond store_n_calls were read (and checked) but are not used: say so.
    if (const std::size_t kept = loaded_.engine.num_obs(); loaded_.calls_read > kept) {
      warn(option_sentence() << "kept the first " << std::to_string(kept) << " of "
                             << std::to_string(loaded_.calls_read) << " calls of " << loaded_.function << "; "
                             << option_id::store_n_calls << " all uses every call");
    }
    remove_inputs(loaded_, options_);
    return std::move(loaded_);
  }

 private:
  const std::string& chosen() const { return options_.function ? *options_.function : functions_.first(); }

  // The first call: the signature (the reader checks that later records keep it), then the options that depend on it.
  void start(const call_record& record) {
    if (record.parameters) {
      loaded_.engine.set_parameters(*record.parameters);
    } else if (options_.signature_from) {
      if (auto signature = signature_in(*options_.signature_from, record.function)) {
        loaded_.engine.set_parameters(std::move(*signature));
      }
    }
    for (const auto& [key, v] : options_.values_if_missing) loaded_.engine.value_if_missing(key, v);
    loaded_.engine.begin_recording();
  }

  // A record read by one of the reader's templates gives the engine its sizes only, once the structure repeats (the
  // engine prepares it on that first repeat); the others, the line that makes a template among them, are given whole.
  // Structures that never repeat cost the engine nothing; one the reader replaces is removed.
  bool add_call(const record_view& view) {
    const call_record& record = *view.record;
    if (view.structure && view.new_structure && *view.structure < structures_.size()) {
      if (auto& replaced = structures_[*view.structure]) {
        loaded_.engine.remove_structure(*replaced);
        replaced.reset();
      }
    }
    if (!view.structure || view.new_structure) {
      return record.result ? loaded_.engine.add_call(record.inputs, *record.result)
                           : loaded_.engine.add_call(record.inputs);
    }
    if (structures_.size() <= *view.structure) structures_.resize(*view.structure + 1);
    std::optional<call_structure>& structure = structures_[*view.structure];
    if (!structure) structure = loaded_.engine.add_structure(record.inputs, record.result ? &*record.result : nullptr);
    return loaded_.engine.add_call(*structure, view.sizes);
  }

  const load_options& options_;
  loaded_engine loaded_;
  function_names functions_;
  std::vector<std::optional<call_structure>> structures_;  // the engine's, by the reader's structure number
  bool full_ = false;
};

// Every record of the sources as one stream (one reader: signatures bind across files), given to
// `on_record(record, reader)`; the reader's warnings go to `on_warning` as each source ends. Returns the records the
// writers dropped, per function.
template <class OnRecord, class OnWarning>
dropped_record_counts read_records(const std::vector<std::string>& sources, OnRecord&& on_record,
                                   OnWarning&& on_warning) {
  std::optional<record_reader> reader;
  const auto read = [&](std::istream& in, const std::string& name) {
    if (reader) {
      reader->open(in, name);
    } else {
      reader.emplace(in, name);
    }
    const std::size_t warned = reader->warnings().size();  // the reader's warnings about earlier sources are out
    record_view record;
    while (reader->next(record)) on_record(record, *reader);
    for (std::size_t i = warned; i < reader->warnings().size(); ++i) on_warning(reader->warnings()[i]);
  };
  for (const std::string& source : sources) {
    if (source == standard_input) {
      struct stat st {};
      if (fstat(0, &st) == 0 && S_ISDIR(st.st_mode)) {
        fail(load_error_kind::unreadable, "<stdin>: cannot read: it is a directory");
      }
      errno = 0;
      read(std::cin, "<stdin>");
      // std::cin shares stdin's buffer (sync_with_stdio): a read error shows there, not in cin's state.
      if (std::ferror(stdin)) fail(load_error_kind::unreadable, "<stdin>: cannot read: " + errno_text(EIO));
      continue;
    }
    std::ifstream in = open_source(source);
    read(in, source);
    if (in.bad()) fail(load_error_kind::unreadable, source + ": cannot read: " + errno_text(EIO));
  }
  return reader ? reader->dropped_records() : dropped_record_counts{};
}

loaded_engine load_records(const std::vector<std::string>& sources, const load_options& o) {
  check_options(o);
  if (o.signature_from && *o.signature_from != standard_input) (void)open_source(*o.signature_from);  // said up front
  call_feeder feeder(o);
  dropped_record_counts dropped = read_records(
      sources, [&](const record_view& record, const record_reader& where) { feeder.add(record, where); },
      [&](const std::string& warning) { feeder.warn(warning); });
  loaded_engine loaded = feeder.finish(sources);
  loaded.dropped_records = std::move(dropped);
  return loaded;
}

//=== summaries ===//

load_error_kind kind_of(merge_error::reason why) {
  switch (why) {
    case merge_error::reason::signatures_differ: return load_error_kind::signatures_differ;
    case merge_error::reason::not_every_call:
    case merge_error::reason::values_if_missing_differ: return load_error_kind::summaries_disagree;
  }
  return load_error_kind::summaries_disagree;
}

// Merges one summary after the others, checking it is of the function the others are of.
class summary_merger {
 public:
  explicit summary_merger(const load_options& o) : options_(o) {}

  void add(const std::string& name, std::string_view text) {
    std::string function;
    shape_engine part = [&] {
      try {
        return shape_engine::from_summary_json(text, &function);
      } catch (const format_error& e) {
        fail(load_error_kind::bad_summary, name + ": not a valid summary: " + std::string(e.sentence()));
      }
    }();
    if (options_.function && function != *options_.function) {
      fail(load_error_kind::no_such_function,
           name + ": a summary of '" + function + "', not of '" + *options_.function + "'");
    }
    if (part.num_obs() > 0 && function_ && *function_ != function) {
      fail(load_error_kind::summaries_disagree, name + ": a summary of '" + function +
                                                    "' while the earlier ones are of '" + *function_ +
                                                    "'; choose the summaries of one function");
    }
    if (part.num_obs() > 0) function_ = function;
    try {
      loaded_.engine.merge(part);
    } catch (const merge_error& e) {
      option_sentence why = option_sentence() << name << ": cannot merge: " << e.detail();
      if (e.why() == merge_error::reason::signatures_differ) {
        why << "; summarize such a part with " << option_id::signature_from << " FILE";
      }
      throw load_error(kind_of(e.why()), std::move(why));
    }
  }

  loaded_engine finish() {
    if (loaded_.engine.num_obs() == 0) throw inference_error("no call recorded in the summaries");
    loaded_.function = function_.value_or(options_.function.value_or(""));
    loaded_.calls_read = loaded_.engine.num_obs();
    loaded_.from_summaries = true;
    remove_inputs(loaded_, options_);
    return std::move(loaded_);
  }

 private:
  const load_options& options_;
  loaded_engine loaded_{.engine = shape_engine(engine_options{.store_n_calls = unlimited, .keep_calls = false})};
  std::optional<std::string> function_;  // of the first summary with calls
};

}  // namespace

loaded_engine load_engine(const std::vector<std::string>& sources, const load_options& options) try {
  if (sources.empty()) fail(load_error_kind::bad_option, "no input file (give FILE.jsonl..., or - for standard input)");
  // Every source's kind is known before any is read, so that mixed sources and the options summaries refuse are
  // said before gigabytes of records are read. That costs a second open of each file (its head read again), under
  // 1 % of a merge of a thousand summaries; keeping every source open from its head to its reading would need a
  // descriptor per source at once.
  std::vector<source_kind> kinds;
  for (const std::string& source : sources) kinds.push_back(kind_of_source(source));
  if (std::find(kinds.begin(), kinds.end(), source_kind::summary) == kinds.end()) return load_records(sources, options);
  check_for_summaries(options);
  summary_merger merger(options);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::string& source = sources[i];
    if (kinds[i] == source_kind::records) {
      fail(load_error_kind::mixed_sources, source +
                                               ": holds records while other inputs are summaries: give either "
                                               "record files or summaries (summarize turns records into one)");
    }
    merger.add(source, read_summary_text(source));
  }
  return merger.finish();
} catch (const std::system_error& e) {  // a stream that fails to read (an I/O error)
  throw load_error(load_error_kind::unreadable, e.what());
}

std::vector<std::string> for_each_record(const std::vector<std::string>& sources,
                                         const std::function<void(const call_record&)>& f,
                                         dropped_record_counts* dropped_records) {
  std::vector<std::string> warnings;
  dropped_record_counts dropped = read_records(
      sources, [&](const record_view& record, const record_reader&) { f(*record.record); },
      [&](const std::string& warning) { warnings.push_back(warning); });
  if (dropped_records != nullptr) *dropped_records = std::move(dropped);
  return warnings;
}

loaded_engine load_summaries(const std::vector<std::pair<std::string, std::string>>& named_summaries,
                             const load_options& options) {
  check_for_summaries(options);
  summary_merger merger(options);
  for (const auto& [name, text] : named_summaries) merger.add(name, text);
  return merger.finish();
}

HOOKSCOPE_DETAIL_END_NAMESPACE
