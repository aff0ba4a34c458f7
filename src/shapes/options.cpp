// The rules every front end's options follow, stated once: options that exclude each other, labels that every
// export format can carry, counts that make sense, the texts an option's value is read from (a count, "all", "1" or
// "auto", an input's name), which options need stored calls. The command and Python only spell the options
// (option_spelling) and hand their values over as text.
#include "hookscope/exceptions.hpp"
#include "hookscope/load.hpp"
#include "hookscope/shapes.hpp"

#include "../shown_name.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <system_error>
#include <variant>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

std::string_view option_name(option_id id) noexcept {
  switch (id) {
    case option_id::function: return "function";
    case option_id::store_n_calls: return "store_n_calls";
    case option_id::values_if_missing: return "values_if_missing";
    case option_id::signature_from: return "signature_from";
    case option_id::remove_inputs: return "remove_inputs";
    case option_id::batch_dimension_for: return "batch_dimension_for";
    case option_id::batch_dimension_for_all: return "batch_dimension_for_all";
    case option_id::dim_names: return "dim_names";
    case option_id::dim_labels: return "dim_labels";
    case option_id::profile_phases: return "profile_phases";
    case option_id::candidate: return "candidate";
    case option_id::flat: return "flat";
    case option_id::as_args_kwargs: return "as_args_kwargs";
    case option_id::avoid_specialization: return "avoid_specialization";
  }
  return "an option";
}

std::optional<option_id> find_option(std::string_view name) noexcept {
  for (const option_id id : option_ids()) {
    if (option_name(id) == name) return id;
  }
  return std::nullopt;
}

std::string option_sentence::spelled(option_spelling spell) const {
  std::string out;
  for (const auto& [text, id] : pieces_) out += id ? spell(*id) : std::string_view(text);
  return out;
}

std::vector<option_id> option_sentence::options() const {
  std::vector<option_id> out;
  for (const auto& piece : pieces_) {
    const auto& id = piece.second;
    if (id && std::find(out.begin(), out.end(), *id) == out.end()) out.push_back(*id);
  }
  return out;
}

namespace {

[[noreturn]] void refuse(option_sentence sentence) { throw load_error(std::move(sentence)); }

void exclude_each_other(bool first_given, option_id first, bool second_given, option_id second) {
  if (first_given && second_given) refuse(option_sentence() << first << " and " << second << " exclude each other");
}

}  // namespace

void check_options(const dynamic_shapes_options& o) {
  exclude_each_other(!o.batch_dimension_for.empty(), option_id::batch_dimension_for, o.batch_dimension_for_all,
                     option_id::batch_dimension_for_all);
  for (const dim_label& l : o.dim_labels) {
    if (l.label == unnamed_dim_label) {  // it would read as a dimension no label names
      refuse(option_sentence() << option_id::dim_labels << ": the label '" << l.label
                               << "' is what an unnamed dynamic dimension is called; choose another");
    }
    if (!is_dim_label(l.label)) {
      refuse(option_sentence() << option_id::dim_labels << ": the label '" << detail::shown(l.label)
                               << "' is not an identifier");
    }
  }
}

void check_options(const argument_options& o) {
  exclude_each_other(o.avoid_specialization, option_id::avoid_specialization,
                     !std::holds_alternative<std::monostate>(o.candidate), option_id::candidate);
  exclude_each_other(o.as_args_kwargs, option_id::as_args_kwargs, o.flat, option_id::flat);
}

void check_options(const engine_options& o) {
  if (o.store_n_calls == 0) refuse(option_sentence() << option_id::store_n_calls << ": expected at least 1 (or all)");
}

namespace {

// The count `text` writes in decimal (digits alone: no sign, no space), if it fits a size_t.
std::optional<std::size_t> decimal(std::string_view text) {
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return n;
}

}  // namespace

std::size_t parse_count(option_id option, std::string_view text) {
  const std::optional<std::size_t> n = decimal(text);
  if (!n) refuse(option_sentence() << option << ": expected a non-negative integer, got '" << text << "'");
  if (*n == unlimited) refuse(option_sentence() << option << ": " << text << " is too large");  // "all" elsewhere
  return *n;
}

std::size_t parse_store_n_calls(std::string_view text) {
  if (text == "all") return unlimited;
  if (decimal(text) == unlimited) {
    refuse(option_sentence() << option_id::store_n_calls << ": " << text << " is too large (all keeps every call)");
  }
  return parse_count(option_id::store_n_calls, text);
}

input_key input_key::parse(std::string_view text, option_id option) {
  if (text.empty()) refuse(option_sentence() << option << ": empty input name");
  return parse(text);
}

bool parse_profile_phases(std::string_view text) {
  if (text != "1" && text != "auto") {
    refuse(option_sentence() << option_id::profile_phases << ": expected 1 or auto, got '" << text << "'");
  }
  return text == "auto";
}

std::optional<option_id> stored_call_option(const argument_options& o) noexcept {
  if (std::holds_alternative<std::size_t>(o.candidate)) return option_id::candidate;
  if (o.avoid_specialization) return option_id::avoid_specialization;
  return std::nullopt;
}

void check_options(const load_options& o) {
  if (o.store_n_calls) check_options(engine_options{.store_n_calls = *o.store_n_calls});
  if (o.for_summary) {
    if (o.store_n_calls && *o.store_n_calls != unlimited) {
      refuse(option_sentence() << "summarize keeps every call: " << option_id::store_n_calls
                               << " all, or leave it out");
    }
    if (!o.remove_inputs.empty()) {
      refuse(option_sentence() << option_id::remove_inputs
                               << " is for 'infer' and 'args' (give it when reading the summaries)");
    }
  }
  if (o.stored_call_option && o.store_n_calls == unlimited) {
    refuse(option_sentence() << *o.stored_call_option << " needs stored calls: use " << option_id::store_n_calls
                             << " N, not all");
  }
}

HOOKSCOPE_DETAIL_END_NAMESPACE
