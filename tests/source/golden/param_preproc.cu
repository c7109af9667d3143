// Preprocessor lines inside parameter lists (mummergpu): PREPROC children of PARAM_LIST.
__device__ char getRef(int refpos
#if !REFTEX
                       ,char* ref
#endif
                       ) { return ref[refpos]; }
__global__ void mk(void* match_coords,
#if COALESCED_QUERIES
				int*		coordAddrs,
#endif
#ifdef X
  float *a, int n
#else
  double *a, long n
#endif
  ) { }
__device__ uint4 getMerged(
#if !NODETEX
   _PixelOfNode * nodes,
#endif
   int x) { return x; }
