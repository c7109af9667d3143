__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__shared__ float g[32][33];
__global__ void k0(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k1(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k2(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k3(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k4(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k5(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k6(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k7(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k8(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k9(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k10(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k11(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k12(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k13(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k14(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k15(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k16(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k17(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k18(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k19(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k20(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k21(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k22(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k23(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k24(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k25(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k26(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k27(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k28(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
__global__ void k29(float *a) { __shared__ float s[32][32]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; g[threadIdx.x][0] = 1; }
