// Stand-in for bart's num/flpmath.h: the CUDA file defines what it declares.
