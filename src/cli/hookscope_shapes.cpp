// hookscope-shapes — the command-line front end of the shape engine: reads record files (JSON Lines, from any
// process), infers the dynamic shapes (`infer`, in torch.export, trtexec, ONNX Runtime or report form) or the
// representative arguments (`args`, in the record value encoding), or writes their summary (`summarize`), which
// `infer` and `args` read in place of the records: summaries of shards merge into the answer of one pass.
//
// Exit status: 0 done; 1 the calls do not allow an inference (hookscope::inference_error); 2 bad input or usage
// (the message names the file and the line). It streams: one line in memory at a time, whatever the file size.
#include "options.hpp"

#include "hookscope/records.hpp"
#include "hookscope/shapes.hpp"
#include "hookscope/value.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <sys/stat.h>

namespace {

using namespace hookscope_shapes;

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
