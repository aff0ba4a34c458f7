// Calls every function of the type zoo (tests/type_zoo.hpp) once: built with each compiler in each mode by
// tests/zoo/test_type_zoo.py, which runs it under HOOKSCOPE_RECORD. `type_zoo_program --read FILE` (enabled builds)
// reads a record file back with the library's reader and prints "function argument-JSON" per record.
// `type_zoo_program --raise-probes` (builds with USDT probes) first raises every entry's probe semaphores, as a
// tool attaching to them would: each call then goes through its probes, whatever its argument's type.
#include "type_zoo.hpp"

#include <cstdio>
#include <cstring>

#if HOOKSCOPE_ENABLED
#include "hookscope/records.hpp"

#include <exception>
#include <fstream>

namespace {
int read_back(const char* path) {
  try {
    std::ifstream in(path);
    hookscope::record_reader reader(in, path);
    hookscope::call_record record;
    while (reader.next(record)) {
      std::string line = record.function;
      for (const auto& [name, v] : record.inputs.kwargs) line += " " + name + "=" + hookscope::to_json(v);
      std::printf("%s\n", line.c_str());
    }
    return reader.warnings().empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
}  // namespace
#endif

#if HOOKSCOPE_DETAIL_PROBES
#define ZOO_DECLARE_SEMAPHORES(entry, ...) \
  extern "C" [[gnu::visibility("hidden")]] unsigned hookscope_##entry##__probes;
ZOO_ENTRIES(ZOO_DECLARE_SEMAPHORES)
#define ZOO_RAISE_SEMAPHORES(entry, ...) __atomic_store_n(&hookscope_##entry##__probes, 0x00010001u, __ATOMIC_RELAXED);
#endif

int main(int argc, char** argv) {
#if HOOKSCOPE_ENABLED
  if (argc == 3 && std::strcmp(argv[1], "--read") == 0) return read_back(argv[2]);
#endif
#if HOOKSCOPE_DETAIL_PROBES
  if (argc == 2 && std::strcmp(argv[1], "--raise-probes") == 0) {
    ZOO_ENTRIES(ZOO_RAISE_SEMAPHORES)
    --argc;
  }
#endif
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s%s%s\n", argv[0], HOOKSCOPE_ENABLED ? " [--read FILE]" : "",
                 HOOKSCOPE_DETAIL_PROBES ? " [--raise-probes]" : "");
    return 2;
  }
  std::printf("%d\n", zoo::call_every_function());
  return 0;
}
