// Stand-in for bart's num/multind.h: the dimension helpers the CUDA files
// call from host code.
long md_calc_size(int D, const long dims[]);
void md_calc_strides(int D, long str[], const long dims[], long size);
void md_select_dims(int D, unsigned long flags, long odims[], const long idims[]);
void md_copy_dims(int D, long odims[], const long idims[]);
unsigned long md_nontriv_dims(int D, const long dims[]);
