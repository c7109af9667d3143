// Member template calls (cuda-samples dwt).
template <typename T> void run(T &fdwt53, T *p, float *in, float *out, int sx) {
  fdwt53.transform<true, false>(in, out, sx);
  fdwt53.template transform<3>(in);
  p->get<T>();
  p->template put<int, 4>(out[0], sx);
}
// Name<args>{...}: an initializer list of that type (dmmaTensorCoreGemm)
__device__ void copy(double2 *dst, double2 *src) {
  cg::memcpy_async(tile32, dst, src, cuda::aligned_size_t<alignof(double2)>{sizeof(double2) * 4});
}
