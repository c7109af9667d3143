// Stand-in for bart's num/gpu_conv.h: the CUDA file defines what it declares.
