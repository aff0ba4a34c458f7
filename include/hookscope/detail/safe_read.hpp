// hookscope/detail/safe_read.hpp — reading the process's own memory without ever faulting, for the pointees and C
// strings the user opted in to capture (hookscope::capture_pointee, `*name` in an annotation, capture_options::
// read_pointee). A raw pointer may hold any address (a GPU's, a freed page's, one past a buffer): the kernel copies
// the bytes and reports an address it cannot read as an error, where a plain read would end the program.
//
// The copy is process_vm_readv(2) on the process itself; where it is refused (a seccomp filter, a kernel without it),
// a write(2) of the bytes into a pipe, which fails with EFAULT on the same addresses. Compiled in the library
// (src/safe_read.cpp).
#pragma once

#include "hookscope/detail/config.hpp"

#include <cstddef>
#include <new>
#include <string>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// Copies the `n` bytes at `from` into `to`: true when every byte could be read, false (`to` then holds anything)
/// when one could not (unmapped, PROT_NONE, kernel space, a range past the end of the address space) or when no way
/// to read was available (no file descriptor left for the pipe): never a fault.
bool read_memory(void* to, const void* from, std::size_t n) noexcept;

/// Whether the `n` bytes at `from` can be read now (each read once through a small buffer, never kept).
bool memory_readable(const void* from, std::size_t n) noexcept;

/// read_memory through the pipe, whatever process_vm_readv would do: what read_memory falls back to (tests call it
/// directly to check that path).
bool read_memory_through_pipe(void* to, const void* from, std::size_t n) noexcept;

/// A C string read without faulting: its bytes up to the NUL, read in chunks that end at page boundaries (the
/// string's end may be the last byte of a mapping), at most `bound` + 1 bytes in all.
struct c_string_read {
  enum class status : unsigned char {
    read,        ///< `text` holds the bytes before the NUL (at most `bound` of them)
    unreadable,  ///< a byte before the NUL (or the first) could not be read
    too_large,   ///< no NUL within the first `bound` + 1 bytes: longer than `bound`
  };
  status result = status::unreadable;
  std::string text;
};
c_string_read read_c_string(const char* p, std::size_t bound);

/// The address a raw pointer holds, for the reads above (cv dropped: the bytes are only read).
template <class T>
const void* bytes_of(T* p) noexcept {
  return const_cast<const void*>(static_cast<const volatile void*>(p));
}

/// A fault-safe copy of a trivially copyable U (which begins its life in the bytes copied): on the stack up to a
/// page, on the heap above (a pointee can be large).
inline constexpr std::size_t max_stack_copy = 4096;
template <class U, bool Small = (sizeof(U) <= max_stack_copy)>
class safe_copy {
 public:
  /// Copies the U at `from`: false when its bytes could not all be read.
  bool read(const void* from) noexcept { return read_memory(storage_, from, sizeof(U)); }
  const U& get() const noexcept { return *std::launder(reinterpret_cast<const U*>(storage_)); }

 private:
  alignas(U) unsigned char storage_[sizeof(U)];
};
template <class U>
class safe_copy<U, false> {
 public:
  safe_copy() : storage_(::operator new (sizeof(U), std::align_val_t{alignof(U)})) {}
  safe_copy(const safe_copy&) = delete;
  safe_copy& operator=(const safe_copy&) = delete;
  ~safe_copy() { ::operator delete (storage_, std::align_val_t{alignof(U)}); }
  bool read(const void* from) noexcept { return read_memory(storage_, from, sizeof(U)); }
  const U& get() const noexcept { return *std::launder(static_cast<const U*>(storage_)); }

 private:
  void* storage_;
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
