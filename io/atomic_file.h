// Atomic file writing: every file tapegrad and its programs write goes through here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tapegrad {

// A file written atomically: the bytes go to a temporary "<path>.tmp.<pid>.<n>" in the same
// directory; commit() fsyncs it, renames it over `path` and fsyncs the directory, so `path`
// holds either its old content or the whole new one, never a mix, even after a crash or SIGKILL
// (a killed writer may leave its temporary behind). Every failure throws Error naming the path
// and the system's reason, and removes the temporary; so does destruction without commit().
//
//   AtomicFile file("model.safetensors");
//   file.write(header);
//   file.write(bytes);
//   file.commit();
class AtomicFile {
 public:
  // Creates the temporary (Error when the directory does not exist or is not writable).
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::span<const uint8_t> bytes);
  void write(std::string_view text);
  // Makes the written bytes `path`'s content. Call once; no write after it.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temporary() const { return temp_; }

 private:
  void discard() noexcept;

  std::string path_;
  std::string temp_;
  int fd_ = -1;
};

// The whole of `contents` as `path`, through AtomicFile.
void write_file_atomically(const std::string& path, std::string_view contents);
void write_file_atomically(const std::string& path, std::span<const uint8_t> contents);

}  // namespace tapegrad
