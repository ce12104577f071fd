// DGNN_HD marks arithmetic shared by CUDA kernels and their CPU twins (tests, CPU paths):
// __host__ __device__ under nvcc, nothing elsewhere.
#pragma once

#if defined(__CUDACC__)
#define DGNN_HD __host__ __device__
#else
#define DGNN_HD
#endif
