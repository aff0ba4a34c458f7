// The file `summarize -o` writes (summary_file.hpp).
#include "summary_file.hpp"

#include "options.hpp"

#include <cerrno>
#include <filesystem>
#include <iostream>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hookscope_shapes {
namespace {

std::string errno_text() { return std::generic_category().message(errno != 0 ? errno : EIO); }

// Writes all of `text` to `fd`; false on an error (errno says which).
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The null device is written to as it is: opened, never replaced (as root, a rename onto /dev/null would replace
// the device with a regular file for every process of the machine).
void write_in_place(const std::string& output, std::string_view text) {
  errno = 0;
  const int fd = ::open(output.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw input_error(output + ": cannot write: " + errno_text());
  const bool written = write_all(fd, text);
  const int saved = errno;
  if (::close(fd) != 0 || !written) {
    errno = written ? errno : saved;
    throw input_error(output + ": cannot write: " + errno_text());
  }
}

// A regular file (or none yet) is replaced whole: the summary goes to a temporary file of an unpredictable name
// (O_EXCL) beside the destination, with the destination's mode, then is renamed onto it, so that a summary is
// whole or absent, never cut short, and a symbolic link keeps pointing where it did.
void write_replacing(const std::string& output, std::string_view text, const struct stat* existing) {
  std::error_code ec;
  const std::filesystem::path target =
      existing ? std::filesystem::canonical(output, ec) : std::filesystem::path(output);
  if (ec) throw input_error(output + ": cannot write: " + ec.message());
  // Appended, not `"." + name`: GCC 12 at -O3 reports a false -Wrestrict for that form.
  // The destination's name, cut so that the temporary's (8 bytes longer) fits where the destination's does
  // (NAME_MAX, 255 bytes on Linux file systems).
  std::string name(1, '.');
  name.append(target.filename().string().substr(0, 200)).append(".XXXXXX");
  std::string temporary = (target.parent_path() / name).string();
  errno = 0;
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) throw input_error(output + ": cannot write: " + errno_text());
  mode_t mode = 0;
  if (existing) {
    mode = existing->st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  const bool written = ::fchmod(fd, mode) == 0 && write_all(fd, text) && ::fsync(fd) == 0;
  const int saved = errno;
  if (::close(fd) != 0 || !written || ::rename(temporary.c_str(), target.c_str()) != 0) {
    const int why = written ? errno : saved;
    ::unlink(temporary.c_str());
    errno = why;
    throw input_error(output + ": cannot write: " + errno_text());
  }
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// What -o names when it is not a regular file, a directory or nothing: a sentence for what is refused.
std::string_view special_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISCHR(mode)) return "a device";
  return "not a regular file";
}

}  // namespace

// The command's standard output (-, or a path to it such as /dev/stdout) is written as -o - writes; the null
// device in place; a regular file (or none yet, or a symbolic link to either) replaced whole. A FIFO, a socket or
// another device is refused: the summary is one document to keep, not a stream (-o - and a redirection stream it).
void write_summary_file(const std::string& output, std::string_view text, const std::vector<std::string>& inputs) {
  struct stat st {};
  errno = 0;
  if (::stat(output.c_str(), &st) != 0) {  // none yet; a dangling symbolic link or a loop of them is refused
    const int why = errno;
    struct stat link {};
    if (why == ELOOP) throw input_error(output + ": cannot write: a loop of symbolic links");
    const bool now_there = why == ENOENT && ::lstat(output.c_str(), &link) == 0;
    if (now_there && S_ISLNK(link.st_mode)) {
      throw input_error(output + ": cannot write: a symbolic link to a file that does not exist");
    }
    if (why != ENOENT) throw input_error(output + ": cannot write: " + errno_text());
    // Another writer of the same output (a concurrent summarize) may have put its file there since: that file is
    // what is replaced then.
    if (!now_there) return write_replacing(output, text, nullptr);
    st = link;
  }
  if (S_ISDIR(st.st_mode)) throw input_error(output + ": cannot write: it is a directory");
  for (const std::string& input : inputs) {
    struct stat in {};
    if (input != "-" && S_ISREG(st.st_mode) && ::stat(input.c_str(), &in) == 0 && same_file(in, st)) {
      throw input_error(output + ": cannot write: it is an input of this summary (give another -o)");
    }
  }
  if (struct stat out{}; ::fstat(STDOUT_FILENO, &out) == 0 && same_file(st, out)) {
    std::cout << text;  // a redirection appending to a file keeps appending
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    struct stat null {};
    if (S_ISCHR(st.st_mode) && ::stat("/dev/null", &null) == 0 && st.st_rdev == null.st_rdev) {
      return write_in_place(output, text);
    }
    throw input_error(output + ": cannot write: it is " + std::string(special_kind(st.st_mode)) +
                      "; summarize writes a regular file (or standard output: -o - and a redirection)");
  }
  write_replacing(output, text, &st);
}

}  // namespace hookscope_shapes
