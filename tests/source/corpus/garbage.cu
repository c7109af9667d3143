// Unbalanced and garbage input: the parser must keep every byte and recover.
__global__ void ok_before(int *p) { p[0] = 1; }

__global__ void broken(int *p) {
  p[0] = (1 + ;
  int x = ];
  if (x { p[1] = 2; }
  p[2] = 3;
}

int a = @ ` $$ ;
}}} ))) ]]]
__global__ void ok_after(int *p) { p[threadIdx.x] = 2; }
"unterminated string
'x
/* unterminated comment at the end
