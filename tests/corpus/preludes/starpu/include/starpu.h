// Stand-in for StarPU's <starpu.h>: the data-interface accessors, the
// CUDA stream and the error report the corpus's codelets use, over
// interface records of this file's own (only the field names matter to a
// compile).
#ifndef KL_STARPU_H
#define KL_STARPU_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct starpu_vector_interface { uintptr_t ptr; uint32_t nx; size_t elemsize; };
struct starpu_variable_interface { uintptr_t ptr; size_t elemsize; };
struct starpu_matrix_interface { uintptr_t ptr; uint32_t nx, ny, ld; size_t elemsize; };
struct starpu_block_interface { uintptr_t ptr; uint32_t nx, ny, nz, ldy, ldz; size_t elemsize; };
struct starpu_csr_interface {
  uint32_t nnz, nrow, firstentry;
  uintptr_t nzval;
  uint32_t *colind, *rowptr;
  size_t elemsize;
};
struct starpu_bcsr_interface { uint32_t nnz, nrow, firstentry, r, c; uintptr_t nzval; uint32_t *colind, *rowptr; };
struct starpu_coo_interface { uintptr_t values; uint32_t n_values; uint32_t *columns, *rows; };
struct starpu_multiformat_interface { void *cpu_ptr; void *cuda_ptr; uint32_t nx; };

#define KL_STARPU_IF(kind, i) ((struct starpu_##kind##_interface *)(i))
#define STARPU_VECTOR_GET_PTR(i) (KL_STARPU_IF(vector, i)->ptr)
#define STARPU_VECTOR_GET_NX(i) (KL_STARPU_IF(vector, i)->nx)
#define STARPU_VECTOR_GET_ELEMSIZE(i) (KL_STARPU_IF(vector, i)->elemsize)
#define STARPU_VARIABLE_GET_PTR(i) (KL_STARPU_IF(variable, i)->ptr)
#define STARPU_MATRIX_GET_PTR(i) (KL_STARPU_IF(matrix, i)->ptr)
#define STARPU_MATRIX_GET_NX(i) (KL_STARPU_IF(matrix, i)->nx)
#define STARPU_MATRIX_GET_NY(i) (KL_STARPU_IF(matrix, i)->ny)
#define STARPU_MATRIX_GET_LD(i) (KL_STARPU_IF(matrix, i)->ld)
#define STARPU_BLOCK_GET_PTR(i) (KL_STARPU_IF(block, i)->ptr)
#define STARPU_BLOCK_GET_NX(i) (KL_STARPU_IF(block, i)->nx)
#define STARPU_BLOCK_GET_NY(i) (KL_STARPU_IF(block, i)->ny)
#define STARPU_BLOCK_GET_NZ(i) (KL_STARPU_IF(block, i)->nz)
#define STARPU_BLOCK_GET_LDY(i) (KL_STARPU_IF(block, i)->ldy)
#define STARPU_BLOCK_GET_LDZ(i) (KL_STARPU_IF(block, i)->ldz)
#define STARPU_CSR_GET_NNZ(i) (KL_STARPU_IF(csr, i)->nnz)
#define STARPU_CSR_GET_NROW(i) (KL_STARPU_IF(csr, i)->nrow)
#define STARPU_CSR_GET_NZVAL(i) (KL_STARPU_IF(csr, i)->nzval)
#define STARPU_CSR_GET_COLIND(i) (KL_STARPU_IF(csr, i)->colind)
#define STARPU_CSR_GET_ROWPTR(i) (KL_STARPU_IF(csr, i)->rowptr)
#define STARPU_CSR_GET_FIRSTENTRY(i) (KL_STARPU_IF(csr, i)->firstentry)
#define STARPU_BCSR_GET_NNZ(i) (KL_STARPU_IF(bcsr, i)->nnz)
#define STARPU_BCSR_GET_NZVAL(i) (KL_STARPU_IF(bcsr, i)->nzval)
#define STARPU_COO_GET_VALUES(i) (KL_STARPU_IF(coo, i)->values)
#define STARPU_COO_GET_NVALUES(i) (KL_STARPU_IF(coo, i)->n_values)
#define STARPU_MULTIFORMAT_GET_CPU_PTR(i) (KL_STARPU_IF(multiformat, i)->cpu_ptr)
#define STARPU_MULTIFORMAT_GET_CUDA_PTR(i) (KL_STARPU_IF(multiformat, i)->cuda_ptr)
#define STARPU_MULTIFORMAT_GET_NX(i) (KL_STARPU_IF(multiformat, i)->nx)

#define STARPU_MIN(a, b) ((a) < (b) ? (a) : (b))
#define STARPU_ASSERT(x) ((void)(x))
#define STARPU_CUDA_REPORT_ERROR(status) abort()
#define __starpu_func__ __func__

cudaStream_t starpu_cuda_get_local_stream(void);
int starpu_worker_get_id(void);
void starpu_codelet_unpack_args(void *, ...);
void starpu_sched_ctx_get_sms_interval(int, int *, int *);
#endif
