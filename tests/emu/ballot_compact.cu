// Warp-level stream compaction with __ballot_sync and __popc: each warp
// keeps its positive elements, in order, at the front of its 32 slots.
extern "C" __global__ void compact(const int *in, int *out, int *counts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int v = i < n ? in[i] : 0;
  bool keep = v > 0;
  unsigned votes = __ballot_sync(0xffffffffu, keep);
  int rank = __popc(votes & ((1u << lane) - 1u));
  int warp = i / 32;
  if (keep) out[warp * 32 + rank] = v;
  if (lane == 0) counts[warp] = __popc(votes);
}
