// hookscope/registry.hpp — every observable function of the program, found by name, hooked without its types.
//
// ```cpp
// for (const hookscope::function_info& f : hookscope::registry()) std::cout << f.name << f.signature << '\n';
// if (const auto* f = hookscope::find_observable("lower"))
//   auto sub = f->pre().add([](const hookscope::erased_call& c) { log(c.function().name, c.format_arg(0)); });
// ```
//
// Registration happens during static initialisation, allocates nothing and does not depend on the order of
// translation units. In disabled builds the registry is empty.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/observer.hpp"
#include "hookscope/value.hpp"

#include <cstddef>
#include <exception>
// std::forward_iterator_tag only: <iterator> also brings the stream iterators (<streambuf>, locales), which every
// annotating translation unit would parse, also in disabled builds (~0.025 s, GCC 12).
#if __has_include(<bits/stl_iterator_base_types.h>)
#include <bits/stl_iterator_base_types.h>
#else
#include <iterator>
#endif
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

class erased_call;
namespace detail {
struct registry_link;
}

/// Callbacks that see any observable's calls without knowing its types: observer<const erased_call&>'s API,
/// trivially destructible (an annotation's pair lives in static storage and is never destroyed).
using erased_observer = detail::static_observer<const erased_call&>;

/// What the registry knows of one observable function.
class function_info {
 public:
  std::string_view name;                         ///< as given to the annotation
  std::span<const std::string_view> param_names;  ///< one per parameter, as given to the annotation
  std::string_view signature;                     ///< readable function type, e.g. "int (*)(int, double)"
  std::string_view file;                          ///< where the annotation is
  unsigned line = 0;

 private:
  // Here, in the padding after `line`: the entry of every annotation stays 96 bytes.
  bool linked_ = false;  // an annotation in a header is listed once per translation unit: it registers once

 public:
  constexpr function_info(std::string_view name_, std::span<const std::string_view> params, std::string_view signature_,
                          std::string_view file_, unsigned line_, erased_observer* pre, erased_observer* post) noexcept
      : name(name_), param_names(params), signature(signature_), file(file_), line(line_), pre_(pre), post_(post) {}
  function_info(const function_info&) = delete;
  function_info& operator=(const function_info&) = delete;

  /// Type-erased callbacks run before every call (argument values formatted on demand).
  erased_observer& pre() const noexcept { return *pre_; }
  /// Type-erased callbacks run after every call, also when it threw.
  erased_observer& post() const noexcept { return *post_; }

 private:
  friend class registry_range;
  friend struct detail::registry_link;
  erased_observer* pre_;
  erased_observer* post_;
  const function_info* next_ = nullptr;
};

namespace detail {

/// How to format and capture one parameter or result type, whatever function it belongs to: one table per
/// type, shared by every observable with a parameter of that type (hookscope/detail/value_ops.hpp makes them).
struct value_ops {
  std::string (*format)(const void* object);
  /// Null when the type cannot be captured; `options` points to a capture_options, or is null for the defaults.
  value (*capture)(const void* object, const void* options);
};

/// The value_ops of one parameter list and result, shared by the observables of one signature.
struct call_ops {
  const value_ops* const* args;  // one per parameter
  const value_ops* result;       // null for void
  bool args_capturable;
};

struct call_access;

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
  std::size_t arg_count() const noexcept { return function_->param_names.size(); }
  /// The annotation's name of argument `i` (empty when `i` is out of range).
  std::string_view arg_name(std::size_t i) const noexcept {
    return i < arg_count() ? function_->param_names[i] : std::string_view{};
  }
  /// Argument `i` as text: via `operator<<` or a known type, else "<type>"; "" when `i` is out of range.
  std::string format_arg(std::size_t i) const {
    return i < arg_count() ? ops_->args[i]->format(args_[i]) : std::string{};
  }
  /// The result as text in post callbacks; "" before the call, for void, and when the call threw.
  std::string format_return_value() const {
    return post_ && result_ != nullptr ? ops_->result->format(result_) : std::string{};
  }
  /// True when every parameter type can be captured (hookscope::capturable), so capture_args() works.
  bool can_capture_args() const noexcept { return ops_->args_capturable; }
  /// Every argument captured, named by the annotation; throws value_error when !can_capture_args().
  value_fields capture_args() const;
  /// The captured result in post callbacks; nothing for void and uncapturable results, and when the call threw.
  std::optional<value> capture_return_value() const;
  bool is_post() const noexcept { return post_; }
  /// Identifies the call: the same for its pre and post callbacks, unique among the calls in flight.
  const void* call_id() const noexcept { return this; }
  /// The exception the call threw (post callbacks only), else null.
  const std::exception_ptr& exception() const noexcept {
    return *std::launder(reinterpret_cast<const std::exception_ptr*>(exception_));
  }

 protected:
  erased_call(detail::call_key, const function_info& f, const detail::call_ops& ops, const void* const* args) noexcept
      : function_(&f), ops_(&ops), args_(args) {
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

  const function_info* function_;
  const detail::call_ops* ops_;
  const void* const* args_;      // the address of every argument
  const void* result_ = nullptr;  // the address of the result, in post callbacks of a call that returned
  alignas(std::exception_ptr) unsigned char exception_[sizeof(std::exception_ptr)];  // a null one but then
  bool post_ = false;
};

namespace detail {
#if HOOKSCOPE_ENABLED
inline constinit const function_info* registry_head = nullptr;
#endif

/// Told of every observable: of those registered before the hook was installed when it is, then of each as it
/// registers. Features above the registry (HOOKSCOPE_TRACE, HOOKSCOPE_RECORD) attach themselves this way, so the
/// registry never calls them by name. Hooks may run during static initialisation: they must not throw.
using registration_hook = void (*)(const function_info&) noexcept;

/// Installs a hook (at most 8 in a program; beyond, the hook is not installed and a line is logged).
void add_registration_hook(registration_hook hook) noexcept;

/// Links an observable's info into the registry from a static initialiser (no allocation), reports a name
/// registered twice, and tells the installed hooks. Linking an info already linked does nothing.
struct registry_link {
  explicit registry_link(function_info& info) noexcept {
#if HOOKSCOPE_ENABLED
    link(info);
#else
    (void)info;
#endif
  }
  static void link(function_info& info) noexcept;
  /// Links every info of `[first, last)` (null entries skipped): the annotations a module lists.
  static void link_all(function_info* const* first, function_info* const* last) noexcept;
};
}  // namespace detail

/// A forward range over every registered observable (most recently registered first).
class registry_range {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = function_info;
    using difference_type = std::ptrdiff_t;
    using pointer = const function_info*;
    using reference = const function_info&;
    iterator() noexcept = default;
    explicit iterator(const function_info* at) noexcept : at_(at) {}
    reference operator*() const noexcept { return *at_; }
    pointer operator->() const noexcept { return at_; }
    iterator& operator++() noexcept {
      at_ = at_->next_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(iterator a, iterator b) noexcept { return a.at_ == b.at_; }

   private:
    const function_info* at_ = nullptr;
  };

  iterator begin() const noexcept {
#if HOOKSCOPE_ENABLED
    return iterator(detail::registry_head);
#else
    return iterator();
#endif
  }
  iterator end() const noexcept { return iterator(); }
  std::size_t size() const noexcept {
    std::size_t n = 0;
    for (auto it = begin(); it != end(); ++it) ++n;
    return n;
  }
};

/// Every observable of the program (empty in disabled builds).
inline registry_range registry() noexcept { return {}; }

/// The observable registered under `name`, or null.
inline const function_info* find_observable(std::string_view name) noexcept {
  for (const function_info& f : registry()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

#if HOOKSCOPE_ENABLED
// Emission to erased observers is compiled once, in the library (src/registry.cpp), rather than in every translation
// unit that calls an observable: its two walks are the largest code an annotation would otherwise bring along
// (~2.7 KB and ~2% of the compiler's instructions for 200 annotations, tools/annotation_cost.py).
extern template class detail::static_observer<const erased_call&>;
#endif

HOOKSCOPE_DETAIL_END_NAMESPACE
