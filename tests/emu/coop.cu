#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// Block sum through cooperative groups: warp tiles reduce with cg::reduce,
// tiles of 8 with shfl_down, the block syncs through its group handle.
extern "C" __global__ void coop_sum(const int *in, int *out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  cg::thread_block_tile<8> eight = cg::tiled_partition<8>(block);
  __shared__ int warp_sums[32];
  int v = in[block.thread_rank()];
  int w = cg::reduce(warp, v, cg::plus<int>());
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = w;
  int e = v;
  for (unsigned o = 4; o > 0; o /= 2) e += eight.shfl_down(e, o);
  if (eight.thread_rank() == 0) out[1 + block.thread_rank() / 8] = e;
  block.sync();
  if (block.thread_rank() == 0) {
    int total = 0;
    for (unsigned i = 0; i < warp.meta_group_size(); ++i) total += warp_sums[i];
    out[0] = total;
  }
  out[1 + block.size() / 8 + block.thread_rank()] = (int)eight.ballot(v % 2);
}
