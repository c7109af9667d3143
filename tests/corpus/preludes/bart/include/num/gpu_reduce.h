// Stand-in for bart's num/gpu_reduce.h: the CUDA file defines what it declares.
