-- The vocabulary of facts: every name klineage.facts can produce, with its
-- unit, its meaning and where it comes from. It is data, so that skills,
-- reports and tests read the same list. A name with <...> is a pattern:
-- <param> a pointer parameter, <loop> a loop's 1-based index in source
-- order (pre-order walk of the function), <array> a __shared__ array,
-- <NAME> a constant, <P> a workload parameter, <d> a divisor, <B> a
-- workload buffer, <limit> a field of kl.occupancy's limits table, <axis>
-- x, y or z.
--
-- from:
--   source     kl.source on the kernel text alone
--   nvrtc      ptxas's resource report through kl.nvrtc
--   occupancy  kl.occupancy's model over the nvrtc numbers and the launch
--   workload   the workload spec at the given params (with the annotations)
--   arch       kl.occupancy's limits table for the target arch
--   profile    a gate record's profile and metrics stages (a GPU measured it)
return {
  -- static: loops
  { name = "loops.count", unit = "loops", from = "source", meaning = "for, while and do loops in the function" },
  { name = "loops.max_depth", unit = "levels", from = "source", meaning = "deepest loop nesting (0: no loop)" },
  { name = "loops.constant_trips", unit = "loops", from = "source", meaning = "loops whose trip count is a constant" },
  { name = "loop.<loop>.kind", unit = "word", from = "source", meaning = "for, while or do" },
  { name = "loop.<loop>.depth", unit = "levels", from = "source", meaning = "nesting level of the loop (1: outermost)" },
  { name = "loop.<loop>.var", unit = "name", from = "source", meaning = "the induction variable of a counted for loop" },
  { name = "loop.<loop>.trip_count", unit = "iterations", from = "source",
    meaning = "iterations, when init, bound and step evaluate with the kernel's integer constants alone" },
  { name = "loop.<loop>.trip_count_at_workload", unit = "iterations", from = "workload",
    meaning = "iterations with the workload params as well (a bound such as K)" },
  { name = "loop.<loop>.pragma_unroll", unit = "boolean", from = "source", meaning = "the loop has a #pragma unroll" },
  { name = "loop.<loop>.unroll", unit = "factor", from = "source",
    meaning = "N of the loop's #pragma unroll N; absent for a bare #pragma unroll (the compiler chooses)" },
  { name = "loop.<loop>.barriers", unit = "calls", from = "source", meaning = "__syncthreads calls inside the loop" },
  { name = "pragma_unroll.count", unit = "pragmas", from = "source", meaning = "#pragma unroll lines on the function's loops" },
  -- static: global accesses per pointer parameter
  { name = "access.<param>.count", unit = "accesses", from = "source", meaning = "subscript accesses through the parameter" },
  { name = "access.<param>.reads", unit = "boolean", from = "source", meaning = "the kernel reads through the parameter" },
  { name = "access.<param>.writes", unit = "boolean", from = "source", meaning = "the kernel writes through the parameter" },
  { name = "access.<param>.coalesced", unit = "boolean", from = "source",
    meaning = "every access has a stride of 0 or 1 element along threadIdx.x" },
  { name = "access.<param>.tx_stride", unit = "elements", from = "source",
    meaning = "largest constant stride along threadIdx.x over the accesses; absent when one is symbolic or unknown" },
  { name = "access.<param>.tx_stride_kind", unit = "word", from = "source",
    meaning = "worst stride kind along threadIdx.x: zero, const, symbolic or unknown" },
  { name = "access.<param>.loop_reuse", unit = "boolean", from = "source",
    meaning = "some access is invariant in its innermost loop (the same element every iteration)" },
  { name = "access.<param>.in_loop", unit = "accesses", from = "source", meaning = "accesses inside a loop" },
  { name = "access.<param>.vector_width", unit = "elements", from = "source",
    meaning = "widest access (4 for a float4 load of a float buffer)" },
  { name = "access.<param>.const", unit = "boolean", from = "source", meaning = "the pointee is const" },
  { name = "access.<param>.restrict", unit = "boolean", from = "source", meaning = "the pointer is __restrict__" },
  -- static: shared memory
  { name = "shared.count", unit = "arrays", from = "source", meaning = "__shared__ arrays the function accesses" },
  { name = "shared.bytes", unit = "bytes", from = "source", meaning = "sum of their constant sizes" },
  { name = "shared.<array>.bytes", unit = "bytes", from = "source", meaning = "size of the array, when its dims are constant" },
  { name = "shared.<array>.dims", unit = "text", from = "source", meaning = "constant dims as \"32x33\"" },
  { name = "shared.<array>.elem_bytes", unit = "bytes", from = "source", meaning = "bytes of one element" },
  { name = "shared.<array>.bank_ways", unit = "ways", from = "source",
    meaning = "worst bank conflict over its accesses (1: none); absent when a stride is unknown" },
  -- static: barriers, constants, bounds
  { name = "barriers.count", unit = "calls", from = "source", meaning = "__syncthreads calls in the function" },
  { name = "barriers.in_loop", unit = "calls", from = "source", meaning = "of them, inside a loop" },
  { name = "define.<NAME>", unit = "integer", from = "source",
    meaning = "an integer constant: #define, constexpr/const integer, template default" },
  { name = "launch_bounds.max_threads", unit = "threads", from = "source", meaning = "__launch_bounds__ first argument" },
  { name = "launch_bounds.min_blocks", unit = "blocks", from = "source", meaning = "__launch_bounds__ second argument" },
  -- launch geometry, from the @kl annotations at the workload params
  { name = "launch.allowed", unit = "boolean", from = "workload", meaning = "every @kl requires holds at the params" },
  { name = "launch.grid.<axis>", unit = "blocks", from = "workload", meaning = "grid dimension" },
  { name = "launch.block.<axis>", unit = "threads", from = "workload", meaning = "block dimension" },
  { name = "launch.threads", unit = "threads", from = "workload", meaning = "threads per block" },
  { name = "launch.blocks", unit = "blocks", from = "workload", meaning = "blocks in the grid" },
  { name = "launch.smem_dynamic", unit = "bytes", from = "workload", meaning = "dynamic shared memory per block" },
  -- resources
  { name = "registers", unit = "registers/thread", from = "nvrtc", meaning = "registers per thread" },
  { name = "registers_arch", unit = "arch", from = "nvrtc", meaning = "the arch the register count was compiled for" },
  { name = "smem_static", unit = "bytes", from = "nvrtc", meaning = "static shared memory per block" },
  { name = "smem_per_block", unit = "bytes", from = "nvrtc", meaning = "static + dynamic shared memory per block" },
  { name = "stack", unit = "bytes", from = "nvrtc", meaning = "local memory stack frame per thread" },
  { name = "spill_stores", unit = "bytes", from = "nvrtc", meaning = "register spill stores per thread" },
  { name = "spill_loads", unit = "bytes", from = "nvrtc", meaning = "register spill loads per thread" },
  { name = "spills", unit = "boolean", from = "nvrtc", meaning = "ptxas spilled registers" },
  { name = "occupancy", unit = "fraction", from = "occupancy", meaning = "theoretical active warps / max warps per SM" },
  { name = "occupancy.active_blocks", unit = "blocks/SM", from = "occupancy", meaning = "resident blocks per SM" },
  { name = "occupancy.active_warps", unit = "warps/SM", from = "occupancy", meaning = "resident warps per SM" },
  { name = "occupancy.limited_by", unit = "word", from = "occupancy",
    meaning = "first binding limit: registers, smem, warps, blocks or barriers" },
  { name = "occupancy.limit.<limit>", unit = "blocks/SM", from = "occupancy", meaning = "blocks per SM that limit alone allows" },
  { name = "occupancy.why_zero", unit = "text", from = "occupancy", meaning = "why no block fits, when none does" },
  -- workload
  { name = "size.<P>", unit = "integer", from = "workload", meaning = "an integer workload parameter" },
  { name = "size.<P>.div<d>", unit = "boolean", from = "workload", meaning = "P % d == 0, d in 2, 4, 8, 16, 32" },
  { name = "size.<P>.div.<NAME>", unit = "boolean", from = "workload",
    meaning = "P divisible by a kernel constant used in the launch annotations or a loop bound" },
  { name = "buffer.<B>.bytes", unit = "bytes", from = "workload", meaning = "size of a workload buffer" },
  { name = "buffer.<B>.align", unit = "bytes", from = "workload",
    meaning = "largest power of two up to 256 that divides the buffer's size" },
  { name = "buffer.<B>.align16", unit = "boolean", from = "workload", meaning = "the size is a multiple of 16 bytes" },
  -- architecture
  { name = "arch", unit = "arch", from = "arch", meaning = "target architecture, sm_XX" },
  { name = "arch.max_blocks_per_sm", unit = "blocks/SM", from = "arch", meaning = "resident blocks per SM at most" },
  { name = "arch.max_warps_per_sm", unit = "warps/SM", from = "arch", meaning = "resident warps per SM at most" },
  { name = "arch.max_threads_per_block", unit = "threads", from = "arch", meaning = "threads per block at most" },
  { name = "arch.max_regs_per_thread", unit = "registers/thread", from = "arch", meaning = "registers per thread at most" },
  { name = "arch.regs_per_sm", unit = "registers", from = "arch", meaning = "register file per SM" },
  { name = "arch.regs_per_block", unit = "registers", from = "arch", meaning = "registers per block at most" },
  { name = "arch.reg_alloc_unit", unit = "registers", from = "arch", meaning = "registers are allocated per warp in units of this" },
  { name = "arch.smem_per_sm", unit = "bytes", from = "arch", meaning = "shared memory per SM" },
  { name = "arch.smem_per_block", unit = "bytes", from = "arch", meaning = "shared memory per block without the opt-in" },
  { name = "arch.smem_per_block_optin", unit = "bytes", from = "arch", meaning = "shared memory per block with the opt-in" },
  { name = "arch.smem_reserved", unit = "bytes", from = "arch", meaning = "shared memory the system reserves per block" },
  { name = "arch.smem_alloc_unit", unit = "bytes", from = "arch", meaning = "shared memory allocation granularity" },
  { name = "arch.sub_partitions", unit = "partitions", from = "arch", meaning = "SM sub-partitions (warp schedulers)" },
  { name = "arch.<limit>", unit = "limit", from = "arch",
    meaning = "another field of kl.occupancy.limits(arch), should the table gain one, in its own unit" },
  -- profile
  { name = "profile.time_ms", unit = "ms", from = "profile", meaning = "median kernel time at the bench size" },
  { name = "profile.pct_of_roofline", unit = "%", from = "profile", meaning = "roofline time / measured time" },
  { name = "profile.effective_gbps", unit = "GB/s", from = "profile", meaning = "the workload's bytes / measured time" },
  { name = "profile.gflops", unit = "GFLOP/s", from = "profile", meaning = "the workload's flops / measured time" },
  { name = "profile.dram_throughput_pct", unit = "%", from = "profile", meaning = "DRAM throughput, % of peak (CUPTI)" },
  { name = "profile.dram_bytes", unit = "bytes", from = "profile", meaning = "DRAM bytes read + written (CUPTI)" },
  { name = "profile.achieved_occupancy", unit = "fraction", from = "profile", meaning = "active warps / peak (CUPTI)" },
  { name = "profile.smem_bank_conflicts", unit = "conflicts", from = "profile",
    meaning = "shared-memory load bank conflicts (CUPTI)" },
  { name = "profile.global_ld_bytes_per_sector_pct", unit = "%", from = "profile",
    meaning = "used bytes per 32-byte sector of global loads (CUPTI)" },
  { name = "profile.sectors_per_request", unit = "sectors/request", from = "profile",
    meaning = "global load sectors per request, when both CUPTI counts were measured" },
}
