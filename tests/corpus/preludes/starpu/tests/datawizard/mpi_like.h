// Stand-in for the test's mpi_like.h: nothing of it is used by the CUDA
// codelet that includes it.
