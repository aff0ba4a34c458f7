// HOOKSCOPE_RECORD=<glob>=<path>[<options>][,...]: every call of a matching observable is recorded into a JSON
// Lines file, without any code change. Functions and processes may share a file; each signs its first line.
// Options, in brackets after the path and separated by ';': max_calls=N (record at most N calls of each matching
// function), every=N (record one call in N: the first, the N+1th, ...), N from 1 to 10^18; buffer=SIZE (each
// recording thread's buffer, 64K to 1G, rounded up to a power of two) and full=wait|drop (what a thread does when
// its buffer is full). `%p` in the path becomes the process id (record_file.hpp). A call that cannot be written is
// refused, said once per function.
//
// The calling thread copies a call into its buffers (record_buffers.hpp) in binary form (detail/record_encoding.hpp)
// when every value has one, and the writer (record_writer.cpp) formats it later; a call with another value takes the
// value tree (capture_args, call_pairing, to_record_line) on the calling thread.
#include "settings.hpp"

#if HOOKSCOPE_ENABLED

#include "lifecycle.hpp"
#include "record_buffers.hpp"
#include "recorded_function.hpp"

#include "../left_calls.hpp"
#include "../tick_clock.hpp"

#include "hookscope/callback_errors.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/exceptions.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

constexpr std::string_view variable = "HOOKSCOPE_RECORD";
constexpr std::string_view expected =
    "<glob>=<path>[max_calls=N;every=N;buffer=SIZE;full=wait|drop], N from 1 to 10^18, SIZE from 64K to 1G, options "
    "separated by ';'";
constexpr std::uint64_t max_bound = 1'000'000'000'000'000'000;
constexpr std::uint64_t min_buffer = std::uint64_t{64} << 10, max_buffer = std::uint64_t{1} << 30;

// "64K", "1M", "1G", "65536": a size in bytes within the bounds, rounded up to a power of two.
std::optional<std::size_t> buffer_size(std::string_view text) {
  std::uint64_t unit = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k': unit = std::uint64_t{1} << 10; break;
      case 'M':
      case 'm': unit = std::uint64_t{1} << 20; break;
      case 'G':
      case 'g': unit = std::uint64_t{1} << 30; break;
      default: break;
    }
    if (unit != 1) text.remove_suffix(1);
  }
  const std::optional<std::uint64_t> n = bounded_number(text, max_buffer);
  if (!n || *n > max_buffer / unit || *n * unit < min_buffer) return std::nullopt;
  std::size_t size = min_buffer;
  while (size < *n * unit) size *= 2;
  return size;
}

// "max_calls=10;every=2" (not empty: settings.hpp) into the target; false (and one message) for anything else.
bool parse_options(std::string_view options, const std::string& entry, record_target& target) {
  bool seen_max_calls = false, seen_every = false, seen_buffer = false, seen_full = false;
  auto refuse = [&](std::string_view problem) {
    report_setting(variable, entry, problem, expected, "the entry is ignored");
    return false;
  };
  if (options.find(',') != std::string_view::npos) return refuse("a ',' between options (they are separated by ';')");
  for (bool more = true; more;) {  // every part between ';', the one after a last ';' too
    const std::size_t semicolon = options.find(';');
    const std::string_view option = trim(options.substr(0, semicolon));
    more = semicolon != std::string_view::npos;
    options = more ? options.substr(semicolon + 1) : std::string_view{};
    if (option.empty()) return refuse("an empty option");
    const std::size_t equal = option.find('=');
    const std::string_view name = trim(option.substr(0, equal));
    // Messages built from a std::string: GCC 12 at -O3 reports a false -Wrestrict for `"literal" + std::string(...)`.
    bool* seen = name == "max_calls" ? &seen_max_calls
                 : name == "every"   ? &seen_every
                 : name == "buffer"  ? &seen_buffer
                 : name == "full"    ? &seen_full
                                     : nullptr;
    if (seen == nullptr) return refuse(std::string("unknown option '").append(option).append("'"));
    if (*seen) return refuse(std::string("option '").append(name).append("' given twice"));
    *seen = true;
    const std::string_view text = equal == std::string_view::npos ? std::string_view{} : trim(option.substr(equal + 1));
    const bool has_value = equal != std::string_view::npos;
    if (name == "full") {
      if (!has_value || (text != "wait" && text != "drop")) {
        return refuse(std::string("'").append(option).append("' is not full=wait or full=drop"));
      }
      target.full = text == "wait" ? full_policy::wait : full_policy::drop;
    } else if (name == "buffer") {
      const std::optional<std::size_t> size = has_value ? buffer_size(text) : std::nullopt;
      if (!size) {
        return refuse(std::string("'").append(option).append("' is not buffer=SIZE with SIZE from 64K to 1G"));
      }
      target.buffer = *size;
    } else {
      const std::optional<std::uint64_t> n = has_value ? bounded_number(text, max_bound) : std::nullopt;
      if (!n) {
        return refuse(std::string("'").append(option).append("' is not ").append(name).append("=N with N in bounds"));
      }
      (name == "max_calls" ? target.max_calls : target.every) = *n;
    }
  }
  return true;
}

std::vector<record_target> parse_record_targets(const char* text) {
  std::vector<record_target> targets;
  if (text == nullptr || trim(text).empty()) return targets;  // unset, or set to nothing: off
  for (const setting_entry& entry : parse_entries(text)) {
    auto refuse = [&](std::string_view problem) {
      report_setting(variable, entry.text, problem, expected, "the entry is ignored");
    };
    if (entry.text.empty()) {
      report_setting(variable, text, "an empty entry", expected, "the empty entry is ignored");
      continue;
    }
    if (!entry.problem.empty()) {
      refuse(entry.problem);
      continue;
    }
    if (!entry.path || entry.glob.empty() || entry.path->empty()) {
      refuse(!entry.path ? "no '='" : entry.glob.empty() ? "no glob" : "no path");
      continue;
    }
    record_target target;
    if (entry.options && !parse_options(*entry.options, entry.text, target)) continue;
    target.glob = entry.glob;
    target.path = absolute_path(*entry.path);  // a later chdir() does not move the file
    if (const std::optional<std::string> unusable = unusable_output(target.path)) {
      report_setting(variable, entry.text, *unusable, "a path to a file that can be written", "the entry is ignored");
      continue;
    }
    targets.push_back(std::move(target));
  }
  return targets;
}

// Whether this call is one to record: the sampling and the bound of the function's target. Async-signal-safe when
// `can_log` is false (a call made inside the recording path): the first call past the bound that can log says so.
bool take_call(recorded_function& f, bool can_log) {
  const std::uint64_t seen = f.calls_seen.fetch_add(1, std::memory_order_relaxed);
  if (seen % f.target->every != 0) return false;
  const std::uint64_t taken = f.calls_taken.fetch_add(1, std::memory_order_relaxed);
  if (taken < f.target->max_calls) return true;
  if (can_log && !f.reported_bound.load(std::memory_order_relaxed) && !f.reported_bound.exchange(true)) {
    log_line("hookscope: HOOKSCOPE_RECORD: '" + std::string(f.info->name) + "' reached max_calls=" +
             std::to_string(f.target->max_calls) + " in " + f.file->name() + "; its later calls are not recorded");
  }
  return false;
}

//=== the value tree's path: calls with a value that has no binary form ===//

void begin_on_tree(recorded_function& f, const erased_call& call) {
  value_fields args;
  try {
    args = call.capture_args();
    check_writable(args);  // refused now: one call that cannot be written never spoils the file
  } catch (const value_error& e) {
    (void)f.pairing.skip(call);
    refuse_call(f, e);
    return;
  } catch (const format_error& e) {
    (void)f.pairing.skip(call);
    refuse_call(f, e);
    return;
  }
  (void)f.pairing.begin(call, std::move(args));
}

// Captures the result and writes the line (to_record_line refuses what it cannot write with a value_error).
void finish_on_tree(recorded_function& f, const erased_call& call, call_record& record) {
  try {
    record.result = call.capture_return_value();
    write_record(f, record);
  } catch (const value_error& e) {
    refuse_call(f, e);
  } catch (const format_error& e) {
    refuse_call(f, e);
  }
}

//=== the binary path ===//

constexpr std::size_t header_bytes = sizeof(record_message);
constexpr std::size_t result_guess = 3 + 8 * 8;  // room tried first for the result: a tensor of rank 8

// The calling thread's buffers (a call made while the thread uses them, a signal handler's, never gets here:
// recording_path_scope).
record_thread* usable_buffers() noexcept {
  return this_record_thread(record_feature->buffer, record_feature->buffer / 4);
}

// Drops the entries of the calls noted as left (left_calls.hpp) since the thread last looked.
void drop_left_calls(record_thread& t) noexcept {
  if (left_calls_so_far() == t.left_seen) return;  // the common case: one load
  t.left_seen = read_left_calls(t.left_seen, [&](const void* call, std::uint64_t number) {
    t.calls.for_each([&](open_call& entry) {
      std::uint32_t open = open_call::open;
      if (entry.call == call && entry.left_since < number) {
        (void)entry.state.compare_exchange_strong(open, open_call::dropped, std::memory_order_acq_rel);
      }
    });
  });
}

// Copies the call's arguments into a new open entry; false when one has no binary form or there is no room.
bool begin_in_binary(recorded_function& f, const erased_call& call) {
  const call_ops& ops = call_access::ops(call);
  if (ops.result != nullptr && ops.result->encode == nullptr) return false;
  record_thread* t = usable_buffers();
  if (t == nullptr) return false;
  keep_flushing();  // the writer's thread (a load once it runs; never under a lock, see record_file::append_lines)
  drop_left_calls(*t);
  std::size_t room = 0;
  open_call* entry = t->calls.top_room(&room);
  std::size_t used = 0;
  const std::size_t given = call_access::given(call);
  bool encoded = entry != nullptr;
  try {
    for (std::size_t i = 0; i < given && encoded; ++i) {
      const auto encode = ops.args[i]->encode;
      const std::size_t n = encode == nullptr ? 0 : encode(call.arg_address(i), entry->args() + used, room - used);
      encoded = n != 0 && n <= room - used;
      used += n;
    }
  } catch (...) {
    encoded = false;  // a tensor_traits threw: the value tree's capture calls it again, and says what it does
  }
  if (encoded) {
    entry->state.store(open_call::open, std::memory_order_relaxed);
    entry->given = static_cast<std::uint32_t>(given);
    entry->function = &f;
    entry->call = call.call_id();
    entry->left_since = left_calls_so_far();
    entry->generation = record_generation.load(std::memory_order_relaxed);
    t->calls.push(entry, static_cast<std::uint32_t>(used));
    (void)take_start(call);
    call_access::recording(call) = entry;
  }
  return encoded;
}

// The record of an entry whose call ends on the value tree's path after all.
void finish_entry_on_tree(recorded_function& f, const erased_call& call, const open_call& entry) {
  call_record record;
  try {
    record.inputs.kwargs = decoded_args(reinterpret_cast<const std::byte*>(&entry + 1), entry.given, *f.info);
  } catch (const std::bad_alloc& e) {
    refuse_call(f, e);
    return;
  }
  finish_record(record, *f.info, call, tick_clock::now());
  finish_on_tree(f, call, record);
}

// Room for `size` bytes in the thread's ring: waits for the writer under full=wait (or writes the buffers itself when
// no background thread runs), null when the call is dropped (full=drop, or the files were taken over by a fatal
// signal's handler).
std::byte* room_for(recorded_function& f, record_thread& t, std::size_t size) {
  for (;;) {
    if (std::byte* room = t.ring.reserve(size)) return room;
    if (record_sealed()) return nullptr;
    if (f.target->full == full_policy::drop) {
      wake_flusher();
      f.buffer_full.count.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    if (writes_withheld()) return nullptr;  // after the exit's last word: the process ends under this call
    if (!flushing() || exiting()) {
      drain_buffers();
    } else {
      wake_flusher();
      t.ring.wait_for_room(10'000'000);  // woken when the writer frees room; 10 ms: exit() may have begun meanwhile
    }
  }
}

// Copies the finished call (its entry's arguments, its result) into this thread's ring.
void finish_in_binary(recorded_function& f, const erased_call& call, open_call& entry) {
  if (entry.generation != record_generation.load(std::memory_order_relaxed)) {
    entry.state.store(open_call::dropped, std::memory_order_release);  // begun before a fork(): the parent's
    return;
  }
  std::uint32_t open = open_call::open;
  if (!entry.state.compare_exchange_strong(open, open_call::claimed, std::memory_order_acq_rel)) return;  // left
  const std::int64_t end = tick_clock::now();
  const call_ops& ops = call_access::ops(call);
  const void* result = call_access::result(call);
  const bool has_result = ops.result != nullptr && result != nullptr && !call.exception();
  record_thread* t = usable_buffers();
  bool written = false;
  if (t != nullptr) {
    try {
      std::size_t result_room = has_result ? result_guess : 0;
      for (int attempt = 0; attempt < 2 && !written; ++attempt) {
        const std::size_t size = round_up8(header_bytes + entry.args_bytes + result_room);
        if (size > t->ring.capacity() / 2) break;  // too large for the ring: the value tree's path
        std::byte* room = room_for(f, *t, size);
        if (room == nullptr) {
          written = true;  // dropped (counted) or sealed
          break;
        }
        std::size_t result_bytes = 0;
        if (has_result) {
          result_bytes = ops.result->encode(result, room + header_bytes + entry.args_bytes, result_room);
          if (result_bytes == 0) break;  // no binary form for this value: the value tree's path
          if (result_bytes > result_room) {
            result_room = result_bytes;
            continue;
          }
        }
        auto* m = reinterpret_cast<record_message*>(room);
        m->size = static_cast<std::uint32_t>(round_up8(header_bytes + entry.args_bytes + result_bytes));
        m->kind = record_message::call;
        m->threw = static_cast<bool>(call.exception());
        m->has_result = has_result;
        m->given = entry.given;
        m->args_bytes = entry.args_bytes;
        m->result_bytes = static_cast<std::uint32_t>(result_bytes);
        m->function = &f;
        const std::int64_t ticks = ticks_since_start(call, end);
        m->latency_ticks = ticks < 0 ? 0 : ticks;
        m->end_ticks = end;
        std::memcpy(room + header_bytes, reinterpret_cast<const std::byte*>(&entry + 1), entry.args_bytes);
        const std::size_t before = t->ring.used();
        if (!record_sealed()) t->ring.commit(m->size);
        written = true;
        const std::size_t half = t->ring.capacity() / 2;
        if (before < half && before + m->size >= half) wake_flusher();
      }
    } catch (...) {
      written = false;  // a tensor_traits threw: the value tree's path says what it does
    }
  }
  if (!written) finish_entry_on_tree(f, call, entry);
  entry.state.store(open_call::done, std::memory_order_release);
  if (t != nullptr) t->calls.pop_finished();
  // Without the background thread (exiting, or in a forked child) calls write what is due as they come.
  // After the exit's last word the buffers are the exiting thread's alone (writes_withheld).
  if (written && (!flushing() || exiting()) && !writes_withheld()) drain_buffers();
}

// A call made inside the recording path (a signal handler that interrupted it on this thread, or code the path runs)
// is not recorded: below it the path may hold a lock, have a buffer half changed or be inside malloc. It is counted
// (one atomic addition, async-signal-safe) and the writer notes the count, reason "reentered"; its post callback finds
// the path too (the same thread, the same frames below) and does nothing.
void record_pre(recorded_function& f, const erased_call& call) {
  if (record_abandoned()) return;
  const recording_path_scope path;
  if (path.reentered()) {
    if (!f.sampled || take_call(f, false)) f.reentered.count.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // A call left out (sampled out, over the bound, refused) must leave no entry at its address for its post
  // callback to find: a call refused earlier at the same address may have left one.
  if (f.sampled && !take_call(f, true)) {
    (void)f.pairing.skip(call);
    return;
  }
  if (f.parts.usable && begin_in_binary(f, call)) return;
  begin_on_tree(f, call);
}

void record_post(recorded_function& f, const erased_call& call) {
  if (record_abandoned()) return;
  const recording_path_scope path;
  void*& recording = call_access::recording(call);
  if (path.reentered()) {
    // Only a call begun outside the path can have an entry: a fiber's, resumed here. Its entry is given up (its
    // thread pops it) and counted; an entry of the value tree's pairing stays until a call begins at its address.
    auto* entry = static_cast<open_call*>(recording);
    recording = nullptr;
    std::uint32_t open = open_call::open;
    if (entry != nullptr && entry->state.compare_exchange_strong(open, open_call::dropped, std::memory_order_acq_rel)) {
      f.reentered.count.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  if (recording != nullptr) {
    auto* entry = static_cast<open_call*>(recording);
    recording = nullptr;
    finish_in_binary(f, call, *entry);
    return;
  }
  std::optional<call_record> record = f.pairing.end(call);
  if (record) finish_on_tree(f, call, *record);
}

void record_if_matching(const function_info& info) noexcept {
  if (record_abandoned()) return;
  const recording_path_scope path;  // the function list's and the files' locks
  try {
    for (const record_target& target : record_feature->targets) {
      if (!matches_any({target.glob}, info.name)) continue;
      recorded_function* f = nullptr;
      {
        const std::lock_guard lock(record_feature->mutex);
        record_file& file = record_file::open(target.path);
        if (target.full == full_policy::drop) {
          file.wait_at_most_for_readers();
        } else {
          file.wait_for_readers();
        }
        f = record_feature->functions.emplace_back(std::make_unique<recorded_function>(info, target, file)).get();
      }
      (void)info.pre().add_global([f](const erased_call& call) { record_pre(*f, call); }).release();
      (void)info.post().add_global([f](const erased_call& call) { record_post(*f, call); }).release();
      return;  // the first matching target records the function
    }
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_RECORD: could not attach the recorder (out of memory)");
  }
}

}  // namespace

record_state* record_feature = nullptr;
constinit thread_local std::atomic<bool> in_recording_path{false};

// A call whose arguments or result cannot be captured (a value_error: a tensor's negative dimension) is not
// written; said once per function.
void refuse_call(recorded_function& f, const std::exception& e) noexcept {
  if (f.reported_refused.exchange(true)) return;
  try {
    log_line("hookscope: HOOKSCOPE_RECORD: '" + std::string(f.info->name) + "': a call is not recorded: " +
             std::string(message_clause(e)) + " (later such calls of this function are left out without a message)");
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_RECORD: a call is not recorded (a value cannot be captured)");
  }
}

// The record's line, signed when it is the function's first in this process (to_record_line refuses what it
// cannot write with a value_error).
void write_record(recorded_function& f, call_record& record) {
  drain_buffers();  // the calls copied in binary form that ended before this one come first
  if (!f.signature_written.load(std::memory_order_acquire)) {
    const std::lock_guard lock(f.first_line_mutex);
    if (!f.signature_written.load(std::memory_order_relaxed)) {
      record.parameters = parameters_of(*f.info);
      f.file->append(to_record_line(record));
      f.signature_written.store(true, std::memory_order_release);
      return;
    }
  }
  f.file->append(to_record_line(record));
}

void install_record() noexcept {
  try {
    auto targets = parse_record_targets(std::getenv("HOOKSCOPE_RECORD"));
    if (targets.empty()) return;  // the common case: no hook, no thread, nothing allocated
    std::size_t buffer = 0;
    for (const record_target& t : targets) buffer = std::max(buffer, t.buffer);
    record_feature = new record_state{std::move(targets), buffer, {}, {}};
    install_record_writer();
    add_registration_hook(&record_if_matching);
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_RECORD: could not read the variable (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
