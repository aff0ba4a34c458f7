// Loads names_library.cpp's library and calls into it every 10 ms, so that a tool can attach (-p):
//   names_program N         prints "ready", then N rounds
//   names_program N lock    the same after mlockall(MCL_CURRENT): every page of the library resident
#include "shared_names.hpp"

#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

int library_call(int x);

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1;
  if (argc > 2 && std::strcmp(argv[2], "lock") == 0 && mlockall(MCL_CURRENT) != 0) return 3;
  std::printf("ready\n");
  std::fflush(stdout);
  long sum = 0;
  for (long i = 0; i < n; ++i) {
    sum += library_call(static_cast<int>(i)) + shared_names::step(static_cast<int>(i));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::printf("%ld\n", sum);
  return 0;
}
