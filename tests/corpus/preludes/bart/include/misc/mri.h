// Stand-in for bart's misc/mri.h: the CUDA file defines what it declares.
