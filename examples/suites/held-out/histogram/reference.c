// The C reference of histogram: the 256 counts of the byte values, from zero.
void reference(int n, const unsigned char *data, unsigned *bins) {
  for (int b = 0; b < 256; ++b) bins[b] = 0;
  for (int i = 0; i < n; ++i) bins[data[i]] += 1;
}
