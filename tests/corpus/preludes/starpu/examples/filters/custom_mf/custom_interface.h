// Stand-in for the example's custom_interface.h: its interface keeps the
// CPU's points and the GPU's two coordinate arrays.
struct custom_data_interface { struct point *cpu_ptr; float *x, *y; unsigned nx; };
#define KL_CUSTOM(i) ((struct custom_data_interface *)(i))
#define CUSTOM_GET_NX(i) (KL_CUSTOM(i)->nx)
#define CUSTOM_GET_CPU_PTR(i) (KL_CUSTOM(i)->cpu_ptr)
#define CUSTOM_GET_X_PTR(i) (KL_CUSTOM(i)->x)
#define CUSTOM_GET_Y_PTR(i) (KL_CUSTOM(i)->y)
