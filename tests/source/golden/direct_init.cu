// Direct initialization at block scope, and the most vexing parse.
__device__ int id2addr(int i);
__global__ void k(float *a, float b, float c, float d, int n) {
  Foo x(1);                              // a literal: a variable
  string msg("Could not");               // a literal
  std::ofstream file("momentum");        // qualified type
  TextureAddress ta(id2addr(n));         // id2addr is a function
  dim3 grid(n / 256, 1);                 // dim3 is a known type
  float4 v(a[0], b, c, d);
  Foo y(n / 256, 1);                     // an operator
  Foo z(a);                              // a is a parameter
  Foo u{n}, w(b);
  T f(U);                                // could declare a function: opaque
  T g();                                 // declares a function: opaque
  T h(q(r));                             // could declare a function: opaque
}
