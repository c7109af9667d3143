// Opaque code (every statement starts with a stray byte, so no parser
// structures it): a metavariable binds only a subexpression, never a run
// cut across an operator that binds more loosely than the pattern's.
__global__ void opaque_mul(float *o, float *p, float a, float b, float c, float d, float x) {
  ` o[0] = a - mul(b, c); // match: $x=b $y=c
  ` o[1] = mul(x / a, b); // match: $x=x/a $y=b
  ` o[2] = mul(-a, b); // match: $x=-a $y=b
  ` o[3] = mul(a, b) + c; // match: $x=a $y=b
  ` o[4] = a + mul(b, c) + d; // match: $x=b $y=c
  ` o[5] = mul(a, (int)b++); // match: $x=a $y=(int)b++
  ` o[6] = mul(p->x, b); // match: $x=p->x $y=b
  ` o[7] = a ? b : mul(c, d); // match: $x=c $y=d
  ` o[8] = mul((float)a, b); // match: $x=(float)a $y=b
  ` o[9] = mul(f(a), b); // match: $x=f(a) $y=b
  ` o[10] = mul(a, b) * c; // match: $x=a $y=b
  ` o[11] = (int)x & mul((int)a, (int)b); // match: $x=(int)a $y=(int)b
  ` o[12] = mul(*p, b); // match: $x=*p $y=b
  ` o[13] = a + b; // nomatch: no product
  ` o[14] = a << b + c; // nomatch: no product
  ` o[15] = (a) - b * c; // nomatch: (a) may be a cast of -b
}
