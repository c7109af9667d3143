// Stand-in for bart's num/gpukrnls.h: the CUDA file defines what it declares.
