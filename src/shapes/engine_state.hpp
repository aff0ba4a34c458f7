// src/shapes/engine_state.hpp — private to the shape engine: the recorded state, and the functions of each rule
// group, one file each under src/shapes/ (rule ids A1..D4: docs/input_observer_rules.md, after yobx's
// InputObserver):
//
//   recording.cpp        A1-A7  add_call: split_kwargs, value_if_missing, ordering, the summaries, the kept calls
//   call_structures.cpp  A1-A7  a call structure's calls from their sizes: prepared once, observed per call
//   alignment.cpp        B1-B5  the best candidate's slots, check_alignment, align; info()
//   dynamic_dims.cpp     C1-C3, C5  ranks, the dynamic dims, their labels, the warnings
//   dim_pairs.cpp        C3     which dims may share a label: per pair, given together / different (bounded)
//   torch_structure.cpp  C4     the torch.export structure of the dynamic shapes
//   arguments.cpp        D1-D3  infer_arguments: the candidate, placeholders, the arguments' structure
//   remove_inputs.cpp    D4     remove_inputs
//   relations.cpp        C6     relations between dynamic dims, over the distinct calls recording.cpp counts
//                               (recorded_state::combos)
//   profiles.cpp         C6     consistent TensorRT profiles (and phases), solved from the relations
//   merge.cpp                   folding the state of later calls (recorded elsewhere) into a state
//   summary_json.cpp            a state as a summary document and back (docs/summary_format.md)
//
// Why summaries rather than calls: the command line folds millions of records, so every rule is evaluated on data
// whose size does not grow with the number of calls (summaries.hpp). The summaries are keyed by ARGUMENT (a
// parameter name, or a position without a parameter), not by the best candidate's flattened slots, because the best
// candidate may change with every call; a slot of the best candidate is mapped to its argument's summary only when
// inferring. The same code runs whether calls are kept or not (engine_options::keep_calls), so both give identical
// results, apart from what names the stored calls (info(), the profiles' call_indexes).
//
// Only recording (add_call, set_parameters, value_if_missing, begin_recording, remove_inputs) changes a
// recorded_state. Inference takes it `const` and caches nothing: infer_dynamic_shapes, infer_arguments and info
// compute everything they need from the state each time.
#pragma once

#include "summaries.hpp"

#include <boost/json/fwd.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <span>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
struct json_path;  // json_reader.hpp
}
namespace detail::shapes {

inline constexpr std::size_t max_constant_sets = 16;  // distinct sets of constant keyword values
inline constexpr std::size_t max_count_pairs = 64;    // (positional, keyword) argument counts with a kept first call

/// A call the engine keeps (every one with keep_calls; else the best candidate and the first of each count pair).
struct stored_call {
  std::size_t index = 0;  // among the recorded calls
  call_inputs inputs;
  value_fields constants;
  std::size_t leaf_count = 0;
};
using call_ptr = std::shared_ptr<stored_call>;

struct constant_set {
  value_fields values;
  std::size_t first_call = 0;
};

using count_pair = std::pair<std::size_t, std::size_t>;  // (positional, keyword) argument counts of a call

inline constexpr std::size_t max_combinations = 4096;  // distinct calls (by every value's shape) counted jointly

/// A distinct call (its inputs after A3-A5), and how many kept calls were exactly like it: what the relations
/// between dims and the consistent profiles are computed from (profiles.cpp).
struct combination {
  call_ptr call;  // index: its first call
  std::uint64_t count = 0;
  std::uint64_t hash = 0;
  // When its call was a call structure's (call_structures.hpp): the structure's prepared call's tag and its tensors'
  // sizes. A call of the same tag equals it exactly when its sizes do (everything else is the prepared call's).
  std::uint64_t structure = 0;
  std::vector<std::int64_t> sizes{};
};  // (positional, keyword) argument counts of a call

//=== pairs of dims, for shared labels (dim_pairs.cpp; rule C3) ===//

/// A dim of a leaf of an argument, the same in every state (merge) and document: by the argument's name, or its
/// position when it has no parameter. Ordered by leaf first, so that beyond max_label_dims every argument's first
/// leaves stay tracked.
struct dim_id {
  std::size_t leaf = 0;
  std::optional<std::size_t> position;
  std::string name;  // empty for a position
  std::size_t dim = 0;
  friend auto operator<=>(const dim_id&, const dim_id&) = default;
};

/// For every pair of tracked dims: whether some call gave both (`together`), and whether some call gave both with
/// different sizes (`differ`). Two dims may share a label only when together and never differ (rule C3). The dims
/// tracked are the max_label_dims smallest dim_ids of every dim seen, each from its first call: so summaries of
/// shards merge into exactly what one pass gives. A dim beyond them is untracked and shares no label.
struct dim_pairs {
  static constexpr std::size_t words = max_label_dims / 64;  // per row of a matrix
  std::vector<dim_id> dims;                                  // slot -> dim
  std::vector<std::uint64_t> together, differ;               // row i: words [i * words, (i + 1) * words)
  bool truncated = false;                                    // a dim was left untracked
  std::optional<std::size_t> largest;  // once full: the slot of the largest dim (recording's cache)

  static bool bit(const std::vector<std::uint64_t>& m, std::size_t i, std::size_t j) noexcept {
    return (m[i * words + j / 64] >> (j % 64)) & 1U;
  }
  /// Some call gave both, and none gave them different sizes.
  bool equal_where_both(std::size_t i, std::size_t j) const noexcept {
    return bit(together, i, j) && !bit(differ, i, j);
  }
  bool ever_differ(std::size_t i, std::size_t j) const noexcept { return bit(differ, i, j); }
};

//=== the recorded state ===//

/// Hashes a name from a std::string or a std::string_view alike, so that maps keyed by std::string are searched
/// with a view without building a string (heterogeneous lookup).
struct name_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view name) const noexcept { return std::hash<std::string_view>{}(name); }
};
template <class T>
using name_map = std::unordered_map<std::string, T, name_hash, std::equal_to<>>;

/// A parameter name's place in the signature: its first position, and the first parameter of that name with a scalar
/// default (A2), what signature_index and scalar_default answer in O(1) per call.
struct signature_entry {
  std::size_t index = 0;
  std::optional<std::size_t> scalar_default;
};

struct recorded_state {
  engine_options options;
  parameter_list sig;
  bool sig_set = false;
  std::size_t n_named = 0;              // leading positional-or-keyword parameters: what positions name
  name_map<signature_entry> sig_index;  // by parameter name; rebuilt by on_signature with n_named
  std::vector<std::pair<input_key, value>> if_missing;

  std::size_t n_calls = 0;
  std::size_t limit = 0;
  std::size_t n_ignored = 0;  // calls add_call refused because the limit was reached (A1)

  std::vector<combination> combos;                                 // distinct calls, first-seen order
  std::vector<std::pair<std::uint64_t, std::size_t>> combo_index;  // (hash, combo), sorted by hash
  bool combos_truncated = false;

  std::vector<key_summary> keys;
  dim_pairs pairs;
  name_map<std::size_t> name_keys;  // keys by parameter / keyword name (not positions)
  std::vector<constant_set> constant_sets;
  call_ptr best;
  std::vector<std::pair<count_pair, call_ptr>> first_by_counts;
  std::vector<call_ptr> calls;  // keep_calls only

  // Recording's own bookkeeping, which inference never reads (it uses find_position):
  std::vector<std::size_t>
      position_keys;                    // key of positional argument i, as far as calls went; cleared by on_signature
  std::vector<std::size_t> kwarg_keys;  // scratch of add_call, reused by every call

  explicit recorded_state(engine_options o) : options(o), limit(o.store_n_calls) {}

  //--- the signature ---//

  std::optional<std::size_t> signature_index(std::string_view name) const;
  const parameter* variadic(parameter_kind kind) const;
  /// The scalar default of a parameter (A2: None and non-scalar defaults are not kept).
  const value* scalar_default(std::string_view name) const;
  std::string signature_text() const;
  /// Stable: by signature position, names outside the signature last in their order.
  void sort_by_signature(value_fields& fields) const;

  //--- the keys ---//

  /// The key of a parameter name (not of a position without a parameter).
  std::optional<std::size_t> find_name(std::string_view name) const;
  /// The key positional argument `position` maps to, if some call created it.
  std::optional<std::size_t> find_position(std::size_t position) const;
};

//=== recording (recording.cpp: A1-A7; remove_inputs.cpp: D4) ===//

void set_parameters(recorded_state& s, parameter_list sig);
void value_if_missing(recorded_state& s, input_key key, value v);
void begin_recording(recorded_state& s);
/// prepare_call, key_call and observe_call of one call (A1-A7): the one path every call takes.
bool add_call(recorded_state& s, call_inputs&& in);

/// call_hash of a call whose structure stays and whose sizes change in place: its steps, each a constant or a size read
/// through a pointer into the call (which must outlive the program and keep its tensors' ranks).
struct call_hash_program {
  struct step {
    std::uint64_t constant = 0;
    const std::int64_t* size = nullptr;  // when set, the step mixes *size instead of the constant
  };
  std::uint64_t start = 0;
  std::vector<step> steps;
  std::uint64_t run() const noexcept {
    std::uint64_t h = start;
    for (const step& s : steps) h = mix(h + (s.size ? static_cast<std::uint64_t>(*s.size) : s.constant));
    return h;
  }
};
call_hash_program hash_program(const call_inputs& in);

/// A call as the observation reads it: its inputs after A3-A5 (split_kwargs, value_if_missing, order_kwargs).
struct prepared_call {
  call_inputs inputs;
  value_fields constants{};             // constant scalar keyword values, apart (A3)
  std::vector<input_key> filled{};      // the arguments value_if_missing gave it: their sizes are not the call's
  std::vector<input_key> unobserved{};  // those of them the call left out (C2 counts them)
  std::size_t leaf_count = 0;
  // A call structure's call: its prepared call's tag (never 0, never reused), and the sizes of its tensors that came
  // from the call (in its order): two calls of one tag differ only there.
  std::uint64_t structure = 0;
  std::span<const std::int64_t> sizes{};
  const call_hash_program* hash_program = nullptr;  // the structure's: call_hash(inputs) without a walk
  // The structure's distinct calls met before, by a hash of their sizes: a repeated call is counted without its
  // call_hash (an entry is checked against the combination it names, which merges and evictions may have moved).
  std::unordered_map<std::uint64_t, std::size_t>* known_combos = nullptr;
};
/// A1: true (the call counted as ignored) once the recording's limit is reached.
bool at_limit(recorded_state& s);
/// A3-A5 on c.inputs: reads the signature and value_if_missing, changes no state. Throws inference_error for a
/// value_if_missing key the call does not allow.
void prepare_call(const recorded_state& s, prepared_call& c);
/// The arguments' keys (created on first use), A6's check of an argument given twice (throws), C2's count.
void key_call(recorded_state& s, const prepared_call& c);
/// What key_call found for a call: valid for every call of the same structure while the keys stay (remove_inputs and
/// merge renumber them; set_parameters and value_if_missing change what a call is prepared to).
struct call_keys {
  std::vector<std::size_t> kwargs;      // recorded_state::kwarg_keys
  std::vector<std::size_t> unobserved;  // the keys of prepared_call::unobserved
};
/// After key_call(s, c).
call_keys keys_of(const recorded_state& s, const prepared_call& c);
/// key_call with the keys an earlier call of the same structure found: no name looked up, no allocation.
void key_call(recorded_state& s, const prepared_call& c, const call_keys& keys);
/// A6-A7: the summaries, the distinct calls, the pairs of dims, the kept calls; the call is counted. `owned`: c
/// itself when its inputs may be moved into a kept call (else they are copied where one is kept).
void observe_call(recorded_state& s, const prepared_call& c, prepared_call* owned);
/// Recomputes what the signature decides (n_named, sig_index) and forgets position_keys.
void on_signature(recorded_state& s);
std::size_t call_leaf_count(const call_inputs& in);
std::size_t remove_inputs(recorded_state& s, const std::vector<std::string>& names);
std::uint64_t call_hash(const call_inputs& in);

/// After remove_inputs changed the combinations' calls: rehashed, those now equal merged.
void rebuild_combos(recorded_state& s);
/// The combination equal to a call (its inputs after A3-A5 and its constants), found by the call's hash.
std::optional<std::size_t> find_combo(const recorded_state& s, std::uint64_t h, const call_inputs& in,
                                      const value_fields& constants, std::uint64_t structure = 0,
                                      std::span<const std::int64_t> sizes = {});
/// A combination not among s.combos (bounded: the smallest (hash, first call) stay).
void add_combo(recorded_state& s, combination c);
/// Folds `later`, a state over calls that came after `into`'s, into `into`: the result infers as one state given
/// every call in that order would (merge.cpp). Throws inference_error when they were not recorded alike.
void merge(recorded_state& into, const recorded_state& later);

//=== pairs of dims (dim_pairs.cpp) ===//

/// The dims of the call just summarised (leaf_summary::stamp): first ones tracked, then every tracked pair updated.
void observe_pairs(recorded_state& s, const call_inputs& in);
/// Before merge folds `later`'s keys into `into`'s (it reads both as they were): the union of both pair states,
/// bounded as one pass bounds it; index_pairs(into) once the keys are merged.
void merge_pairs(recorded_state& into, const recorded_state& later);
/// Sets every dim_summary::pair_slot from s.pairs (after a merge or reading a document).
void index_pairs(recorded_state& s);
/// After remove_inputs: the dims of removed arguments forgotten, the others renamed as their arguments now are.
void forget_removed_pairs(recorded_state& s);
/// A summary document's "dim_pairs" (docs/summary_format.md); reading checks it against the arguments read.
void write_dim_pairs(std::string& out, const recorded_state& s);
void read_dim_pairs(const boost::json::value& j, const json_path& at, recorded_state& s);

//=== summaries as documents (summary_json.cpp; docs/summary_format.md) ===//

std::string to_summary_json(const recorded_state& state, const recorded_state& results, std::string_view function);
/// Into fresh states (no call, no signature); throws format_error naming the JSON path.
void from_summary_json(std::string_view text, recorded_state& state, recorded_state& results, std::string& function);

//=== alignment on the best candidate (alignment.cpp: B1-B5) ===//

/// A top-level argument of the best candidate, as the inference sees it.
struct slot {
  std::size_t key = 0;
  bool positional = false;
  std::size_t position = 0;                    // in the best candidate's positional arguments
  std::optional<std::size_t> signature_index;  // a position a key "2" matches (named positional parameters)
  std::string name;               // the parameter / keyword name; "arg<i>" for positions without a parameter
  std::string label_name;         // the name labels are built from ("<label_name>_dim_<d>")
  std::vector<std::string> path;  // the tensor names' first components
  const value* best_value = nullptr;
};

/// One flattened leaf of the best candidate.
struct flat_leaf {
  std::size_t slot = 0;
  const leaf_summary* summary = nullptr;  // null: no call gave this argument
  std::vector<std::string> path;
};

/// Throws when no call was recorded.
void require_calls(const recorded_state& s, std::string_view what);
std::vector<slot> best_slots(const recorded_state& s);
/// Raises the error the reference raises first (B1, B2, B4 in call order, then B5).
void check_alignment(const recorded_state& s, const std::vector<slot>& slots);
std::vector<flat_leaf> flatten_slots(const recorded_state& s, const std::vector<slot>& slots);
/// The call's leaves aligned on the best candidate, none where it leaves an argument out. `strict`: a leaf count
/// that differs from the earlier calls' is an error (B4) rather than placeholders (info() never throws).
std::vector<value> align(const recorded_state& s, const stored_call& c, const std::vector<slot>& slots, bool strict);
/// align's leaves without a copy: into `c`, or an empty value for a placeholder (valid while `c` lives).
std::vector<const value*> aligned_leaves(const recorded_state& s, const stored_call& c, const std::vector<slot>& slots,
                                         bool strict);
std::string slot_text(const slot& s);
engine_info info(const recorded_state& s);

//=== dynamic shapes (dynamic_dims.cpp: C1-C3, C5; torch_structure.cpp: C4) ===//

inline constexpr std::size_t no_tensor = static_cast<std::size_t>(-1);  // a flattened leaf no call gave a tensor for

/// What infer_dynamic_shapes computes; shape_engine (a friend of dynamic_shapes) moves it in.
struct shapes_result {
  dynamic_shapes::node root;
  std::vector<tensor_input> inputs;
  std::vector<inference_warning> warnings;
  std::vector<dim_relation> relations;
  std::vector<tensorrt_profile> profiles;
  /// Per input, per dynamic dim: (hash of its values in call order, number of values), which C3 compares; the
  /// outputs take an input's name when theirs are the same (engine.cpp).
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> sequences;
};

shapes_result infer_dynamic_shapes(const recorded_state& s, const dynamic_shapes_options& o);
/// C1: throws when the leaf was seen with two ranks.
void check_rank(const flat_leaf& f);
/// Whether an option's key (a name, or a position) designates this slot.
bool matches(const input_key& k, const slot& s);
/// C4: `tensor_of[f]` is the index in the inputs of flattened leaf f, or no_tensor.
dynamic_shapes::node build_root(const recorded_state& s, const std::vector<slot>& slots,
                                const std::vector<std::size_t>& tensor_of);

//=== representative arguments (arguments.cpp: D1-D3) ===//

inferred_arguments infer_arguments(const recorded_state& s, const argument_options& o);
/// Every distinct call's leaves aligned on the best candidate (none where a call leaves an argument out): what D2
/// chooses a placeholder's source from.
std::vector<std::vector<value>> observed_calls(const recorded_state& s, const std::vector<slot>& slots);
inline constexpr std::size_t max_placeholder_sources = 32;  // distinct shapes per leaf D2 compares candidates with

/// D2's sources, built once per flattened leaf: the observed calls a placeholder's shape may come from (per leaf, the
/// last call of each of its latest max_placeholder_sources distinct shapes, in call order). Filling a call then
/// costs a bounded number of comparisons per leaf, whatever the number of distinct calls.
struct placeholder_sources {
  placeholder_sources(const std::vector<flat_leaf>& flat, const std::vector<std::vector<value>>& observed);
  const std::vector<std::vector<value>>& observed;  // outlives the sources
  std::vector<std::vector<std::size_t>> rows;       // per leaf: indexes into observed
};
/// D2: fills the none leaves; a leaf no call gave a tensor or another value stays none (None in every call).
void fill_placeholders(std::vector<value>& leaves, const std::vector<flat_leaf>& flat,
                       const placeholder_sources& sources);

//=== relations and consistent profiles (profiles.cpp) ===//

/// One distinct call's shapes per tensor input (nullopt: no tensor of that rank there), with its count.
struct joint_row {
  std::vector<std::optional<shape_t>> shapes;  // observed: placeholders are not observations
  std::vector<std::optional<shape_t>> filled;  // with D2's placeholders, for inputs a whole phase lacks
  std::uint64_t count = 0;
  std::size_t first_call = 0;
};
/// The stored calls (recorded_state::calls, keep_calls only) among the rows: per stored call, the index of its distinct
/// call's row; rows.size() + i for a call whose distinct call was not kept (beyond max_combinations), own[i] being its
/// row (its count 1).
struct stored_rows {
  std::vector<std::size_t> row;
  std::vector<joint_row> own;
};
/// One row per distinct call (recorded_state::combos, in order); `stored` receives where the stored calls are.
/// `inputs`' shared names decide the placeholders' dims: each takes its name's value in the call where a tensor gives it.
std::vector<joint_row> joint_rows(const recorded_state& s, const std::vector<slot>& slots,
                                  const std::vector<flat_leaf>& flat, const std::vector<std::size_t>& tensor_of,
                                  const std::vector<tensor_input>& inputs, stored_rows& stored);

inline constexpr std::int64_t max_relation_value = std::int64_t{1} << 40;  // larger sizes take no part in relations

/// One dynamic dim of one tensor input.
struct dim_var {
  std::size_t input = 0;
  std::size_t dim = 0;
};

/// Dims with the same values in every row (absent in the same rows), with those values: one unknown of the system
/// of relations. Rows are the calls as the model receives them, placeholders filled (rule D2).
struct value_class {
  std::vector<dim_var> members;
  std::vector<std::optional<std::int64_t>> values;  // per row; absent where the call gave no tensor there
  bool constant = false;
  bool usable = true;  // every value in [0, max_relation_value]
};
std::vector<value_class> value_classes(const std::vector<tensor_input>& inputs, const std::vector<joint_row>& rows);
inline constexpr std::size_t no_class = static_cast<std::size_t>(-1);
/// Per input, per dim: its class, or no_class (a static dim).
std::vector<std::vector<std::size_t>> class_index(const std::vector<tensor_input>& inputs,
                                                  const std::vector<value_class>& cls);

/// C6 (relations.cpp): the relations the rows determine (docs/export_formats.md, "Relations and profiles"), without cycles; a
/// relation left out for a cycle is named in `warnings`. `differ(a, b)`: some call (kept or not) gave both dims with
/// different sizes (the C3 pair state), which breaks an equality between them; a relation left out for it is named too.
std::vector<dim_relation> find_relations(const std::vector<tensor_input>& inputs, const std::vector<joint_row>& rows,
                                         const std::function<bool(const dim_var&, const dim_var&)>& differ,
                                         std::vector<inference_warning>& warnings);
/// C6 (profiles.cpp): the profiles, solved from the relations; a relation no profile point covering every call can
/// satisfy is removed from `relations` and named in `warnings`. `every_call_kept`: no distinct call was left out
/// (recorded_state::combos_truncated is false). `stored` (joint_rows') decides each profile's call_indexes.
std::vector<tensorrt_profile> make_profiles(const std::vector<tensor_input>& inputs, const std::vector<joint_row>& rows,
                                            const stored_rows& stored, std::vector<dim_relation>& relations,
                                            bool phases, bool every_call_kept,
                                            std::vector<inference_warning>& warnings);

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
