// Stand-in for bart's dfwavelet_impl.h: the plan's fields the CUDA file
// reads.
struct dfwavelet_plan_s {
  int numdims;
  long *imSize;
  long numPixel;
  long numCoeff;
  long numCoarse;
  int numLevels;
  int filterLen;
  int *randShift;
  long *waveSizes;
  scalar_t *res;
  scalar_t *lod0, *lod1, *lor0, *lor1;
  int use_gpu;
};
