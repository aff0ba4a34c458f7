// A module that the copies of the library take for a copy of another version of hookscope: the note of a hub ABI
// that no copy of this version has (hub.hpp), and a hub that accepts nothing. test_plugins.py loads it before the
// plugins: their copies then write a file named after their module, never the path the other version writes.
#include <cstdint>

extern "C" {
struct other_version_hub {
  std::uint32_t abi;
  int (*join)(std::uint32_t feature, void* source) noexcept;
};
[[gnu::visibility("hidden"), gnu::used]] other_version_hub hookscope_test_other_version_hub = {
    999, [](std::uint32_t, void*) noexcept { return 0; }};
}

asm(".pushsection .note.hookscope,\"a\",%note\n"
    ".balign 4\n"
    ".long 2f - 1f\n"
    ".long 4f - 3f\n"
    ".long 1\n"
    "1: .asciz \"hookscope\"\n"
    "2: .balign 4\n"
    "3: .long 999\n"
    ".long hookscope_test_other_version_hub - .\n"
    "4: .balign 4\n"
    ".popsection\n");
