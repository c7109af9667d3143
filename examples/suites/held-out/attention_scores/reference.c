// The C reference of attention_scores: each dot product in double, divided
// by sqrt(D).
#include <math.h>

void reference(int BH, int L, int D, const float *Q, const float *K, float *S) {
  for (long h = 0; h < BH; ++h)
    for (int i = 0; i < L; ++i)
      for (int j = 0; j < L; ++j) {
        double dot = 0.0;
        for (int d = 0; d < D; ++d) dot += (double)Q[(h * L + i) * D + d] * (double)K[(h * L + j) * D + d];
        S[(h * L + i) * L + j] = (float)(dot / sqrt((double)D));
      }
}
