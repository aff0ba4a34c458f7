// This copy's hub and the ELF note that shows it to the other copies; finding the owner; pinning (see hub.hpp).
#include "hub.hpp"

#if HOOKSCOPE_ENABLED

#include "settings.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <climits>

#include <atomic>
#include <cstring>
#include <iterator>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

constinit std::atomic<int (*)(hookscope_hub_source*) noexcept> join_handlers[2] = {};
constinit char directory_at_start[PATH_MAX] = {};

// Another copy joins this one's file: this copy reads its variables first when it has not yet (a copy in a library
// loaded before it may finish its static initialisers first).
int join(std::uint32_t feature, hookscope_hub_source* source) noexcept {
  install_environment();
  if (feature >= std::size(join_handlers) || source == nullptr) return 0;
  int (*handler)(hookscope_hub_source*) noexcept = join_handlers[feature].load(std::memory_order_acquire);
  return handler != nullptr ? handler(source) : 0;
}

const char* directory() noexcept {
  install_environment();
  return directory_at_start;
}

}  // namespace
}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

extern "C" {
/// This copy's hub: hidden (each module its own), constant-initialised (callable before this copy's static
/// initialisers run), reached by the other copies through the note below.
[[gnu::visibility("hidden"), gnu::used]] constinit hookscope_hub hookscope_detail_hub = {
    HOOKSCOPE_DETAIL_HUB_ABI, &hookscope::detail::join, &hookscope::detail::directory};
}

#define HOOKSCOPE_DETAIL_TEXT_OF(x) #x
#define HOOKSCOPE_DETAIL_TEXT(x) HOOKSCOPE_DETAIL_TEXT_OF(x)

// The note (type 1, name "hookscope"): the hub ABI, then the hub's address relative to that word, which the static
// linker resolves (the hub is hidden): read-only, no relocation at load time. `%note`: the section type in both
// GNU as and LLVM's assembler, on every architecture (`@` starts a comment on some).
asm(".pushsection .note.hookscope,\"a\",%note\n"
    ".balign 4\n"
    ".long 2f - 1f\n"
    ".long 4f - 3f\n"
    ".long 1\n"
    "1: .asciz \"hookscope\"\n"
    "2: .balign 4\n"
    "3: .long " HOOKSCOPE_DETAIL_TEXT(HOOKSCOPE_DETAIL_HUB_ABI) "\n"
    ".long hookscope_detail_hub - .\n"
    "4: .balign 4\n"
    ".popsection\n");

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

constexpr char note_name[] = "hookscope";
constexpr std::uint32_t note_type = 1;

// What a walk over the modules found.
struct module_walk {
  const void* own_address = &hookscope_detail_hub;
  hookscope_hub* owner = nullptr;
  int owner_index = -1;
  int first_index = -1;  // the first module with a hookscope note of any version
  std::string first_name;
  int own_index = -1;
  std::string own_name;
  int index = 0;
};

std::size_t align_up(std::size_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }

// The hookscope notes of a PT_NOTE segment: `found(abi, hub)` for each.
template <class Found>
void read_notes(const unsigned char* p, std::size_t size, std::size_t align, Found&& found) {
  while (size >= 12) {
    std::uint32_t header[3];  // name size, descriptor size, type
    std::memcpy(header, p, sizeof header);
    const std::size_t name_bytes = align_up(header[0], align), desc_bytes = align_up(header[1], align);
    if (name_bytes > size - 12 || desc_bytes > size - 12 - name_bytes) return;
    const unsigned char* name = p + 12;
    const unsigned char* desc = name + name_bytes;
    if (header[2] == note_type && header[0] == sizeof note_name &&
        std::memcmp(name, note_name, sizeof note_name) == 0 && header[1] >= 8) {
      std::uint32_t abi = 0;
      std::int32_t offset = 0;
      std::memcpy(&abi, desc, 4);
      std::memcpy(&offset, desc + 4, 4);
      found(abi, reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(desc + 4) +
                                         static_cast<std::uintptr_t>(static_cast<std::intptr_t>(offset))));
    }
    p += 12 + name_bytes + desc_bytes;
    size -= 12 + name_bytes + desc_bytes;
  }
}

int visit_module(dl_phdr_info* info, std::size_t, void* data) noexcept {
  module_walk& walk = *static_cast<module_walk*>(data);
  const int index = walk.index++;
  const auto own = reinterpret_cast<std::uintptr_t>(walk.own_address);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD && own >= start && own - start < segment.p_memsz) {
      walk.own_index = index;
      walk.own_name = info->dlpi_name != nullptr ? info->dlpi_name : "";
    }
    if (segment.p_type != PT_NOTE) continue;
    read_notes(reinterpret_cast<const unsigned char*>(start), segment.p_memsz, segment.p_align == 8 ? 8 : 4,
               [&](std::uint32_t abi, void* hub) {
                 if (walk.first_index < 0) {
                   walk.first_index = index;
                   walk.first_name = info->dlpi_name != nullptr ? info->dlpi_name : "";
                 }
                 if (abi == HOOKSCOPE_DETAIL_HUB_ABI && walk.owner == nullptr) {
                   walk.owner = static_cast<hookscope_hub*>(hub);
                   walk.owner_index = index;
                 }
               });
  }
  return 0;
}

std::string file_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

hub_owner find_hub_owner() {
  module_walk walk;
  dl_iterate_phdr(&visit_module, &walk);
  hub_owner out;
  out.module = walk.own_index > 0 ? file_name(walk.own_name) : "";
  // A copy that finds no note of its own (a linker that dropped it) owns its files, as a lone copy does.
  if (walk.owner == nullptr || walk.owner == &hookscope_detail_hub) {
    out.hub = &hookscope_detail_hub;
    out.self = true;
  } else {
    out.hub = walk.owner;
    out.self = false;
  }
  if (walk.first_index >= 0 && walk.first_index != walk.owner_index) {
    out.earlier_version = walk.first_index == 0 ? "the program" : file_name(walk.first_name);
  }
  return out;
}

void remember_start_directory() noexcept {
  if (getcwd(directory_at_start, sizeof directory_at_start) == nullptr) directory_at_start[0] = '\0';
}

std::string start_directory() {
  const hub_owner owner = find_hub_owner();
  return owner.self ? directory_at_start : owner.hub->directory();
}

void set_join_handler(std::uint32_t feature, int (*handler)(hookscope_hub_source*) noexcept) noexcept {
  if (feature < std::size(join_handlers)) join_handlers[feature].store(handler, std::memory_order_release);
}

int keep_source_of(std::atomic<hookscope_hub_source*>& sources, const std::string& path,
                   hookscope_hub_source* source) noexcept {
  if (std::strcmp(source->path, path.c_str()) != 0) return 0;
  hookscope_hub_source* first = sources.load(std::memory_order_relaxed);
  do {
    source->next = first;
  } while (!sources.compare_exchange_weak(first, source, std::memory_order_release, std::memory_order_relaxed));
  return 1;
}

std::string module_path(const std::string& path, const std::string& module) {
  const std::size_t slash = path.rfind('/');
  const std::size_t dot = path.rfind('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  std::string out = has_extension ? path.substr(0, dot) : path;
  out.append("-").append(module.empty() ? "program" : module);
  if (has_extension) out.append(path.substr(dot));
  return out;
}

void pin_this_module() noexcept {
  static constinit std::atomic<bool> pinned{false};
  if (pinned.exchange(true)) return;
  try {
    module_walk walk;
    dl_iterate_phdr(&visit_module, &walk);  // no dlopen() inside the walk: it holds the loader's list lock
    if (walk.own_index <= 0 || walk.own_name.empty()) return;  // the program is never unloaded
    // The reference taken here is never released, and RTLD_NODELETE keeps the module even past dlclose()s.
    if (dlopen(walk.own_name.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) == nullptr) {
      const char* why = dlerror();
      log_line("hookscope: could not keep " + walk.own_name + " loaded (" + (why != nullptr ? why : "dlopen failed") +
               "): unloading it would leave hookscope's exit and signal handlers dangling");
    }
  } catch (...) {
    log_line("hookscope: could not keep this module loaded (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#else  // !HOOKSCOPE_ENABLED: the environment features are compiled out, and nothing needs a hub

#include <unistd.h>

#include <climits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
void pin_this_module() noexcept {}
void remember_start_directory() noexcept {}
std::string start_directory() {
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof cwd) != nullptr ? cwd : "";
}
}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif
