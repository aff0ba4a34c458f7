// Observers are constant-initialised: another translation unit may use them from its own static
// initialisers, whatever order the linker puts the translation units in (static_init_other.cpp does).
#include "hookscope/observer.hpp"

#include <catch2/catch.hpp>

#include <thread>

constinit hookscope::observer<int> on_startup{"on_startup"};

int early_context_sum();  // static_init_other.cpp
int early_global_sum();

#if HOOKSCOPE_ENABLED

TEST_CASE("observer used during static initialisation") {
  // Both callbacks were added, and fired once with 5, before main() started.
  CHECK(early_context_sum() == 5);
  CHECK(early_global_sum() == 5);
  on_startup.observe(2);
  CHECK(early_context_sum() == 7);  // added in the main thread's context before main: still there
  CHECK(early_global_sum() == 7);
  int from_thread = 0;
  std::thread([&] {
    on_startup.observe(100);
    from_thread = early_global_sum();
  }).join();
  CHECK(from_thread == 107);
  CHECK(early_context_sum() == 7);
}

#else

TEST_CASE("observer used during static initialisation, disabled build") {
  CHECK(early_context_sum() == 0);
  CHECK(early_global_sum() == 0);
}

#endif
