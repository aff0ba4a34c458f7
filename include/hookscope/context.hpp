// hookscope/context.hpp — per-thread callback contexts, shared with worker threads or copied on demand.
//
// `observer::add` registers a callback in the current context. Every thread starts with its own empty
// context, so callbacks added in one thread are invisible in another — like Python's contextvars.
// A thread pool that runs work on behalf of a caller attaches the caller's context for that work.
#pragma once

#include "hookscope/config.hpp"

#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {
struct context_state;
}

/// A shared handle to a set of context callbacks.
///
/// ```cpp
/// auto ctx = hookscope::context::current();
/// pool.submit([ctx] { auto in_callers_context = ctx.attach(); work(); });
/// ```
class context {
 public:
  class scope;

  /// A new, empty context (not current anywhere until attached).
  context();
  context(const context& other) noexcept;
  context(context&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  context& operator=(context other) noexcept {
    std::swap(state_, other.state_);
    return *this;
  }
  ~context();

  /// The calling thread's current context (its own one, created on first use, unless one is attached).
  [[nodiscard]] static context current();

  /// Makes this context current on the calling thread until the returned scope ends.
  [[nodiscard]] scope attach() const;

  /// A new context holding the callbacks this one holds now; later changes to either stay apart.
  [[nodiscard]] context copy() const;

  /// Two handles are equal when they share one context.
  friend bool operator==(const context& a, const context& b) noexcept { return a.state_ == b.state_; }

 private:
  explicit context(detail::context_state* adopted) noexcept : state_(adopted) {}
  detail::context_state* state_;
};

/// RAII: while alive, its context is the current one on the thread that created it.
///
/// Scopes nest; each restores the context that was current when it was made. Destroy it on the same thread.
class [[nodiscard]] context::scope {
 public:
  scope(scope&& other) noexcept
      : previous_(std::exchange(other.previous_, nullptr)), engaged_(std::exchange(other.engaged_, false)) {}
  scope& operator=(scope&&) = delete;
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;
  ~scope();

 private:
  friend class context;
  scope(detail::context_state* previous) noexcept : previous_(previous), engaged_(true) {}
  detail::context_state* previous_;
  bool engaged_;
};

#if !HOOKSCOPE_ENABLED
// Disabled build: contexts hold nothing, so every operation is free and leaves no symbol behind.
inline context::context() : state_(nullptr) {}
inline context::context(const context&) noexcept : state_(nullptr) {}
inline context::~context() = default;
inline context context::current() { return context(); }
inline context::scope context::attach() const { return scope(nullptr); }
inline context context::copy() const { return context(); }
inline context::scope::~scope() = default;
#endif

HOOKSCOPE_DETAIL_END_NAMESPACE
