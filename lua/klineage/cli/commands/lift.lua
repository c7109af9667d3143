-- klineage lift KERNEL.cu: the kernel's loop-nest IR (klineage.kir), or
-- the one-line reason it does not lift.
local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"
local files = require "klineage.base.files"
local term = require "klineage.base.term"

local FLAGS = { json = "boolean", kernel = "string" }

return {
  flags = FLAGS,
  summary = "lift a naive kernel into the schedule IR and show its analysis",
  usage = "usage: klineage lift KERNEL.cu [--kernel NAME] [--json]",
  help = [[
Lifts a one-thread-per-output CUDA kernel into klineage's loop-nest IR:
its output coordinates (from threadIdx/blockIdx), its bounds guard, its
loops (reductions by +, max, min, argmax/argmin; maps; opaque sequential
loops) and loads. Prints the coordinates, the guard, every access with its
affine coefficients, its stride across threadIdx.x and the output axes it
is reused across, every loop's kind, and the schedule primitives that are
legal on it, each with its reason (klineage schedule applies them).
A kernel that does not lift prints one line with the reason and exits 1
("uses __syncthreads: already scheduled"). A file that cannot be read
exits 2.

options:
  --kernel NAME  the __global__ function, when the file has several
  --json         print the IR and its analysis as JSON]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    local path = a.positional[1]
    local text, err = files.read_text(path)
    if not text then args.usage_error("%s", err.message) end
    local kir = require "klineage.kir"
    local k, why = kir.lift(text, { kernel = a.kernel })
    if not k then
      io.stderr:write(string.format("klineage lift: %s: not lifted: %s\n", files.display(path), term.text(why)))
      return exit_codes.of("failed")
    end
    local view = require "klineage.kir.view"
    if a.json then
      print((require("klineage.base.stable_json").encode(view.data(k)):gsub("\\/", "/")))
    else
      print(table.concat(view.lines(k), "\n"))
    end
    return exit_codes.of("ok")
  end,
}
