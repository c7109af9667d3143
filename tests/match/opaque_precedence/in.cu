// Opaque code (every statement starts with a stray byte, so no parser
// structures it): a metavariable binds only a subexpression, never a run
// cut across an operator that binds more loosely than the pattern's.
__global__ void opaque_mul(float *o, float *p, float a, float b, float c, float d, float x) {
  ` o[0] = a - b * c; // match: $x=b $y=c
  ` o[1] = x / a * b; // match: $x=x/a $y=b
  ` o[2] = -a * b; // match: $x=-a $y=b
  ` o[3] = a * b + c; // match: $x=a $y=b
  ` o[4] = a + b * c + d; // match: $x=b $y=c
  ` o[5] = a * (int)b++; // match: $x=a $y=(int)b++
  ` o[6] = p->x * b; // match: $x=p->x $y=b
  ` o[7] = a ? b : c * d; // match: $x=c $y=d
  ` o[8] = (float)a * b; // match: $x=(float)a $y=b
  ` o[9] = f(a) * b; // match: $x=f(a) $y=b
  ` o[10] = a * b * c; // match: $x=a $y=b
  ` o[11] = (int)x & (int)a * (int)b; // match: $x=(int)a $y=(int)b
  ` o[12] = *p * b; // match: $x=*p $y=b
  ` o[13] = a + b; // nomatch: no product
  ` o[14] = a << b + c; // nomatch: no product
  ` o[15] = (a) - b * c; // nomatch: (a) may be a cast of -b
}
