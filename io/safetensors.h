// The safetensors file format: a strict, bounded reader and an atomic writer (used by checkpoints).
//
// Layout (https://github.com/huggingface/safetensors, format as of 0.3):
//   8 bytes   N, the header's length, unsigned little-endian
//   N bytes   a JSON object, UTF-8, starting with '{', possibly padded with trailing spaces:
//               {"__metadata__": {"key": "value", ...},            (optional, strings only)
//                "W_query": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 24]}, ...}
//   the rest  the data buffer: each tensor's elements, row-major, little-endian, at
//             [begin, end) relative to the buffer's start.
// Python reads such a file with nothing but json and struct (or numpy.frombuffer), and
// safetensors.torch / safetensors.numpy load it as is.
//
// The reader accepts exactly that and rejects everything else with an Error saying what and
// where: a header longer than the file or than 100 MB, malformed JSON (the parser reads only the
// format's schema: objects, strings, unsigned integers; it never recurses past three levels),
// invalid UTF-8, duplicate keys, unknown fields, unknown dtypes, an element count that overflows,
// offsets that do not match the dtype and shape, and entries that overlap, leave holes, or do not
// end exactly at the end of the file. When the metadata holds "tapegrad.crc32" (tapegrad writes
// it), it must be the CRC-32 (zlib.crc32) of the whole file with that value's 8 hex digits read
// as '0': so any damaged byte, flipped bits included, is caught as well.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tapegrad {

// Bytes per element of a safetensors dtype ("F32" -> 4, "BOOL" -> 1), or 0 when unknown.
int64_t safetensors_dtype_size(std::string_view dtype);

inline constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;  // as the reference reader
inline constexpr const char* kCrcKey = "tapegrad.crc32";

struct SafetensorsEntry {
  std::string name;
  std::string dtype;           // as in the file: "F32", "F64", "U64", ...
  std::vector<int64_t> shape;  // any rank; dims fit int64 and their product does not overflow
  uint64_t begin = 0;          // byte range in the data buffer
  uint64_t end = 0;
  int64_t numel() const;
};

// `"name" [2, 3] F32`, for messages (a long name or a hostile rank is cut short).
std::string describe_entry(const SafetensorsEntry& entry);

// A validated file held in memory: the header parsed, the data still in the caller's bytes.
struct SafetensorsView {
  std::vector<std::pair<std::string, std::string>> metadata;  // file order, keys unique
  std::vector<SafetensorsEntry> entries;                      // ordered by offset
  std::span<const uint8_t> data;                              // the data buffer
  bool crc_verified = false;  // the file held a kCrcKey, and it matched

  const SafetensorsEntry* find(std::string_view name) const;
  const std::string* find_metadata(std::string_view key) const;
  std::span<const uint8_t> bytes(const SafetensorsEntry& entry) const {
    return data.subspan(entry.begin, entry.end - entry.begin);
  }
};

// Parses and validates a whole file; `source` (a path) prefixes error messages.
SafetensorsView parse_safetensors(std::span<const uint8_t> file, const std::string& source);

// A tensor to write: its bytes are already little-endian elements of `dtype`.
struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::span<const uint8_t> bytes;
};

// Writes a safetensors file atomically (io/atomic_file.h): into a temporary file next to `path`,
// fsync'ed, then renamed over `path`, and the directory fsync'ed. A crash or SIGKILL at any
// moment leaves either the old file or the new one at `path`, never a mix (a killed writer may
// leave its temporary "<path>.tmp.<pid>.<n>" behind). Adds "tapegrad.crc32" to the metadata.
// Entries are laid out 8-byte elements first, so every tensor is aligned to its element size.
// Throws Error (and removes the temporary) on invalid names, sizes that do not match, or an I/O
// failure; `path` is then untouched.
void write_safetensors(const std::string& path,
                       std::vector<std::pair<std::string, std::string>> metadata,
                       std::span<const SafetensorsTensor> tensors);

// The whole file, or Error naming the path and the system's reason.
std::vector<uint8_t> read_whole_file(const std::string& path);

// A regular file mapped read-only (mmap, private): its bytes without a copy, paged in from the
// page cache as they are read. Unmapped when destroyed; movable, not copyable. Throws Error
// naming the path and the system's reason when it cannot be opened or mapped. (A file that
// another process truncates while it is mapped makes later reads of the lost pages fault:
// map files nobody rewrites in place, as tapegrad's atomic writer never does.)
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  // Drops the whole pages inside `range` (a part of bytes()) from this process's resident
  // memory (madvise MADV_DONTNEED): a loader that has copied them out keeps its peak memory
  // near the copies' size. They are read again from the file if touched later.
  void release(std::span<const uint8_t> range) const;

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// CRC-32 (IEEE 802.3, as zlib.crc32), continuing from `crc` (0 to start).
uint32_t crc32(std::span<const uint8_t> bytes, uint32_t crc = 0);

}  // namespace tapegrad
