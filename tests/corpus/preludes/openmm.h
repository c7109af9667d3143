// Prelude for openmm's CUDA kernels (tests/corpus/preludes/compile.txt).
// OpenMM compiles each kernel at run time behind defines its host code
// writes: the precision's types, the math macros, and per-kernel sizes and
// code snippets. This stands in for them with one single-precision
// configuration; the sizes are arbitrary but consistent (powers of two
// where the kernels shift or mask by them).
#ifndef KL_OPENMM_PRELUDE
#define KL_OPENMM_PRELUDE

typedef float real;
typedef float2 real2;
typedef float3 real3;
typedef float4 real4;
typedef float mixed;
typedef float2 mixed2;
typedef float3 mixed3;
typedef float4 mixed4;
#define make_real2 make_float2
#define make_real3 make_float3
#define make_real4 make_float4
#define make_mixed2 make_float2
#define make_mixed3 make_float3
#define make_mixed4 make_float4

#define SQRT sqrtf
#define RSQRT rsqrtf
#define RECIP(x) (1.0f/(x))
#define EXP expf
#define LOG logf
#define ERF erff
#define ERFC erfcf
#define SHFL(var, lane) __shfl_sync(0xffffffff, var, lane)
#define BALLOT(var) __ballot_sync(0xffffffff, var)
#define SYNC_WARPS __syncwarp();

// Sizes and switches the host code sets per kernel.
#define NUM_ATOMS 1000
#define PADDED_NUM_ATOMS 1024
#define TILE_SIZE 32
#define THREAD_BLOCK_SIZE 256
#define NUM_BLOCKS 32
#define XSIZE 32
#define YSIZE 32
#define ZSIZE 32
#define PACKED_AXIS 0
#define PACKED_XSIZE 16
#define PACKED_YSIZE 32
#define PACKED_ZSIZE 32
#define GRID_SIZE_X 32
#define GRID_SIZE_Y 32
#define GRID_SIZE_Z 32
#define PME_ORDER 5
#define EWALD_ALPHA 3.0f
#define EPSILON_FACTOR 138.9f
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#define SQRT_PI 1.7724538509055160273f
#define PADDING 0.1f
#define PADDED_CUTOFF 1.1f
#define PADDED_CUTOFF_SQUARED 1.21f
#define MAX_CUTOFF 1.0f
#define CUTOFF_SQUARED 1.0f
#define GROUP_SIZE 32
#define BUFFER_SIZE 256
#define MAX_BITS_FOR_PAIRS 2
#define MAX_EXCLUSIONS 32
#define FIRST_EXCLUSION_TILE 0
#define LAST_EXCLUSION_TILE 16
#define NUM_TILES_WITH_EXCLUSIONS 16
#define ENERGY_SCALE_FACTOR 1.0f
#define MAX_EXTRAPOLATION_ORDER 4
#define EXTRAPOLATION_COEFFICIENTS_SUM 1.0f
#define MAX_PREV_DIIS_DIPOLES 8
#define USE_CUTOFF 1
#define USE_PERIODIC
#define USE_EXCLUSIONS
#define INCLUDE_FORCES
#define INCLUDE_ENERGY

// fft.cu: one complex-to-complex pass along z.
#define INPUT_TYPE real2
#define OUTPUT_TYPE real2
#define SIGN 1
#define BLOCKS_PER_GROUP 1
#define THREADS_PER_BLOCK 32
#define COMPUTE_FFT

// sort.cu: sorting floats by their value.
#define DATA_TYPE float
#define KEY_TYPE float
#define SORT_KEY value
#define MIN_KEY (-3.0e38f)
#define MAX_KEY 3.0e38f
#define MAX_VALUE 3.0e38f

// Code the host pastes into nonbonded.cu: one charge per atom, no extra
// parameters or derivatives.
#define ATOM_PARAMETER_DATA
#define PARAMETER_ARGUMENTS
#define PARAMETER_SIZE_IS_EVEN
#define DECLARE_LOCAL_PARAMETERS
#define CLEAR_LOCAL_PARAMETERS
#define LOAD_LOCAL_PARAMETERS_FROM_1
#define LOAD_LOCAL_PARAMETERS_FROM_GLOBAL
#define LOAD_ATOM1_PARAMETERS
#define LOAD_ATOM2_PARAMETERS
#define COMPUTE_INTERACTION
#define INIT_DERIVATIVES
#define SAVE_DERIVATIVES
typedef unsigned int tileflags;
#define SHUFFLE_WARP_DATA
#define BROADCAST_WARP_DATA

// Periodic boxes: the wrap into the box the host defines.
#define APPLY_PERIODIC_TO_DELTA(delta) { \
    delta.x -= floorf(delta.x*invPeriodicBoxSize.x+0.5f)*periodicBoxSize.x; \
    delta.y -= floorf(delta.y*invPeriodicBoxSize.y+0.5f)*periodicBoxSize.y; \
    delta.z -= floorf(delta.z*invPeriodicBoxSize.z+0.5f)*periodicBoxSize.z; }
#define APPLY_PERIODIC_TO_POS(pos) APPLY_PERIODIC_TO_DELTA(pos)
#define APPLY_PERIODIC_TO_POS_WITH_CENTER(pos, center) { \
    pos.x -= floorf((pos.x-center.x)*invPeriodicBoxSize.x+0.5f)*periodicBoxSize.x; \
    pos.y -= floorf((pos.y-center.y)*invPeriodicBoxSize.y+0.5f)*periodicBoxSize.y; \
    pos.z -= floorf((pos.z-center.z)*invPeriodicBoxSize.z+0.5f)*periodicBoxSize.z; }

// The kernels the host compiles with common.cu and vectorOps.cu in front
// (KL_OPENMM_ALONE: compiling one of those two itself).
#ifndef KL_OPENMM_ALONE
#include "common.cu"
#include "vectorOps.cu"
#endif

#endif
