// hookscope-shapes — the command-line front end of the shape engine: reads record files (JSON Lines, from any
// process) or their summaries through the library's front door (hookscope/load.hpp), then infers the dynamic shapes
// (`infer`, in torch.export, trtexec, ONNX Runtime or report form) or the representative arguments (`args`, in the
// record value encoding), or writes the summary (`summarize`) that `infer` and `args` read in place of the records.
//
// Exit status: 0 done; 1 the calls do not allow an inference (hookscope::inference_error); 2 bad input or usage
// (the message names the file and the line). It streams: one line in memory at a time, whatever the file size.
#include "options.hpp"
#include "summary_file.hpp"

#include "../json_writer.hpp"  // a dict key as the value writer writes it

#include "hookscope/load.hpp"
#include "hookscope/records.hpp"
#include "hookscope/shapes.hpp"
#include "hookscope/value.hpp"

#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace hookscope_shapes;

void print(const std::string& text) {
  std::cout << text;
  if (text.empty() || text.back() != '\n') std::cout << '\n';
}

void print_warning(std::string_view sentence) { std::cerr << program << ": warning: " << sentence << '\n'; }

void print_warnings(const std::vector<hookscope::inference_warning>& warnings) {
  for (const hookscope::inference_warning& warning : warnings) print_warning(warning.sentence);
}

hookscope::load_options load_options_of(const options& o) {
  hookscope::load_options l;
  l.function = o.function;
  if (o.store_n_calls_given) l.store_n_calls = o.store_n_calls;
  l.values_if_missing = o.values_if_missing;
  l.signature_from = o.signature_from;
  l.remove_inputs = o.remove_inputs;
  l.stored_call_option = hookscope::stored_call_option(argument_options_of(o));
  l.for_summary = o.what == command::summarize;
  // The load's warnings go out as they are met, before a later file's error.
  l.on_warning = [](const hookscope::option_sentence& warning) {
    std::cerr << program << ": warning: " << warning.spelled(option_spelling) << '\n';
  };
  return l;
}

// -o: see summary_file.hpp.
void write_summary(const hookscope::loaded_engine& loaded, const options& o) {
  const std::string text = loaded.engine.to_summary_json(loaded.function) + "\n";
  if (o.output == "-") {
    std::cout << text;
    return;
  }
  write_summary_file(o.output, text, o.files);
}

void append_arguments(std::string& out, const hookscope::value& v, int levels);

// append_arguments' cases: a tuple, a list or a dict opened here, its children each with one level less; any other
// value (and any value once `levels` is spent) as the value writer writes it.
struct arguments_writer {
  std::string& out;
  const hookscope::value& v;
  int levels;

  void whole() const { out += hookscope::to_json(v); }
  void items(const char* opening, const std::vector<hookscope::value>& children) const {
    if (levels == 0) return whole();
    out += opening;
    bool first = true;
    for (const hookscope::value& item : children) {
      if (!first) out += ',';
      append_arguments(out, item, levels - 1);
      first = false;
    }
    out += "]}";
  }

  void operator()(hookscope::value_node::tuple t) const { items(R"({"tuple":[)", t.items); }
  void operator()(hookscope::value_node::list l) const { items(R"({"list":[)", l.items); }
  void operator()(hookscope::value_node::dict d) const {
    if (levels == 0) return whole();
    out += R"({"dict":[)";
    bool first = true;
    for (const auto& [name, field] : d.entries) {
      out += first ? "[" : ",[";
      hookscope::detail::append_json_text(out, name);  // as the value writer writes a dict key
      out += ',';
      append_arguments(out, field, levels - 1);
      out += ']';
      first = false;
    }
    out += "]}";
  }
  void operator()(hookscope::value_node::none) const { whole(); }
  void operator()(hookscope::value_node::tensor) const { whole(); }
  void operator()(hookscope::value_node::integer) const { whole(); }
  void operator()(hookscope::value_node::floating) const { whole(); }
  void operator()(hookscope::value_node::boolean) const { whole(); }
  void operator()(hookscope::value_node::string) const { whole(); }
  void operator()(hookscope::value_node::structure) const { whole(); }
  void operator()(hookscope::value_node::bytes) const { whole(); }
  void operator()(hookscope::value_node::opaque) const { whole(); }
  void operator()(hookscope::value_node::variant) const { whole(); }
};

// The containers the arguments are returned in (the tuple of positional arguments, the dict of keyword ones, and
// the pair of both with --as-args-kwargs) written around each argument's own JSON: an argument nests as deep as a
// record allows (hookscope::to_json checks it), and `levels` containers above it add theirs, so that args prints
// whatever infer reads.
void append_arguments(std::string& out, const hookscope::value& v, int levels) {
  hookscope::visit(v, arguments_writer{out, v, levels});
}

void print_arguments(const hookscope::shape_engine& engine, const options& o) {
  const hookscope::inferred_arguments chosen = engine.infer_arguments(argument_options_of(o));
  std::string text;
  append_arguments(text, chosen.arguments, o.as_args_kwargs ? 2 : 1);
  print(text);
  print_warnings(chosen.warnings);
}

void print_shapes(const hookscope::shape_engine& engine, const options& o) {
  const hookscope::dynamic_shapes ds = engine.infer_dynamic_shapes(o.shapes);
  print(o.typed ? o.format->write_typed(ds) : o.format->write(ds));
  print_warnings(o.format->warnings(ds));
}

void run(const options& o) {
  const hookscope::loaded_engine loaded = hookscope::load_engine(o.files, load_options_of(o));
  if (o.what == command::summarize) return write_summary(loaded, o);
  if (o.what == command::args) {
    print_arguments(loaded.engine, o);
  } else {
    print_shapes(loaded.engine, o);
  }
}

int fail(int status, std::string_view message) {
  std::cout.flush();
  std::cerr << program << ": " << message << '\n';
  return status;
}

int usage_failure(std::string_view message) {
  std::cerr << program << ": " << message << "\nTry 'hookscope-shapes --help'.\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const options o = parse_options(argc, argv);
    if (o.help) {
      std::cout << usage_text();
      return 0;
    }
    run(o);
    std::cout.flush();
    return std::cout ? 0 : fail(2, "cannot write the output");
  } catch (const usage_error& e) {
    return usage_failure(e.what());
  } catch (const hookscope::load_error& e) {
    return e.kind() == hookscope::load_error_kind::bad_option ? usage_failure(e.spelled(option_spelling))
                                                              : fail(2, e.spelled(option_spelling));
  } catch (const hookscope::format_error& e) {  // record_error: "file:line: $.path: what"
    return fail(2, e.sentence());
  } catch (const input_error& e) {
    return fail(2, e.what());
  } catch (const std::system_error& e) {  // a file that fails to read
    return fail(2, e.what());
  } catch (const hookscope::inference_error& e) {
    return fail(1, e.sentence());
  } catch (const std::bad_alloc&) {
    return fail(2,
                "out of memory: the input is larger than this machine can hold (a line without newlines? "
                "--store-n-calls all keeps memory constant)");
  } catch (const std::exception& e) {
    return fail(1, hookscope::sentence_of(e));
  } catch (...) {
    return fail(1, "unknown error");
  }
}
