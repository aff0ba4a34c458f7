// A stackful fiber on ucontext (makecontext/swapcontext with a stack of its own), as Boost.Context and Asio's spawn
// make them: for the tests of calls that suspend in the middle and end later, after other calls, or on another
// thread. `resume()` runs the fiber until it suspends or finishes, from whatever thread calls it; `suspend()`, inside
// the fiber, returns to whoever resumed it. ThreadSanitizer and AddressSanitizer cannot follow swapcontext alone:
// each switch is announced to them through their fiber interfaces.
#pragma once

#include <ucontext.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <utility>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HOOKSCOPE_TEST_TSAN 1
#endif
#if __has_feature(address_sanitizer)
#define HOOKSCOPE_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define HOOKSCOPE_TEST_TSAN 1
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HOOKSCOPE_TEST_ASAN 1
#endif
#if defined(HOOKSCOPE_TEST_TSAN)
#include <sanitizer/tsan_interface.h>
#endif
#if defined(HOOKSCOPE_TEST_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

namespace hookscope_test {

class fiber {
 public:
  explicit fiber(std::function<void(fiber&)> body, std::size_t stack_size = 256 * 1024)
      : body_(std::move(body)), stack_(new char[stack_size]), stack_size_(stack_size) {
    if (getcontext(&context_) != 0) die("getcontext");
    context_.uc_stack.ss_sp = stack_.get();
    context_.uc_stack.ss_size = stack_size_;
    context_.uc_link = nullptr;  // the body never returns through it: run() switches back itself
    const auto self = reinterpret_cast<std::uintptr_t>(this);
    makecontext(&context_, reinterpret_cast<void (*)()>(&fiber::run), 2, static_cast<unsigned>(self >> 32),
                static_cast<unsigned>(self & 0xffffffffu));
#if defined(HOOKSCOPE_TEST_TSAN)
    tsan_fiber_ = __tsan_create_fiber(0);
#endif
  }
  fiber(const fiber&) = delete;
  fiber& operator=(const fiber&) = delete;
  ~fiber() {
#if defined(HOOKSCOPE_TEST_TSAN)
    __tsan_destroy_fiber(tsan_fiber_);
#endif
  }

  /// Runs the fiber until it suspends or finishes (from any thread; one at a time).
  void resume() {
    if (done_) die("resume() of a finished fiber");
#if defined(HOOKSCOPE_TEST_TSAN)
    tsan_caller_ = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(tsan_fiber_, 0);
#endif
#if defined(HOOKSCOPE_TEST_ASAN)
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, stack_.get(), stack_size_);
#endif
    if (swapcontext(&caller_, &context_) != 0) die("swapcontext");
#if defined(HOOKSCOPE_TEST_ASAN)
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  }

  /// Inside the fiber: back to the resume() that ran it.
  void suspend() {
#if defined(HOOKSCOPE_TEST_ASAN)
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, caller_stack_, caller_stack_size_);
#endif
#if defined(HOOKSCOPE_TEST_TSAN)
    __tsan_switch_to_fiber(tsan_caller_, 0);
#endif
    if (swapcontext(&context_, &caller_) != 0) die("swapcontext");
#if defined(HOOKSCOPE_TEST_ASAN)
    __sanitizer_finish_switch_fiber(fake_stack, &caller_stack_, &caller_stack_size_);
#endif
  }

  bool done() const noexcept { return done_; }

 private:
  [[noreturn]] static void die(const char* what) {
    std::fprintf(stderr, "fiber: %s failed\n", what);
    std::abort();
  }

  static void run(unsigned high, unsigned low) {
    auto* self = reinterpret_cast<fiber*>((static_cast<std::uintptr_t>(high) << 32) | low);
#if defined(HOOKSCOPE_TEST_ASAN)
    __sanitizer_finish_switch_fiber(nullptr, &self->caller_stack_, &self->caller_stack_size_);
#endif
    self->body_(*self);
    self->done_ = true;
#if defined(HOOKSCOPE_TEST_ASAN)
    __sanitizer_start_switch_fiber(nullptr, self->caller_stack_, self->caller_stack_size_);  // this stack ends
#endif
#if defined(HOOKSCOPE_TEST_TSAN)
    __tsan_switch_to_fiber(self->tsan_caller_, 0);
#endif
    setcontext(&self->caller_);
    die("setcontext");
  }

  std::function<void(fiber&)> body_;
  std::unique_ptr<char[]> stack_;
  std::size_t stack_size_;
  ucontext_t context_{};
  ucontext_t caller_{};
  bool done_ = false;
#if defined(HOOKSCOPE_TEST_TSAN)
  void* tsan_fiber_ = nullptr;
  void* tsan_caller_ = nullptr;
#endif
#if defined(HOOKSCOPE_TEST_ASAN)
  const void* caller_stack_ = nullptr;
  std::size_t caller_stack_size_ = 0;
#endif
};

}  // namespace hookscope_test
