// The record reader: JSON Lines records to call_record, with errors naming the file, the line and the JSON path;
// record_error. (The writer of one record line is record_line_writer.cpp.)
//
// Values are read by value_json_reader.cpp's reader of parsed documents (json_reader.hpp), the one value_from_json uses.
//
// Speed matters (the command reads millions of records): one Boost.JSON parser is reused from line to line, each
// line's document lives in a monotonic buffer kept by the reader; JSON paths for errors are built only on failure,
// from a chain of stack frames.
#include "hookscope/records.hpp"
#include "hookscope/exceptions.hpp"

#include "json_writer.hpp"

#include "json_document.hpp"
#include "json_reader.hpp"
#include "record_parts.hpp"
#include "record_templates.hpp"
#include "shown_name.hpp"
#include "tensor_contents.hpp"

#include <boost/json.hpp>  // compiled into the library by src/boost_json.cpp

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <istream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace json = boost::json;

record_error::record_error(std::string source, std::size_t line, const std::string& message)
    : format_error(source + ":" + std::to_string(line) + ": " + message), source_(std::move(source)), line_(line) {}

using detail::fail_at;
using detail::first_repeated_name;
using detail::json_kind_of;
using detail::json_path;
using detail::json_quoted;
using detail::read_json_fields_into;
using detail::read_json_integer;
using detail::read_json_value;

namespace {

//=== records ===//

void check_unique_names(const value_fields& kwargs, const json_path& at) {
  if (const auto repeat = first_repeated_name(kwargs)) {
    fail_at(at[*repeat][0], "duplicate keyword argument " + json_quoted(kwargs[*repeat].first));
  }
}

}  // namespace

namespace detail {

const json::value& json_required(const json::object& o, std::string_view key, const json_path& at) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) fail_at(at, "missing \"" + std::string(key) + "\"");
  return *v;
}

std::string_view read_json_string(const json::value& j, const json_path& at) {
  if (!j.is_string()) fail_at(at, "expected a string, found " + json_kind_of(j));
  return {j.get_string().data(), j.get_string().size()};
}

}  // namespace detail

namespace {

using detail::json_required;
using detail::read_json_string;

parameter_kind read_kind(const json::value& j, const json_path& at) {
  const std::string_view kind = read_json_string(j, at);
  if (kind == "positional_or_keyword") return parameter_kind::positional_or_keyword;
  if (kind == "var_positional") return parameter_kind::var_positional;
  if (kind == "var_keyword") return parameter_kind::var_keyword;
  fail_at(at, "unknown parameter kind " + json_quoted(kind) +
                  " (expected positional_or_keyword, var_positional or var_keyword)");
}

parameter read_parameter(const json::value& j, const json_path& at) {
  const json::object* o = j.if_object();
  if (o == nullptr) fail_at(at, "expected a parameter {\"name\", \"kind\", \"default\"}, found " + json_kind_of(j));
  parameter p;
  p.name = read_json_string(json_required(*o, "name", at), at / "name");
  if (p.name.empty()) fail_at(at / "name", "empty parameter name");
  if (const json::value* kind = o->if_contains("kind")) p.kind = read_kind(*kind, at / "kind");
  if (const json::value* def = o->if_contains("default")) p.default_value = read_json_value(*def, at / "default");
  return p;
}

}  // namespace

namespace detail {

parameter_list read_json_signature(const json::value& j, const json_path& at) {
  if (!j.is_array()) fail_at(at, "expected an array of parameters, found " + json_kind_of(j));
  parameter_list sig;
  sig.reserve(j.get_array().size());
  for (std::size_t i = 0; i < j.get_array().size(); ++i) {
    parameter p = read_parameter(j.get_array()[i], at[i]);
    for (const parameter& before : sig) {
      if (before.name == p.name) fail_at(at[i] / "name", "duplicate parameter " + json_quoted(p.name));
      if (before.kind == p.kind && p.kind != parameter_kind::positional_or_keyword) {
        fail_at(at[i] / "kind",
                "a second " + std::string(p.kind == parameter_kind::var_positional ? "var_positional" : "var_keyword") +
                    " parameter");
      }
    }
    sig.push_back(std::move(p));
  }
  return sig;
}

void read_json_inputs(const json::object& o, call_inputs& inputs, const json_path& root) {
  const json::value& args = json_required(o, "args", root);
  if (!args.is_array()) fail_at(root / "args", "expected an array of values, found " + json_kind_of(args));
  inputs.args.clear();
  inputs.args.reserve(args.get_array().size());
  for (std::size_t i = 0; i < args.get_array().size(); ++i) {
    inputs.args.push_back(read_json_value(args.get_array()[i], (root / "args")[i]));
    // The parser's depth limit leaves a positional argument one level more than a keyword argument (no pair around
    // it): one limit for both, what the writers write and value_from_json reads.
    if (json_levels(inputs.args.back()) > max_value_json_levels) {
      fail_at((root / "args")[i], "the value nests deeper than " + std::to_string(max_value_json_levels) +
                                      " JSON levels, the most a value may");
    }
  }
  const json::value& kwargs = json_required(o, "kwargs", root);
  read_json_fields_into(inputs.kwargs, kwargs, root / "kwargs", detail::field_names::parameters);
  check_unique_names(inputs.kwargs, root / "kwargs");
}

}  // namespace detail

namespace {

using detail::read_json_inputs;
using detail::read_json_signature;

// `function_required`: a record line names its function; a call given alone (parse_call) need not.
void read_record(const json::value& j, call_record& out, bool function_required) {
  const json_path root;
  const json::object* o = j.if_object();
  if (o == nullptr)
    fail_at(root, "expected a record {\"function\", \"args\", \"kwargs\", ...}, found " + json_kind_of(j));
  out.function.clear();
  if (function_required || o->contains("function")) {
    out.function = read_json_string(json_required(*o, "function", root), root / "function");
    if (out.function.empty()) fail_at(root / "function", "empty function name");
  }
  out.parameters.reset();
  if (const json::value* sig = o->if_contains("signature"))
    out.parameters = read_json_signature(*sig, root / "signature");
  read_json_inputs(*o, out.inputs, root);
  out.result.reset();
  if (const json::value* result = o->if_contains("result")) out.result = read_json_value(*result, root / "result");
  out.threw = false;
  if (const json::value* threw = o->if_contains("threw")) {
    if (!threw->is_bool()) fail_at(root / "threw", "expected true or false, found " + json_kind_of(*threw));
    out.threw = threw->get_bool();
  }
  out.latency_ns.reset();
  if (const json::value* latency = o->if_contains("latency_ns")) {
    const std::int64_t ns = read_json_integer(*latency, root / "latency_ns");
    if (ns < 0) fail_at(root / "latency_ns", "negative latency " + std::to_string(ns));
    out.latency_ns = ns;
  }
}

}  // namespace

//=== notes ===//

namespace detail {

/// A note line read: `count` records of `function` that its writer dropped, for `reason`.
struct dropped_note {
  std::string function;
  std::uint64_t count = 0;
  std::string reason;
};

}  // namespace detail

namespace {

// A line whose object holds "dropped" (docs/record_format.md, "Notes"): exactly "function" and "dropped", which holds
// exactly "count" and "reason". Strict, unlike a record: a note is read only to be counted, and a key it does not
// know may change what it counts.
void read_note(const json::object& o, detail::dropped_note& note) {
  const json_path root;
  for (const auto& member : o) {
    const std::string_view key(member.key().data(), member.key().size());
    if (key != "function" && key != "dropped") {
      fail_at(root / key,
              "a note holds exactly \"function\" and \"dropped\" (a line with \"dropped\" is a note, not a "
              "record)");
    }
  }
  note.function = read_json_string(json_required(o, "function", root), root / "function");
  if (note.function.empty()) fail_at(root / "function", "empty function name");
  const json_path at = root / "dropped";
  const json::value& dropped_value = *o.if_contains("dropped");
  const json::object* dropped = dropped_value.if_object();
  if (dropped == nullptr)
    fail_at(at, "expected an object {\"count\", \"reason\"}, found " + json_kind_of(dropped_value));
  for (const auto& member : *dropped) {
    const std::string_view key(member.key().data(), member.key().size());
    if (key != "count" && key != "reason") fail_at(at / key, "\"dropped\" holds exactly \"count\" and \"reason\"");
  }
  note.count = detail::read_json_count(json_required(*dropped, "count", at), at / "count");
  note.reason = read_json_string(json_required(*dropped, "reason", at), at / "reason");
  if (note.reason.empty()) fail_at(at / "reason", "empty reason");
}

bool is_note(const json::value& j) { return j.is_object() && j.get_object().contains("dropped"); }

}  // namespace

//=== the parser kept from line to line ===//

namespace detail {

/// The last line of a stream that is not JSON and has no newline: what a writer that was stopped mid-line leaves.
struct cut_last_line {
  std::string what;
};

class record_parser {
 public:
  record_parser() : parser_(options()) {}

  /// Parses the record line `line` into `out`, or into `note` when it is a note (`out` left as it was): true for a
  /// record. `unterminated`: the stream ended without a newline after it.
  bool parse_line(std::string_view line, call_record& out, dropped_note& note, bool unterminated) {
    bool record = true;
    with_json(line, unterminated, [&](const json::value& j) {
      record = !is_note(j);
      if (record) {
        read_record(j, out, true);
      } else {
        read_note(j.get_object(), note);
      }
    });
    return record;
  }

  /// A call given alone: a record without "function" (and no note: "dropped" is a key it does not know).
  void parse_call(std::string_view text, call_record& out) {
    with_json(text, false, [&](const json::value& j) { read_record(j, out, false); });
  }

  /// A signature alone, as a record's "signature" reads.
  parameter_list parse_signature(std::string_view text) {
    parameter_list out;
    with_json(text, false, [&](const json::value& j) { out = read_json_signature(j, {}); });
    return out;
  }

 private:
  // Calls `use` with the document of `line`, which lives only as long as the call.
  template <class F>
  void with_json(std::string_view line, bool unterminated, F&& use) {
    // A fresh resource per line over the same first block: a typical line allocates nothing, a long one
    // allocates its own blocks and frees them at once. (Reusing one resource through release() would let its
    // next block size double with every long line until allocation fails.)
    json::monotonic_resource memory(first_block_, sizeof first_block_);
    parser_.reset(&memory);
    boost::system::error_code ec;
    const std::size_t used = parser_.write(line, ec);
    const bool repeated_key = parser_.repeated_key();
    if (ec || repeated_key) parser_.reset();  // drops the document while its memory is alive
    if (ec) {
      const std::string what = ec.message() + " at column " + std::to_string(used + 1);
      if (unterminated) throw cut_last_line{"the last line is cut (no newline at the end, and not JSON: " + what + ")"};
      throw format_error("not JSON: " + what);
    }
    if (repeated_key) throw_repeated_key(line);
    use(parser_.release());
  }

  // Which key an object gives twice, and where: read again only when the parse found one.
  [[noreturn]] static void throw_repeated_key(std::string_view line) {
    const auto repeated = detail::json_key_checker().find(line);
    if (!repeated) throw format_error("$: a key given twice");
    if (repeated->depth == 1) throw format_error("$: duplicate key " + repeated->key + " in the record");
    throw format_error("duplicate key " + repeated->key + " in the object that ends at column " +
                       std::to_string(repeated->column));
  }

  static json::parse_options options() {
    json::parse_options o;
    // Values nest deeper than Boost's default 32 allows; the readers recurse this deep at most.
    o.max_depth = detail::max_value_json_levels + 3;  // the record, the kwargs array, a pair
    static_assert(detail::max_value_json_levels + 3 == 128);
    return o;
  }

  alignas(std::max_align_t) unsigned char first_block_[16 * 1024];
  detail::json_document_parser parser_;

 public:
  call_record parsed;          // a record the full parse read (record_reader's)
  record_templates templates;  // the structures met, for the lines that repeat one
};

}  // namespace detail

call_record parse_record(std::string_view line) {
  detail::record_parser parser;
  call_record record;
  detail::dropped_note note;
  if (!parser.parse_line(line, record, note, false)) {
    throw format_error("$: a note of records its writer dropped, not a record (a record_reader skips it)");
  }
  return record;
}

call_record parse_call(std::string_view text) {
  detail::record_parser parser;
  call_record record;
  parser.parse_call(text, record);
  return record;
}

parameter_list parse_signature(std::string_view text) {
  detail::record_parser parser;
  return parser.parse_signature(text);
}

//=== record_reader ===//

record_reader::record_reader(std::istream& in, std::string source)
    : in_(&in), source_(std::move(source)), parser_(std::make_unique<detail::record_parser>()) {}

record_reader::~record_reader() = default;
record_reader::record_reader(record_reader&&) noexcept = default;
record_reader& record_reader::operator=(record_reader&&) noexcept = default;

void record_reader::open(std::istream& in, std::string source) {
  in_ = &in;
  source_ = std::move(source);
  line_ = 0;
  begin_ = end_ = 0;
  ended_ = false;
  failed_ = false;
}

// After a long line: the memory it took goes back; the bytes read after it stay (the next block is allocated at its
// usual size).
void record_reader::release_buffer() {
  std::string rest(buffer_, begin_, end_ - begin_);
  buffer_ = std::move(rest);
  begin_ = 0;
  end_ = buffer_.size();
}

void record_reader::fail(const std::string& message) const { throw record_error(source_, line_, message); }

namespace {
bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; });
}

constexpr std::string_view byte_order_mark = "\xEF\xBB\xBF";

// Lines are read from blocks of this size (larger while a line is longer): a line costs a memchr, not a copy.
constexpr std::size_t block_bytes = std::size_t{1} << 18;

// A byte that JSON text never holds: a control character other than tab, newline and CR (strings escape them), or
// a byte UTF-8 never uses.
bool never_in_json(unsigned char c) {
  return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0xc0 || c == 0xc1 || c >= 0xf5;
}

// Checks the bytes of a line too long to read, as they come, for what shows it cannot be a record: a byte JSON text
// never holds, or a first byte (after blanks) other than '{'.
class long_line_check {
 public:
  // The problem met in `bytes`, the next bytes of the line, if any.
  std::optional<std::string> next(std::string_view bytes) {
    for (const char c : bytes) {
      ++column_;
      const auto byte = static_cast<unsigned char>(c);
      if (never_in_json(byte)) {
        return "the line holds the byte " + hex(byte) + " at column " + std::to_string(column_) +
               ", which JSON text never holds";
      }
      if (!started_ && c != ' ' && c != '\t') {
        started_ = true;
        if (c != '{') return "the line starts with the byte " + hex(byte) + ", not the '{' of a record";
      }
    }
    return std::nullopt;
  }

 private:
  static std::string hex(unsigned char byte) {
    static constexpr char digits[] = "0123456789abcdef";
    return std::string("0x") + digits[byte >> 4] + digits[byte & 0xf];
  }
  std::uint64_t column_ = 0;
  bool started_ = false;
};

}  // namespace

// The next line in buffer_, read by blocks (at most `cap` bytes of it: a longer line is `too_long`, its start given and
// the rest still in the stream); `unterminated` when it ends at the end of the stream rather than at a newline. A
// stream that fails mid-line gives `end`, the partial line dropped (next() then reports the failure).
std::string_view record_reader::next_line(line_status& status, bool& unterminated, std::size_t cap) {
  for (;;) {
    const char* from = buffer_.data() + begin_;
    const std::size_t held = end_ - begin_;
    if (const void* newline = held == 0 ? nullptr : std::memchr(from, '\n', held)) {
      const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - from);
      begin_ += length + 1;
      status = line_status::line;
      unterminated = false;
      return {from, length};
    }
    if (failed_) {  // the lines read before the failure were given; the one it cut is dropped, next() says why
      begin_ = end_;
      status = line_status::end;
      return {};
    }
    if (ended_ || held > cap) {
      begin_ = end_;
      status = held == 0 ? line_status::end : held > cap ? line_status::too_long : line_status::line;
      unterminated = true;
      return {from, held};
    }
    std::memmove(buffer_.data(), from, held);  // the line so far to the front, and more bytes after it
    begin_ = 0;
    end_ = held;
    if (buffer_.size() < block_bytes || buffer_.size() - end_ < 2) {
      // Doubled while a line fills it, up to what the longest line takes (cap + 1 bytes shows a line is longer);
      // saturating: a limit of SIZE_MAX means none.
      const std::size_t most = std::max(block_bytes, cap > buffer_.max_size() - 2 ? buffer_.max_size() : cap + 2);
      const std::size_t doubled = buffer_.size() > buffer_.max_size() / 2 ? buffer_.max_size() : 2 * buffer_.size();
      buffer_.resize(std::min(std::max(block_bytes, doubled), most));
    }
    read_more();
  }
}

// Reads what the stream holds without waiting for more (a file: up to a block), or else waits for the rest of one
// line, as getline would: records that come through a pipe are read as they come. A failing stream (bad) keeps what
// it gave before failing.
void record_reader::read_more() {
  char* to = buffer_.data() + end_;
  const auto room = static_cast<std::streamsize>(buffer_.size() - end_);
  std::streamsize got = in_->readsome(to, room);
  if (got == 0 && in_->good()) {
    in_->getline(to, room);
    got = in_->gcount();
    if (got > 0 && !in_->fail() && !in_->eof()) {
      to[got - 1] = '\n';  // getline took the newline and stored a NUL in its place
    } else if (in_->fail() && !in_->eof() && !in_->bad()) {
      in_->clear(in_->rdstate() & ~std::ios::failbit);  // the room is full: the line goes on
    }
  }
  end_ += static_cast<std::size_t>(got);
  if (in_->bad()) failed_ = true;
  if (in_->bad() || in_->eof() || (got == 0 && !in_->good())) ended_ = true;
}

// `start`, the first bytes of a line, is longer than the limit: `whole`, it is the whole line; else the rest is still
// in the stream. It is skipped with a warning naming its length, unless it cannot be a record (an error: a binary
// stream, /dev/zero).
void record_reader::skip_long_line(std::string_view start, bool whole) {
  const bool marked = line_ == 1 && start.starts_with(byte_order_mark);
  if (marked) start.remove_prefix(byte_order_mark.size());
  long_line_check check;
  std::uint64_t length = start.size();
  char last = start.empty() ? '\0' : start.back();
  auto fail_if = [&](const std::optional<std::string>& problem) {
    if (!problem) return;
    release_buffer();
    fail(*problem + ", and is longer than " + std::to_string(max_line_bytes_) +
         " bytes, the reader's limit: not a record file");
  };
  fail_if(check.next(start));
  if (!whole) {  // read and dropped in chunks: memory stays bounded however long the line is
    char chunk[1 << 16];
    for (;;) {
      in_->getline(chunk, sizeof chunk);
      const auto got = static_cast<std::size_t>(in_->gcount());
      if (in_->bad()) break;
      const bool at_newline = !in_->fail() && !in_->eof();
      const std::string_view part(chunk, at_newline ? got - 1 : got);
      fail_if(check.next(part));
      length += part.size();
      if (!part.empty()) last = part.back();
      if (at_newline || in_->eof()) break;
      in_->clear(in_->rdstate() & ~std::ios::failbit);  // the chunk is full: the line goes on
    }
  }
  if (last == '\r') --length;  // a CR before the newline is no part of the record
  release_buffer();
  warnings_.push_back(source_ + ":" + std::to_string(line_) + ": skipped a line of " + std::to_string(length) +
                      " bytes, longer than the reader's limit of " + std::to_string(max_line_bytes_) +
                      " (hookscope::max_record_line_bytes, which hookscope's writers keep to)");
}

bool record_reader::next(call_record& out) {
  record_view view;
  if (!next(view)) return false;
  if (view.record == &parser_->parsed) {
    std::swap(out, parser_->parsed);
  } else {
    out = *view.record;
  }
  return true;
}

bool record_reader::next(record_view& view) {
  call_record& out = parser_->parsed;
  for (;;) {
    // Room beside the record for a byte-order mark and a CR, which are no part of it.
    const std::size_t cap = std::max(max_line_bytes_, max_line_bytes_ + byte_order_mark.size() + 1);
    line_status status = line_status::end;
    bool unterminated = false;
    const std::string_view line = next_line(status, unterminated, cap);
    if (status == line_status::end) break;
    ++line_;
    if (status == line_status::too_long) {
      skip_long_line(line, false);
      continue;
    }
    std::string_view text = line;
    // A byte-order mark some editors (Windows Notepad, PowerShell's Out-File) put before a file's first line.
    if (line_ == 1 && text.starts_with(byte_order_mark)) text.remove_prefix(byte_order_mark.size());
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.size() > max_line_bytes_) {
      skip_long_line(line, true);
      continue;
    }
    if (is_blank(text)) continue;
    if (const auto read = parser_->templates.match(text)) {
      view = {&read->from->record(), read->structure, false, read->from->sizes()};
      return true;
    }
    detail::dropped_note note;
    bool record = true;
    try {
      record = parser_->parse_line(text, out, note, unterminated);
    } catch (const format_error& e) {
      fail(std::string(e.sentence()));
    } catch (const detail::cut_last_line& cut) {
      // Only a last line can be cut (a bad line inside a stream is an error): accept the rest, and say so.
      warnings_.push_back(source_ + ":" + std::to_string(line_) + ": " + cut.what +
                          "; ignored: its writer was "
                          "probably stopped while writing it");
      return false;
    }
    if (!record) {
      add_note(note);
      continue;
    }
    check_signature(out);
    if (const auto made = parser_->templates.learn(text, out)) {
      view = {&made->from->record(), made->structure, true, made->from->sizes()};
    } else {
      view = {&out, std::nullopt, false, {}};
    }
    return true;
  }
  if (in_->bad()) {
    throw std::system_error(errno != 0 ? errno : EIO, std::generic_category(),
                            "cannot read " + source_ + " after line " + std::to_string(line_));
  }
  return false;
}

// A note read: its count added to its function's, and a warning saying so.
void record_reader::add_note(const detail::dropped_note& note) {
  std::uint64_t& total = dropped_.try_emplace(note.function, 0).first->second;
  if (total > std::numeric_limits<std::uint64_t>::max() - note.count) {
    fail("$.dropped.count: the records of " + json_quoted(note.function) + " dropped add up to more than " +
         std::to_string(std::numeric_limits<std::uint64_t>::max()));
  }
  total += note.count;
  warnings_.push_back(source_ + ":" + std::to_string(line_) + ": the writer dropped " + std::to_string(note.count) +
                      (note.count == 1 ? " record of '" : " records of '") + detail::shown(note.function) + "' (" +
                      detail::shown(note.reason) + ")");
}

void record_reader::check_signature(const call_record& record) {
  const auto it = functions_.find(record.function);
  if (it == functions_.end()) {
    functions_.emplace(record.function, seen_function{record.parameters, source_ + ":" + std::to_string(line_)});
    return;
  }
  if (!record.parameters) return;
  const seen_function& seen = it->second;
  if (!seen.parameters) {
    fail("$.signature: " + json_quoted(record.function) + " had no signature on its first record (" + seen.where +
         "); a signature comes with a function's first record");
  }
  if (*record.parameters != *seen.parameters) {
    fail("$.signature: the signature of " + json_quoted(record.function) + " changed since " + seen.where +
         " (it must stay the same for every record of a function)");
  }
}

HOOKSCOPE_DETAIL_END_NAMESPACE
