__global__ void rough(float *a) {
  a[0] = 1.0f;
  @@ not C at all atomicAdd_block(&a[1], 2.0f); @@ // match: $P=&a[1] $V=2.0f
  atomicAdd_block(&a[2], 3.0f); // match: $P=&a[2]
  atomicSub(&a[3], 1.0f); // nomatch: another atomic
}
