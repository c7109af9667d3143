// Stand-in for bart's wl3-cuda.h: nothing of it is needed beyond the
// file's own definitions.
