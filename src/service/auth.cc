#include "service/auth.h"

#include <fmt/format.h>

#include "core/files.h"
#include "core/parse.h"

namespace headroom::service {

bool ConstantTimeEquals(std::string_view given, std::string_view expected) {
  // Lengths differ -> non-zero; then every byte of `expected` is visited whatever `given` holds.
  volatile unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff = diff | (g ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

bool BearerAuthorized(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kScheme = "Bearer ";
  if (token.empty()) return false;
  if (authorization.substr(0, kScheme.size()) != kScheme) return false;
  return ConstantTimeEquals(authorization.substr(kScheme.size()), token);
}

namespace {

// A token is one line (`openssl rand -hex 32` gives 64 bytes); a larger file is not a token file.
constexpr std::size_t kMaxTokenFileBytes = 64 * 1024;

}  // namespace

core::Result<std::string> ReadTokenFile(const std::string& path) {
  auto text = core::ReadFile(path, kMaxTokenFileBytes);
  if (!text) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("--token-file: {}", text.error().message())));
  }
  std::string token(core::Trim(*text));
  if (token.empty()) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("--token-file {}: the file is empty", path)));
  }
  return token;
}

}  // namespace headroom::service
