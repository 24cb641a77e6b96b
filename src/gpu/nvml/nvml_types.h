// headroom's own minimal NVML declarations: just the types, constants and function-pointer
// signatures the backend uses (nvml.md §1-3), so no NVIDIA header or package is needed to build.
// Values and layouts are NVML's C ABI on x86-64 Linux; they are used only inside gpu/nvml and the
// fake NVML test library. Header only.
#ifndef HEADROOM_GPU_NVML_NVML_TYPES_H_
#define HEADROOM_GPU_NVML_NVML_TYPES_H_

#include <iterator>

namespace headroom::gpu::nvml {

extern "C" {

typedef int nvmlReturn_t;  // a C enum: 4 bytes
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;  // us since the epoch
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};
static_assert(sizeof(nvmlFieldValue_t) == 40, "NVML ABI: nvmlFieldValue_t is 40 bytes");

struct nvmlSample_t {
  unsigned long long timeStamp;  // us
  nvmlValue_t sampleValue;
};
static_assert(sizeof(nvmlSample_t) == 16, "NVML ABI: nvmlSample_t is 16 bytes");

// MIG (nvml.md §2, "MIG"). Placements count memory slices.
struct nvmlGpuInstancePlacement_t {
  unsigned int start;
  unsigned int size;
};
static_assert(sizeof(nvmlGpuInstancePlacement_t) == 8, "NVML ABI: placement is 8 bytes");

struct nvmlGpuInstanceProfileInfo_t {
  unsigned int id;  // the profile ID to create with, e.g. 9 for a 3g
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;  // MiB
};
static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48, "NVML ABI: GI profile info v1");

// The versioned form that nvmlDeviceGetGpuInstanceProfileInfoV fills; adds the profile's name.
struct nvmlGpuInstanceProfileInfo_v2_t {
  unsigned int version;  // kGpuInstanceProfileInfoV2
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
  char name[96];
};
static_assert(sizeof(nvmlGpuInstanceProfileInfo_v2_t) == 152, "NVML ABI: GI profile info v2");

struct nvmlGpuInstanceInfo_t {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
};
static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24, "NVML ABI: nvmlGpuInstanceInfo_t");

struct nvmlComputeInstancePlacement_t {
  unsigned int start;
  unsigned int size;
};

struct nvmlComputeInstanceProfileInfo_t {
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
};
static_assert(sizeof(nvmlComputeInstanceProfileInfo_t) == 36, "NVML ABI: CI profile info v1");

struct nvmlComputeInstanceProfileInfo_v2_t {
  unsigned int version;  // kComputeInstanceProfileInfoV2
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  char name[96];
};
static_assert(sizeof(nvmlComputeInstanceProfileInfo_v2_t) == 136, "NVML ABI: CI profile info v2");

struct nvmlComputeInstanceInfo_t {
  nvmlDevice_t device;
  nvmlGpuInstance_t gpuInstance;
  unsigned int id;
  unsigned int profileId;
  nvmlComputeInstancePlacement_t placement;
};
static_assert(sizeof(nvmlComputeInstanceInfo_t) == 32, "NVML ABI: nvmlComputeInstanceInfo_t");

// What nvmlDeviceGetComputeRunningProcesses_v2 and _v3 fill (the unversioned call has a shorter
// struct and is not bound).
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or kValueNotAvailable
  unsigned int gpuInstanceId;        // 0xFFFFFFFF when not on a MIG instance
  unsigned int computeInstanceId;
};
static_assert(sizeof(nvmlProcessInfo_t) == 24, "NVML ABI: nvmlProcessInfo_t (v2/v3)");

// Power smoothing (Blackwell and later; NVML 12.9+): the argument of
// nvmlDevicePowerSmoothingActivatePresetProfile (only profileId read) and
// nvmlDevicePowerSmoothingUpdatePresetProfileParam (value in %, W/s or ms by paramId).
struct nvmlPowerSmoothingProfile_t {
  unsigned int version;  // kPowerSmoothingProfileV1
  unsigned int profileId;
  unsigned int paramId;  // kPowerSmoothingParam*
  double value;
};
static_assert(sizeof(nvmlPowerSmoothingProfile_t) == 24, "NVML ABI: power smoothing profile v1");

// The argument of nvmlDevicePowerSmoothingSetState.
struct nvmlPowerSmoothingState_t {
  unsigned int version;  // kPowerSmoothingStateV1
  unsigned int state;    // nvmlEnableState_t: 0 disabled, 1 enabled
};
static_assert(sizeof(nvmlPowerSmoothingState_t) == 8, "NVML ABI: power smoothing state v1");

}  // extern "C"

// Return codes (nvml.md §3).
inline constexpr nvmlReturn_t kSuccess = 0;
inline constexpr nvmlReturn_t kErrorUninitialized = 1;
inline constexpr nvmlReturn_t kErrorInvalidArgument = 2;
inline constexpr nvmlReturn_t kErrorNotSupported = 3;
inline constexpr nvmlReturn_t kErrorNoPermission = 4;
inline constexpr nvmlReturn_t kErrorNotFound = 6;
inline constexpr nvmlReturn_t kErrorInsufficientSize = 7;
inline constexpr nvmlReturn_t kErrorDriverNotLoaded = 9;
inline constexpr nvmlReturn_t kErrorLibraryNotFound = 12;
inline constexpr nvmlReturn_t kErrorFunctionNotFound = 13;
inline constexpr nvmlReturn_t kErrorGpuIsLost = 15;
inline constexpr nvmlReturn_t kErrorInUse = 19;
inline constexpr nvmlReturn_t kErrorInsufficientResources = 23;
inline constexpr nvmlReturn_t kErrorArgumentVersionMismatch = 25;
inline constexpr nvmlReturn_t kErrorUnknown = 999;

// "INSUFFICIENT_RESOURCES" for NVML_ERROR_INSUFFICIENT_RESOURCES ("SUCCESS" for 0); nullptr for
// a code this table lacks (newer drivers add codes).
inline const char* ReturnCodeName(nvmlReturn_t code) {
  static constexpr const char* kNames[] = {"SUCCESS",
                                           "UNINITIALIZED",
                                           "INVALID_ARGUMENT",
                                           "NOT_SUPPORTED",
                                           "NO_PERMISSION",
                                           "ALREADY_INITIALIZED",
                                           "NOT_FOUND",
                                           "INSUFFICIENT_SIZE",
                                           "INSUFFICIENT_POWER",
                                           "DRIVER_NOT_LOADED",
                                           "TIMEOUT",
                                           "IRQ_ISSUE",
                                           "LIBRARY_NOT_FOUND",
                                           "FUNCTION_NOT_FOUND",
                                           "CORRUPTED_INFOROM",
                                           "GPU_IS_LOST",
                                           "RESET_REQUIRED",
                                           "OPERATING_SYSTEM",
                                           "LIB_RM_VERSION_MISMATCH",
                                           "IN_USE",
                                           "MEMORY",
                                           "NO_DATA",
                                           "VGPU_ECC_NOT_SUPPORTED",
                                           "INSUFFICIENT_RESOURCES",
                                           "FREQ_NOT_SUPPORTED",
                                           "ARGUMENT_VERSION_MISMATCH",
                                           "DEPRECATED",
                                           "NOT_READY",
                                           "GPU_NOT_FOUND",
                                           "INVALID_STATE"};
  if (code == kErrorUnknown) return "UNKNOWN";
  if (code < 0 || code >= static_cast<nvmlReturn_t>(std::size(kNames))) return nullptr;
  return kNames[code];
}

// MIG constants (nvml.md §2, "MIG").
inline constexpr unsigned int kMigDisable = 0;
inline constexpr unsigned int kMigEnable = 1;
// NVML_GPU_INSTANCE_PROFILE_* values run 0x0 .. 0x11 in 13.x; older drivers reject the newer.
inline constexpr unsigned int kGpuInstanceProfileCount = 0x12;
inline constexpr unsigned int kComputeInstanceEngineProfileShared = 0;
// Compute slices of NVML_COMPUTE_INSTANCE_PROFILE_<value> for values 0x0 .. 0x6 (1, 2, 3, 4, 7,
// 8 and 6 slices); 0x7 (1_SLICE_REV1) is not used here.
inline constexpr int kComputeInstanceProfileSlices[] = {1, 2, 3, 4, 7, 8, 6};
// Versions of the "V" structs: sizeof | version << 24.
inline constexpr unsigned int kGpuInstanceProfileInfoV2 =
    sizeof(nvmlGpuInstanceProfileInfo_v2_t) | (2U << 24);
inline constexpr unsigned int kComputeInstanceProfileInfoV2 =
    sizeof(nvmlComputeInstanceProfileInfo_v2_t) | (2U << 24);
static_assert(kGpuInstanceProfileInfoV2 == 0x02000098, "nvmlGpuInstanceProfileInfo_v2");
static_assert(kComputeInstanceProfileInfoV2 == 0x02000088, "nvmlComputeInstanceProfileInfo_v2");
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;

// Clock types and temperature sensor.
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;
inline constexpr int kTemperatureGpu = 0;

// Field IDs (nvml.md §2, "Field values").
inline constexpr unsigned int kFieldPowerAverage = 185;
inline constexpr unsigned int kFieldPowerInstant = 186;
// nvmlValueType_t: which member of nvmlValue_t a field value fills.
inline constexpr int kValueTypeDouble = 0;
inline constexpr int kValueTypeUnsignedInt = 1;
inline constexpr int kValueTypeUnsignedLong = 2;
inline constexpr int kValueTypeUnsignedLongLong = 3;
inline constexpr int kValueTypeSignedLongLong = 4;
inline constexpr int kValueTypeSignedInt = 5;
inline constexpr int kValueTypeUnsignedShort = 6;

// Power-smoothing fields (NVML_FI_PWR_SMOOTHING_*, 256-270 in the 12.9/13.x headers; the
// PROFILE_* ones read one preset, chosen by scopeId). Ramp rates are in mW/s, the hysteresis in
// ms, the floors in % of TMP (total module power), the applied floor in W.
inline constexpr unsigned int kFieldPowerSmoothingEnabled = 256;
inline constexpr unsigned int kFieldPowerSmoothingAppliedFloor = 260;
inline constexpr unsigned int kFieldPowerSmoothingLifetimeRemaining = 263;
inline constexpr unsigned int kFieldPowerSmoothingPresetCount = 264;
inline constexpr unsigned int kFieldPowerSmoothingProfileFloor = 265;
inline constexpr unsigned int kFieldPowerSmoothingProfileRampUp = 266;
inline constexpr unsigned int kFieldPowerSmoothingProfileRampDown = 267;
inline constexpr unsigned int kFieldPowerSmoothingProfileHysteresis = 268;
inline constexpr unsigned int kFieldPowerSmoothingActiveProfile = 269;
// NVML_POWER_SMOOTHING_MAX_NUM_PROFILES.
inline constexpr unsigned int kPowerSmoothingMaxProfiles = 5;
// NVML_POWER_SMOOTHING_PROFILE_PARAM_*: what UpdatePresetProfileParam sets (in %, W/s, W/s, ms).
inline constexpr unsigned int kPowerSmoothingParamFloor = 0;
inline constexpr unsigned int kPowerSmoothingParamRampUp = 1;
inline constexpr unsigned int kPowerSmoothingParamRampDown = 2;
inline constexpr unsigned int kPowerSmoothingParamHysteresis = 3;
inline constexpr unsigned int kPowerSmoothingProfileV1 =
    sizeof(nvmlPowerSmoothingProfile_t) | (1U << 24);
inline constexpr unsigned int kPowerSmoothingStateV1 =
    sizeof(nvmlPowerSmoothingState_t) | (1U << 24);

inline constexpr int kTotalPowerSamples = 0;

inline constexpr unsigned int kDeviceNameBufferSize = 96;
inline constexpr unsigned int kDeviceUuidBufferSize = 96;

}  // namespace headroom::gpu::nvml

#endif  // HEADROOM_GPU_NVML_NVML_TYPES_H_
