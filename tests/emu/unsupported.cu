// Reads the lane id with inline PTX: kl.emu cannot run it.
extern "C" __global__ void laneid(int *out) {
  unsigned lane;

  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  out[threadIdx.x] = (int)lane;
}
