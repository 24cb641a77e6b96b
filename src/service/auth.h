// Bearer-token checks for the agent's mutating endpoints. Pure functions; thread-safe.
#ifndef HEADROOM_SERVICE_AUTH_H_
#define HEADROOM_SERVICE_AUTH_H_

#include <string>
#include <string_view>

#include "core/result.h"

namespace headroom::service {

// True when `given` equals `expected`. The time taken depends only on expected.size(): every
// byte of `expected` is compared, with no early exit on the first difference or on a length
// mismatch, so a client cannot find the token byte by byte by timing.
bool ConstantTimeEquals(std::string_view given, std::string_view expected);

// True when `authorization` is "Bearer <token>" with the right token (compared in constant time).
bool BearerAuthorized(std::string_view authorization, std::string_view token);

// The token from a token file: its content with surrounding whitespace trimmed. An unreadable,
// empty or whitespace-only file is an InvalidArgument error naming the path.
[[nodiscard]] core::Result<std::string> ReadTokenFile(const std::string& path);

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_AUTH_H_
