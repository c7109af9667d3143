/* cuDNN's fp32 convolution, the bar the conv2d lineage is judged against.
 * libcudnn is loaded with dlopen (klineage never depends on it), from the
 * loader's path or from $KL_CUDNN_LIB; its prototypes are declared here by
 * hand, as the cuDNN 9 C API documents them, so that klineage builds where
 * cuDNN's headers are absent. It runs on the calling thread's current CUDA
 * context and the default stream, so a worker times it like a kernel. */
#ifndef KL_CUDNN_CONV_H
#define KL_CUDNN_CONV_H

#include <stddef.h>

/* Loads cuDNN and creates a handle, once. Returns its version (e.g. 91900)
 * or 0 with a reason in why. */
long kl_cudnn_load(char *why, size_t n);

/* y = conv(x, w): NCHW x (N x C x H x W), KCRS w (K x C x 3 x 3), NCHW y
 * (N x K x H x W), stride 1, zero padding 1, cross-correlation (no flip),
 * fp32 with FMA math only (no TF32 tensor cores). The algorithm is the
 * fastest FMA one cudnnFind reports for the shape, chosen at the shape's
 * first call (which therefore takes longer); its workspace is kept until
 * the shape changes. x, w, y are device addresses. Returns 1, or 0 with a
 * reason. *algo, when not NULL, receives the algorithm's number. */
int kl_cudnn_conv3x3(int N, int C, int H, int W, int K, const void *x, const void *w, void *y, int *algo,
                     char *why, size_t n);

#endif
