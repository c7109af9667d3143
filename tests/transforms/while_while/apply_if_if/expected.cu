// Any-leaf count: how many leaves of the BVH each ray's boxes reach (if-if traversal).
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
#define BLOCK 128
#define DONE 0x7fffffff  // stack sentinel: no inner node has this index
#define STACK 64
#define MISS 1e30f

__device__ void children(const float *nodes, int e, float ray, int &e0, int &e1, float &t0, float &t1);
__device__ void leaf(int e, float ray, int &hits);

extern "C" __global__ void count_leaves(int n, const float *rays, const float *nodes, int *out) {
  int r = blockIdx.x * BLOCK + threadIdx.x;
  if (r >= n) return;
  float ray = rays[r];
  int hits = 0;
  int stack[STACK];
  int sp = 0;
  stack[sp++] = DONE;
  int e = 0;  // the root
  // while-while: descend through inner nodes until this lane holds a leaf,
  // then test leaves until it holds an inner node again.
  while (e != DONE) {
    while (e >= 0 && e != DONE) {
      int e0, e1;
      float t0, t1;
      children(nodes, e, ray, e0, e1, t0, t1);
      if (t0 < MISS && t1 < MISS) {
        stack[sp++] = e1;
        e = e0;
      } else if (t0 < MISS) {
        e = e0;
      } else if (t1 < MISS) {
        e = e1;
      } else {
        e = stack[--sp];
      }
    }
    while (e < 0) {
      leaf(e, ray, hits);
      e = stack[--sp];
    }
  }
  out[r] = hits;
}
