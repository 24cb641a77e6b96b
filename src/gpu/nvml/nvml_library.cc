#include "gpu/nvml/nvml_library.h"

#include <cstdlib>

#include <dlfcn.h>
#include <fmt/format.h>

namespace headroom::gpu::nvml {

NvmlLibrary::~NvmlLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

core::Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Open() {
  std::vector<std::string> candidates;
  if (const char* forced = std::getenv("HEADROOM_NVML_LIBRARY"); forced != nullptr && *forced) {
    candidates.emplace_back(forced);
  } else {
    // The runtime soname first: the unversioned name is a dev symlink often absent on
    // driver-only hosts (nvml.md §1).
    candidates = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
  }
  std::string tried;
  for (const std::string& name : candidates) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      return std::unique_ptr<NvmlLibrary>(new NvmlLibrary(handle, name));
    }
    const char* why = dlerror();
    tried += fmt::format("{}{} ({})", tried.empty() ? "" : "; ", name, why ? why : "not found");
  }
  return core::Fail(core::Error::Unavailable(
      fmt::format("NVML is not available: could not load {}. Is the NVIDIA driver installed? Use "
                  "--backend sim to work with simulated GPUs",
                  tried)));
}

void* NvmlLibrary::Symbol(const char* symbol) const { return dlsym(handle_, symbol); }

}  // namespace headroom::gpu::nvml
