// out = s * in, both rows x cols row-major; the row index rides threadIdx.x.
// @kl launch grid(cdiv(cols, BD), cdiv(rows, BD)) block(BD, BD)
#define BD 16

extern "C" __global__ void scale2d(int rows, int cols, float s, const float *in,
                                   float *out) {
  int c = blockIdx.x * BD + threadIdx.x;
  int r = blockIdx.y * BD + threadIdx.y;
  if (r < rows && c < cols)
    out[r * cols + c] = s * in[r * cols + c];
}
