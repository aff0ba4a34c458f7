// Shared by bench/read.bench.cpp and bench/read_floor.cpp: a file of records read line by line in blocks, as the
// record reader reads it, each line handed over in place with padding after it (what simdjson needs to parse in
// place); and the simdjson floor's entry point.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace read_floor {

constexpr std::size_t block_bytes = std::size_t{1} << 20;
constexpr std::size_t padding = 64;  // simdjson's SIMDJSON_PADDING: bytes readable after a line's end

struct file_closer {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Calls f(line, length, capacity) for every non-empty line of `path` (without its newline), read in blocks; at least
// `padding` readable bytes follow each line (capacity counts them), so that a padded parser reads it in place.
template <class F>
inline std::size_t for_each_line(const std::string& path, F&& f) {
  const std::unique_ptr<std::FILE, file_closer> in(std::fopen(path.c_str(), "rb"));
  if (!in) throw std::system_error(errno, std::generic_category(), path);
  std::vector<char> buffer(block_bytes + padding);
  std::size_t held = 0;
  std::size_t lines = 0;
  for (;;) {
    const std::size_t got = std::fread(buffer.data() + held, 1, buffer.size() - padding - held, in.get());
    held += got;
    std::size_t start = 0;
    while (start < held) {
      const void* newline = std::memchr(buffer.data() + start, '\n', held - start);
      if (newline == nullptr) break;
      const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - (buffer.data() + start));
      if (length != 0) {
        f(buffer.data() + start, length, buffer.size() - start);
        ++lines;
      }
      start += length + 1;
    }
    if (got == 0) {
      if (held > start) {  // the last line, without a newline
        f(buffer.data() + start, held - start, buffer.size() - start);
        ++lines;
      }
      return lines;
    }
    std::memmove(buffer.data(), buffer.data() + start, held - start);
    held -= start;
    if (held == buffer.size() - padding) buffer.resize(buffer.size() * 2);  // a line longer than the buffer
  }
}

/// What a floor reader read: its records, and the sum of every number of every "shape" array.
struct result {
  std::size_t records = 0;
  std::int64_t shape_sum = 0;
};

/// simdjson's on-demand parser over every line of the file at `path`, summing the shape numbers (bench/read_floor.cpp).
result simdjson_read(const std::string& path);

}  // namespace read_floor
