// safetensors: the header parser (strict, bounded, fuzzed), the writer and CRC-32.
#include <tapegrad/io/safetensors.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include <tapegrad/graph/error.h>
#include <tapegrad/io/atomic_file.h>

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian elements; tapegrad copies them as they are");

namespace tapegrad {

namespace {

struct DTypeInfo {
  const char* name;
  int64_t size;
};
constexpr std::array<DTypeInfo, 15> kDTypes{{{"BOOL", 1},
                                             {"U8", 1},
                                             {"I8", 1},
                                             {"F8_E5M2", 1},
                                             {"F8_E4M3", 1},
                                             {"I16", 2},
                                             {"U16", 2},
                                             {"F16", 2},
                                             {"BF16", 2},
                                             {"I32", 4},
                                             {"U32", 4},
                                             {"F32", 4},
                                             {"F64", 8},
                                             {"I64", 8},
                                             {"U64", 8}}};

// The table for a byte-at-a-time CRC-32 (reflected polynomial 0xEDB88320), and seven more for
// eight bytes at a time (slicing-by-8).
struct CrcTables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  constexpr CrcTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFFU];
    }
  }
};
constexpr CrcTables kCrc;

std::string hex32(uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(8, '0');
  for (int i = 7; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = kDigits[v & 0xFU];
  return s;
}

// The length of the valid UTF-8 sequence at s[pos] (whose lead byte is >= 0x80), or 0: no
// overlong forms, no surrogates, nothing above U+10FFFF.
size_t utf8_sequence(std::string_view s, size_t pos) {
  const auto lead = static_cast<unsigned char>(s[pos]);
  size_t length = 0;
  uint32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    cp = lead & 0x1FU;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    cp = lead & 0x0FU;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    cp = lead & 0x07U;
  } else {
    return 0;
  }
  if (s.size() - pos < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    const auto c = static_cast<unsigned char>(s[pos + i]);
    if ((c & 0xC0U) != 0x80U) return 0;
    cp = (cp << 6) | (c & 0x3FU);
  }
  const uint32_t min = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return length;
}

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = utf8_sequence(s, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

// ---- the header parser ---------------------------------------------------------------------
// Reads exactly the safetensors schema, iteratively, so its depth and work are bounded by the
// schema and the header's length whatever the input.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  void parse(SafetensorsView& out) {
    skip_ws();
    if (!consume('{')) fail("the header must be a JSON object starting with '{'");
    std::set<std::string, std::less<>> keys;
    skip_ws();
    if (!consume('}')) {
      while (true) {
        skip_ws();
        const size_t key_at = pos_;
        std::string key = parse_string();
        if (!keys.insert(key).second) fail_at(key_at, "duplicate key " + quoted(key));
        skip_ws();
        expect(':');
        skip_ws();
        if (key == "__metadata__") {
          parse_metadata(out.metadata);
        } else {
          out.entries.push_back(parse_entry(std::move(key)));
        }
        skip_ws();
        if (consume('}')) break;
        expect(',');
      }
    }
    skip_ws();
    if (pos_ != text_.size()) fail("unexpected data after the header's closing '}'");
  }

 private:
  [[noreturn]] void fail_at(size_t at, const std::string& what) const {
    // Byte offsets count from the start of the file (the header starts at byte 8).
    throw Error(source_ + ": invalid safetensors header: " + what + " (at byte " +
                std::to_string(at + 8) + ")");
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  static std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) {
        out += "\\x" + hex32(u).substr(6);
      } else {
        out += c;
      }
      if (out.size() > 80) return out + "...\"";
    }
    return out + "\"";
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  bool consume(char c) {
    if (at_end() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!consume(c)) {
      fail(at_end() ? std::string("unexpected end of header, expected '") + c + "'"
                    : std::string("expected '") + c + "'");
    }
  }
  void skip_ws() {
    while (!at_end()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  uint32_t hex4() {
    if (text_.size() - pos_ < 4) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        fail("invalid hex digit in \\u escape");
      }
    }
    return v;
  }

  static void append_utf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // One UTF-8 sequence starting at pos_, copied to `s` when valid.
  void copy_utf8(std::string& s) {
    const size_t length = utf8_sequence(text_, pos_);
    if (length == 0) fail("invalid UTF-8 in a string");
    s.append(text_.substr(pos_, length));
    pos_ += length;
  }

  std::string parse_string() {
    if (at_end()) fail("unexpected end of header, expected a string");
    if (!consume('"')) fail("expected a string");
    std::string s;
    while (true) {
      if (at_end()) fail("unterminated string");
      const char c = text_[pos_];
      const auto u = static_cast<unsigned char>(c);
      if (c == '"') {
        ++pos_;
        return s;
      }
      if (u < 0x20) fail("unescaped control character in a string");
      if (u >= 0x80) {
        copy_utf8(s);
        continue;
      }
      ++pos_;
      if (c != '\\') {
        s += c;
        continue;
      }
      if (at_end()) fail("unterminated string");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          s += e;
          break;
        case 'b':
          s += '\b';
          break;
        case 'f':
          s += '\f';
          break;
        case 'n':
          s += '\n';
          break;
        case 'r':
          s += '\r';
          break;
        case 't':
          s += '\t';
          break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("unpaired surrogate in \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!(consume('\\') && consume('u'))) fail("unpaired surrogate in \\u escape");
            const uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(s, cp);
          break;
        }
        default:
          fail(std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  // A JSON number that must be a non-negative integer below 2^63.
  int64_t parse_count() {
    const size_t start = pos_;
    if (at_end()) fail("unexpected end of header, expected an integer");
    if (peek() == '-') fail("expected a non-negative integer");
    if (peek() < '0' || peek() > '9') fail("expected an integer");
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
        text_[pos_ + 1] <= '9') {
      fail("leading zeros are not allowed in JSON numbers");
    }
    uint64_t v = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      const auto digit = static_cast<uint64_t>(peek() - '0');
      if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10) {
        fail_at(start, "integer too large");
      }
      v = v * 10 + digit;
      ++pos_;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E') fail("expected an integer");
    return static_cast<int64_t>(v);
  }

  std::vector<int64_t> parse_counts() {
    expect('[');
    std::vector<int64_t> v;
    skip_ws();
    if (consume(']')) return v;
    while (true) {
      skip_ws();
      v.push_back(parse_count());
      skip_ws();
      if (consume(']')) return v;
      expect(',');
    }
  }

  void parse_metadata(std::vector<std::pair<std::string, std::string>>& metadata) {
    expect('{');
    std::set<std::string, std::less<>> keys;
    skip_ws();
    if (consume('}')) return;
    while (true) {
      skip_ws();
      const size_t key_at = pos_;
      std::string key = parse_string();
      if (!keys.insert(key).second) fail_at(key_at, "duplicate __metadata__ key " + quoted(key));
      skip_ws();
      expect(':');
      skip_ws();
      if (peek() != '"') fail("__metadata__ value for " + quoted(key) + " must be a string");
      const size_t value_at = pos_;
      std::string value = parse_string();
      if (key == kCrcKey) {
        // Verified over the whole file with these digits zeroed: they must be 8 plain ones.
        const bool hex = value.size() == 8 && pos_ - value_at == 10 &&
                         value.find_first_not_of("0123456789abcdef") == std::string::npos;
        if (!hex) fail_at(value_at, std::string(kCrcKey) + " must be 8 lowercase hex digits");
        crc_at_ = value_at + 1;
      }
      metadata.emplace_back(std::move(key), std::move(value));
      skip_ws();
      if (consume('}')) return;
      expect(',');
    }
  }

  SafetensorsEntry parse_entry(std::string name) {
    const std::string who = "tensor " + quoted(name);
    if (peek() != '{') fail(who + ": expected an object {\"dtype\", \"shape\", \"data_offsets\"}");
    ++pos_;
    SafetensorsEntry e;
    e.name = std::move(name);
    bool have_dtype = false, have_shape = false, have_offsets = false;
    skip_ws();
    if (!consume('}')) {
      while (true) {
        skip_ws();
        const size_t key_at = pos_;
        const std::string field = parse_string();
        skip_ws();
        expect(':');
        skip_ws();
        bool* seen = nullptr;
        if (field == "dtype") {
          seen = &have_dtype;
        } else if (field == "shape") {
          seen = &have_shape;
        } else if (field == "data_offsets") {
          seen = &have_offsets;
        } else {
          fail_at(key_at, who + ": unknown field " + quoted(field));
        }
        if (*seen) fail_at(key_at, who + ": duplicate field " + quoted(field));
        *seen = true;
        if (field == "dtype") {
          const size_t at = pos_;
          e.dtype = parse_string();
          if (safetensors_dtype_size(e.dtype) == 0) {
            fail_at(at, who + ": unknown dtype " + quoted(e.dtype));
          }
        } else if (field == "shape") {
          e.shape = parse_counts();
        } else {
          const size_t at = pos_;
          const std::vector<int64_t> offsets = parse_counts();
          if (offsets.size() != 2) fail_at(at, who + ": data_offsets must be [begin, end]");
          e.begin = static_cast<uint64_t>(offsets[0]);
          e.end = static_cast<uint64_t>(offsets[1]);
        }
        skip_ws();
        if (consume('}')) break;
        expect(',');
      }
    }
    if (!have_dtype || !have_shape || !have_offsets) {
      fail(who + ": missing " +
           (!have_dtype   ? "\"dtype\""
            : !have_shape ? "\"shape\""
                          : "\"data_offsets\""));
    }
    return e;
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;

 public:
  size_t crc_at_ = std::string::npos;  // where the CRC's digits start in the header, if present
};

// "[2, 3]"; a hostile rank is cut short: "[1, 1, 1, 1, 1, 1, 1, 1, ... (3000 dims)]".
std::string shape_str(std::span<const int64_t> shape) {
  constexpr size_t kShown = 8;
  std::string s = "[";
  for (size_t i = 0; i < shape.size() && i < kShown; ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  if (shape.size() > kShown) s += ", ... (" + std::to_string(shape.size()) + " dims)";
  return s + "]";
}

// The name in quotes, cut short past 80 bytes.
std::string name_str(const std::string& name) {
  return "\"" + (name.size() > 80 ? name.substr(0, 80) + "..." : name) + "\"";
}

// ---- writing ---------------------------------------------------------------------------------

void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += "\\u00";
      out += hex32(u).substr(6);
    } else {
      out += c;
    }
  }
  out += '"';
}

class File {
 public:
  explicit File(int fd) : fd_(fd) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int fd() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

std::string system_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

int64_t safetensors_dtype_size(std::string_view dtype) {
  for (const DTypeInfo& d : kDTypes) {
    if (dtype == d.name) return d.size;
  }
  return 0;
}

int64_t SafetensorsEntry::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const SafetensorsEntry* SafetensorsView::find(std::string_view name) const {
  for (const SafetensorsEntry& e : entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::string describe_entry(const SafetensorsEntry& e) {
  return name_str(e.name) + " " + shape_str(e.shape) + " " + e.dtype;
}

const std::string* SafetensorsView::find_metadata(std::string_view key) const {
  for (const auto& [k, v] : metadata) {
    if (k == key) return &v;
  }
  return nullptr;
}

uint32_t crc32(std::span<const uint8_t> bytes, uint32_t crc) {
  const auto& t = kCrc.t;
  uint32_t c = ~crc;
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  while (n >= 8) {
    uint32_t lo = 0, hi = 0;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;
    c = t[7][lo & 0xFFU] ^ t[6][(lo >> 8) & 0xFFU] ^ t[5][(lo >> 16) & 0xFFU] ^ t[4][lo >> 24] ^
        t[3][hi & 0xFFU] ^ t[2][(hi >> 8) & 0xFFU] ^ t[1][(hi >> 16) & 0xFFU] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = t[0][(c ^ *p++) & 0xFFU] ^ (c >> 8);
  return ~c;
}

SafetensorsView parse_safetensors(std::span<const uint8_t> file, const std::string& source) {
  if (file.size() < 8) {
    throw Error(source + ": not a safetensors file: " + std::to_string(file.size()) +
                " bytes, shorter than the 8-byte header length");
  }
  uint64_t header_size = 0;
  std::memcpy(&header_size, file.data(), 8);
  if (header_size > kSafetensorsMaxHeader) {
    throw Error(source + ": invalid safetensors file: header length " +
                std::to_string(header_size) + " exceeds the limit of " +
                std::to_string(kSafetensorsMaxHeader) + " bytes");
  }
  if (header_size > file.size() - 8) {
    throw Error(source + ": truncated safetensors file: the header claims " +
                std::to_string(header_size) + " bytes but only " + std::to_string(file.size() - 8) +
                " follow");
  }
  SafetensorsView view;
  const std::string_view header(reinterpret_cast<const char*>(file.data() + 8),
                                static_cast<size_t>(header_size));
  HeaderParser parser(header, source);
  parser.parse(view);
  view.data = file.subspan(8 + static_cast<size_t>(header_size));

  const uint64_t data_size = view.data.size();
  for (SafetensorsEntry& e : view.entries) {
    const std::string who = source + ": tensor " + describe_entry(e);
    uint64_t bytes = static_cast<uint64_t>(safetensors_dtype_size(e.dtype));
    for (int64_t d : e.shape) {
      if (d != 0 && bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) /
                                static_cast<uint64_t>(d)) {
        throw Error(who + ": its size overflows");
      }
      bytes *= static_cast<uint64_t>(d);
    }
    if (e.begin > e.end) {
      throw Error(who + ": data_offsets [" + std::to_string(e.begin) + ", " +
                  std::to_string(e.end) + "] end before they begin");
    }
    if (e.end - e.begin != bytes) {
      throw Error(who + ": data_offsets [" + std::to_string(e.begin) + ", " +
                  std::to_string(e.end) + "] span " + std::to_string(e.end - e.begin) +
                  " bytes, but the dtype and shape need " + std::to_string(bytes));
    }
    if (e.end > data_size) {
      throw Error(who + ": data_offsets [" + std::to_string(e.begin) + ", " +
                  std::to_string(e.end) + "] run past the end of the data (" +
                  std::to_string(data_size) + " bytes): the file is truncated");
    }
  }
  std::stable_sort(view.entries.begin(), view.entries.end(),
                   [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
                     return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
                   });
  uint64_t covered = 0;
  for (const SafetensorsEntry& e : view.entries) {
    if (e.begin != covered) {
      throw Error(source + ": invalid safetensors file: tensor " + name_str(e.name) +
                  " starts at byte " + std::to_string(e.begin) + " of the data, expected " +
                  std::to_string(covered) +
                  (e.begin < covered ? " (tensors overlap)" : " (a gap between tensors)"));
    }
    covered = e.end;
  }
  if (covered != data_size) {
    throw Error(source + ": invalid safetensors file: the tensors cover " +
                std::to_string(covered) + " bytes of data but " + std::to_string(data_size) +
                " follow the header (trailing bytes)");
  }
  if (parser.crc_at_ != std::string::npos) {
    // CRC-32 of the whole file with the CRC's own digits read as '0'.
    static constexpr uint8_t kZeros[8] = {'0', '0', '0', '0', '0', '0', '0', '0'};
    const size_t at = 8 + parser.crc_at_;
    uint32_t crc = crc32(file.subspan(0, at));
    crc = crc32(kZeros, crc);
    crc = crc32(file.subspan(at + 8), crc);
    const std::string recorded = *view.find_metadata(kCrcKey);
    if (hex32(crc) != recorded) {
      throw Error(source + ": corrupted file: its CRC-32 is " + hex32(crc) +
                  " but the header records " + recorded);
    }
    view.crc_verified = true;
  }
  return view;
}

void write_safetensors(const std::string& path,
                       std::vector<std::pair<std::string, std::string>> metadata,
                       std::span<const SafetensorsTensor> tensors) {
  const std::string where = "write_safetensors: " + path + ": ";
  // Validate names, dtypes and sizes first: nothing touches the disk before.
  std::set<std::string, std::less<>> names{"__metadata__"};
  for (const SafetensorsTensor& t : tensors) {
    if (t.name.empty() || !valid_utf8(t.name)) {
      throw Error(where + "tensor name \"" + t.name + "\" is empty or not valid UTF-8");
    }
    if (!names.insert(t.name).second) {
      throw Error(where + "tensor name \"" + t.name + "\" is " +
                  (t.name == "__metadata__" ? "reserved" : "used twice"));
    }
    const int64_t size = safetensors_dtype_size(t.dtype);
    if (size == 0) throw Error(where + "tensor \"" + t.name + "\": unknown dtype " + t.dtype);
    int64_t n = 1;
    for (int64_t d : t.shape) {
      if (d < 0) throw Error(where + "tensor \"" + t.name + "\": negative dimension");
      n *= d;
    }
    if (static_cast<uint64_t>(n * size) != t.bytes.size()) {
      throw Error(where + "tensor \"" + t.name + "\" " + shape_str(t.shape) + " " + t.dtype +
                  " needs " + std::to_string(n * size) + " bytes, got " +
                  std::to_string(t.bytes.size()));
    }
  }
  std::set<std::string, std::less<>> keys;
  for (const auto& [k, v] : metadata) {
    if (k == kCrcKey) throw Error(where + "metadata key " + k + " is reserved");
    if (!keys.insert(k).second) throw Error(where + "metadata key \"" + k + "\" is used twice");
    if (!valid_utf8(k) || !valid_utf8(v)) {
      throw Error(where + "metadata \"" + k + "\" is not valid UTF-8");
    }
  }

  // 8-byte elements first, then 4, 2, 1: every tensor lands aligned to its element size.
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return safetensors_dtype_size(tensors[a].dtype) > safetensors_dtype_size(tensors[b].dtype);
  });
  metadata.emplace_back(kCrcKey, "00000000");  // filled in once the header is complete

  std::string header = "{\"__metadata__\":{";
  for (size_t i = 0; i < metadata.size(); ++i) {
    if (i) header += ',';
    append_json_string(header, metadata[i].first);
    header += ':';
    append_json_string(header, metadata[i].second);
  }
  header += '}';
  uint64_t offset = 0;
  for (size_t i : order) {
    const SafetensorsTensor& t = tensors[i];
    header += ',';
    append_json_string(header, t.name);
    header += ":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t d = 0; d < t.shape.size(); ++d) {
      header += (d ? "," : "") + std::to_string(t.shape[d]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + ",";
    offset += t.bytes.size();
    header += std::to_string(offset) + "]}";
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  if (header.size() > kSafetensorsMaxHeader) {
    throw Error(where + "the header would exceed " + std::to_string(kSafetensorsMaxHeader) +
                " bytes");
  }
  const uint64_t header_size = header.size();
  uint8_t size_bytes[8];
  std::memcpy(size_bytes, &header_size, 8);
  const std::string crc_field = "\"" + std::string(kCrcKey) + "\":\"";
  const size_t crc_at = header.find(crc_field) + crc_field.size();
  uint32_t crc = crc32(size_bytes);
  crc = crc32({reinterpret_cast<const uint8_t*>(header.data()), header.size()}, crc);
  for (size_t i : order) crc = crc32(tensors[i].bytes, crc);
  header.replace(crc_at, 8, hex32(crc));

  AtomicFile file(path);
  file.write(size_bytes);
  file.write(header);
  for (size_t i : order) file.write(tensors[i].bytes);
  file.commit();
}

std::vector<uint8_t> read_whole_file(const std::string& path) {
  File file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.fd() < 0) throw Error(system_error("cannot open", path));
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0) throw Error(system_error("cannot stat", path));
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t r = ::read(file.fd(), bytes.data() + done, bytes.size() - done);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(system_error("cannot read", path));
    }
    if (r == 0) break;  // shrank while reading: the parser reports the truncation
    done += static_cast<size_t>(r);
  }
  bytes.resize(done);
  return bytes;
}

MappedFile::MappedFile(const std::string& path) {
  File file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.fd() < 0) throw Error(system_error("cannot open", path));
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0) throw Error(system_error("cannot stat", path));
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;  // nothing to map; the parser reports the empty file
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (p == MAP_FAILED) throw Error(system_error("cannot map", path));
  data_ = static_cast<const uint8_t*>(p);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release(std::span<const uint8_t> range) const {
  if (range.empty() || data_ == nullptr) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(range.data());
  const uintptr_t first = (begin + page - 1) / page * page;  // whole pages only
  const uintptr_t last = (begin + range.size()) / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace tapegrad
