// SimLoadFile: a simulated agent's load script read from a file and re-read whenever the file
// changes, so that a demo or a test can raise and lower a running agent's load. Not thread-safe;
// the devices must outlive it.
#ifndef HEADROOM_GPU_SIM_SIM_LOAD_FILE_H_
#define HEADROOM_GPU_SIM_SIM_LOAD_FILE_H_

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "gpu/sim/sim_device.h"

namespace headroom::gpu::sim {

class SimLoadFile {
 public:
  SimLoadFile(std::string path, std::vector<SimDevice*> devices)
      : path_(std::move(path)), devices_(std::move(devices)) {}

  // Applies the file's script if the file changed since the last call and returns its text
  // (nullopt: unchanged). A missing file is kNotFound; a bad script is kInvalidArgument (once per
  // change), the previous one kept. Errors name the file as --sim-load-file.
  [[nodiscard]] core::Result<std::optional<std::string>> Poll();
  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  const std::vector<SimDevice*> devices_;
  std::optional<std::filesystem::file_time_type> seen_;
};

}  // namespace headroom::gpu::sim

#endif  // HEADROOM_GPU_SIM_SIM_LOAD_FILE_H_
