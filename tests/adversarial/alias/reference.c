// y = x - x[row * C]; in place when y == x (the first element is kept first).
void reference(int R, int C, const float *x, float *y) {
  for (int r = 0; r < R; ++r) {
    long row = (long)r * C;
    float first = x[row];
    for (int j = 0; j < C; ++j) y[row + j] = x[row + j] - first;
  }
}
