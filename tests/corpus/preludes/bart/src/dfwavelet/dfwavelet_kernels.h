// Stand-in for bart's dfwavelet_kernels.h: the element types.
typedef float scalar_t;
typedef _Complex float data_t;
// The transforms the file's host wrappers call before defining them.
struct dfwavelet_plan_s;
extern "C" void dffwt3_gpu(struct dfwavelet_plan_s *, data_t *, data_t *, data_t *, data_t *, data_t *, data_t *);
extern "C" void dfiwt3_gpu(struct dfwavelet_plan_s *, data_t *, data_t *, data_t *, data_t *, data_t *, data_t *);
extern "C" void dfsoftthresh_gpu(struct dfwavelet_plan_s *, scalar_t, scalar_t, data_t *, data_t *, data_t *);
extern "C" void dfwavthresh3_gpu(struct dfwavelet_plan_s *, scalar_t, scalar_t, data_t *, data_t *, data_t *, data_t *, data_t *, data_t *);
extern "C" void circshift_gpu(struct dfwavelet_plan_s *, data_t *);
extern "C" void circunshift_gpu(struct dfwavelet_plan_s *, data_t *);
