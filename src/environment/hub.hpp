// Several copies of hookscope in one process: a program and the plugins it dlopen()s, each linked with the static
// library, each run their own environment features. So that every output file has one writer, the copies find each
// other without the program's help (no environment variable written, no symbol exported): each copy has a hub, a
// C-ABI struct in its own module, which an ELF note of that module (`.note.hookscope`: the hub ABI and the hub's
// offset from the note) makes visible to the others. Walking the modules in load order (dl_iterate_phdr: the program
// first), the copies of one hub ABI elect the first module whose note matches theirs: its copy owns the files; the
// others hand it their part (a function that writes their events through a byte sink).
#pragma once

#include "hookscope/config.hpp"

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <string>

/// The version of the structs below and of what the copies hand each other; copies of other versions never call
/// one another. Changing any of them changes this number.
#define HOOKSCOPE_DETAIL_HUB_ABI 1

extern "C" {

/// Where a copy writes its part of a file another copy owns. Async-signal-safe, like everything called through it.
struct hookscope_hub_sink {
  void* context;
  /// Starts an item (a timeline event, a statistics row): the owner writes what goes between items.
  void (*item)(void* context) noexcept;
  /// Bytes of the current item.
  void (*text)(void* context, const char* data, std::size_t size) noexcept;
  /// A timeline's last async event id (`"id"`): each copy takes the next ones, so that ids stay unique in the file.
  std::uint64_t* async_ids;
};

/// A copy's part of a file another copy owns. Lives in the joining copy's memory for the process's life.
struct hookscope_hub_source {
  /// The file, as the joining copy's variable gives it (`%p` not expanded, relative paths not resolved: the owner
  /// resolved them at its start-up); "" for the log.
  const char* path;
  /// Writes the copy's items through `sink`; a timeline's `ts` count from `origin_ns` (CLOCK_MONOTONIC).
  void (*write)(const hookscope_hub_source* self, const hookscope_hub_sink* sink, std::int64_t origin_ns) noexcept;
  /// The owner's list (set by the owner).
  hookscope_hub_source* next;
};

/// Which file a source joins.
enum hookscope_hub_feature : std::uint32_t { hookscope_hub_timeline = 0, hookscope_hub_stats = 1 };

/// A copy's hub.
struct hookscope_hub {
  std::uint32_t abi;  ///< HOOKSCOPE_DETAIL_HUB_ABI
  /// Adds `source` to the owner's file of `feature`: 1 when the owner writes it (its variable names the same
  /// file), 0 when the source's copy must write its own. Reads the owner's variables first if they were not yet.
  int (*join)(std::uint32_t feature, hookscope_hub_source* source) noexcept;
  /// The working directory at the owner's start-up, which every copy resolves relative paths against ("" when
  /// unknown). Reads the owner's variables first if they were not yet.
  const char* (*directory)() noexcept;
};

}  // extern "C"

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// What a copy learns of the others.
struct hub_owner {
  hookscope_hub* hub = nullptr;  ///< the owner's hub: this copy's own when it is the owner
  bool self = true;              ///< this copy owns its files
  /// Another version of hookscope was loaded before this copy's owner: the owner then writes files of its own name
  /// (`module_path`). The first module's name, for the message.
  std::string earlier_version;
  std::string module;  ///< the file name of this copy's module ("" for the program)
};

/// The owner of this copy's files (the first module in load order with a note of this copy's hub ABI).
hub_owner find_hub_owner();

/// What the owner of `feature`'s file does when another copy joins: 1 when it writes the source (and has kept it),
/// 0 when not. Set by the feature when it installs, in the copy that owns.
void set_join_handler(std::uint32_t feature, int (*handler)(hookscope_hub_source*) noexcept) noexcept;

/// A join handler's work: keeps `source` in `sources` (1) when it names the file `path` (as the variable gives it:
/// `%p` and all; "" for the log), else nothing (0). Lock-free: the owner's writers walk the list from signal handlers.
int keep_source_of(std::atomic<hookscope_hub_source*>& sources, const std::string& path,
                   hookscope_hub_source* source) noexcept;

/// Remembers the working directory: at the start of this copy's installation (install_environment).
void remember_start_directory() noexcept;

/// The directory relative paths are resolved against: the working directory at the owner's start-up, for every
/// copy (a plugin loaded after the program's chdir() names the same files); "" when unknown.
std::string start_directory();

/// `path` for a copy whose owner is not the first module with hookscope: `-<module>` before its extension
/// (`/tmp/t.json` -> `/tmp/t-libplugin.so.json`), so that two versions never write one file.
std::string module_path(const std::string& path, const std::string& module);

/// Keeps this copy's module loaded for the rest of the process (RTLD_NODELETE): its exit and signal handlers, its
/// flushing thread and the functions it handed an owner stay callable after a dlclose(). Once; nothing for the
/// program itself.
void pin_this_module() noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
