// hookscope/shapes.hpp — the shape engine: from recorded calls (value trees), the dynamic shapes and the
// representative arguments a model exporter needs (torch.export, TensorRT, ONNX Runtime).
//
// It knows nothing of hooks: calls come from `input_observer` (in-process) or from record files
// (`record_reader`, the `hookscope-shapes` command). Behaviour follows yobx's InputObserver rule by rule.
//
// ```cpp
// hookscope::shape_engine engine;
// engine.set_parameters({{"input_ids"}, {"attention_mask"}, {"past_key_values"}});
// engine.begin_recording();
// for (const auto& call : calls) engine.add_call(call);
// auto ds = engine.infer_dynamic_shapes({.batch_dimension_for = {"input_ids"}});
// std::cout << ds.to_json();               // {"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},...}
// ```
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/exceptions.hpp"
#include "hookscope/call_inputs.hpp"
#include "hookscope/value.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Names an argument: by parameter name, or by position among the positional arguments.
class input_key {
 public:
  // Implicit: a name or a position is a key.
  input_key(std::string name) : key_(std::move(name)) {}
  input_key(const char* name) : key_(std::string(name)) {}
  input_key(std::size_t position) : key_(position) {}
  input_key(int position);  // < 0 throws
  /// "input_ids" is a name, "2" a position (how the command line writes keys).
  static input_key parse(std::string_view text);
  /// The key a front end gives for `option` (values_if_missing, dim_labels), read as parse(text) reads it; an empty
  /// text names no input: load_error (bad_option) naming `option`.
  static input_key parse(std::string_view text, option_id option);

  bool is_position() const noexcept { return std::holds_alternative<std::size_t>(key_); }
  const std::string& name() const { return std::get<std::string>(key_); }
  std::size_t position() const { return std::get<std::size_t>(key_); }
  std::string to_string() const;
  friend bool operator==(const input_key&, const input_key&) = default;

 private:
  std::variant<std::string, std::size_t> key_;
};

struct engine_options {
  std::size_t store_n_calls = 3;  ///< calls kept per recording (`hookscope::unlimited`: all; see recorder.hpp)
  /// false: calls are not kept, only the per-argument/leaf/dimension summaries every inference reads anyway
  /// (constant memory on any number of calls), so the results are the same; info() then lists the best candidate
  /// only and infer_arguments() cannot take a stored call index.
  bool keep_calls = true;
};

/// Throws load_error (bad_option) when store_n_calls is 0: a recording keeps at least one call.
void check_options(const engine_options& options);

/// A count a front end gives as text for `option` (store_n_calls' N, a dimension of dim_labels, a candidate's
/// index): a non-negative integer in decimal, below `unlimited` (which no count reaches). Anything else is refused:
/// load_error (bad_option) naming `option`.
std::size_t parse_count(option_id option, std::string_view text);

/// store_n_calls as a front end gives it as text: "all" (`unlimited`: every call) or a count (parse_count; the
/// count that is `unlimited` itself is refused as too large). 0 is check_options' to refuse.
std::size_t parse_store_n_calls(std::string_view text);

/// An explicit label for one dimension of an argument (every tensor leaf of it).
struct dim_label {
  input_key input;
  std::size_t dim = 0;
  std::string label;
};

/// Whether `label` can name a dimension in every export format: an ASCII identifier (torch.export's Dim names are
/// identifiers; trtexec and ONNX Runtime shape specs split on ':', ',' and 'x'). Front ends refuse other labels.
bool is_dim_label(std::string_view label) noexcept;

/// A label the automatic naming gives one dimension of an argument by its name (`dim_names`): seeded before the
/// other dims, which take it when equal to its dims in every call giving both (rule C3).
struct known_dim_name {
  std::string input{};  ///< a parameter or keyword name; `arg<i>` for positional argument i without a parameter
  std::size_t dim = 0;
  std::string label{};
};

/// The well-known input names of Hugging Face LLMs: input_ids, position_ids, token_type_ids {0: batch_size,
/// 1: sequence_length}; attention_mask {0: batch_size, 1: total_sequence_length}; past_key_values and cache (transformers 5's
/// name) {0: batch_size, 2: past_sequence_length}; cache_position {0: sequence_length}; pixel_values {0: batch_size}; decoder_input_ids,
/// decoder_attention_mask {0: batch_size, 1: decoder_sequence_length}.
std::vector<known_dim_name> default_known_dim_names();

struct dynamic_shapes_options {
  /// Arguments (names, or positions as "0") whose dimension 0 is dynamic whatever was observed. A position also
  /// matches the parameter at that place in the signature when a call names it (C++ records name every parameter).
  std::vector<std::string> batch_dimension_for{};  // `{}`: no -Wmissing-field-initializers in `{.dim_names = true}`
  /// Dimension 0 of every argument is dynamic.
  bool batch_dimension_for_all = false;
  /// Automatic labels: dynamic dims given together and equal wherever both are given share one (rule C3), the names
  /// of known_dim_names first; every label is an identifier.
  bool dim_names = false;
  /// Explicit labels; when given, every other dynamic dim is labelled "<input>_dim_<d>" (or automatically with
  /// dim_names). An argument's entries by position are used in preference to those by name, as in the reference.
  std::vector<dim_label> dim_labels{};
  /// The well-known names the automatic naming starts from (the first entry for an input and dim wins); they also
  /// decide dynamic_dim::shared_name. Empty: every name is "<input>_dim_<d>" or shared from one.
  std::vector<known_dim_name> known_dim_names = default_known_dim_names();
  /// false: one profile over all calls; true: one per phase (calls grouped by which dynamic dims are 1 / > 1).
  bool profile_phases = false;
};

/// Throws load_error (bad_option) naming the options that exclude each other (batch_dimension_for and
/// batch_dimension_for_all) or a label that is not an identifier (is_dim_label). infer_dynamic_shapes checks them;
/// a front end may check them before it reads any source.
void check_options(const dynamic_shapes_options& options);

/// profile_phases as a front end gives it as text: "1" (false: one profile over all calls) or "auto" (true: one per
/// phase). Anything else is refused: load_error (bad_option) naming profile_phases.
bool parse_profile_phases(std::string_view text);

/// The label of a dynamic dimension no label names (torch.export's Dim.DYNAMIC); no option may give it.
inline constexpr std::string_view unnamed_dim_label = "DYNAMIC";

/// What was seen of one dynamic dimension.
struct dynamic_dim {
  std::size_t dim = 0;
  std::string label;        ///< unnamed_dim_label, or a name from dim_names / dim_labels
  std::string shared_name;  ///< one name for dims equal in every call giving both (batch across inputs), always set
  std::int64_t min = 0;     ///< observed
  std::int64_t max = 0;
  std::int64_t opt = 0;  ///< the most frequent value (the smallest on a tie)
  bool forced = false;   ///< dynamic because of batch_dimension_for, not because it varied
  bool only_zero_or_one() const noexcept { return min >= 0 && max <= 1; }
};

/// One tensor input, flattened: its name follows the path (`past_key_values.0.key`, `args.1`); a keyword absorbed
/// by `**kwargs` keeps its own name; a position without a parameter is `arg<i>`.
struct tensor_input {
  std::string name;
  std::vector<std::string> path;  ///< the path's components
  hookscope::dtype dtype = hookscope::dtype::float32;
  std::size_t rank = 0;
  std::vector<std::int64_t> min_shape, opt_shape, max_shape;  ///< per dim; static dims have min = opt = max
  std::vector<dynamic_dim> dynamic_dims;                      ///< ascending dim
  std::vector<std::vector<std::int64_t>> shapes_seen;         ///< distinct shapes, in first-seen order (bounded)
  bool shapes_seen_truncated = false;                         ///< more distinct shapes than kept
  std::vector<hookscope::dtype> dtypes_seen{};                ///< distinct dtypes, first-seen order (> 1: a warning)
};

/// An exact relation between dynamic dimensions that held in every kept distinct call (placeholders included) and
/// that those calls determine (more distinct points than free parameters; docs/export_formats.md, "Relations and profiles"):
/// `target = k * terms[0] + c` (one term) or `target = terms[0] + terms[1]` (two terms, k = 1, c = 0).
/// Equalities (k = 1, c = 0, one term) are what shared names express; they are listed too.
struct dim_relation {
  /// One dimension of one flattened tensor input.
  struct dim_ref {
    std::string input{};  ///< tensor_input::name (`attention_mask`, `past_key_values.0`)
    std::size_t dim = 0;
    std::string label{};  ///< its shared name (`total_sequence_length`), as the report prints it
    friend bool operator==(const dim_ref&, const dim_ref&) = default;
  };
  dim_ref target{};
  std::vector<dim_ref> terms{};  ///< one or two
  std::int64_t k = 1;
  std::int64_t c = 0;
  /// e.g. `total_sequence_length = past_sequence_length + sequence_length`, `x_dim_1 = 2*seq + 1`
  std::string text{};
  /// torch.export can write it as a derived Dim (`k*root + c`, one term); a sum of two Dims it cannot.
  bool torch_derived = false;
  /// The (kept) calls giving every dim it names, each of which satisfies it.
  std::uint64_t supporting_calls = 0;
  /// The distinct value tuples of its right-hand side among those calls: more than its free parameters (equality:
  /// 2, fitted `k*b + c`: 3), and 2 for a sum of two dims, each of which takes two values.
  std::size_t distinct_points = 0;
};

/// One TensorRT optimisation profile: per tensor input (rank >= 1) its min/opt/max shapes, each point satisfying
/// every dim_relation (a shape the model can run): opt is one observed call of the phase (the most frequent; inputs
/// the call lacks take their placeholders), min and max cover every value observed (every call, also beyond the
/// distinct calls kept): dims no relation defines take their observed extremes, the others are computed from them
/// (listed in `widened` where that goes beyond what was observed; docs/export_formats.md, "Relations and profiles").
struct tensorrt_profile {
  /// "all calls", or the phase's splits, e.g. "sequence_length = 1" / "sequence_length > 1", or
  /// "sequence_length > 1, pixel_values_dim_0 = 0" (the prompts without an image).
  std::string phase{};
  std::size_t calls = 0;  ///< how many (kept) calls fall in this phase
  /// The stored calls this phase covers: their indexes among the stored calls (engine_info::calls, the index
  /// infer_arguments' candidate takes), ascending. Every stored call is in exactly one profile, and `calls` of them
  /// are in this one, unless more distinct calls were seen than are kept (combinations_truncated): a stored call
  /// whose distinct call was left out is placed by its split dims' values. Empty when the engine keeps no calls
  /// (engine_options::keep_calls false, as in an engine read from a summary).
  std::vector<std::size_t> call_indexes{};
  /// A dimension the calls were split on: its label, an input and dim that give it, and which side of `value` this
  /// phase holds. The calls are split first on a dim being 1 (a decoder's decode steps, sequence_length = 1, from
  /// its prefills), then each phase on a dim being 0 in some of its calls and not in the others (an input left out:
  /// an encoder-decoder's first step, whose cache is empty; a text-only prompt beside prompts with an image).
  struct split_dim {
    std::string label{};
    std::string input{};  ///< tensor_input::name
    std::size_t dim = 0;
    bool equals_one = false;  ///< this phase's calls have it = 1 (value 1 and equal)
    std::int64_t value = 1;   ///< 1 or 0
    bool equal = false;       ///< this phase's calls have it = value (else > value, or != value when some were below)
  };
  /// The first of `splits` (none for "all calls").
  std::optional<split_dim> split{};
  /// Every split that separates this phase's calls from the others, outermost first (empty for "all calls").
  std::vector<split_dim> splits{};
  struct shape_range {
    std::string input{};  ///< tensor_input::name
    std::vector<std::int64_t> min{}, opt{}, max{};
  };
  std::vector<shape_range> shapes{};   ///< in the order of dynamic_shapes::inputs()
  std::vector<std::string> widened{};  ///< sentences: which bound was widened and along which relation
};

/// What an inference could not do as asked, or did with a doubt. Front ends act on `type` and the fields (never on
/// the words); `sentence` says it, and the message is text(): the library's prefix, then the sentence.
struct inference_warning {
  enum class kind : std::uint8_t {
    unknown_input,               ///< an option names `input`, which no call gave and no parameter has
    label_given_twice,           ///< dim_labels labels `dim` of `input` twice, differently: the first is kept
    label_names_no_dim,          ///< a dim_labels entry for `dim` of `input` names no dynamic dimension
    well_known_name_not_taken,   ///< `dim` of `input` does not take its well-known name
    label_joins_differing_dims,  ///< one label for dims whose observed values differ (`input`, `dim`: the second)
    dims_untracked,              ///< dims given in some calls only, beyond those tracked, share no name
    dim_seen_below_two,          ///< dynamic `dim` of `input` only seen as 0 or 1 (torch.export specialises)
    distinct_values_truncated,   ///< `dim` of `input` took more distinct values than are counted
    shapes_seen_truncated,       ///< `input` took more distinct shapes than are listed
    batch_dimension_unobserved,  ///< a batch dimension asked for `input`, which no call gave as a tensor
    combinations_truncated,      ///< more distinct combinations of shapes than relations are checked on
    dtype_changed,               ///< `input` changed dtype between calls
    relation_not_listed,         ///< a relation held in every kept distinct call but is not listed
    relation_outside_profile,    ///< a relation no profile point can satisfy (`phase`: the profile's)
    specialization_not_avoided,  ///< avoid_specialization: no stored call has every dynamic dimension >= 2
    export_dim_below_one,        ///< an exporter takes no size below 1: `dim` of `input` (torch-tensorrt)
  };
  kind type = kind::unknown_input;
  std::string input{};               ///< the input concerned (tensor_input::name, or as the option named it)
  std::optional<std::size_t> dim{};  ///< the dimension of `input` concerned
  std::string phase{};               ///< the profile's phase concerned (tensorrt_profile::phase)
  std::string sentence{};            ///< without the library's prefix

  std::string text() const { return std::string(message_prefix) + sentence; }
  /// The message: where a warning is printed or kept as text.
  operator std::string() const { return text(); }  // NOLINT(google-explicit-constructor): a warning reads as text
  bool operator==(const inference_warning&) const = default;
  /// Whether the message is `message` (tests and logs compare messages).
  friend bool operator==(const inference_warning& w, std::string_view message) { return w.text() == message; }
};

/// The name of a warning's kind ("batch_dimension_unobserved"), as the Python binding and docs spell it.
std::string_view kind_name(inference_warning::kind kind) noexcept;

/// The inferred dynamic shapes: a tree mirroring the inputs, with exporters.
class dynamic_shapes {
 public:
  /// A node of the torch.export structure: null (non-tensor), a tensor (index into inputs()), or a container.
  struct node {
    /// A custom class (a struct) is a list node with `structure` set and its field names as keys: to_json writes it
    /// as the list of its fields' specs (what torch.export takes), to_typed_json by name.
    enum class kind : std::uint8_t { null, tensor, tuple, list, dict } type = kind::null;
    std::size_t tensor = 0;
    std::vector<std::pair<std::string, node>> children;  ///< keys empty for tuple and plain list
    std::string class_name{};                            ///< a custom class's name (may be empty); empty otherwise
    bool structure = false;                              ///< a custom class (its class_name may be empty)

    // Defaulted after the class: Clang 14 with libstdc++ otherwise checks pair<string, node> while node is
    // still incomplete and rejects the implicit ones.
    node() = default;
    node(const node&);
    node(node&&) noexcept;
    node& operator=(const node&);
    node& operator=(node&&) noexcept;
    ~node();
  };

  const node& root() const noexcept { return root_; }
  const std::vector<tensor_input>& inputs() const noexcept { return inputs_; }
  /// A dynamic dim seen only as 0 or 1 (torch.export specialises it), a truncated summary, ...
  const std::vector<inference_warning>& warnings() const noexcept { return warnings_; }
  /// Exact relations between the dynamic dims of inputs() (equalities, `a = b + c`, `a = k*b + c`).
  const std::vector<dim_relation>& relations() const noexcept { return relations_; }
  /// The tensors of the calls' results (`result`, `result.0`, ... flattened as inputs are), with their dynamic
  /// dims; empty when no call carried a result.
  const std::vector<tensor_input>& outputs() const noexcept { return outputs_; }
  /// The consistent profiles: one ("all calls") unless infer_dynamic_shapes was asked for phases
  /// (dynamic_shapes_options::profile_phases), then one per phase.
  const std::vector<tensorrt_profile>& tensorrt_profiles() const noexcept { return profiles_; }

  /// torch.export `dynamic_shapes` as JSON (`--format torch`): an object by parameter name (an array when every
  /// argument is positional), per tensor {"<dim>":"DYNAMIC"|"<label>"} ({} when static), null for non-tensors.
  std::string to_json() const;
  /// trtexec's options for the profiles, on one line without a newline: with one profile
  /// `--minShapes=a:1x7,b:1x7 --optShapes=... --maxShapes=...`; with several, each triple after its `--profile=N`
  /// (TensorRT 10's trtexec refuses repeated bare triples). Every tensor input, static ones too; rank-0 tensors are
  /// left out (they never vary); empty when there is no tensor of rank >= 1. Throws inference_error for a name the
  /// syntax cannot carry (`,`, a quote, a space, not UTF-8, empty) or a dimension above 2^31 - 1 (trtexec reads ints).
  std::string to_trtexec() const;
  /// ONNX Runtime TensorRT provider options, one per line: `trt_profile_min_shapes=a:1x7,...` then opt, max; with
  /// several profiles each input is listed once per profile, in profile order. Same rules as to_trtexec, and a name
  /// with `:` is refused too (ONNX Runtime ends the name at the first `:`); each line ends with a newline.
  std::string to_ort_options() const;
  /// Torch-TensorRT (`--format torch-tensorrt`): a JSON array, per tensor input (inputs() order) an object of
  /// `torch_tensorrt.Input`'s keyword arguments: `name`, `dtype` (torch's name: "int64", "float16", "bool") and
  /// `min_shape`/`opt_shape`/`max_shape`, or with several profiles `profiles: [{min_shape, opt_shape, max_shape},
  /// ...]` (Torch-TensorRT 2.14), in the order of tensorrt_profiles(). A dimension whose min is 0 is raised to 1
  /// (Torch-TensorRT wants min >= 1), see torch_tensorrt_warnings(). Throws inference_error for an empty or
  /// non-UTF-8 name.
  std::string to_torch_tensorrt() const;
  /// One sentence per dimension to_torch_tensorrt() raised from 0 to 1, naming the input, the profile and why.
  std::vector<inference_warning> torch_tensorrt_warnings() const;
  /// A human-readable table: per input the shapes seen, dynamic dims, ranges and labels, then the warnings.
  std::string report() const;
  /// The structure in the record value encoding (`--typed`): `{"tuple":[...]}`, `{"list":[...]}`,
  /// `{"dict":[["k",spec],...]}`, `{"struct":"Name","fields":[["f",spec],...]}`; a tensor is its
  /// `{"<dim>":"<label>"}` object, a non-tensor null. Lets a converter rebuild the exact pytree.
  std::string to_typed_json() const;
  /// `torch.onnx.export(dynamic_axes=...)` as JSON: {"<flattened input or output name>":{"<dim>":"<label>"}}, only
  /// tensors with a dynamic dim; outputs follow the inputs.
  std::string to_onnx() const;

 private:
  friend class shape_engine;
  node root_;
  std::vector<tensor_input> inputs_;
  std::vector<inference_warning> warnings_;
  std::vector<dim_relation> relations_;
  std::vector<tensor_input> outputs_;
  std::vector<tensorrt_profile> profiles_;
};

struct argument_options {
  /// Which call to start from: none = the first stored call with as many positional and keyword arguments as the
  /// best candidate; an index = that stored call; call_inputs = new inputs aligned on the best candidate.
  std::variant<std::monostate, std::size_t, call_inputs> candidate{};
  bool flat = false;            ///< the aligned leaves as a list
  bool as_args_kwargs = false;  ///< {"tuple":[{"tuple":args},{"dict":kwargs}]}
  /// With no candidate given: the first stored call in which every dynamic dim is >= 2 (torch.export specialises 0
  /// and 1), else the one with the most such dims; the result's warnings then name the dims still below 2.
  bool avoid_specialization = false;
};

/// Throws load_error (bad_option) naming the options that exclude each other: avoid_specialization and a
/// candidate, as_args_kwargs and flat. infer_arguments checks them; a front end may check them before it reads.
void check_options(const argument_options& options);

/// Representative arguments, the call they start from, and what could not be done as asked.
struct inferred_arguments {
  value arguments{};                  ///< in the record value encoding's structure (argument_options decide which)
  std::optional<std::size_t> call{};  ///< the recorded call chosen (its index); none for new inputs given
  std::vector<inference_warning> warnings{};  ///< e.g. avoid_specialization could not avoid every 0/1
};

/// One recorded call as the engine holds it, and how it aligns on the best candidate.
struct call_info {
  call_inputs inputs;      ///< after value_if_missing, kwargs in signature order
  value_fields constants;  ///< constant scalar keyword arguments kept apart
  std::size_t leaf_count = 0;
  std::vector<value> aligned;  ///< leaves aligned on the best candidate (none = placeholder)
};

struct engine_info {
  std::vector<call_info> calls;
  std::size_t best_candidate = 0;  ///< index into calls
  parameter_list parameters;
  std::size_t calls_seen = 0;     ///< every call given to add_call, kept or not
  std::size_t calls_ignored = 0;  ///< calls left out because store_n_calls was reached (add_call returned false)
};

/// A call's structure, prepared once by shape_engine::add_structure: a later call of that structure gives only its
/// tensors' sizes (shape_engine::add_call(call_structure, sizes)).
struct call_structure {
  std::size_t id = 0;     ///< the engine's own number for it (no other engine's structure has it)
  std::size_t sizes = 0;  ///< how many sizes a call of it gives: the ranks of its tensors, summed
};

/// The C++ InputObserver's engine: records calls (value trees), then infers.
class shape_engine {
 public:
  explicit shape_engine(engine_options options = {});
  ~shape_engine();
  shape_engine(shape_engine&&) noexcept;
  shape_engine& operator=(shape_engine&&) noexcept;

  /// The observed function's parameters. Set once; setting a different one throws inference_error.
  void set_parameters(parameter_list parameters);
  const parameter_list& parameters() const noexcept;

  /// A value for an argument a call may leave out (by name: only when absent; by position: always replaces).
  void value_if_missing(input_key key, value v);

  /// Starts a recording: the next store_n_calls calls are kept (the reference's `with observer(model):` block).
  void begin_recording();
  /// Adds one call; false when the recording's limit is reached (the call is ignored). Throws inference_error
  /// for a value_if_missing key the signature does not allow.
  bool add_call(call_inputs inputs);
  /// Same, with the call's return value: dynamic_shapes::outputs() is inferred from these (named `result`, ...).
  bool add_call(call_inputs inputs, value result);

  /// Prepares the structure of `inputs` (and of `result`, when the calls give one): records no call. Every tensor leaf
  /// of the inputs (args, then kwargs, each depth-first in leaf order, as for_each_leaf visits them), then of the
  /// result, takes its sizes from add_call(structure, sizes); everything else (names, dtypes, scalars, None) is the
  /// structure's. Never throws inference_error: a structure add_call would refuse is refused by each of its calls.
  /// Throws limit_error (a std::length_error) past 2**32 structures in one engine.
  call_structure add_structure(const call_inputs& inputs, const value* result = nullptr);
  /// Exactly add_call(inputs[, result]) of the structure's call with every tensor's shape taken, in order, from
  /// `sizes` (structure.sizes of them): the same state, the same errors on the same calls. After the first call of a
  /// structure (and the first after set_parameters, value_if_missing, remove_inputs or merge), no value tree is built:
  /// the sizes are written into the prepared call in place, and copied only where the engine keeps a call. Throws
  /// argument_error (a std::invalid_argument naming both counts) for a size count that differs, and for an unknown
  /// structure; inference_error for a negative size (nothing recorded).
  bool add_call(call_structure structure, std::span<const std::int64_t> sizes);
  /// Forgets a structure, whose prepared call's memory goes back: a reader holding a bounded number of structures
  /// says so when it replaces one. add_call refuses its id afterwards (argument_error), as it does an unknown one.
  void remove_structure(call_structure structure);

  /// Number of calls kept (or summarised).
  std::size_t num_obs() const noexcept;

  dynamic_shapes infer_dynamic_shapes(const dynamic_shapes_options& options = {}) const;
  /// Representative arguments with placeholders filled, in the record value encoding's structure (`.arguments`),
  /// with the call chosen and the warnings: what front ends print and return.
  inferred_arguments infer_arguments(const argument_options& options = {}) const;
  /// Forgets these inputs everywhere; returns how many were removed. Throws for *args / **kwargs names.
  std::size_t remove_inputs(const std::vector<std::string>& names);
  engine_info info() const;

  //--- summaries: the step to many processes and machines (docs/summary_format.md) ---//

  /// The recorded state as a summary document (JSON, versioned): what `hookscope-shapes summarize` writes. Only an
  /// engine recording every call (store_n_calls = unlimited) has one; `function` names the calls' function.
  std::string to_summary_json(std::string_view function = {}) const;
  /// The engine a summary describes (store_n_calls = unlimited, keep_calls = false); throws format_error naming the
  /// JSON path of what is wrong. `function`, when given, receives the summary's function name.
  static shape_engine from_summary_json(std::string_view summary, std::string* function = nullptr);
  /// Folds in the calls of `later` as if they had been added to this engine after its own: every inference then
  /// gives exactly what one engine given all the calls in that order gives (merging is associative). Both must
  /// record every call, with the same signature and value_if_missing, else merge_error says which differs.
  void merge(const shape_engine& later);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

inline dynamic_shapes::node::node(const node&) = default;
inline dynamic_shapes::node::node(node&&) noexcept = default;
inline dynamic_shapes::node& dynamic_shapes::node::operator=(const node&) = default;
inline dynamic_shapes::node& dynamic_shapes::node::operator=(node&&) noexcept = default;
inline dynamic_shapes::node::~node() = default;

HOOKSCOPE_DETAIL_END_NAMESPACE
