// headroom's own minimal NVML declarations: just the types, constants and function-pointer
// signatures the backend uses (nvml.md §1-3), so no NVIDIA header or package is needed to build.
// Values and layouts are NVML's C ABI on x86-64 Linux; they are used only inside gpu/nvml and the
// fake NVML test library. Header only.
#ifndef HEADROOM_GPU_NVML_NVML_TYPES_H_
#define HEADROOM_GPU_NVML_NVML_TYPES_H_

namespace headroom::gpu::nvml {

extern "C" {

typedef int nvmlReturn_t;  // a C enum: 4 bytes
typedef struct nvmlDevice_st* nvmlDevice_t;

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
inline constexpr nvmlReturn_t kErrorUnknown = 999;

// Clock types and temperature sensor.
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;
inline constexpr int kTemperatureGpu = 0;

// Field IDs (nvml.md §2, "Field values").
inline constexpr unsigned int kFieldPowerAverage = 185;
inline constexpr unsigned int kFieldPowerInstant = 186;
inline constexpr int kValueTypeUnsignedInt = 1;

inline constexpr int kTotalPowerSamples = 0;

inline constexpr unsigned int kDeviceNameBufferSize = 96;
inline constexpr unsigned int kDeviceUuidBufferSize = 96;

}  // namespace headroom::gpu::nvml

#endif  // HEADROOM_GPU_NVML_NVML_TYPES_H_
