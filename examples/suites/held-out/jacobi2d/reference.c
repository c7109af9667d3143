// The C reference of jacobi2d: one Jacobi sweep of the 5-point stencil,
// the neighbours summed in double; the boundary copied.
void reference(int rows, int cols, const float *u, float *v) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      long at = (long)i * cols + j;
      if (i == 0 || j == 0 || i == rows - 1 || j == cols - 1) {
        v[at] = u[at];
        continue;
      }
      double sum = (double)u[at - cols] + (double)u[at + cols] + (double)u[at - 1] + (double)u[at + 1];
      v[at] = (float)(0.25 * sum);
    }
}
