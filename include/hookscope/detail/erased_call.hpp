// hookscope/detail/erased_call.hpp — erased_call, call_access and the value_ops table type, below the annotation
// machinery that makes erased calls and the recorders that read them; hookscope/erased_call.hpp is their documented
// front door.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/function_info.hpp"
#include "hookscope/detail/observer.hpp"
#include "hookscope/detail/value.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {

enum class text_kind : std::uint8_t;

/// How to format and capture one parameter or result type, whatever function it belongs to: one table per
/// type, shared by every observable with a parameter of that type (hookscope/detail/value_ops.hpp makes them).
struct value_ops {
  std::string (*format)(const void* object);
  /// Captures any type (opaque leaves where it is not structural); `options` points to a capture_options, or is
  /// null for the defaults.
  value (*capture)(const void* object, const void* options);
  /// How `format` writes the type's values (detail/format.hpp); `text_bits` copies what it needs of one (null for
  /// `formatted`), so that a consumer can write the text after the call, with the same characters.
  text_kind text;
  std::uint64_t (*text_bits)(const void* object) noexcept;
  /// The value in HOOKSCOPE_RECORD's binary form (detail/record_encoding.hpp), for the types that have one, else
  /// null. Writes at most `room` bytes and returns the size the encoding takes (written only when it fits), or 0
  /// when this value takes the value tree instead.
  std::size_t (*encode)(const void* object, std::byte* out, std::size_t room);
};

/// The value_ops of one parameter list and result, shared by the observables of one signature.
struct call_ops {
  const value_ops* const* args;  // one per parameter
  const value_ops* result;       // null for void
  bool args_capturable;          // every parameter type captured structurally (hookscope::capturable)
};

struct call_access;

/// When and where a call started, as the first consumer that times it took it (src/tick_clock.hpp): every later one
/// reads the same, so a call's start and end pair without any table, whatever thread or fiber ends it.
struct call_start {
  std::int64_t ticks = 0;    ///< tick_clock ticks; 0 until a consumer takes it
  std::uint64_t thread = 0;  ///< the thread it started on (a number unique for the process's life)
};

/// Only hookscope makes calls (call_access gives out keys): users receive them, never construct them.
class call_key {
  friend struct call_access;
  call_key() = default;
};

}  // namespace detail

/// One call as the registry's type-erased callbacks see it; the typed `call_context` of an observable is one too.
///
/// Only observables make them: callbacks receive them by const reference for the duration of a call.
class erased_call {
 public:
  erased_call(const erased_call&) = delete;
  erased_call& operator=(const erased_call&) = delete;

  const function_info& function() const noexcept { return *function_; }
  /// The function's number of parameters.
  std::size_t arg_count() const noexcept { return function_->param_names.size(); }
  /// How many arguments the caller passed: arg_count() but for the trailing ones left to their defaults.
  std::size_t args_given() const noexcept { return given_; }
  /// Whether the caller passed argument `i` (false for one left to its default, and when `i` is out of range).
  bool has_arg(std::size_t i) const noexcept { return i < given_; }
  /// The address of argument `i` (an object of the parameter's type, without its reference), or null when the
  /// caller left it to its default or `i` is out of range. An omitted argument has no value here: the default is
  /// the function's own, applied inside the call.
  const void* arg_address(std::size_t i) const noexcept { return i < given_ ? args_[i] : nullptr; }
  /// The annotation's name of argument `i` (empty when `i` is out of range).
  std::string_view arg_name(std::size_t i) const noexcept {
    return i < arg_count() ? function_->param_names[i] : std::string_view{};
  }
  /// Argument `i` as text: via `operator<<` or a known type, else "<type>"; "" when `i` is out of range or the
  /// argument was omitted (has_arg tells the two apart from an argument that formats as "").
  std::string format_arg(std::size_t i) const { return i < given_ ? ops_->args[i]->format(args_[i]) : std::string{}; }
  /// The result as text in post callbacks; "" before the call, for void, and when the call threw.
  std::string format_return_value() const {
    return post_ && result_ != nullptr ? ops_->result->format(result_) : std::string{};
  }
  /// True when every parameter type is captured structurally all the way down (hookscope::capturable): then
  /// capture_args() holds no opaque leaf. capture_args() works either way.
  bool can_capture_args() const noexcept { return ops_->args_capturable; }
  /// Every argument given captured, named by the annotation (an omitted one has no field); a part whose type is not
  /// structural is an opaque leaf (its type name). Always works.
  value_fields capture_args() const;
  /// The captured result in post callbacks (opaque leaves where its type is not structural); nothing for void,
  /// and when the call threw.
  std::optional<value> capture_return_value() const;
  bool is_post() const noexcept { return post_; }
  /// Identifies the call: the same for its pre and post callbacks, unique among the calls in flight in the process
  /// (whatever thread or fiber ends it: a call's context lives in its frame, and stacks do not overlap).
  const void* call_id() const noexcept { return this; }
  /// The exception the call threw (post callbacks only), else null.
  const std::exception_ptr& exception() const noexcept {
    return *std::launder(reinterpret_cast<const std::exception_ptr*>(exception_));
  }

 protected:
  /// `args`: the address of every argument given, `given` of them (the first ones: only trailing arguments are left
  /// to their defaults).
  erased_call(detail::call_key, const function_info& f, const detail::call_ops& ops, const void* const* args,
              std::size_t given) noexcept
      : function_(&f), ops_(&ops), args_(args), given_(static_cast<std::uint32_t>(given)) {
    ::new (static_cast<void*>(exception_)) std::exception_ptr();
  }
  // Trivial, so that an observed call needs no cleanup of its own: the exception is only ever held while the
  // post callbacks of a call that threw run, and reset before it propagates (detail::fail_observed).
  ~erased_call() = default;

 private:
  friend struct detail::call_access;

  /// `options`: a capture_options, or null for the defaults. (Out of line, as capture_args and capture_return_value:
  /// an inline body returning the fields would instantiate their vector in every translation unit that includes
  /// this header, also in disabled builds.)
  value_fields capture_args_with(const void* options) const;

  /// Internal: tells the consumers that pair calls that this call's remaining callbacks will not run (a callback's
  /// exception leaves its emission: rethrow mode, a forced unwind). Found by argument-dependent lookup from the
  /// emission (observer.hpp); compiled in the library (src/observed_call.cpp).
  friend void hookscope_detail_call_left(const erased_call& call) noexcept;

  const function_info* function_;
  const detail::call_ops* ops_;
  const void* const* args_;       // the address of every argument given
  const void* result_ = nullptr;  // the address of the result, in post callbacks of a call that returned
  alignas(std::exception_ptr) unsigned char exception_[sizeof(std::exception_ptr)];  // a null one but then
  bool post_ = false;
  std::uint32_t given_;  // how many arguments the caller passed (the rest took their defaults)
  // Taken by the first consumer that times the call, from a callback (through call_access): callbacks see the call
  // as const. Trivial, as the rest: a call that ends without its post callback leaves nothing behind.
  mutable detail::call_start start_{};
  // The call's entry in HOOKSCOPE_RECORD's per-thread buffers, set by its pre callback: its post callback finds its
  // arguments there, whatever thread or fiber ends it (src/environment/record_buffers.hpp).
  mutable void* recording_ = nullptr;
};

namespace detail {

/// What the observable machinery may do to a call that its callbacks may not (erased_call befriends it).
struct call_access {
  static constexpr call_key key() noexcept { return {}; }
  static const void* result(const erased_call& c) noexcept { return c.result_; }
  static const void* const* args(const erased_call& c) noexcept { return c.args_; }
  static const call_ops& ops(const erased_call& c) noexcept { return *c.ops_; }
  static void finish(erased_call& c, const void* result) noexcept {
    c.result_ = result;
    c.post_ = true;
  }
  static std::exception_ptr& exception(erased_call& c) noexcept {
    return *std::launder(reinterpret_cast<std::exception_ptr*>(c.exception_));
  }
  static void fail(erased_call& c, std::exception_ptr e) noexcept {
    exception(c) = std::move(e);
    c.post_ = true;
  }
  /// The call's start, for the consumers that time it (src/tick_clock.hpp takes it and reads it).
  static call_start& start(const erased_call& c) noexcept { return c.start_; }
  /// The call's entry in HOOKSCOPE_RECORD's buffers (src/environment/record.cpp), null until its pre callback.
  static void*& recording(const erased_call& c) noexcept { return c.recording_; }
  static std::size_t given(const erased_call& c) noexcept { return c.given_; }
  // A template: a body returning the fields would instantiate their vector wherever this header is included.
  template <class Call>
  static value_fields capture_args(const Call& c, const void* options) {
    return static_cast<const erased_call&>(c).capture_args_with(options);
  }
};

}  // namespace detail

#if HOOKSCOPE_ENABLED
// Emission to erased observers is compiled once, in the library (src/registry.cpp), rather than in every translation
// unit that calls an observable: its two walks are the largest code an annotation would otherwise bring along
// (~2.7 KB and ~2% of the compiler's instructions for 200 annotations, tools/annotation_cost.py).
extern template class detail::static_observer<const erased_call&>;
#endif

HOOKSCOPE_DETAIL_END_NAMESPACE
