// new / delete expressions (rodinia host code).
void host(int n, int rows, void *s_buffer, int *s_data) {
  int *h = new int[n * 2];
  const float **pI = new const float *[n];
  int **wall = new int *[rows];
  std::ofstream *out = new std::ofstream(filename);
  Vector<int> *v = new (s_buffer) Vector<int>(1024, s_data);
  S *s = ::new S{1, 2};
  Quadtree_node *q = new Quadtree_node[n]();
  delete[] h;
  delete [] pI;
  delete out;
  delete (v);
  ::delete s;
  delete *wall;
}
