#include "gpu/sim/sim_load_file.h"

#include <fmt/format.h>

#include "core/files.h"
#include "core/parse.h"

namespace headroom::gpu::sim {

core::Result<std::optional<std::string>> SimLoadFile::Poll() {
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(path_, ec);
  if (ec) {
    return core::Fail(
        core::Error::NotFound(fmt::format("--sim-load-file {}: {}", path_, ec.message())));
  }
  if (seen_ && mtime == *seen_) return std::optional<std::string>();
  seen_ = mtime;
  HEADROOM_ASSIGN_OR_RETURN(std::string text, core::ReadFile(path_));
  auto script = LoadScript::Parse(core::Trim(text));
  if (!script) {
    return core::Fail(script.error().WithContext(fmt::format("--sim-load-file {}", path_)));
  }
  for (SimDevice* d : devices_) d->SetScript(*script);
  return std::optional<std::string>(script->text());
}

}  // namespace headroom::gpu::sim
