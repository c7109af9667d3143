// CPU reference for transpose: out (cols x rows) = in (rows x cols)^T,
// both row-major.
void reference(int rows, int cols, const float *in, float *out) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      out[(long)c * rows + r] = in[(long)r * cols + c];
}
