// Atomic file writing: temporary file in the same directory, fsync, rename, fsync of the directory.
#include <tapegrad/io/atomic_file.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include <tapegrad/graph/error.h>

namespace tapegrad {

namespace {

std::atomic<uint64_t> temp_counter{0};

std::string system_error(int err, const std::string& what, const std::string& path) {
  return "cannot write " + path + ": " + what + ": " + std::strerror(err);
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  temp_ = path_ + ".tmp." + std::to_string(::getpid()) + "." +
          std::to_string(temp_counter.fetch_add(1));
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    throw Error(system_error(err, "creating " + temp_, path_));
  }
}

AtomicFile::~AtomicFile() {
  discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(temp_.c_str());
  }
}

void AtomicFile::write(std::span<const uint8_t> bytes) {
  if (fd_ < 0) throw Error("cannot write " + path_ + ": the file is already committed");
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, std::min<size_t>(n, size_t{1} << 30));
    if (w < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      const std::string message = system_error(err, "writing " + temp_, path_);
      discard();
      throw Error(message);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void AtomicFile::write(std::string_view text) {
  write({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

void AtomicFile::commit() {
  if (fd_ < 0) throw Error("cannot write " + path_ + ": the file is already committed");
  auto fail = [&](const char* what) {
    const int err = errno;
    const std::string message = system_error(err, what + (" " + temp_), path_);
    discard();
    ::unlink(temp_.c_str());  // discard() does not when the descriptor is already closed
    throw Error(message);
  };
  if (::fsync(fd_) != 0) fail("fsync of");
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) fail("closing");
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("renaming");
  // Make the rename itself durable; a directory that cannot be opened or synced (some file
  // systems refuse) leaves the new file in place all the same.
  const int dir = ::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFile file(path);
  file.write(contents);
  file.commit();
}

void write_file_atomically(const std::string& path, std::span<const uint8_t> contents) {
  AtomicFile file(path);
  file.write(contents);
  file.commit();
}

}  // namespace tapegrad
