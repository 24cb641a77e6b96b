// Two small CUDA workloads for scripts/device-check.sh: a compute-bound one (like prefill) and a
// memory-bound one (like decode), each run for a given number of seconds. They only compute:
// no clock, power-limit, MIG or reset calls. Marks its phase through $HEADROOM_MARKERS.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void ComputeBound(float* out, int iterations) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f;
  for (int i = 0; i < iterations; ++i) {
    a = fmaf(a, b, c);
    b = fmaf(b, c, a);
    c = fmaf(c, a, b);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c;
}

__global__ void MemoryBound(const float4* in, float4* out, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = in[i];
  }
}

static void Mark(const char* line) {
  const char* path = std::getenv("HEADROOM_MARKERS");
  if (path == nullptr) return;
  if (FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "%s\n", line);
    std::fclose(f);
  }
}

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "compute") != 0 && std::strcmp(argv[1], "memory") != 0)) {
    std::fprintf(stderr, "usage: %s compute|memory SECONDS\n", argv[0]);
    return 2;
  }
  const bool compute = std::strcmp(argv[1], "compute") == 0;
  const double seconds = std::atof(argv[2]);
  const size_t n = size_t{1} << 27;  // 2 GiB of float4 per buffer
  float4 *in = nullptr, *out = nullptr;
  if (cudaMalloc(&in, n * sizeof(float4)) != cudaSuccess ||
      cudaMalloc(&out, n * sizeof(float4)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(in, 0, n * sizeof(float4));
  Mark(compute ? "phase compute" : "phase memory");
  const auto start = std::chrono::steady_clock::now();
  long launches = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    if (compute) {
      ComputeBound<<<132 * 16, 256>>>(reinterpret_cast<float*>(out), 1 << 14);
    } else {
      MemoryBound<<<132 * 16, 256>>>(in, out, n);
    }
    cudaDeviceSynchronize();
    ++launches;
  }
  Mark("phase done");
  std::printf("%s: %ld launches in %.1f s\n", argv[1], launches, seconds);
  cudaFree(in);
  cudaFree(out);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
