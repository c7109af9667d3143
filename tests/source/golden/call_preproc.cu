// Preprocessor lines between call and launch arguments (SobelFilter,
// mummergpu), template-ids passed as values, extern "C" constants.
extern "C" const uint MAX_BATCH = 64 * 1048576;
template <typename Real> __global__ void computeValue(Real *v);
void host(uchar4 *odata, int iw, int BlockWidth, dim3 blocks, dim3 threads) {
  SobelShared<<<blocks, threads, 0>>>((uchar4 *)odata, iw,
#ifndef FIXED_BLOCKWIDTH
                                      BlockWidth,
#endif
                                      iw);
  cudaFuncGetAttributes(&attr, computeValue<float>);
  int n = getNode(iw, BlockWidth
#if !NODETEX
                  , odata
#else
                  , 0
#endif
  );
}
