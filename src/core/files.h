// Whole-file reads and atomic writes with errors that name the path. Thread-safe (no state).
#ifndef HEADROOM_CORE_FILES_H_
#define HEADROOM_CORE_FILES_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.h"

namespace headroom::core {

// The most ReadFile reads by default: far above any config, state or result file headroom
// writes or reads, far below what would hurt a daemon.
inline constexpr std::size_t kMaxReadFileBytes = 256 * 1024 * 1024;

// A regular file opened for reading; closed by the destructor. Move-only, not thread-safe.
class RegularFile {
 public:
  // Opens PATH without blocking and refuses anything but a regular file, naming what it is:
  // "PATH: not a regular file (a FIFO)". A FIFO, a device or a socket given as a config, token
  // or state file would otherwise block the open or the read for ever, deaf to SIGTERM.
  [[nodiscard]] static Result<RegularFile> Open(const std::string& path);
  // The same, refusing a symbolic link at PATH itself (those in the directories above it are
  // followed) and a file that another user than this process's effective one owns or that its
  // group or others may write: for files that steer what a privileged process does.
  [[nodiscard]] static Result<RegularFile> OpenPrivate(const std::string& path);

  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  // Up to `size` bytes into `buffer`; 0 at the end of the file.
  [[nodiscard]] Result<std::size_t> Read(char* buffer, std::size_t size);
  // The rest of the file; more than max_bytes is kOutOfRange.
  [[nodiscard]] Result<std::string> ReadAll(std::size_t max_bytes);
  const std::string& path() const { return path_; }

 private:
  RegularFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

// A regular file, whole (RegularFile::Open's refusals); more than max_bytes is an error naming
// the path.
[[nodiscard]] Result<std::string> ReadFile(const std::string& path,
                                           std::size_t max_bytes = kMaxReadFileBytes);
// The same through RegularFile::OpenPrivate.
[[nodiscard]] Result<std::string> ReadPrivateFile(const std::string& path,
                                                  std::size_t max_bytes = kMaxReadFileBytes);
// Fails unless DIR is a directory owned by this process's effective user that its group and
// others cannot write (the sticky bit of /tmp is not enough: anyone may still create a name
// there first). kNotFound when DIR does not exist.
[[nodiscard]] Status CheckPrivateDirectory(const std::string& dir);

// Writes "<path>.tmp" (created afresh, never through a link: a stale one is removed first),
// fsyncs it, renames it over PATH and fsyncs the directory, so that a reader never sees a
// half-written file and a power loss leaves the old file or the new one. `mode` is the new
// file's, less the umask.
[[nodiscard]] Status WriteFileAtomically(const std::string& path, std::string_view content,
                                         unsigned mode = 0666);

}  // namespace headroom::core

#endif  // HEADROOM_CORE_FILES_H_
