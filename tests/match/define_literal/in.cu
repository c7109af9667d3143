// A directive pattern without metavariables is literal text: it reaches
// #define lines (kl.source preproc nodes), at file scope and in a body.
#define BM 64 // match:
#define BN 64 // nomatch: another name
#define  BM   64 // match:
#define BM 128 // nomatch: another value
__global__ void k(float *a) {
#define BM 64 // match:
  a[0] = BM;
}
