-- klineage schedule KERNEL.cu --workload SPEC --apply 'map(...) coarsen(4)':
-- lift, apply schedule primitives with their legality checks, emit.
local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"
local files = require "klineage.base.files"
local term = require "klineage.base.term"

local FLAGS = { workload = "string", apply = "string", out = "string", kernel = "string" }

return {
  flags = FLAGS,
  summary = "apply schedule primitives to a naive kernel and emit CUDA C",
  usage = "usage: klineage schedule KERNEL.cu --workload SPEC --apply 'PRIMITIVES' [--out FILE] [--kernel NAME]",
  help = [[
Lifts KERNEL.cu (see klineage lift), applies the primitives of --apply in
order, each with its legality check, and writes the emitted kernel: same
name, signature and comments, its `@kl launch` line rewritten when the
geometry changed. Prints each primitive's reason on stderr. The primitives:
  unflatten(block=BXxBY)                    a flat index's digits as grid dimensions
  map(x=AXIS, y=AXIS, z=AXIS, block=BXxBY)  axes to thread dimensions, block shape
  register_tile(TM, TN)                     a TM x TN patch a thread, one pass of the loop
  stage([ARRAY...], tile=T [, block=TxR] [, buffers=2])
                                            operands reused across a block into shared memory (buffers=2:
                                            double buffered); in a perfect nest, the inner loop;
                                            loop-free: a stencil's halo, or a
                                            transpose's tile exchange
  split_reduce(warp [, wpb=W] [, lanes=L]) | split_reduce(block=B)
                                            a warp, a group of L lanes (2 to 16) or a block
                                            per output
  split_reduce(block=B, blocks=K)           K blocks an output (few outputs, long reductions):
                                            partials in file-scope slots, merged by the last
  split_reduce(y=R)                         R threads along y split each output's reduction
  unroll(F [, loop=VAR])                    F iterations a trip, remainder kept
  coarsen(F [, axis=AXIS])                  F outputs a thread, block-strided, tail guarded
  vectorize(2|4)                            float2/float4 accesses, scalar tail
  privatize(items=F)                        a histogram's scatter into shared memory first;
                                            atomics on one target: a register, one a block
  scan(block=B)                             a per-output prefix sum as a block scan a row
  segscan(block=B, chunks=G)                a walk back to each segment's start as a
                                            segmented block scan, G chunks a block
  bound(blocks=K)                           __launch_bounds__(THREADS, K): registers a thread
                                            for K blocks a multiprocessor (results unchanged)
  persist(dim=D, blocks=G)                  last: at most G blocks along D, each taking the
                                            unfolded grid's blocks in turn (a grid past
                                            65535 along y or z launches)
The new launch is resolved with the workload's parameters (bench and test
sizes): a geometry CUDA refuses exits 1. The emitted kernel is not judged
here: run it through `klineage gate` (floating-point reductions that a
primitive reassociates change rounding; the gate's tolerance decides).
Exit code: 0 when every primitive applied, 1 when one was refused (the
reason says why) or the kernel does not lift, 2 for bad input.

options:
  --workload SPEC  the workload (a folder or its workload.lua): its kernel
                   name and sizes
  --apply TEXT     the primitives, in order
  --out FILE       write the kernel there (default: standard output)
  --kernel NAME    the __global__ function (default: the workload's)]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    if not a.workload then args.usage_error("--workload SPEC is required") end
    if not a.apply then args.usage_error("--apply 'PRIMITIVES' is required") end
    local path = a.positional[1]
    local text, err = files.read_text(path)
    if not text then args.usage_error("%s", err.message) end
    local w = require("klineage.cli").load_workload(a.workload)
    local kir = require "klineage.kir"
    local steps, perr = require("klineage.kir.schedule").parse(a.apply)
    if not steps then args.usage_error("--apply: %s", perr) end
    local k, why = kir.lift(text, { kernel = a.kernel or w.kernel, workload = w })
    if not k then
      io.stderr:write(string.format("klineage schedule: %s: not lifted: %s\n", files.display(path), term.text(why)))
      return exit_codes.of("failed")
    end
    local out, reason, log = kir.apply(k, steps)
    for _, l in ipairs(type(reason) == "table" and reason or log or {}) do
      io.stderr:write(string.format("  %s: %s\n", require("klineage.kir.schedule").text(l.name, l.params), term.text(l.reason)))
    end
    if not out then
      io.stderr:write("klineage schedule: refused: " .. term.text(reason) .. "\n")
      return exit_codes.of("failed")
    end
    local emitted, ewhy = kir.emit(out)
    if not emitted then
      io.stderr:write("klineage schedule: cannot emit: " .. term.text(ewhy) .. "\n")
      return exit_codes.of("failed")
    end
    local annotations = require "klineage.workload.annotations"
    local sizes = { w.params }
    for _, tp in ipairs(w.test_params or {}) do
      local p = {}
      for key, v in pairs(w.params) do p[key] = v end
      for key, v in pairs(tp) do p[key] = v end
      sizes[#sizes + 1] = p
    end
    for _, p in ipairs(sizes) do
      local g, gf = annotations.resolve(emitted, p, { file = path, kernel = k.launch.named })
      if not g then
        io.stderr:write("klineage schedule: the new launch does not resolve: " .. term.text(gf.message or tostring(gf)) .. "\n")
        return exit_codes.of("failed")
      end
      if g.allowed and g.geometry and g.geometry.threads > 1024 then
        io.stderr:write("klineage schedule: a block of " .. g.geometry.threads .. " threads\n")
        return exit_codes.of("failed")
      end
    end
    if a.out then
      -- never over the kernel it reads (files.write_out refuses an input)
      local ok, werr = files.write_out(a.out, emitted, { path })
      if not ok then args.usage_error("%s", werr.message) end
      io.stderr:write("klineage schedule: wrote " .. files.display(a.out) .. "\n")
    else
      io.write(emitted)
    end
    return exit_codes.of("ok")
  end,
}
