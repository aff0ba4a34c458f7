// hookscope-shapes — the command-line front end of the shape engine: reads record files (JSON Lines, from any
// process), infers the dynamic shapes (`infer`, in torch.export, trtexec, ONNX Runtime or report form) or the
// representative arguments (`args`, in the record value encoding), or writes their summary (`summarize`), which
// `infer` and `args` read in place of the records: summaries of shards merge into the answer of one pass.
//
// Exit status: 0 done; 1 the calls do not allow an inference (hookscope::inference_error); 2 bad input or usage
// (the message names the file and the line). It streams: one line in memory at a time, whatever the file size.
#include "hookscope/records.hpp"
#include "hookscope/shapes.hpp"
#include "hookscope/value.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <sys/stat.h>

namespace {

constexpr std::string_view program = "hookscope-shapes";

constexpr std::string_view usage_text = R"(usage: hookscope-shapes infer FILE.jsonl... [options] [--format torch|trtexec|ort|onnx|report] [--typed]
                              [--profiles 1|auto]
       hookscope-shapes args FILE.jsonl... [options] [--index N | --avoid-specialization] [--as-args-kwargs | --flat]
       hookscope-shapes summarize FILE.jsonl... [--function NAME] [--value-if-missing KEY=JSON]...
                                [--signature-from FILE.jsonl] [-o S.json]
       hookscope-shapes --help

Reads calls recorded as JSON Lines (one call per line; several files merge, in order; - is standard input)
and infers the dynamic dimensions of their inputs (infer) or representative arguments (args).
summarize writes what infer keeps of every call (--store-n-calls all) as one JSON document; infer and args
accept summaries in place of record files (S1.json S2.json ...: the same output as one pass over the records
they summarise, concatenated in that order, with --store-n-calls all).

options:
  --function NAME           the function whose records to use (required when the files hold several)
  --store-n-calls N|all     use the first N calls of the function (default 3); all: every call, summarised
                            as it streams (constant memory)
  --batch KEY,...           dimension 0 of these inputs is dynamic whatever was seen
  --batch-all               dimension 0 of every input is dynamic
  --value-if-missing KEY=JSON
                            a value (in the record encoding) for an input some calls leave out; repeatable
  --dim-names               name dynamic dimensions (batch_size, sequence_length, ...) instead of DYNAMIC
  --dim-name KEY:DIM=LABEL  name dimension DIM of input KEY; repeatable
  --remove-inputs NAME,...  forget these inputs (as if no call had given them) before inferring
  --format FORMAT           infer: torch (default; torch.export dynamic_shapes as JSON), trtexec
                            (--minShapes/--optShapes/--maxShapes), ort (TensorRT provider options), onnx
                            (torch.onnx.export dynamic_axes as JSON, inputs and outputs) or report
  --typed                   infer, torch format: containers in the record encoding ({"tuple":[...]}, ...)
  --profiles 1|auto         infer, trtexec/ort/report: one consistent profile (default), or one per phase
  --avoid-specialization    args: the call with every dynamic dimension >= 2 if any (torch.export
                            specialises 0 and 1), else the one with the most; a warning names the others
  --index N                 args: start from stored call N instead of the first complete one
  --as-args-kwargs          args: {"tuple":[{"tuple":args},{"dict":kwargs}]}
  --flat                    args: the aligned leaves as a list
  -o, --output FILE         summarize: write the summary to FILE (default: standard output)
  --signature-from FILE     summarize: the signature the function's records in FILE carry (if any), for
                            records that do not (a part of a file split by lines)
A KEY is a parameter name or a position (0, 1, ...).

exit status: 0 done, 1 the calls do not allow an inference, 2 bad input or usage.
)";

// Bad command line: exit 2 with a hint to --help.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input that is not a record line (a file that does not open, a function that is not there): exit 2.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The library's messages start with "hookscope: "; after the program's name that would say it twice.
std::string_view without_library_prefix(std::string_view message) {
  constexpr std::string_view prefix = "hookscope: ";
  if (message.substr(0, prefix.size()) == prefix) message.remove_prefix(prefix.size());
  return message;
}

enum class command { infer, args, summarize };
enum class output_format { torch, trtexec, ort, onnx, report };

struct options {
  bool help = false;
  command what = command::infer;
  std::vector<std::string> files;
  std::optional<std::string> function;
  std::size_t store_n_calls = 3;
  bool store_n_calls_given = false;
  std::string output = "-";
  std::optional<std::string> signature_from;
  std::optional<hookscope::parameter_list> signature;  // read from signature_from
  std::vector<std::pair<hookscope::input_key, hookscope::value>> values_if_missing;
  hookscope::dynamic_shapes_options shapes;
  output_format format = output_format::torch;
  std::optional<std::size_t> index;
  bool as_args_kwargs = false;
  bool flat = false;
  bool typed = false;
  bool avoid_specialization = false;
  std::vector<std::string> remove_inputs;
};

//=== the command line ===//

std::size_t parse_count(std::string_view option, std::string_view text) {
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
    throw usage_error(std::string(option) + ": expected a non-negative integer, got '" + std::string(text) + "'");
  }
  return n;
}

hookscope::input_key parse_key(std::string_view option, std::string_view text) {
  if (text.empty()) throw usage_error(std::string(option) + ": empty input name");
  return hookscope::input_key::parse(text);
}

void parse_value_if_missing(options& o, std::string_view text) {
  const std::size_t equal = text.find('=');
  if (equal == std::string_view::npos) throw usage_error("--value-if-missing: expected KEY=JSON, got '" + std::string(text) + "'");
  try {
    o.values_if_missing.emplace_back(parse_key("--value-if-missing", text.substr(0, equal)),
                                     hookscope::value_from_json(text.substr(equal + 1)));
  } catch (const hookscope::format_error& e) {
    throw usage_error("--value-if-missing " + std::string(text) + ": " + e.what());
  }
}

bool is_label(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (const char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

void parse_dim_name(options& o, std::string_view text) {
  const std::size_t equal = text.find('=');
  const std::size_t colon = text.substr(0, equal).rfind(':');
  if (equal == std::string_view::npos || colon == std::string_view::npos) {
    throw usage_error("--dim-name: expected KEY:DIM=LABEL, got '" + std::string(text) + "'");
  }
  const std::string_view label = text.substr(equal + 1);
  // torch.export's Dim names are identifiers, and trtexec / ONNX Runtime specs split on ':', ',' and 'x'.
  if (!is_label(label)) throw usage_error("--dim-name: the label '" + std::string(label) + "' is not an identifier");
  o.shapes.dim_labels.push_back({parse_key("--dim-name", text.substr(0, colon)),
                                 parse_count("--dim-name", text.substr(colon + 1, equal - colon - 1)), std::string(label)});
}

output_format parse_format(std::string_view text) {
  if (text == "torch") return output_format::torch;
  if (text == "trtexec") return output_format::trtexec;
  if (text == "ort") return output_format::ort;
  if (text == "report") return output_format::report;
  if (text == "onnx") return output_format::onnx;
  throw usage_error("--format: expected torch, trtexec, ort, onnx or report, got '" + std::string(text) + "'");
}

void parse_list(std::vector<std::string>& out, std::string_view option, std::string_view text) {
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view key = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    if (key.empty()) throw usage_error(std::string(option) + ": expected KEY,..., got '" + std::string(text) + "'");
    out.emplace_back(key);
    if (comma == std::string_view::npos) return;
    start = comma + 1;
  }
}

// Walks argv: `--name value` or `--name=value`, flags, and FILE operands (`--` ends the options).
class arguments {
 public:
  arguments(int argc, char** argv) : args_(argv + 1, argv + argc) {}

  bool done() const noexcept { return next_ == args_.size(); }
  std::string_view take() { return args_[next_++]; }
  // The value of option `name`: after '=' in `arg`, or the next argument.
  std::string_view value_of(std::string_view name, std::optional<std::string_view> inline_value) {
    if (inline_value) return *inline_value;
    if (done()) throw usage_error(std::string(name) + ": missing its value");
    return take();
  }

 private:
  std::vector<std::string_view> args_;
  std::size_t next_ = 0;
};

void parse_option(options& o, std::string_view name, std::optional<std::string_view> inline_value, arguments& args) {
  auto value = [&] { return args.value_of(name, inline_value); };
  auto flag = [&](bool& target) {
    if (inline_value) throw usage_error(std::string(name) + ": takes no value");
    target = true;
  };
  if (name == "--function") {
    o.function = std::string(value());
  } else if (name == "--store-n-calls") {
    const std::string_view n = value();
    o.store_n_calls = n == "all" ? hookscope::unlimited : parse_count(name, n);
    o.store_n_calls_given = true;
    if (o.store_n_calls == 0) throw usage_error("--store-n-calls: expected at least 1 (or all)");
  } else if (name == "--batch") {
    parse_list(o.shapes.batch_dimension_for, name, value());
  } else if (name == "--remove-inputs") {
    parse_list(o.remove_inputs, name, value());
  } else if (name == "--typed") {
    flag(o.typed);
  } else if (name == "--avoid-specialization") {
    flag(o.avoid_specialization);
  } else if (name == "--profiles") {
    const std::string_view p = value();
    if (p != "1" && p != "auto") throw usage_error("--profiles: expected 1 or auto, got '" + std::string(p) + "'");
    o.shapes.profile_phases = p == "auto";
  } else if (name == "--batch-all") {
    flag(o.shapes.batch_dimension_for_all);
  } else if (name == "--value-if-missing") {
    parse_value_if_missing(o, value());
  } else if (name == "--dim-names") {
    flag(o.shapes.dim_names);
  } else if (name == "--dim-name") {
    parse_dim_name(o, value());
  } else if (name == "--format") {
    o.format = parse_format(value());
  } else if (name == "--index") {
    o.index = parse_count(name, value());
  } else if (name == "--as-args-kwargs") {
    flag(o.as_args_kwargs);
  } else if (name == "--flat") {
    flag(o.flat);
  } else if (name == "--signature-from") {
    o.signature_from = std::string(value());
  } else if (name == "--output" || name == "-o") {
    o.output = std::string(value());
  } else if (name == "--help" || name == "-h") {
    o.help = true;
  } else {
    throw usage_error("unknown option '" + std::string(name) + "'");
  }
}

// summarize records every call and infers nothing: only the recording options apply.
void check_summarize(options& o, bool format_given) {
  const hookscope::dynamic_shapes_options defaults;
  const std::pair<bool, const char*> inference_options[] = {
      {!o.shapes.batch_dimension_for.empty(), "--batch"}, {o.shapes.batch_dimension_for_all, "--batch-all"},
      {o.shapes.dim_names, "--dim-names"}, {!o.shapes.dim_labels.empty(), "--dim-name"}, {format_given, "--format"},
      {o.typed, "--typed"}, {o.shapes.profile_phases, "--profiles"}, {!o.remove_inputs.empty(), "--remove-inputs"},
      {o.index.has_value(), "--index"}, {o.as_args_kwargs, "--as-args-kwargs"}, {o.flat, "--flat"},
      {o.avoid_specialization, "--avoid-specialization"}};
  for (const auto& [given, name] : inference_options) {
    if (given) throw usage_error(std::string(name) + " is for 'infer' and 'args' (give it when reading the summaries)");
  }
  if (o.store_n_calls_given && o.store_n_calls != hookscope::unlimited) {
    throw usage_error("summarize keeps every call: --store-n-calls all, or leave it out");
  }
  o.store_n_calls = hookscope::unlimited;
}

// What one command accepts and the other does not, and options that exclude each other.
void check_combinations(options& o, bool format_given) {
  if (o.files.empty()) throw usage_error("no input file (give FILE.jsonl..., or - for standard input)");
  if (o.what == command::summarize) return check_summarize(o, format_given);
  if (o.output != "-") throw usage_error("--output is for 'summarize' only");
  if (o.signature_from) throw usage_error("--signature-from is for 'summarize' only");
  if (!o.shapes.batch_dimension_for.empty() && o.shapes.batch_dimension_for_all) {
    throw usage_error("--batch and --batch-all exclude each other");
  }
  if (o.what == command::infer && (o.index || o.as_args_kwargs || o.flat)) {
    throw usage_error(std::string(o.index ? "--index" : o.flat ? "--flat" : "--as-args-kwargs") + " is for 'args' only");
  }
  if (o.what == command::args && format_given) throw usage_error("--format is for 'infer' only");
  if (o.what == command::args && (o.typed || o.shapes.profile_phases)) {
    throw usage_error(std::string(o.typed ? "--typed" : "--profiles") + " is for 'infer' only");
  }
  if (o.typed && o.format != output_format::torch) throw usage_error("--typed is for --format torch only");
  if (o.what == command::infer && o.avoid_specialization) throw usage_error("--avoid-specialization is for 'args' only");
  if (o.avoid_specialization && o.index) throw usage_error("--avoid-specialization and --index exclude each other");
  if (o.avoid_specialization && o.store_n_calls == hookscope::unlimited) {
    throw usage_error("--avoid-specialization needs stored calls: use --store-n-calls N, not all");
  }
  if (o.as_args_kwargs && o.flat) throw usage_error("--as-args-kwargs and --flat exclude each other");
  if (o.index && o.store_n_calls == hookscope::unlimited) {
    throw usage_error("--index needs stored calls: use --store-n-calls N, not all");
  }
}

options parse_options(int argc, char** argv) {
  options o;
  arguments args(argc, argv);
  bool command_seen = false;
  bool format_given = false;
  bool options_ended = false;
  while (!args.done()) {
    const std::string_view arg = args.take();
    if (!options_ended && arg == "--") {
      options_ended = true;
    } else if (!options_ended && arg.size() > 1 && arg[0] == '-') {
      const std::size_t equal = arg.find('=');
      const std::string_view name = arg.substr(0, equal);
      parse_option(o, name, equal == arg.npos ? std::nullopt : std::optional(arg.substr(equal + 1)), args);
      format_given = format_given || name == "--format";
    } else if (!command_seen) {
      if (arg != "infer" && arg != "args" && arg != "summarize") {
        throw usage_error("unknown command '" + std::string(arg) + "' (expected infer, args or summarize)");
      }
      o.what = arg == "infer" ? command::infer : arg == "args" ? command::args : command::summarize;
      command_seen = true;
    } else {
      o.files.emplace_back(arg);
    }
  }
  if (o.help) return o;
  if (!command_seen) throw usage_error("no command (expected infer, args or summarize)");
  check_combinations(o, format_given);
  return o;
}

//=== reading the records into the engine ===//

// Feeds the records of the chosen function to the engine, and notes the other functions seen.
class call_feeder {
 public:
  explicit call_feeder(const options& o)
      : options_(o),
        engine_(hookscope::engine_options{.store_n_calls = o.store_n_calls,
                                          .keep_calls = o.store_n_calls != hookscope::unlimited}) {}

  void add(hookscope::call_record& record, const hookscope::record_reader& where) {
    note_function(record.function);
    if (record.function != chosen()) return;
    if (calls_ == 0) start(record);
    ++calls_;
    if (full_) return;  // later calls are still read, so that the whole input is checked
    try {
      full_ = record.result ? !engine_.add_call(std::move(record.inputs), std::move(*record.result))
                            : !engine_.add_call(std::move(record.inputs));
    } catch (const hookscope::inference_error& e) {
      throw hookscope::inference_error(where.source() + ":" + std::to_string(where.line()) + ": " +
                                       std::string(without_library_prefix(e.what())));
    }
  }

  // The engine with every call, once the function chosen is known to be the only one, or the one asked for.
  // `allow_none`: no call of the function asked for is an answer (a shard without it summarises to nothing).
  hookscope::shape_engine& finish(const std::vector<std::string>& files, bool allow_none = false) {
    if (!options_.function && functions_.size() > 1) {
      throw input_error("the records hold several functions (" + names() + "); choose one with --function NAME");
    }
    if (calls_ == 0 && allow_none && options_.function) return engine_;
    if (calls_ == 0 && options_.function && !functions_.empty()) {
      throw input_error("no record of function '" + *options_.function + "' (the records hold " + names() + ")");
    }
    if (calls_ == 0) {
      std::string sources;
      for (const std::string& f : files) sources += (sources.empty() ? "" : ", ") + f;
      throw hookscope::inference_error("no call recorded in " + sources);
    }
    return engine_;
  }

  // The function whose calls the engine holds ("" when the records held none).
  std::string function_name() const {
    return options_.function ? *options_.function : functions_.empty() ? std::string() : functions_.front();
  }

  // A1: the calls beyond --store-n-calls are read (and checked) but not used: say so.
  void announce_left_out() const {
    const std::size_t kept = engine_.num_obs();
    if (calls_ <= kept) return;
    std::cerr << program << ": warning: kept the first " << kept << " of " << calls_ << " calls of " << chosen()
              << "; --store-n-calls all uses every call\n";
  }

 private:
  const std::string& chosen() const { return options_.function ? *options_.function : functions_.front(); }

  void note_function(const std::string& name) {
    if (!functions_.empty() && functions_.back() == name) return;  // the usual case: one function
    for (const std::string& seen : functions_) {
      if (seen == name) return;
    }
    functions_.push_back(name);
  }

  std::string names() const {
    std::string text;
    for (const std::string& name : functions_) text += (text.empty() ? "'" : ", '") + name + "'";
    return text;
  }

  // The first call: the signature (the reader checks that later records keep it), then the options that
  // depend on it.
  void start(const hookscope::call_record& record) {
    if (record.parameters) {
      engine_.set_parameters(*record.parameters);
    } else if (options_.signature) {
      engine_.set_parameters(*options_.signature);
    }
    for (const auto& [key, v] : options_.values_if_missing) engine_.value_if_missing(key, v);
    engine_.begin_recording();
  }

  const options& options_;
  hookscope::shape_engine engine_;
  std::vector<std::string> functions_;  // in first-seen order; few
  std::size_t calls_ = 0;
  bool full_ = false;
};

void read_stream(std::istream& in, const std::string& name, std::optional<hookscope::record_reader>& reader,
                 call_feeder& feeder) {
  if (reader) {
    reader->open(in, name);
  } else {
    reader.emplace(in, name);
  }
  const std::size_t warned = reader->warnings().size();  // the reader's warnings about earlier streams are out
  hookscope::call_record record;
  while (reader->next(record)) feeder.add(record, *reader);
  for (std::size_t i = warned; i < reader->warnings().size(); ++i) {
    std::cerr << program << ": warning: " << reader->warnings()[i] << '\n';
  }
}

void read_files(const std::vector<std::string>& files, call_feeder& feeder) {
  std::optional<hookscope::record_reader> reader;  // one for every file: signatures bind across files
  for (const std::string& file : files) {
    if (file == "-") {
      struct stat st {};
      if (fstat(0, &st) == 0 && S_ISDIR(st.st_mode)) throw input_error("<stdin>: cannot read: it is a directory");
      errno = 0;
      read_stream(std::cin, "<stdin>", reader, feeder);
      // std::cin shares stdin's buffer (sync_with_stdio): a read error shows there, not in cin's state.
      if (std::ferror(stdin)) {
        throw input_error("<stdin>: cannot read: " + std::generic_category().message(errno != 0 ? errno : EIO));
      }
      continue;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) throw input_error(file + ": cannot read: it is a directory");
    errno = 0;
    std::ifstream in(file, std::ios::binary);
    if (!in) throw input_error(file + ": cannot open: " + std::generic_category().message(errno != 0 ? errno : ENOENT));
    read_stream(in, file, reader, feeder);
    if (in.bad()) throw input_error(file + ": cannot read: " + std::generic_category().message(errno != 0 ? errno : EIO));
  }
}

//=== summaries ===//

constexpr std::string_view summary_start = R"({"format":"hookscope-shapes-summary")";
constexpr std::size_t max_summary_bytes = std::size_t{1} << 30;

// summarize writes the format first; a record starts otherwise. Standard input is read as records.
bool is_summary(const std::string& file) {
  std::error_code ec;
  if (file == "-" || std::filesystem::is_directory(file, ec)) return false;  // read_files reports a directory
  std::ifstream in(file, std::ios::binary);
  char head[64];
  in.read(head, sizeof head);
  std::string_view text(head, static_cast<std::size_t>(in.gcount()));
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\r' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  return text.substr(0, summary_start.size()) == summary_start;
}

std::string errno_text(int fallback) { return std::generic_category().message(errno != 0 ? errno : fallback); }

std::string read_summary_text(const std::string& file) {
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw input_error(file + ": cannot open: " + errno_text(ENOENT));
  std::string text;
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_summary_bytes) throw input_error(file + ": larger than 1 GiB: not a summary summarize wrote");
  }
  if (in.bad()) throw input_error(file + ": cannot read: " + errno_text(EIO));
  return text;
}

// What the summaries fixed when they were written cannot be asked for again.
void check_summary_options(const options& o) {
  if (o.store_n_calls_given && o.store_n_calls != hookscope::unlimited) {
    throw usage_error("--store-n-calls: summaries hold every call (--store-n-calls all)");
  }
  if (!o.values_if_missing.empty()) {
    throw usage_error("--value-if-missing applies when summarising: the summaries hold theirs");
  }
  if (o.index || o.avoid_specialization) {
    throw usage_error(std::string(o.index ? "--index" : "--avoid-specialization") +
                      " needs stored calls, and summaries hold none: read the record files instead");
  }
}

// Every summary, merged in order: the engine one pass over the records they summarise would give.
hookscope::shape_engine merged_summaries(const options& o) {
  hookscope::shape_engine engine({.store_n_calls = hookscope::unlimited, .keep_calls = false});
  std::optional<std::string> function;  // of the first summary with calls
  for (const std::string& file : o.files) {
    if (!is_summary(file)) {
      throw input_error(file + ": holds records while other inputs are summaries: give either record files or "
                               "summaries (summarize turns records into one)");
    }
    std::string name;
    hookscope::shape_engine part = [&] {
      try {
        return hookscope::shape_engine::from_summary_json(read_summary_text(file), &name);
      } catch (const hookscope::format_error& e) {
        throw input_error(file + ": not a valid summary: " + e.what());
      }
    }();
    if (o.function && name != *o.function) {
      throw input_error(file + ": a summary of '" + name + "', not of '" + *o.function + "'");
    }
    if (part.num_obs() > 0 && function && *function != name) {
      throw input_error(file + ": a summary of '" + name + "' while the earlier ones are of '" + *function +
                        "'; choose the summaries of one function");
    }
    if (part.num_obs() > 0) function = name;
    try {
      engine.merge(part);
    } catch (const hookscope::inference_error& e) {
      std::string_view why = without_library_prefix(e.what());
      if (why.substr(0, 7) == "merge: ") why.remove_prefix(7);
      const bool signature = why.find("signatures differ") != std::string_view::npos;
      throw input_error(file + ": cannot merge: " + std::string(why) +
                        (signature ? "; summarize such a part with --signature-from FILE" : ""));
    }
  }
  if (engine.num_obs() == 0) throw hookscope::inference_error("no call recorded in the summaries");
  return engine;
}

// The signature on the first record of the function in `file` that carries one; none when no record does (then the
// whole file is read without one, and so are its parts).
std::optional<hookscope::parameter_list> signature_in(const std::string& file, const std::optional<std::string>& function) {
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw input_error(file + ": cannot open: " + errno_text(ENOENT));
  hookscope::record_reader reader(in, file);
  hookscope::call_record record;
  std::optional<std::string> first;  // the function, when --function does not name it
  while (reader.next(record)) {
    if (!first) first = record.function;
    if (record.function != function.value_or(*first) || !record.parameters) continue;
    return *record.parameters;
  }
  if (in.bad()) throw input_error(file + ": cannot read: " + errno_text(EIO));
  return std::nullopt;
}

// Written next to its destination and renamed: a summary is whole or absent, never cut short.
void write_summary(options o) {
  if (o.signature_from) o.signature = signature_in(*o.signature_from, o.function);
  call_feeder feeder(o);
  read_files(o.files, feeder);
  const hookscope::shape_engine& engine = feeder.finish(o.files, true);
  const std::string text = engine.to_summary_json(feeder.function_name()) + "\n";
  if (engine.num_obs() == 0) {
    std::cerr << program << ": warning: no record of '" << feeder.function_name() << "': the summary is empty\n";
  }
  if (o.output == "-") {
    std::cout << text;
    return;
  }
  const std::string temporary = o.output + ".tmp";
  errno = 0;
  std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw input_error(o.output + ": cannot write: " + errno_text(EIO));
  std::error_code ec;
  std::filesystem::rename(temporary, o.output, ec);
  if (ec) throw input_error(o.output + ": cannot write: " + ec.message());
}

//=== output ===

void print(const std::string& text) {
  std::cout << text;
  if (text.empty() || text.back() != '\n') std::cout << '\n';
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) {
    std::cerr << program << ": warning: " << without_library_prefix(warning) << '\n';
  }
}

void print_result(const hookscope::shape_engine& engine, const options& o) {
  if (o.what == command::args) {
    hookscope::argument_options a;
    if (o.index) a.candidate = *o.index;
    a.flat = o.flat;
    a.as_args_kwargs = o.as_args_kwargs;
    a.avoid_specialization = o.avoid_specialization;
    std::vector<std::string> warnings;
    a.warnings = &warnings;
    print(hookscope::to_json(engine.infer_arguments(a)));
    print_warnings(warnings);
    return;
  }
  const hookscope::dynamic_shapes ds = engine.infer_dynamic_shapes(o.shapes);
  switch (o.format) {
    case output_format::torch: print(o.typed ? ds.to_typed_json() : ds.to_json()); break;
    case output_format::onnx: print(ds.to_onnx()); break;
    case output_format::trtexec: print(ds.to_trtexec()); break;
    case output_format::ort: print(ds.to_ort_options()); break;
    case output_format::report: print(ds.report()); return;  // the report lists the warnings itself
  }
  print_warnings(ds.warnings());
}

void infer_and_print(hookscope::shape_engine& engine, const options& o) {
  if (!o.remove_inputs.empty()) engine.remove_inputs(o.remove_inputs);
  print_result(engine, o);
}

int fail(int status, std::string_view message) {
  std::cout.flush();
  std::cerr << program << ": " << without_library_prefix(message) << '\n';
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const options o = parse_options(argc, argv);
    if (o.help) {
      std::cout << usage_text;
      return 0;
    }
    if (o.what == command::summarize) {
      write_summary(o);
    } else if (std::any_of(o.files.begin(), o.files.end(), is_summary)) {
      check_summary_options(o);
      hookscope::shape_engine engine = merged_summaries(o);
      infer_and_print(engine, o);
    } else {
      call_feeder feeder(o);
      read_files(o.files, feeder);
      infer_and_print(feeder.finish(o.files), o);
      feeder.announce_left_out();
    }
    std::cout.flush();
    return std::cout ? 0 : fail(2, "cannot write the output");
  } catch (const usage_error& e) {
    std::cerr << program << ": " << e.what() << "\nTry 'hookscope-shapes --help'.\n";
    return 2;
  } catch (const hookscope::format_error& e) {  // record_error: "file:line: $.path: what"
    return fail(2, e.what());
  } catch (const input_error& e) {
    return fail(2, e.what());
  } catch (const std::system_error& e) {  // a file that fails to read
    return fail(2, e.what());
  } catch (const hookscope::inference_error& e) {
    return fail(1, e.what());
  } catch (const std::bad_alloc&) {
    return fail(2, "out of memory: the input is larger than this machine can hold (a line without newlines? "
                   "--store-n-calls all keeps memory constant)");
  } catch (const std::exception& e) {
    return fail(1, e.what());
  } catch (...) {
    return fail(1, "unknown error");
  }
}
