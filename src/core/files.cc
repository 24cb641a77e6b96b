#include "core/files.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace headroom::core {

Result<std::string> ReadFile(const std::string& path, std::size_t max_bytes) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec) return Fail(Error::NotFound(fmt::format("{}: cannot open: {}", path, ec.message())));
  if (std::filesystem::is_directory(status)) {
    return Fail(Error::InvalidArgument(fmt::format("{}: is a directory, not a file", path)));
  }
  if (std::filesystem::is_character_file(status) || std::filesystem::is_block_file(status)) {
    return Fail(Error::InvalidArgument(fmt::format("{}: is a device, not a file", path)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Fail(Error::NotFound(fmt::format("{}: cannot open: {}", path, std::strerror(errno))));
  }
  // Read in chunks up to the bound, so that a FIFO or a file still growing cannot make us hold
  // more than max_bytes.
  std::string text;
  std::array<char, 64 * 1024> chunk{};
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      return Fail(Error::OutOfRange(fmt::format(
          "{}: larger than {} bytes, the most headroom reads of such a file", path, max_bytes)));
    }
  }
  if (in.bad()) {
    return Fail(Error::DataLoss(fmt::format("{}: read failed: {}", path, std::strerror(errno))));
  }
  return text;
}

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return Fail(
          Error::Unavailable(fmt::format("{}: cannot write: {}", tmp, std::strerror(errno))));
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) return Fail(Error::DataLoss(fmt::format("{}: write failed", tmp)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Fail(Error::Unavailable(
        fmt::format("{}: cannot rename into place: {}", path, std::strerror(errno))));
  }
  return Ok();
}

}  // namespace headroom::core
