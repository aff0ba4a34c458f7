// Included by the test programs that fork while threads run (one translation unit each): LeakSanitizer, in a forked
// child of a process with threads, still lists the parent's threads, cannot suspend them and reports leaks that are
// not ("False leaks are possible"), with its exit code. A forked child therefore skips the leak check (the interface
// LeakSanitizer documents for turning it off from the program); the parent checks as always.
#pragma once

#include <unistd.h>

namespace leak_check_support {
inline const pid_t first_process = getpid();
}  // namespace leak_check_support

extern "C" int __lsan_is_turned_off() { return getpid() != leak_check_support::first_process ? 1 : 0; }
