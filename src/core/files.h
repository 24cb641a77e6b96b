// Whole-file reads and atomic writes with errors that name the path. Thread-safe (no state).
#ifndef HEADROOM_CORE_FILES_H_
#define HEADROOM_CORE_FILES_H_

#include <string>
#include <string_view>

#include "core/result.h"

namespace headroom::core {

[[nodiscard]] Result<std::string> ReadFile(const std::string& path);
// Writes to "<path>.tmp" then renames, so a reader never sees a half-written file.
[[nodiscard]] Status WriteFileAtomically(const std::string& path, std::string_view content);

}  // namespace headroom::core

#endif  // HEADROOM_CORE_FILES_H_
