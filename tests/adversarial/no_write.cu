// expect: wrong. Writes nothing: only stale memory could make it pass.
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {}
