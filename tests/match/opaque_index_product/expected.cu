// The issue's case, in opaque code (a stray byte starts each statement):
// `$i * $n + $j` must not take `SharedIdx + 4` as $i, and a rewrite that
// moves a binding next to a tighter operator parenthesizes it.
__global__ void opaque_index(float *LocalBlock, float *A, float *p, int SharedIdx, int ib, int i, int n, int j, int k, int x) {
  ` float v0 = LocalBlock[SharedIdx + 4 * ib + 0]; // nomatch: $i would be SharedIdx + 4
  ` float v1 = LocalBlock[j + n * i]; // match: $a=LocalBlock $i=i $n=n $j=j
  ` float v2 = A[j + n * (i * k)]; // match: $a=A $i=i*k $n=n $j=j
  ` float v3 = A[j * k + n * i]; // match: $i=i $n=n $j=j*k
  ` float v4 = A[i * n + j - 1]; // nomatch: (i * n + j) - 1
  ` float v5 = A[x ? i : k * n + j]; // nomatch: $i would hold a ?:
  ` float v6 = *p + A[j + n * -i]; // match: $a=A $i=-i
  ` float v7 = A[i << 2 * n + j]; // nomatch: i << (2 * n + j)
  ` float v8 = A[i + k * n + j]; // nomatch: $i would be i + k
  ` float v9 = A[j + n * (i + k)]; // match: $i=(i+k)
  ` float v10 = A[(j, k) + n * i]; // match: $j=(j,k)
}
