// CPU reference for transpose: output (cols x rows) = input (rows x cols)^T,
// both row-major. The parameters have the names of the spec's args.
void reference(int rows, int cols, const float *input, float *output) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      output[(long)c * rows + r] = input[(long)r * cols + c];
}
