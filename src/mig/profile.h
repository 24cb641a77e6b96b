// MIG GPU-instance profiles of one GPU type (GpuMigSpec) and the NVML profile enums they map to.
// Plain data, filled by catalog/mig_catalog; immutable once built, so thread-safe to share.
#ifndef HEADROOM_MIG_PROFILE_H_
#define HEADROOM_MIG_PROFILE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::mig {

// Engines a GPU instance owns besides its SMs.
struct Engines {
  int copy = 0;      // copy engines (CE)
  int decoders = 0;  // video decoders (NVDEC)
  int encoders = 0;  // video encoders (NVENC)
  int jpeg = 0;      // JPEG decoders (NVJPG)
  int ofa = 0;       // optical-flow accelerators
};

// One GPU-instance profile (a row of `nvidia-smi mig -lgip`).
// Invariants (checked by the catalog loader): compute_slices and memory_slices >= 1; every start
// is in [0, GpuMigSpec::memory_slices - memory_slices], ascending; 1 <= max_instances.
struct GiProfile {
  int id = 0;  // NVML profile ID (`nvidia-smi mig -lgip` "ID"), e.g. 19 for 1g
  std::string nvml_enum =
      {};                 // NVML constant without its prefix, e.g. "GPU_INSTANCE_PROFILE_1_SLICE"
  int nvml_value = 0;     // its value in nvml.h, e.g. 0x0
  std::string name = {};  // e.g. "1g.10gb", "1g.10gb+me"
  std::string short_name = {};  // GPU-independent class: "1g", "1g+me", "1g.2x", "2g", ... "7g"
  int compute_slices = 0;       // SM slices (1/7 of the MIG-usable SMs each)
  int memory_slices = 0;        // memory slices (1/8 of memory, cache and controllers each)
  int sm_count = 0;             // NVML multiprocessorCount
  double memory_gib = 0;        // usable memory, GiB
  Engines engines = {};
  std::vector<int> starts = {};  // allowed first memory slice of a placement
  int max_instances = 0;         // on one GPU
  bool media_extension = false;  // a "+me" profile: the GPU's media engines; one per GPU

  bool AllowsStart(int start) const;
};

// The MIG profiles of one GPU type. Invariants: profile IDs, names and short names are unique.
struct GpuMigSpec {
  std::string name = {};  // hardware-catalog name where one exists, e.g. "a100-80gb-sxm"
  std::vector<std::string> aliases = {};  // further lookup names
  int memory_slices = 0;                  // 8 on A100, H100 and H200
  int compute_slices = 0;                 // 7 on A100, H100 and H200
  std::vector<GiProfile> profiles = {};   // in catalog order (largest last)

  // The profile named `name` ("3g.40gb"; case-insensitive), or nullptr.
  const GiProfile* FindProfile(std::string_view name) const;
  // The profile whose name or short name is `name` ("3g", "1g.2x", "3g.40gb"), or nullptr.
  const GiProfile* FindProfileOrClass(std::string_view name) const;
  // The profile with NVML profile ID `id`, or nullptr.
  const GiProfile* FindProfileById(int id) const;
};

// The value of an NVML GPU-instance profile constant given without its "NVML_" prefix
// ("GPU_INSTANCE_PROFILE_1_SLICE_REV1" -> 0x7), or nullopt when unknown.
std::optional<int> NvmlGpuInstanceProfileValue(std::string_view nvml_enum);

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_PROFILE_H_
