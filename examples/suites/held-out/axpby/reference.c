// The C reference of axpby: z = alpha * x + beta * y, in double.
void reference(long long n, float alpha, const float *x, float beta, const float *y, float *z) {
  for (long long i = 0; i < n; ++i) z[i] = (float)((double)alpha * x[i] + (double)beta * y[i]);
}
