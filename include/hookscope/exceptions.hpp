// hookscope/exceptions.hpp — every exception hookscope throws, declared in one place: value_error and format_error (a
// value used as a kind it is not, text that is not a valid value encoding), record_error (a line that is not a valid
// record), inference_error and merge_error (recorded calls that allow no inference, engine states that do not merge),
// argument_error and limit_error (an argument no call takes, a bound of the library's reached), load_error (a source
// or an option the front door refuses). Each layer throws its own; the header depends on the
// standard library alone, so that any layer includes it. (What happens when a callback throws is callback_errors.hpp.)
#pragma once

#include "hookscope/config.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Every message of the library starts with it: each exception below puts it before the sentence it is given, and
/// gives that sentence back (sentence()) to a front end that frames messages its own way ("hookscope-shapes: ...")
/// or to a message that quotes another.
inline constexpr std::string_view message_prefix = "hookscope: ";

namespace detail {
inline std::string prefixed(std::string_view sentence) {
  std::string text(message_prefix);
  text += sentence;
  return text;
}
inline std::string_view after_prefix(const char* what) noexcept {
  return std::string_view(what).substr(message_prefix.size());
}
}  // namespace detail

//=== the value tree (capture) ===//

/// Thrown when a value is used as a kind it is not; the message names both kinds.
class value_error : public std::logic_error {
 public:
  explicit value_error(std::string_view sentence) : std::logic_error(detail::prefixed(sentence)) {}
  /// what() after the library's prefix.
  std::string_view sentence() const noexcept { return detail::after_prefix(what()); }
};

/// Thrown when text is not a valid value encoding; the message names the JSON path and what was wrong.
class format_error : public std::runtime_error {
 public:
  explicit format_error(std::string_view sentence) : std::runtime_error(detail::prefixed(sentence)) {}
  /// what() after the library's prefix.
  std::string_view sentence() const noexcept { return detail::after_prefix(what()); }
};

//=== records ===//

/// Thrown for a record that is not valid; `what()` is "<source>:<line>: <what was wrong>" and names the JSON path.
class record_error : public format_error {
 public:
  record_error(std::string source, std::size_t line, const std::string& message);
  const std::string& source() const noexcept { return source_; }
  std::size_t line() const noexcept { return line_; }

 private:
  std::string source_;
  std::size_t line_;
};

//=== the shape engine ===//

/// Which refusal an inference_error is, for a front end that answers it in its own words (Python's InputObserver
/// gives the reference observers' sentences): decided from the kind and the facts, never from the message.
enum class inference_error_kind : std::uint8_t {
  other,                          ///< any refusal not listed below
  named_argument_missing,         ///< B1: a call names an argument the best candidate does not
  constants_differ,               ///< B2, D1: two calls made with different constant values
  leaf_count_differs,             ///< B4: an argument flattens to a different number of leaves than before
  not_aligned,                    ///< B5: the best candidate leaves out an argument and holds another count of leaves
  rank_differs,                   ///< C1: the shapes of one tensor have different ranks
  if_missing_position_not_given,  ///< A4: a value_if_missing position beyond a call's positional arguments
  keyword_collision,              ///< C4: a keyword argument named as the **kwargs parameter, beside extra keywords
};

/// A fact of an inference_error, by name: a number (a call's index, a count, a position) or a text (an argument's
/// name, constants as the message shows them). Each kind's facts are listed where it is thrown.
struct inference_fact {
  std::string name;
  std::variant<std::size_t, std::string> value;
};

/// Thrown when the recorded calls do not allow an inference (nothing recorded, ranks that differ, ...); the
/// message is a sentence naming the argument path and the shapes seen.
class inference_error : public std::runtime_error {
 public:
  explicit inference_error(std::string_view sentence) : std::runtime_error(detail::prefixed(sentence)) {}
  inference_error(inference_error_kind kind, std::string_view sentence, std::vector<inference_fact> facts)
      : std::runtime_error(detail::prefixed(sentence)),
        kind_(kind),
        facts_(std::make_shared<const std::vector<inference_fact>>(std::move(facts))) {}
  /// what() after the library's prefix.
  std::string_view sentence() const noexcept { return detail::after_prefix(what()); }
  inference_error_kind kind() const noexcept { return kind_; }
  /// What the sentence says as data (empty for kind other).
  const std::vector<inference_fact>& facts() const noexcept {
    static const std::vector<inference_fact> none;
    return facts_ ? *facts_ : none;
  }

 private:
  inference_error_kind kind_ = inference_error_kind::other;
  std::shared_ptr<const std::vector<inference_fact>> facts_;  // shared: copying an exception does not throw
};

/// Thrown by shape_engine::merge for states that were not recorded alike; `why()` says which way. The sentence is
/// "merge: " and the `detail()` naming what differs.
class merge_error : public inference_error {
 public:
  enum class reason : std::uint8_t { not_every_call, signatures_differ, values_if_missing_differ };
  merge_error(reason why, std::string_view detail)
      : inference_error(std::string(merge_prefix) + std::string(detail)), reason_(why) {}
  reason why() const noexcept { return reason_; }
  /// What differs, without "merge: " (for a message about the states being merged).
  std::string_view detail() const noexcept { return sentence().substr(merge_prefix.size()); }

 private:
  static constexpr std::string_view merge_prefix = "merge: ";
  reason reason_;
};

/// Thrown for an argument the function cannot take whatever was recorded (a call structure that is not the engine's,
/// a count of sizes that differs from its structure's): the caller's mistake, so a std::invalid_argument.
class argument_error : public std::invalid_argument {
 public:
  explicit argument_error(std::string_view sentence) : std::invalid_argument(detail::prefixed(sentence)) {}
  /// what() after the library's prefix.
  std::string_view sentence() const noexcept { return detail::after_prefix(what()); }
};

/// Thrown when a bound of the library's own is reached (an engine's number of call structures): a std::length_error.
class limit_error : public std::length_error {
 public:
  explicit limit_error(std::string_view sentence) : std::length_error(detail::prefixed(sentence)) {}
  /// what() after the library's prefix.
  std::string_view sentence() const noexcept { return detail::after_prefix(what()); }
};

//=== the front door (load_engine) ===//

/// What a source or a load option got wrong; each front end decides from it how to answer (the command's exit
/// status and `--help` hint, Python's exception), never from the message.
enum class load_error_kind : std::uint8_t {
  bad_option,          ///< an option that does not apply to these sources (e.g. store_n_calls with summaries)
  unreadable,          ///< a source that does not open or read, or is a directory
  mixed_sources,       ///< record files and summaries given together
  bad_summary,         ///< a file that starts as a summary and is not a valid one
  several_functions,   ///< the records hold several functions and none was chosen
  no_such_function,    ///< the function asked for is not in the records, or a summary is of another one
  summaries_disagree,  ///< summaries that do not merge: other functions, value_if_missing, a state not of every call
  signatures_differ,   ///< summaries of one function recorded with different signatures (--signature-from helps)
};

/// The options of the front door (load_options) and of inference (dynamic_shapes_options, argument_options), by
/// their library names (option_name). A front end that spells them otherwise (the command's `--batch`, Python's
/// `batch=`) spells a refusal's options its own way (load_error::spelled), never by rewriting its text.
enum class option_id : std::uint8_t {
  function,
  store_n_calls,
  values_if_missing,
  signature_from,
  remove_inputs,
  batch_dimension_for,
  batch_dimension_for_all,
  dim_names,
  dim_labels,
  profile_phases,
  candidate,
  flat,
  as_args_kwargs,
  avoid_specialization,  // the last: option_ids() counts on it
};

/// Every option, in the order of the enumeration.
inline constexpr auto option_ids() noexcept {
  constexpr std::size_t count = static_cast<std::size_t>(option_id::avoid_specialization) + 1;
  std::array<option_id, count> ids{};
  for (std::size_t i = 0; i < count; ++i) ids[i] = static_cast<option_id>(i);
  return ids;
}

/// The member name of the option in the library's option structures ("batch_dimension_for").
std::string_view option_name(option_id id) noexcept;

/// The option a member name names, if any.
std::optional<option_id> find_option(std::string_view name) noexcept;

/// How a front end spells an option ("--batch", "batch").
using option_spelling = std::string_view (*)(option_id) noexcept;

/// A sentence about options, kept as text and options apart so that each front end spells the options its own way
/// (a source's name that holds "{0}" or "--batch" stays text).
class option_sentence {
 public:
  option_sentence& operator<<(std::string_view text) {
    pieces_.emplace_back(std::string(text), std::nullopt);
    return *this;
  }
  option_sentence& operator<<(option_id id) {
    pieces_.emplace_back(std::string(), id);
    return *this;
  }
  /// The sentence with each option spelled by `spell`.
  std::string spelled(option_spelling spell) const;
  /// The sentence with the options' library names (option_name).
  std::string text() const { return spelled(option_name); }
  /// A sentence of text alone.
  static option_sentence of(std::string_view text) { return std::move(option_sentence() << text); }
  friend bool operator==(const option_sentence& s, std::string_view text) { return s.text() == text; }
  /// The options the sentence names, in order (each once).
  std::vector<option_id> options() const;
  /// The sentence's pieces in order: text, or an option to spell (then the text is empty).
  const std::vector<std::pair<std::string, std::optional<option_id>>>& pieces() const noexcept { return pieces_; }

 private:
  std::vector<std::pair<std::string, std::optional<option_id>>> pieces_;
};

/// Thrown by load_engine and by the option checks (check_options); what() is one sentence naming the source (and the
/// options, by their library names) concerned.
class load_error : public std::runtime_error {
 public:
  load_error(load_error_kind kind, std::string_view sentence)
      : std::runtime_error(detail::prefixed(sentence)), kind_(kind) {}
  /// A refusal that names options (of kind bad_option unless said otherwise).
  explicit load_error(option_sentence sentence) : load_error(load_error_kind::bad_option, std::move(sentence)) {}
  load_error(load_error_kind kind, option_sentence sentence)
      : std::runtime_error(detail::prefixed(sentence.spelled(option_name))),
        kind_(kind),
        sentence_(std::make_shared<const option_sentence>(std::move(sentence))) {}
  load_error_kind kind() const noexcept { return kind_; }
  /// what() after the library's prefix.
  std::string_view sentence() const noexcept { return detail::after_prefix(what()); }
  /// The options the refusal is about (none for a refusal of a source).
  std::vector<option_id> options() const { return sentence_ ? sentence_->options() : std::vector<option_id>{}; }
  /// sentence() with the options spelled by `spell`.
  std::string spelled(option_spelling spell) const {
    return sentence_ ? sentence_->spelled(spell) : std::string(sentence());
  }
  /// The refusal of options, text and options apart (null for a refusal of a source).
  const option_sentence* option_parts() const noexcept { return sentence_.get(); }

 private:
  load_error_kind kind_;
  std::shared_ptr<const option_sentence> sentence_;  // shared: copying an exception does not throw
};

/// An exception's sentence: what() after the library's prefix for the exceptions above (decided by their type),
/// what() for any other.
inline std::string_view sentence_of(const std::exception& e) noexcept {
  if (const auto* v = dynamic_cast<const value_error*>(&e)) return v->sentence();
  if (const auto* f = dynamic_cast<const format_error*>(&e)) return f->sentence();
  if (const auto* i = dynamic_cast<const inference_error*>(&e)) return i->sentence();
  if (const auto* l = dynamic_cast<const load_error*>(&e)) return l->sentence();
  if (const auto* a = dynamic_cast<const argument_error*>(&e)) return a->sentence();
  if (const auto* b = dynamic_cast<const limit_error*>(&e)) return b->sentence();
  return e.what();
}

HOOKSCOPE_DETAIL_END_NAMESPACE
