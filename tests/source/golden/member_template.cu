// Member template calls (cuda-samples dwt).
template <typename T> void run(T &fdwt53, T *p, float *in, float *out, int sx) {
  fdwt53.transform<true, false>(in, out, sx);
  fdwt53.template transform<3>(in);
  p->get<T>();
  p->template put<int, 4>(out[0], sx);
}
