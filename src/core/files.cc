#include "core/files.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace headroom::core {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "of an unknown kind";
}

Error NotRegular(const std::string& path, mode_t mode) {
  return Error::InvalidArgument(fmt::format("{}: not a regular file ({})", path, KindOf(mode)));
}

// Another user, or anyone in the group, could replace what the file says.
Status CheckOwnerAndMode(const std::string& path, const struct stat& st) {
  const uid_t me = ::geteuid();
  if (st.st_uid != me) {
    return Fail(Error::InvalidArgument(fmt::format(
        "{}: owned by uid {}, not by this process's user (uid {})", path, st.st_uid, me)));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    const bool group = (st.st_mode & S_IWGRP) != 0;
    const bool others = (st.st_mode & S_IWOTH) != 0;
    return Fail(Error::InvalidArgument(fmt::format("{}: writable by {} (mode {:04o})", path,
                                                   group && others ? "its group and others"
                                                   : group         ? "its group"
                                                                   : "others",
                                                   st.st_mode & 07777)));
  }
  return Ok();
}

int OpenRetrying(const std::string& path, int flags, mode_t mode = 0) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// `nofollow`: a link at PATH is refused. Looks before opening, so that a FIFO or a device is
// never opened (opening some devices acts on them), then checks the open descriptor itself,
// which is what is read whatever happened to the path in between.
Result<int> OpenRegular(const std::string& path, bool nofollow, bool only_mine) {
  struct stat st {};
  const int looked = nofollow ? ::lstat(path.c_str(), &st) : ::stat(path.c_str(), &st);
  if (looked == 0 && S_ISLNK(st.st_mode)) {
    return Fail(Error::InvalidArgument(fmt::format(
        "{}: a symbolic link; refused (this file is never read through a link)", path)));
  }
  if (looked == 0 && !S_ISREG(st.st_mode)) return Fail(NotRegular(path, st.st_mode));
  const int fd =
      OpenRetrying(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
  if (fd < 0) {
    return Fail(Error::NotFound(fmt::format("{}: cannot open: {}", path, std::strerror(errno))));
  }
  Status checked = Ok();
  if (::fstat(fd, &st) != 0) {
    checked =
        Fail(Error::DataLoss(fmt::format("{}: fstat failed: {}", path, std::strerror(errno))));
  } else if (!S_ISREG(st.st_mode)) {
    checked = Fail(NotRegular(path, st.st_mode));
  } else if (only_mine) {
    checked = CheckOwnerAndMode(path, st);
  }
  if (!checked) {
    ::close(fd);
    return Fail(checked.error());
  }
  return fd;
}

}  // namespace

Result<RegularFile> RegularFile::Open(const std::string& path) {
  HEADROOM_ASSIGN_OR_RETURN(int fd, OpenRegular(path, /*nofollow=*/false, /*only_mine=*/false));
  return RegularFile(path, fd);
}

Result<RegularFile> RegularFile::OpenPrivate(const std::string& path) {
  HEADROOM_ASSIGN_OR_RETURN(int fd, OpenRegular(path, /*nofollow=*/true, /*only_mine=*/true));
  return RegularFile(path, fd);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::size_t> RegularFile::Read(char* buffer, std::size_t size) {
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, size);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) {
      return Fail(Error::DataLoss(fmt::format("{}: read failed: {}", path_, std::strerror(errno))));
    }
  }
}

Result<std::string> RegularFile::ReadAll(std::size_t max_bytes) {
  // In chunks up to the bound, so that a file still growing cannot make us hold more than
  // max_bytes.
  std::string text;
  std::array<char, 64 * 1024> chunk{};
  for (;;) {
    HEADROOM_ASSIGN_OR_RETURN(std::size_t n, Read(chunk.data(), chunk.size()));
    if (n == 0) return text;
    text.append(chunk.data(), n);
    if (text.size() > max_bytes) {
      return Fail(Error::OutOfRange(fmt::format(
          "{}: larger than {} bytes, the most headroom reads of such a file", path_, max_bytes)));
    }
  }
}

Result<std::string> ReadFile(const std::string& path, std::size_t max_bytes) {
  HEADROOM_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(path));
  return file.ReadAll(max_bytes);
}

Result<std::string> ReadPrivateFile(const std::string& path, std::size_t max_bytes) {
  HEADROOM_ASSIGN_OR_RETURN(RegularFile file, RegularFile::OpenPrivate(path));
  return file.ReadAll(max_bytes);
}

Status CheckPrivateDirectory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return Fail(Error::NotFound(fmt::format("{}: no such directory", dir)));
    return Fail(
        Error::InvalidArgument(fmt::format("{}: cannot stat: {}", dir, std::strerror(err))));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Fail(Error::InvalidArgument(fmt::format(
        "{}: not a directory ({})", dir, S_ISREG(st.st_mode) ? "a file" : KindOf(st.st_mode))));
  }
  return CheckOwnerAndMode(dir, st);
}

namespace {

Status WriteAll(int fd, const std::string& path, std::string_view content) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Fail(Error::DataLoss(fmt::format("{}: write failed: {}", path, std::strerror(errno))));
    }
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::fsync(fd) != 0) {
    return Fail(Error::DataLoss(fmt::format("{}: fsync failed: {}", path, std::strerror(errno))));
  }
  return Ok();
}

// The rename is durable only once the directory's entry is: without this a power loss can
// leave the old file, or on some file systems an empty one.
Status SyncDirectoryOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = OpenRetrying(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return Fail(
        Error::DataLoss(fmt::format("{}: cannot open to fsync: {}", dir, std::strerror(errno))));
  }
  // EINVAL: a file system that cannot sync a directory; there is nothing more to do.
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL;
  const int err = errno;
  ::close(fd);
  if (!synced) {
    return Fail(Error::DataLoss(fmt::format("{}: fsync failed: {}", dir, std::strerror(err))));
  }
  return Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view content, unsigned mode) {
  const std::string tmp = path + ".tmp";
  // A temporary left by a crash, or a link planted in its place, is removed rather than
  // followed, and O_EXCL | O_NOFOLLOW refuse one planted between the unlink and the open.
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
    return Fail(Error::Unavailable(
        fmt::format("{}: cannot write: cannot remove the old one: {}", tmp, std::strerror(errno))));
  }
  const int fd = OpenRetrying(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                              static_cast<mode_t>(mode));
  if (fd < 0) {
    return Fail(Error::Unavailable(fmt::format("{}: cannot write: {}", tmp, std::strerror(errno))));
  }
  Status written = WriteAll(fd, tmp, content);
  if (::close(fd) != 0 && written) {
    written = Fail(Error::DataLoss(fmt::format("{}: close failed: {}", tmp, std::strerror(errno))));
  }
  if (written && std::rename(tmp.c_str(), path.c_str()) != 0) {
    written = Fail(Error::Unavailable(
        fmt::format("{}: cannot rename into place: {}", path, std::strerror(errno))));
  }
  if (!written) {
    ::unlink(tmp.c_str());
    return written;
  }
  return SyncDirectoryOf(path);
}

}  // namespace headroom::core
