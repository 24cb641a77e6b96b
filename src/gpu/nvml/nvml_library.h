// Locating NVIDIA's NVML library at run time (dlopen; no NVIDIA package at build time).
// HEADROOM_NVML_LIBRARY=/path/to/lib overrides the search. Thread-safe (no shared state).
#ifndef HEADROOM_GPU_NVML_NVML_LIBRARY_H_
#define HEADROOM_GPU_NVML_NVML_LIBRARY_H_

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace headroom::gpu::nvml {

// An open handle to the library; closed on destruction.
class NvmlLibrary {
 public:
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // Tries HEADROOM_NVML_LIBRARY if set, else libnvidia-ml.so.1 then libnvidia-ml.so.
  // kUnavailable, with one line saying what was tried and suggesting --backend sim, when none
  // loads.
  [[nodiscard]] static core::Result<std::unique_ptr<NvmlLibrary>> Open();

  const std::string& path() const { return path_; }
  // The address of `symbol`, or nullptr when the library lacks it.
  void* Symbol(const char* symbol) const;

 private:
  NvmlLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

}  // namespace headroom::gpu::nvml

#endif  // HEADROOM_GPU_NVML_NVML_LIBRARY_H_
