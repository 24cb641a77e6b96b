#include "core/files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace headroom::core {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Fail(Error::NotFound(fmt::format("{}: cannot open: {}", path, std::strerror(errno))));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Fail(Error::DataLoss(fmt::format("{}: read failed", path)));
  return buffer.str();
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
