// hookscope/observable.hpp — functions annotated once, observed before and after every call.
//
// ```cpp
// namespace passes {
// namespace impl { Graph lower(Graph gm, const Settings& settings); }
// HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings);
// }
// passes::lower(g, s);  // called as before
// auto sub = passes::lower.observers.pre.add([](const auto& ctx) { use(ctx.template arg<"settings">()); });
// ```
//
// The hooks are generated at compile time from the function's type and the annotation's parameter names.
// With nobody listening a call costs a few relaxed loads; in disabled builds it is the plain call.
#pragma once

#include "hookscope/capture.hpp"
#include "hookscope/config.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/detail/format.hpp"
#include "hookscope/observer.hpp"
#include "hookscope/registry.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

//=== call_context ===//

template <class Signature>
class call_context;

/// One call of an observable, as its pre and post callbacks see it: arguments as const references, the result.
template <class R, class... Args>
class call_context<R(Args...)> {
 public:
  using args_type = std::tuple<const std::remove_reference_t<Args>&...>;
  using result_type = R;

  /// The observable's registry entry: name, parameter names, signature, file and line.
  const function_info& function() const noexcept { return *function_; }
  /// Every argument, as const references.
  const args_type& args() const noexcept { return args_; }
  /// Argument `I` as a const reference.
  template <std::size_t I>
  const auto& arg() const noexcept {
    static_assert(I < sizeof...(Args), "hookscope: call_context::arg<I>(): I is not less than the function's arity");
    return std::get<I>(args_);
  }
  /// The result (post callbacks of a call that returned), else null.
  const std::remove_reference_t<R>* return_value() const noexcept
    requires(!std::is_void_v<R>)
  {
    return result_;
  }
  /// The exception the call threw (post callbacks only), else null.
  const std::exception_ptr& exception() const noexcept { return exception_; }
  /// True in post callbacks.
  bool is_post() const noexcept { return post_; }

  /// Internal: made by the observable around each observed call.
  call_context(const function_info& f, const std::remove_reference_t<Args>&... args) noexcept
      : function_(&f), args_(args...) {}
  call_context(const call_context&) = delete;
  call_context& operator=(const call_context&) = delete;

 protected:
  using result_pointer = std::conditional_t<std::is_void_v<R>, const void*, const std::remove_reference_t<R>*>;

  const function_info* function_;
  args_type args_;
  result_pointer result_ = nullptr;
  std::exception_ptr exception_;
  bool post_ = false;
};

namespace detail {

/// The context an observable's callbacks receive: a call_context that also finds arguments by name.
template <class Signature, fixed_string Params>
class named_call_context;

template <class R, class... Args, fixed_string Params>
class named_call_context<R(Args...), Params> : public call_context<R(Args...)> {
 public:
  static constexpr std::array<std::string_view, sizeof...(Args)> names = split_names<sizeof...(Args)>(Params.view());

  using call_context<R(Args...)>::call_context;

  /// Argument `I` as a const reference (redeclared: a using-declaration would be hidden by the overload below).
  template <std::size_t I>
  const auto& arg() const noexcept {
    return call_context<R(Args...)>::template arg<I>();
  }

  /// The argument named `Name` in the annotation; a name not there does not compile.
  template <fixed_string Name>
  const auto& arg() const noexcept {
    constexpr std::size_t index = index_of(names, Name.view());
    static_assert(index < sizeof...(Args),
                  "hookscope: call_context::arg<Name>(): no parameter has that name in this observable; "
                  "use one of the names given to HOOKSCOPE_OBSERVABLE (listed in the template arguments below)");
    return std::get<(index < sizeof...(Args) ? index : 0)>(this->args_);  // only the message above on misuse
  }

  // Internal, for the observable (callbacks only ever see a const context).
  void finish(typename call_context<R(Args...)>::result_pointer result) noexcept {
    this->result_ = result;
    this->post_ = true;
  }
  void fail(std::exception_ptr e) noexcept {
    this->exception_ = std::move(e);
    this->post_ = true;
  }
};

/// What an observable needs of a function type: the object it is called on (void for free functions), the
/// result, noexcept-ness and the parameters.
template <class Self, class R, bool NE, class... A>
struct callable_shape {};

template <class F>
struct shape_traits {
  static_assert(sizeof(F) == 0,
                "hookscope: observable<&fn, ...>: fn must be a function or a member function; for an overloaded "
                "one, pick the overload (HOOKSCOPE_OBSERVABLE_OVERLOAD or static_cast<Type*>(&fn))");
  using type = void;
};
template <class R, class... A, bool NE>
struct shape_traits<R (*)(A...) noexcept(NE)> {
  using type = callable_shape<void, R, NE, A...>;
};
template <class C, class R, class... A, bool NE>
struct shape_traits<R (C::*)(A...) noexcept(NE)> {
  using type = callable_shape<C, R, NE, A...>;
};
template <class C, class R, class... A, bool NE>
struct shape_traits<R (C::*)(A...) const noexcept(NE)> {
  using type = callable_shape<const C, R, NE, A...>;
};

template <class F>
using shape_of = typename shape_traits<F>::type;

/// Selects the overload of a function of type F (HOOKSCOPE_OBSERVABLE_OVERLOAD).
template <class F>
constexpr F* pick_overload(F* f) noexcept {
  return f;
}

/// The object parameter of a member observable; a placeholder nobody can pass for free functions.
struct no_object {
  no_object() = delete;
};
template <class Self>
using object_ref = std::conditional_t<std::is_void_v<Self>, no_object, Self>&;

/// Every argument of a call, captured and named by the annotation (what recorders store).
template <class Context>
value_fields capture_args(const Context& ctx, capture_options options) {
  const auto& names = ctx.function().param_names;
  value_fields kwargs;
  kwargs.reserve(names.size());
  std::apply(
      [&](const auto&... args) {
        std::size_t i = 0;
        (kwargs.emplace_back(std::string(names[i++]), capture_value(args, options)), ...);
      },
      ctx.args());
  return kwargs;
}

/// The registry entry of an observable given to a recorder: a live observable_function, or an annotation's type.
template <class Observable>
const function_info& function_info_of(const Observable& target) {
  if constexpr (requires { target.info(); }) {
    return target.info();
  } else {
    return std::remove_cvref_t<Observable>::info;
  }
}

#if HOOKSCOPE_ENABLED
template <class Context>
std::string format_arg_of(const void* call, std::size_t i) {
  return format_element(static_cast<const Context*>(call)->args(), i);
}

template <class Context>
std::string format_result_of(const void* call) {
  const auto& ctx = *static_cast<const Context*>(call);
  if constexpr (requires { ctx.return_value(); }) {
    return ctx.return_value() != nullptr ? format_value(*ctx.return_value()) : std::string{};
  } else {
    return {};
  }
}

template <class Context>
value_fields capture_args_of(const void* call) {
  return capture_args(*static_cast<const Context*>(call), capture_options());
}

template <class Context>
std::optional<value> capture_result_of(const void* call) {
  const auto& ctx = *static_cast<const Context*>(call);
  if constexpr (requires { ctx.return_value(); }) {
    if constexpr (capturable<std::remove_cvref_t<decltype(*ctx.return_value())>>) {
      if (ctx.return_value() != nullptr) return capture_value(*ctx.return_value());
    }
  }
  return std::nullopt;
}

// Uncapturable parameter types leave the capture out: annotating such a function still compiles.
template <class Context>
constexpr auto capture_args_for() noexcept -> value_fields (*)(const void*) {
  return []<class... A>(std::tuple<const A&...>*) -> value_fields (*)(const void*) {
    if constexpr ((capturable<A> && ...)) {
      return &capture_args_of<Context>;
    } else {
      return nullptr;
    }
  }(static_cast<typename Context::args_type*>(nullptr));
}

template <class Context>
inline constexpr erased_call::formatters formatters_for{&format_arg_of<Context>, &format_result_of<Context>,
                                                        capture_args_for<Context>(), &capture_result_of<Context>};

/// The four observers around one observable function, and how a call runs between them.
template <class Context>
struct hook_set {
  const observer<const Context&>& pre;
  const observer<const Context&>& post;
  const erased_observer& erased_pre;
  const erased_observer& erased_post;
  const function_info& info;

  bool listening() const noexcept {
    return hookscope_detail_worth_walking(pre) || hookscope_detail_worth_walking(post) ||
           hookscope_detail_worth_walking(erased_pre) || hookscope_detail_worth_walking(erased_post);
  }

  [[gnu::always_inline]] inline void fire(const observer<const Context&>& typed, const erased_observer& erased,
                                          const Context& ctx) const {
    typed.observe(ctx);
    if (hookscope_detail_worth_walking(erased)) {
      erased.observe(erased_call(info, &ctx, formatters_for<Context>, ctx.is_post(), ctx.exception()));
    }
  }

  /// Runs `call` between the pre and post callbacks; post callbacks also run when it throws, then it propagates.
  template <class R, class Call>
  R run(Context& ctx, Call&& call) const {
    fire(pre, erased_pre, ctx);
    auto guarded = [&]() -> R {
      try {
        return call();
      } catch (...) {
        ctx.fail(std::current_exception());
        fire(post, erased_post, ctx);
        throw;
      }
    };
    if constexpr (std::is_void_v<R>) {
      guarded();
      ctx.finish(nullptr);
      fire(post, erased_post, ctx);
    } else {
      R result = guarded();
      ctx.finish(&result);
      fire(post, erased_post, ctx);
      return static_cast<R&&>(result);
    }
  }
};
#endif

}  // namespace detail

//=== observable ===//

/// A function annotated for observation; `HOOKSCOPE_OBSERVABLE` declares one as an `inline constexpr` object.
///
/// Its call operator has the function's parameter types and `noexcept`-ness (a member function's takes the
/// object first). `observers.pre` and `observers.post` are observers of `const call_context<R(Args...)>&`
/// (with arguments also by name); `orig` is the function; `info` its registry entry.
template <auto Fn, fixed_string Name, fixed_string Params, fixed_string File = "", unsigned Line = 0,
          class Shape = detail::shape_of<decltype(Fn)>>
class observable;

template <auto Fn, fixed_string Name, fixed_string Params, fixed_string File, unsigned Line, class Self, class R,
          bool NE, class... A>
class observable<Fn, Name, Params, File, Line, detail::callable_shape<Self, R, NE, A...>> {
  static_assert(detail::count_names(Params.view()) == sizeof...(A),
                "hookscope: HOOKSCOPE_OBSERVABLE: give exactly one name per parameter of the function");

 public:
  using context_type = detail::named_call_context<R(A...), Params>;
  using observer_type = observer<const context_type&>;

  /// The callbacks around every call: `pre` before it, `post` after it (also when it threw).
  struct observers_type {
    observer_type& pre;
    observer_type& post;
  };

 private:
  static constexpr std::array<std::string_view, sizeof...(A)> param_names_ = context_type::names;
  static inline constinit observer_type pre_{Name.view()};
  static inline constinit observer_type post_{Name.view()};
  static inline constinit erased_observer erased_pre_{Name.view()};
  static inline constinit erased_observer erased_post_{Name.view()};
  static inline constinit function_info info_{Name.view(),   param_names_, detail::type_name<decltype(Fn)>(),
                                              File.view(),   Line,         &erased_pre_,
                                              &erased_post_};
#if HOOKSCOPE_ENABLED
  static inline detail::registry_link link_{info_};
#endif

 public:
  static constexpr observers_type observers{pre_, post_};
  static constexpr const function_info& info = info_;
  static constexpr decltype(Fn) orig = Fn;

  constexpr observable() noexcept {
#if HOOKSCOPE_ENABLED
    (void)&link_;  // declaring the object registers the function, even if it is never called
#endif
  }

  /// Calls the function, with the callbacks around it when anyone listens.
  [[gnu::always_inline]] inline R operator()(A... args) const noexcept(NE)
    requires std::is_void_v<Self>
  {
#if HOOKSCOPE_ENABLED
    if (listening()) [[unlikely]] return observed(nullptr, args...);
#endif
    return Fn(static_cast<A&&>(args)...);
  }

  /// Calls the member function on `object`, with the callbacks around it when anyone listens.
  [[gnu::always_inline]] inline R operator()(detail::object_ref<Self> object, A... args) const noexcept(NE)
    requires(!std::is_void_v<Self>)
  {
#if HOOKSCOPE_ENABLED
    if (listening()) [[unlikely]] return observed(&object, args...);
#endif
    return (object.*Fn)(static_cast<A&&>(args)...);
  }

 private:
#if HOOKSCOPE_ENABLED
  static constexpr detail::hook_set<context_type> hooks_{pre_, post_, erased_pre_, erased_post_, info_};

  static bool listening() noexcept { return hooks_.listening(); }

  using object_pointer = std::conditional_t<std::is_void_v<Self>, std::nullptr_t, Self*>;

  [[gnu::noinline]] static R observed(object_pointer object, A&... args) noexcept(NE) {
    context_type ctx(info_, args...);
    return hooks_.template run<R>(ctx, [&]() -> R {
      if constexpr (std::is_void_v<Self>) {
        return Fn(static_cast<A&&>(args)...);
      } else {
        return (object->*Fn)(static_cast<A&&>(args)...);
      }
    });
  }
#endif
};

//=== make_observable ===//

namespace detail {

inline constexpr std::string_view positional_names[] = {"arg0", "arg1", "arg2",  "arg3",  "arg4",  "arg5",
                                                        "arg6", "arg7", "arg8",  "arg9",  "arg10", "arg11",
                                                        "arg12", "arg13", "arg14", "arg15"};

template <class F>
struct callable_signature_of : callable_signature_of<decltype(&F::operator())> {};
template <class R, class... A, bool NE>
struct callable_signature_of<R (*)(A...) noexcept(NE)> {
  using type = R(A...);
};
template <class C, class R, class... A, bool NE>
struct callable_signature_of<R (C::*)(A...) noexcept(NE)> {
  using type = R(A...);
};
template <class C, class R, class... A, bool NE>
struct callable_signature_of<R (C::*)(A...) const noexcept(NE)> {
  using type = R(A...);
};

template <class Signature>
struct trampolines;

}  // namespace detail

template <class Signature>
class observable_function;

/// A run-time observable wrapper around any callable: the same `observers` as an annotated function, for code
/// you cannot annotate; `function_pointer()` swaps it into a table of plain function pointers.
///
/// Not copyable or movable (its function pointer refers to it); `make_observable` returns it by value.
template <class R, class... A>
class observable_function<R(A...)> {
  static_assert(sizeof...(A) <= std::size(detail::positional_names),
                "hookscope: make_observable: at most 16 parameters");

 public:
  using context_type = detail::named_call_context<R(A...), "">;
  using observer_type = observer<const context_type&>;
  using pointer = R (*)(A...);

  template <class F>
  observable_function(std::string_view name, F&& target)
      : name_(name),
        target_(new std::decay_t<F>(static_cast<F&&>(target))),
        destroy_([](void* t) noexcept { delete static_cast<std::decay_t<F>*>(t); }),
        call_([](void* t, A&&... args) -> R { return (*static_cast<std::decay_t<F>*>(t))(static_cast<A&&>(args)...); }),
        observers{observer_type(name_), observer_type(name_)} {}
  observable_function(const observable_function&) = delete;
  observable_function& operator=(const observable_function&) = delete;
  ~observable_function() {
    if (pointer_ != nullptr) detail::trampolines<R(A...)>::release(this);
    destroy_(target_);
  }

  /// Calls the wrapped callable, with the callbacks around it when anyone listens.
  R operator()(A... args) const {
#if HOOKSCOPE_ENABLED
    if (hooks().listening()) [[unlikely]] {
      context_type ctx(info_, args...);
      return hooks().template run<R>(ctx, [&]() -> R { return call_(target_, static_cast<A&&>(args)...); });
    }
#endif
    return call_(target_, static_cast<A&&>(args)...);
  }

  /// A plain function pointer that calls this object, for function-pointer tables; valid while it lives.
  /// At most 16 such pointers per signature exist at once (std::length_error beyond).
  pointer function_pointer() {
    if (pointer_ == nullptr) pointer_ = detail::trampolines<R(A...)>::claim(this);
    return pointer_;
  }

  /// Its description: the name given, parameters named arg0, arg1, ...; `info().pre()` for erased callbacks.
  const function_info& info() const noexcept { return info_; }

 private:
  std::string name_;
  void* target_;
  void (*destroy_)(void*) noexcept;
  R (*call_)(void*, A&&...);
  pointer pointer_ = nullptr;
  erased_observer erased_pre_{name_};
  erased_observer erased_post_{name_};
  function_info info_{name_, std::span(detail::positional_names).first(sizeof...(A)),
                      detail::type_name<R(A...)>(), {}, 0, &erased_pre_, &erased_post_};

 public:
  /// The callbacks around every call: `pre` before it, `post` after it (also when it threw).
  struct observers_type {
    observer_type pre;
    observer_type post;
  } observers;

 private:
#if HOOKSCOPE_ENABLED
  detail::hook_set<context_type> hooks() const noexcept {
    return {observers.pre, observers.post, erased_pre_, erased_post_, info_};
  }
#endif
};

/// Wraps a function pointer or any callable into an observable_function named `name` (the seed's
/// `_make_observable`): `auto lower = hookscope::make_observable("lower", &third_party::lower);`
template <class F>
observable_function<typename detail::callable_signature_of<std::decay_t<F>>::type> make_observable(
    std::string_view name, F&& target) {
  return {name, static_cast<F&&>(target)};
}

namespace detail {

/// A fixed pool of plain functions per signature, each forwarding to the observable_function bound to it.
template <class R, class... A>
struct trampolines<R(A...)> {
  static constexpr std::size_t capacity = 16;
  static inline std::atomic<const observable_function<R(A...)>*> bound[capacity]{};

  template <std::size_t I>
  static R call(A... args) {
    return (*bound[I].load(std::memory_order_acquire))(static_cast<A&&>(args)...);
  }

  static R (*claim(const observable_function<R(A...)>* f))(A...) {
    static constexpr auto entries = []<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<R (*)(A...), capacity>{&call<I>...};
    }(std::make_index_sequence<capacity>{});
    for (std::size_t i = 0; i < capacity; ++i) {
      const observable_function<R(A...)>* expected = nullptr;
      if (bound[i].compare_exchange_strong(expected, f, std::memory_order_acq_rel)) return entries[i];
    }
    throw std::length_error("hookscope: observable_function::function_pointer: more than 16 function pointers of "
                            "one signature are live; destroy unused observable_function objects");
  }

  static void release(const observable_function<R(A...)>* f) noexcept {
    for (auto& slot : bound) {
      const observable_function<R(A...)>* expected = f;
      slot.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
    }
  }
};

}  // namespace detail

HOOKSCOPE_DETAIL_END_NAMESPACE

/// Declares `name` as the observable form of the function `fn`, whose parameters are named `...`.
///
/// `HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings);` then `lower(g, s)` calls `impl::lower` with hooks.
#define HOOKSCOPE_OBSERVABLE(name, fn, ...) \
  inline constexpr ::hookscope::observable<&fn, #name, #__VA_ARGS__, __FILE__, __LINE__> name {}

/// As HOOKSCOPE_OBSERVABLE, for one overload of `fn`: `type` is its function type, e.g. `double(double)`.
#define HOOKSCOPE_OBSERVABLE_OVERLOAD(name, type, fn, ...)                                                  \
  inline constexpr ::hookscope::observable<::hookscope::detail::pick_overload<type>(&fn), #name, #__VA_ARGS__, __FILE__, __LINE__> \
  name {}

/// Inside class `cls`, makes `name(args...)` the observed call of the member function `impl` (declared
/// before), and `name##_observers()` its observers; the registry knows it as "cls::name".
///
/// `HOOKSCOPE_OBSERVABLE_METHOD(Model, forward, forward_impl, input_ids, attention_mask)` then
/// `model.forward(ids, mask)`, and `Model::forward_observers().pre.add(...)`.
#define HOOKSCOPE_OBSERVABLE_METHOD(cls, name, impl, ...)                                                      \
  using name##_observable = ::hookscope::observable<&cls::impl, #cls "::" #name, #__VA_ARGS__, __FILE__, __LINE__>; \
  template <class... HookscopeArgs>                                                                            \
  decltype(auto) name(HookscopeArgs&&... hookscope_args) {                                                     \
    return name##_observable{}(*this, static_cast<HookscopeArgs&&>(hookscope_args)...);                        \
  }                                                                                                            \
  template <class... HookscopeArgs>                                                                            \
  decltype(auto) name(HookscopeArgs&&... hookscope_args) const {                                               \
    return name##_observable{}(*this, static_cast<HookscopeArgs&&>(hookscope_args)...);                        \
  }                                                                                                            \
  static constexpr const name##_observable::observers_type& name##_observers() noexcept {                      \
    (void)name##_observable{}; /* registers the method even if it is never called */                          \
    return name##_observable::observers;                                                                       \
  }                                                                                                            \
  static_assert(true, "")

