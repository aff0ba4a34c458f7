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
// With nobody listening a call costs two relaxed loads and compares, inlined; in disabled builds it is the plain call.
// Code you cannot annotate is observed through make_observable (observable_function.hpp, included here).
#pragma once

#include "hookscope/call_context.hpp"
#include "hookscope/config.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/detail/type_name.hpp"
#include "hookscope/detail/function_traits.hpp"
#include "hookscope/detail/given_call.hpp"
#include "hookscope/detail/observable_state.hpp"
#include "hookscope/detail/observed_call.hpp"
#include "hookscope/detail/probe_sites.hpp"
#include "hookscope/detail/probed_call.hpp"
#include "hookscope/detail/site_list.hpp"
#include "hookscope/observable_function.hpp"
#include "hookscope/observer.hpp"
#include "hookscope/observer_view.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/subscription.hpp"
#include "hookscope/value.hpp"

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {

/// An annotation's site: where it is, what is wrong with its parameter names, and, in enabled builds, what it keeps
/// at run time. The macros define one per annotation, a struct named after it in its namespace or class (which
/// qualifies its registry name): its state then has a short symbol of its own rather than members of an observable
/// whose type spells every template argument out (the names of 200 annotations' symbols were ~3/4 of the assembly
/// GCC wrote for them). A type written by hand gets `default_site`.
///
/// A site has `file`, `line`, `problem`, and in enabled builds `state` (an observable_state) and `registration`:
/// the site's own static initialiser (an annotation_link; in a class, or for a type written by hand), or, for an
/// annotation at namespace scope, `true` and an entry in the module's list of sites (HOOKSCOPE_DETAIL_LIST_SITE).
/// With probes (HOOKSCOPE_USDT=1), `probes`: the macros' sites have USDT probes named after the annotation
/// (detail/probe_sites.hpp); a type written by hand has none (detail::no_probes).
template <auto Fn, fixed_string Name, fixed_string Params>
struct default_site;

/// The registry name of the annotation `Name` at `Site`: qualified by its namespace or class when the macros made the
/// site (detail::site_name), as given for a type written by hand.
template <class Site, fixed_string Name>
struct registry_name {
  static constexpr std::string_view value = site_name<Site, Name.size()>::text.view();
};
template <auto Fn, fixed_string Name, fixed_string Params, fixed_string Same>
struct registry_name<default_site<Fn, Name, Params>, Same> {
  static constexpr std::string_view value = Name.view();
};

#if HOOKSCOPE_ENABLED
/// The run-time state of the annotation of `Fn` named `Name` at `Site`.
template <class Site, fixed_string Name, fixed_string Params, auto Fn>
constexpr observable_state make_state() noexcept {
  return observable_state(registry_name<Site, Name>::value, names_of<Params, arity_of<decltype(Fn)>>,
                          type_name<decltype(Fn)>(), Site::file, Site::line);
}
#define HOOKSCOPE_DETAIL_SITE_STATE(site, name_text, params_text, fn_pointer) \
  static inline constinit ::hookscope::detail::observable_state state =       \
      ::hookscope::detail::make_state<site, name_text, params_text, fn_pointer>()
#define HOOKSCOPE_DETAIL_LINKED_SITE \
  static inline ::hookscope::detail::annotation_link registration { state.info }
#define HOOKSCOPE_DETAIL_LISTED_SITE static constexpr bool registration = true
// The entry of a namespace-scope site in its module's list: internal linkage, one per translation unit (GCC would
// put every vague-linkage variable of one named section into the first one's COMDAT group, and the linker would
// keep one group's entries only); a header's annotation is then listed by each TU, and registers once. The address
// by __builtin_addressof: a `&` here would find any unary operator& template of the annotation's namespace.
#define HOOKSCOPE_DETAIL_LIST_SITE(site)                                                                           \
  [[gnu::used, gnu::section("hookscope_sites")]] static constinit ::hookscope::function_info* const site##_entry = \
      __builtin_addressof(site::state.info)
#else
#define HOOKSCOPE_DETAIL_SITE_STATE(site, name_text, params_text, fn_pointer) static_assert(true)
#define HOOKSCOPE_DETAIL_LINKED_SITE static_assert(true)
#define HOOKSCOPE_DETAIL_LISTED_SITE static_assert(true)
#define HOOKSCOPE_DETAIL_LIST_SITE(site) static_assert(true)
#endif

template <auto Fn, fixed_string Name, fixed_string Params>
struct default_site {
  static constexpr std::string_view file{};
  static constexpr unsigned line = 0;
  static constexpr names_problem problem = check_names(Params.view(), arity_of<decltype(Fn)>);
  HOOKSCOPE_DETAIL_SITE_STATE(default_site, Name, Params, Fn);
  HOOKSCOPE_DETAIL_LINKED_SITE;
#if HOOKSCOPE_DETAIL_PROBES
  using probes = no_probes;
#endif
};

#if !HOOKSCOPE_ENABLED
/// The registry entry of a disabled annotation (that registers nothing), instantiated only where `info` is used.
/// The names without the context type: a disabled build never instantiates call contexts.
template <auto Fn, fixed_string Name, fixed_string Params, class Site>
inline constinit function_info inert_info{registry_name<Site, Name>::value,
                                          names_of<Params, arity_of<decltype(Fn)>>,
                                          type_name<decltype(Fn)>(),
                                          Site::file,
                                          Site::line,
                                          &no_observer,
                                          &no_observer};

/// The observers of every disabled annotation of one context type: nothing to subscribe to.
template <class Context>
inline constexpr observers_of<Context> inert_observers{observer_view<Context>(call_access::key()),
                                                       observer_view<Context>(call_access::key())};
#endif

/// The members of an annotation but its call, keyed on types and `Fn` (a class whose template arguments are strings
/// pays for them in every member it declares: ~4x a class keyed on types, GCC 12). `Inert` gives a disabled
/// annotation's registry entry.
template <auto Fn, class Context, class Site, class Inert>
class annotation {
 public:
  using context_type = Context;
  using observers_type = observers_of<Context>;

#if HOOKSCOPE_ENABLED
  static constexpr observers_type observers{{call_access::key(), Site::state.hooks.pre},
                                            {call_access::key(), Site::state.hooks.post}};
#else
  // Defined below the class, as `info`: a disabled annotation instantiates its views only where they are used.
  static const observers_type& observers;
#endif
  /// Its registry entry (defined below the class: a disabled annotation instantiates it only where it is used).
  static const function_info& info;
  static constexpr decltype(Fn) orig = Fn;
};

template <auto Fn, class Context, class Site, class Inert>
constinit const function_info& annotation<Fn, Context, Site, Inert>::info =
#if HOOKSCOPE_ENABLED
    Site::state.info;
#else
    Inert::value;
#endif

#if !HOOKSCOPE_ENABLED
template <auto Fn, class Context, class Site, class Inert>
constinit const observers_of<Context>& annotation<Fn, Context, Site, Inert>::observers = inert_observers<Context>;
#endif

/// A disabled annotation's registry entry, named without instantiating it.
template <auto Fn, fixed_string Name, fixed_string Params, class Site>
struct inert_info_of {
#if !HOOKSCOPE_ENABLED
  static constexpr const function_info& value = inert_info<Fn, Name, Params, Site>;
#endif
};

}  // namespace detail

template <auto Fn, fixed_string Name, fixed_string Params, class Site = detail::default_site<Fn, Name, Params>,
          class Function = detail::function_type_of<decltype(Fn)>>
class observable;

//=== observable ===//

/// A function annotated for observation; `HOOKSCOPE_OBSERVABLE` declares one as an `inline constexpr` object.
///
/// Its call operator has the function's parameter types and `noexcept`-ness (a member function's takes the
/// object first); a call may leave trailing arguments to the defaults of the function's declaration (the function
/// is then called by name through the site's `by_name`, and callbacks see the arguments given: has_arg).
/// `observers.pre` and `observers.post` are subscribe-only views of its events, whose callbacks receive
/// `const call_context<R(Args...)>&` (with arguments also by name); `orig` is the function; `info` its registry
/// entry. `Site` is where the annotation is (the macros define one per annotation: see detail::default_site); its
/// type, and so the observable's, does not depend on the include path that reached it.
template <auto Fn, fixed_string Name, fixed_string Params, class Site, class Self, class R, bool NE, class... A>
class observable<Fn, Name, Params, Site, detail::function_type<Self, R, NE, A...>>
    : public detail::annotation<Fn, detail::named_call_context<R(A...), Params>, Site,
                                detail::inert_info_of<Fn, Name, Params, Site>>,
      public detail::given_calls<Site, detail::named_call_context<R(A...), Params>, Self, NE,
                                 std::make_index_sequence<sizeof...(A)>>,
      public detail::refused_calls<Self, sizeof...(A)> {
  using given_calls_type = detail::given_calls<Site, detail::named_call_context<R(A...), Params>, Self, NE,
                                               std::make_index_sequence<sizeof...(A)>>;
  static_assert(Site::problem != detail::names_problem::empty,
                "hookscope: HOOKSCOPE_OBSERVABLE: a parameter name is empty (a stray comma?); give one name per "
                "parameter: HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings)");
  static_assert(Site::problem != detail::names_problem::not_identifier,
                "hookscope: HOOKSCOPE_OBSERVABLE: a parameter name is not an identifier; give each parameter's "
                "name only, without its type or anything else: HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings)");
  static_assert(Site::problem != detail::names_problem::duplicate,
                "hookscope: HOOKSCOPE_OBSERVABLE: two parameters have the same name; callbacks find arguments by "
                "name (arg<\"name\">), so give each parameter a name of its own");
  static_assert(Site::problem != detail::names_problem::count,
                "hookscope: HOOKSCOPE_OBSERVABLE: give exactly one name per parameter of the function");
  static_assert(detail::pointee_marks_fit<Params, A...>(),
                "hookscope: HOOKSCOPE_OBSERVABLE: a '*' before a parameter's name captures what the parameter points "
                "to, and a parameter marked so is not a raw pointer to a complete object type (T*; const char* for a "
                "C string): remove its '*'");

 public:
  /// A call given fewer arguments: the trailing ones take the function's own defaults (detail::given_call).
  using given_calls_type::operator();
  /// A call given more arguments than there are parameters, or an object the method cannot be called on: one
  /// hookscope message.
  using detail::refused_calls<Self, sizeof...(A)>::operator();

#if HOOKSCOPE_ENABLED
  constexpr observable() noexcept {
    (void)&Site::registration;  // declaring the object registers the function, even if it is never called
  }

  /// Calls the function, with the callbacks around it when anyone listens.
  [[gnu::always_inline]] inline R operator()(A... args) const noexcept(NE) requires std::is_void_v<Self> {
    if (detail::hooks_or_probes<Site>()) [[unlikely]] {
      return slow_call(nullptr, args...);
    }
    return Fn(static_cast<A&&>(args)...);
  }
#else
  // (No constructor of its own, so that declaring the object costs no constant evaluation.)

  /// A free function's observable converts to the function: calling it is the plain call, with no function in
  /// between to instantiate and inline (a surrogate call), and by-value arguments are not moved once more.
  constexpr operator decltype(Fn)() const noexcept requires std::is_void_v<Self> { return Fn; }
#endif

  /// Calls the member function on `object`, with the callbacks around it when anyone listens: on the object as
  /// given, an rvalue for a `&&`-qualified method.
  [[gnu::always_inline]] inline R operator()(detail::object_ref<Self> object, A... args) const
      noexcept(NE) requires(!std::is_void_v<Self>) {
#if HOOKSCOPE_ENABLED
    if (detail::hooks_or_probes<Site>()) [[unlikely]] {
      return slow_call(detail::object_address(object), args...);
    }
#endif
    return (static_cast<detail::object_ref<Self>>(object).*Fn)(static_cast<A&&>(args)...);
  }

#if HOOKSCOPE_ENABLED
 private:
  /// The call with someone listening: the observed call of its signature, which fires the probes around it while a
  /// tool is attached to them, and runs the process's callbacks around it while any listen.
  [[gnu::always_inline]] static R slow_call(void* object, A&... args) noexcept(NE) {
    using observed = detail::observed<typename observable::context_type, Self, NE>;
    return observed::call(detail::call_target_of<Site, observed, Fn, !std::is_void_v<Self>, A...>,
                          detail::raised_probes_of<Site>(), object, args...);
  }
#endif
};

HOOKSCOPE_DETAIL_END_NAMESPACE

// The annotation's file for its `function_info`: the file's name without directories (the compiler's own
// __FILE_NAME__ where it has one).
#ifdef __FILE_NAME__
#define HOOKSCOPE_DETAIL_FILE_NAME __FILE_NAME__
#else
#define HOOKSCOPE_DETAIL_FILE_NAME ::hookscope::detail::file_name(__FILE__)
#endif

// The site of the annotation `name` of the function `fn_pointer` (of type `fn_type`) whose parameters are named
// `params_text`: a struct named after it (detail::default_site says what it holds). The names are checked on the
// literal: far cheaper to compile than on the observable's template argument, which constant evaluation reaches
// through its template parameter object.
// `registration` is HOOKSCOPE_DETAIL_LISTED_SITE at namespace scope (then followed by HOOKSCOPE_DETAIL_LIST_SITE),
// HOOKSCOPE_DETAIL_LINKED_SITE in a class.
#define HOOKSCOPE_DETAIL_SITE(name, fn_pointer, fn_type, params_text, registration, by_name)   \
  struct hookscope_detail_site_##name {                                                        \
    static constexpr ::std::string_view file = HOOKSCOPE_DETAIL_FILE_NAME;                     \
    static constexpr unsigned line = __LINE__;                                                 \
    static constexpr ::hookscope::detail::names_problem problem =                              \
        ::hookscope::detail::check_names(params_text, ::hookscope::detail::arity_of<fn_type>); \
    HOOKSCOPE_DETAIL_SITE_STATE(hookscope_detail_site_##name, #name, params_text, fn_pointer); \
    registration;                                                                              \
    HOOKSCOPE_DETAIL_SITE_PROBES(name);                                                        \
    by_name                                                                                    \
  }

// A site's call of its function by name, so that the function's own defaults apply to the arguments left out
// (detail::given_call passes them converted to the annotated parameter types). The name in parentheses: no
// argument-dependent lookup adds functions of the same name from the arguments' namespaces.
#define HOOKSCOPE_DETAIL_BY_NAME(fn)                                                                \
  template <class... HookscopeArgs>                                                                 \
  [[gnu::always_inline]] static constexpr auto by_name(HookscopeArgs&&... hookscope_args) noexcept( \
      noexcept((fn)(static_cast<HookscopeArgs&&>(hookscope_args)...)))                              \
      ->decltype((fn)(static_cast<HookscopeArgs&&>(hookscope_args)...)) {                           \
    return (fn)(static_cast<HookscopeArgs&&>(hookscope_args)...);                                   \
  }
// The same for the member function `impl`, on the object given first, as given: an rvalue reaches the overload of
// `impl` for rvalues.
#define HOOKSCOPE_DETAIL_METHOD_BY_NAME(impl)                                                                          \
  template <class HookscopeSelf, class... HookscopeArgs>                                                               \
  [[gnu::always_inline]] static constexpr auto                                                                         \
  by_name(HookscopeSelf&& hookscope_self, HookscopeArgs&&... hookscope_args) noexcept(                                 \
      noexcept(static_cast<HookscopeSelf&&>(hookscope_self).impl(static_cast<HookscopeArgs&&>(hookscope_args)...)))    \
      ->decltype(static_cast<HookscopeSelf&&>(hookscope_self).impl(static_cast<HookscopeArgs&&>(hookscope_args)...)) { \
    return static_cast<HookscopeSelf&&>(hookscope_self).impl(static_cast<HookscopeArgs&&>(hookscope_args)...);         \
  }

/// Declares `name` as the observable form of the function `fn`, whose parameters are named `...`.
///
/// `HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings);` then `lower(g, s)` calls `impl::lower` with hooks.
/// The registry knows it by its name qualified with the enclosing namespace ("passes::lower"; anonymous
/// namespaces left out); its `file` is the file's name without directories. Use it at namespace scope.
#define HOOKSCOPE_OBSERVABLE(name, fn, ...)                                                   \
  HOOKSCOPE_DETAIL_SITE(name, &fn, decltype(&fn), #__VA_ARGS__, HOOKSCOPE_DETAIL_LISTED_SITE, \
                        HOOKSCOPE_DETAIL_BY_NAME(fn));                                        \
  HOOKSCOPE_DETAIL_LIST_SITE(hookscope_detail_site_##name);                                   \
  inline constexpr ::hookscope::observable<&fn, #name, #__VA_ARGS__, hookscope_detail_site_##name> name {}

/// As HOOKSCOPE_OBSERVABLE, for one overload of `fn`: `type` is its function type, e.g. `double(double)`.
#define HOOKSCOPE_OBSERVABLE_OVERLOAD(name, type, fn, ...)                                                             \
  HOOKSCOPE_DETAIL_SITE(name, ::hookscope::detail::pick_overload<type>(&fn), ::std::add_pointer_t<type>, #__VA_ARGS__, \
                        HOOKSCOPE_DETAIL_LISTED_SITE, HOOKSCOPE_DETAIL_BY_NAME(fn));                                   \
  HOOKSCOPE_DETAIL_LIST_SITE(hookscope_detail_site_##name);                                                            \
  inline constexpr ::hookscope::observable<::hookscope::detail::pick_overload<type>(&fn), #name, #__VA_ARGS__,         \
                                           hookscope_detail_site_##name>                                               \
      name {}

// The members a method annotation adds to its class besides its site: `name(args...)` on an object of each value
// category, which passes `*this` on to the observable `name##_observable` as the annotated method takes it (an rvalue
// for a ref-qualified one: detail::rvalue_object), noexcept exactly when that call is, and `name##_observers()`.
#define HOOKSCOPE_DETAIL_METHOD_CALLS(name)                                                                      \
  template <class... HookscopeArgs>                                                                              \
  decltype(auto) name(HookscopeArgs&&... hookscope_args)& noexcept(                                              \
      noexcept(name##_observable{}(*this, static_cast<HookscopeArgs&&>(hookscope_args)...))) {                   \
    return name##_observable{}(*this, static_cast<HookscopeArgs&&>(hookscope_args)...);                          \
  }                                                                                                              \
  template <class... HookscopeArgs>                                                                              \
  decltype(auto) name(HookscopeArgs&&... hookscope_args)                                                         \
      const& noexcept(noexcept(name##_observable{}(*this, static_cast<HookscopeArgs&&>(hookscope_args)...))) {   \
    return name##_observable{}(*this, static_cast<HookscopeArgs&&>(hookscope_args)...);                          \
  }                                                                                                              \
  template <class... HookscopeArgs>                                                                              \
  decltype(auto) name(HookscopeArgs&&... hookscope_args)&& noexcept(                                             \
      noexcept(name##_observable{}(::hookscope::detail::rvalue_object<decltype(name##_observable::orig)>(*this), \
                                   static_cast<HookscopeArgs&&>(hookscope_args)...))) {                          \
    return name##_observable{}(::hookscope::detail::rvalue_object<decltype(name##_observable::orig)>(*this),     \
                               static_cast<HookscopeArgs&&>(hookscope_args)...);                                 \
  }                                                                                                              \
  template <class... HookscopeArgs>                                                                              \
  decltype(auto) name(HookscopeArgs&&... hookscope_args) const&& noexcept(                                       \
      noexcept(name##_observable{}(::hookscope::detail::rvalue_object<decltype(name##_observable::orig)>(*this), \
                                   static_cast<HookscopeArgs&&>(hookscope_args)...))) {                          \
    return name##_observable{}(::hookscope::detail::rvalue_object<decltype(name##_observable::orig)>(*this),     \
                               static_cast<HookscopeArgs&&>(hookscope_args)...);                                 \
  }                                                                                                              \
  static constexpr const auto& name##_observers() noexcept {                                                     \
    (void)name##_observable{}; /* registers the method even if it is never called */                             \
    return name##_observable::observers;                                                                         \
  }                                                                                                              \
  static_assert(true, "")

/// Inside class `cls`, makes `name(args...)` the observed call of the member function `impl` (declared
/// before), and `name##_observers()` its observers; the registry knows it as "cls::name", `cls` qualified as
/// the compiler names the class ("llm::model::forward", "model<int>::forward"). `impl` may be const, noexcept and
/// ref-qualified: `name` is then called on the objects `impl` is (an rvalue for `impl(...) &&`).
///
/// `HOOKSCOPE_OBSERVABLE_METHOD(Model, forward, forward_impl, input_ids, attention_mask)` then
/// `model.forward(ids, mask)`, and `Model::forward_observers().pre.add(...)`.
#define HOOKSCOPE_OBSERVABLE_METHOD(cls, name, impl, ...)                                                           \
  HOOKSCOPE_DETAIL_SITE(name, &cls::impl, decltype(&cls::impl), #__VA_ARGS__, HOOKSCOPE_DETAIL_LINKED_SITE,         \
                        HOOKSCOPE_DETAIL_METHOD_BY_NAME(impl));                                                     \
  using name##_observable = ::hookscope::observable<&cls::impl, #name, #__VA_ARGS__, hookscope_detail_site_##name>; \
  HOOKSCOPE_DETAIL_METHOD_CALLS(name)

/// As HOOKSCOPE_OBSERVABLE_METHOD, for one overload of the member function `impl`: `type` is its type with its
/// qualifiers, e.g. `int(int) const` or `std::string() &&`.
#define HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(cls, name, type, impl, ...)                                         \
  HOOKSCOPE_DETAIL_SITE(name, ::hookscope::detail::pick_method_overload<type>(&cls::impl),                       \
                        decltype(::hookscope::detail::pick_method_overload<type>(&cls::impl)), #__VA_ARGS__,     \
                        HOOKSCOPE_DETAIL_LINKED_SITE, HOOKSCOPE_DETAIL_METHOD_BY_NAME(impl));                    \
  using name##_observable = ::hookscope::observable<::hookscope::detail::pick_method_overload<type>(&cls::impl), \
                                                    #name, #__VA_ARGS__, hookscope_detail_site_##name>;          \
  HOOKSCOPE_DETAIL_METHOD_CALLS(name)
