// C-style casts to types the unit does not declare, and their ambiguous
// neighbours: a cast only where nothing else fits.
typedef double real;
template <typename T>
__device__ T f(T *rA, int j, float xmax, float xmin, float pu, float d, bool b) {
  float h = (fp)xmax - (fp)xmin;        // cast: an identifier follows
  float r = (fpt)1.0 - pu;              // cast: a literal follows
  unsigned u = (uint)ceil(d) + (UT)!b;  // cast: a call, a '!'
  float s = (N::t)::sqrt(d);            // cast: '::' follows
  real q = (real)(xmax + xmin);         // cast: real is a typedef of the unit
  T v = (T)-xmax;                       // cast: T is a template type parameter
  float w = (xmax) - xmin;              // paren: xmax is a parameter
  float z = (f)(rA, j, xmax, xmin, pu, d, b); // paren + call: f is a function
  return (T)rA[j];
}
__device__ float g(float a, float c) {
  float x = (undeclared) - c;           // ambiguous: opaque
  float y = (undeclared)(a);            // ambiguous: opaque
  float z = (undeclared) * c;           // ambiguous: opaque
  return x + y + z;
}
