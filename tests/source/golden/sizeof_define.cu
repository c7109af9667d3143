// sizeof of an undeclared name, #define'd types and numbers, and explicit
// instantiation of a class template.
#define fp float
#define NB 64
template <typename Real> class PiEstimator { Real x; };
template class PiEstimator<float>;
void host(int DX, int DY, fp xmax, fp xmin) {
  int bytes = sizeof(fComplex) * DY * (DX + NB);
  int n = sizeof(DX) * 2;
  fp tolerance = 10 / (fp)(xmax - xmin);
  int m = (NB) * 2 + (NB) - 1;
}
