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

// A regular file or a pipe, whole; a directory, a device or more than max_bytes is an error
// naming the path.
[[nodiscard]] Result<std::string> ReadFile(const std::string& path,
                                           std::size_t max_bytes = kMaxReadFileBytes);
// Writes to "<path>.tmp" then renames, so a reader never sees a half-written file.
[[nodiscard]] Status WriteFileAtomically(const std::string& path, std::string_view content);

}  // namespace headroom::core

#endif  // HEADROOM_CORE_FILES_H_
