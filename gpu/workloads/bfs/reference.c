// CPU reference for bfs: a serial queue BFS from vertex 0 over the CSR in
// `graph` (V + 1 row offsets, then the column indices); level[v] is the
// distance from 0, -1 when unreached. The other buffers are the kernels'
// scratch and are not used here.
#include <stdlib.h>

void reference(int V, int depth, int frontier, const int *graph, int *level,
               int *qa, int *qb, int *count, unsigned *bits) {
  const int *row = graph, *col = graph + V + 1;
  int *queue = (int *)malloc(sizeof(int) * (size_t)V);
  for (int v = 0; v < V; ++v) level[v] = -1;
  int head = 0, tail = 0;
  level[0] = 0;
  queue[tail++] = 0;
  while (head < tail) {
    int v = queue[head++];
    for (int e = row[v]; e < row[v + 1]; ++e) {
      int u = col[e];
      if (level[u] < 0) {
        level[u] = level[v] + 1;
        queue[tail++] = u;
      }
    }
  }
  free(queue);
  (void)depth; (void)frontier; (void)qa; (void)qb; (void)count; (void)bits;
}
