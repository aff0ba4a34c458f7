// hookscope-shapes' command line (options.hpp): each option parsed, then the combinations checked.
#include "options.hpp"

#include <algorithm>

namespace hookscope_shapes {

namespace {

// The help text; {format_names}, {format_lines} and {typed_format_names} come from the table of output formats
// (output_formats.hpp).
constexpr std::string_view usage_template =
    R"(usage: hookscope-shapes infer FILE.jsonl... [options] [--format {format_names}]
                              [--typed] [--profiles 1|auto]
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
  --format FORMAT           infer: how the shapes are written, one of
{format_lines}  --typed                   infer, {typed_format_names} format: containers in the record encoding ({"tuple":[...]}, ...)
  --profiles 1|auto         infer, trtexec/ort/torch-tensorrt/report: one consistent profile (default), or one per phase
  --avoid-specialization    args: the call with every dynamic dimension >= 2 if any (torch.export
                            specialises 0 and 1), else the one with the most; a warning names the others
  --index N                 args: start from stored call N instead of the first complete one
  --as-args-kwargs          args: {"tuple":[{"tuple":args},{"dict":kwargs}]}
  --flat                    args: the aligned leaves as a list
  -o, --output FILE         summarize: write the summary to FILE (default: standard output)
  --signature-from FILE     the signature the function's records in FILE carry (if any), for records that
                            do not (a part of a file split by lines)
A KEY is a parameter name or a position (0, 1, ...).

exit status: 0 done, 1 the calls do not allow an inference, 2 bad input or usage.
)";

void replace(std::string& text, std::string_view placeholder, std::string_view with) {
  text.replace(text.find(placeholder), placeholder.size(), with);
}

}  // namespace

std::string usage_text() {
  std::string text(usage_template);
  std::string names;
  std::string lines;
  for (const hookscope::output_format& f : hookscope::output_formats()) {
    if (!names.empty()) names += '|';
    names += f.name;
    std::string line = "                              " + std::string(f.name);
    line.resize(std::max<std::size_t>(line.size() + 2, 48), ' ');
    lines += line + std::string(f.description) + "\n";
  }
  replace(text, "{format_names}", names);
  replace(text, "{format_lines}", lines);
  replace(text, "{typed_format_names}", hookscope::typed_output_format_names());
  return text;
}

std::string_view option_spelling(hookscope::option_id id) noexcept {
  using hookscope::option_id;
  switch (id) {
    case option_id::function: return "--function";
    case option_id::store_n_calls: return "--store-n-calls";
    case option_id::values_if_missing: return "--value-if-missing";
    case option_id::signature_from: return "--signature-from";
    case option_id::remove_inputs: return "--remove-inputs";
    case option_id::batch_dimension_for: return "--batch";
    case option_id::batch_dimension_for_all: return "--batch-all";
    case option_id::dim_names: return "--dim-names";
    case option_id::dim_labels: return "--dim-name";
    case option_id::profile_phases: return "--profiles";
    case option_id::candidate: return "--index";
    case option_id::flat: return "--flat";
    case option_id::as_args_kwargs: return "--as-args-kwargs";
    case option_id::avoid_specialization: return "--avoid-specialization";
  }
  return "an option";
}

hookscope::argument_options argument_options_of(const options& o) {
  hookscope::argument_options a;
  if (o.index) a.candidate = *o.index;
  a.flat = o.flat;
  a.as_args_kwargs = o.as_args_kwargs;
  a.avoid_specialization = o.avoid_specialization;
  return a;
}

namespace {

//=== the command line ===//
// Each option's value is read by the library (parse_count, input_key::parse, ...), which refuses what it does not
// take with a load_error naming the option; parse_options spells it as a usage error.

using hookscope::option_id;

void parse_value_if_missing(options& o, std::string_view text) {
  const std::size_t equal = text.find('=');
  if (equal == std::string_view::npos)
    throw usage_error("--value-if-missing: expected KEY=JSON, got '" + std::string(text) + "'");
  try {
    o.values_if_missing.emplace_back(hookscope::input_key::parse(text.substr(0, equal), option_id::values_if_missing),
                                     hookscope::value_from_json(text.substr(equal + 1)));
  } catch (const hookscope::format_error& e) {
    throw usage_error("--value-if-missing " + std::string(text) + ": " + std::string(e.sentence()));
  }
}

void parse_dim_name(options& o, std::string_view text) {
  const std::size_t equal = text.find('=');
  const std::size_t colon = text.substr(0, equal).rfind(':');
  if (equal == std::string_view::npos || colon == std::string_view::npos) {
    throw usage_error("--dim-name: expected KEY:DIM=LABEL, got '" + std::string(text) + "'");
  }
  const std::string_view label = text.substr(equal + 1);
  o.shapes.dim_labels.push_back(
      {hookscope::input_key::parse(text.substr(0, colon), option_id::dim_labels),
       hookscope::parse_count(option_id::dim_labels, text.substr(colon + 1, equal - colon - 1)), std::string(label)});
}

const hookscope::output_format* parse_format(std::string_view text) {
  if (const hookscope::output_format* f = hookscope::find_output_format(text)) return f;
  throw usage_error("--format: expected " + hookscope::output_format_names() + ", got '" + std::string(text) + "'");
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
    o.store_n_calls = hookscope::parse_store_n_calls(value());
    o.store_n_calls_given = true;
  } else if (name == "--batch") {
    parse_list(o.shapes.batch_dimension_for, name, value());
  } else if (name == "--remove-inputs") {
    parse_list(o.remove_inputs, name, value());
  } else if (name == "--typed") {
    flag(o.typed);
  } else if (name == "--avoid-specialization") {
    flag(o.avoid_specialization);
  } else if (name == "--profiles") {
    o.shapes.profile_phases = hookscope::parse_profile_phases(value());
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
    o.index = hookscope::parse_count(option_id::candidate, value());
  } else if (name == "--as-args-kwargs") {
    flag(o.as_args_kwargs);
  } else if (name == "--flat") {
    flag(o.flat);
  } else if (name == "--signature-from") {
    o.signature_from = std::string(value());
    if (o.signature_from->empty()) throw usage_error("--signature-from: an empty file name");
  } else if (name == "--output" || name == "-o") {
    o.output = std::string(value());
    if (o.output.empty()) throw usage_error(std::string(name) + ": an empty file name (-o - writes standard output)");
  } else if (name == "--help" || name == "-h") {
    o.help = true;
  } else {
    throw usage_error("unknown option '" + std::string(name) + "'");
  }
}

// summarize records every call and infers nothing: only the recording options apply.
void check_summarize(const options& o, bool format_given) {
  const std::pair<bool, const char*> inference_options[] = {{!o.shapes.batch_dimension_for.empty(), "--batch"},
                                                            {o.shapes.batch_dimension_for_all, "--batch-all"},
                                                            {o.shapes.dim_names, "--dim-names"},
                                                            {!o.shapes.dim_labels.empty(), "--dim-name"},
                                                            {format_given, "--format"},
                                                            {o.typed, "--typed"},
                                                            {o.shapes.profile_phases, "--profiles"},
                                                            {o.index.has_value(), "--index"},
                                                            {o.as_args_kwargs, "--as-args-kwargs"},
                                                            {o.flat, "--flat"},
                                                            {o.avoid_specialization, "--avoid-specialization"}};
  for (const auto& [given, name] : inference_options) {
    if (given) throw usage_error(std::string(name) + " is for 'infer' and 'args' (give it when reading the summaries)");
  }
}

// What one command accepts and the other does not (the rules on the options themselves are the library's).
void check_combinations(options& o, bool format_given) {
  if (o.files.empty()) throw usage_error("no input file (give FILE.jsonl..., or - for standard input)");
  if (o.what == command::summarize) return check_summarize(o, format_given);
  if (o.output != "-") throw usage_error("--output is for 'summarize' only");
  if (o.what == command::infer && (o.index || o.as_args_kwargs || o.flat)) {
    throw usage_error(std::string(o.index  ? "--index"
                                  : o.flat ? "--flat"
                                           : "--as-args-kwargs") +
                      " is for 'args' only");
  }
  if (o.what == command::args && format_given) throw usage_error("--format is for 'infer' only");
  if (o.what == command::args && (o.typed || o.shapes.profile_phases)) {
    throw usage_error(std::string(o.typed ? "--typed" : "--profiles") + " is for 'infer' only");
  }
  if (o.typed && o.format->write_typed == nullptr)
    throw usage_error("--typed is for --format " + hookscope::typed_output_format_names() + " only");
  if (o.what == command::infer && o.avoid_specialization)
    throw usage_error("--avoid-specialization is for 'args' only");
}

// The library's rules on the options, spelled as this command spells its options.
void check_rules(const options& o) try {
  hookscope::check_options(hookscope::engine_options{.store_n_calls = o.store_n_calls});
  if (o.what == command::summarize) return;
  hookscope::check_options(o.shapes);
  hookscope::check_options(argument_options_of(o));
} catch (const hookscope::load_error& e) {
  throw usage_error(e.spelled(option_spelling));
}

}  // namespace

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
      try {
        parse_option(o, name, equal == arg.npos ? std::nullopt : std::optional(arg.substr(equal + 1)), args);
      } catch (const hookscope::load_error& e) {  // the library's refusal of the value, naming the option
        throw usage_error(e.spelled(option_spelling));
      }
      format_given = format_given || name == "--format";
    } else if (!command_seen) {
      if (arg != "infer" && arg != "args" && arg != "summarize") {
        throw usage_error("unknown command '" + std::string(arg) + "' (expected infer, args or summarize)");
      }
      o.what = arg == "infer" ? command::infer : arg == "args" ? command::args : command::summarize;
      command_seen = true;
    } else {
      // An empty argument (an unset shell variable, "$IN") names no file: said here, not as ": cannot open".
      if (arg.empty()) throw usage_error("an empty input file name (give FILE.jsonl..., or - for standard input)");
      o.files.emplace_back(arg);
    }
  }
  if (o.help) return o;
  if (!command_seen) throw usage_error("no command (expected infer, args or summarize)");
  check_combinations(o, format_given);
  check_rules(o);
  return o;
}

}  // namespace hookscope_shapes
