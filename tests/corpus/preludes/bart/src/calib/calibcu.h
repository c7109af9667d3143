// Stand-in for bart's calib/calibcu.h: the CUDA file defines what it declares.
