local nvrtc = require "kl.nvrtc"
local files = require "klineage.base.files"
local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

-- Theoretical occupancy of each entry at the given block size, with no GPU.
local function add_occupancy(res, threads, dynamic_smem)
  local occupancy = require "kl.occupancy"
  for _, f in pairs(res.functions) do
    if f.entry then
      local o = occupancy.compute { arch = res.arch, registers = f.registers, smem = f.smem, barriers = f.barriers,
                                    threads = threads, dynamic_smem = dynamic_smem }
      if o then
        f.occupancy = { threads = threads, dynamic_smem = dynamic_smem, fraction = o.occupancy,
                        active_blocks = o.active_blocks, limited_by = o.limited_by, why_zero = o.why_zero }
      end
    end
  end
end

local function report_text(path, res, out)
  local names = {}
  for name, f in pairs(res.functions) do
    if f.entry then names[#names + 1] = name end
  end
  table.sort(names)
  out:write(string.format("%s: %s, cubin %d bytes, ptx %d bytes\n", files.display(path), res.arch,
    res.cubin and #res.cubin or 0, #res.ptx))
  if #names == 0 then
    out:write("  no __global__ functions\n")
    return
  end
  local occ_head = "occupancy"
  local first = res.functions[names[1]].occupancy
  if first then occ_head = string.format("occupancy @%d", first.threads) end
  out:write(string.format("  %-28s %5s %8s %6s %7s %7s %4s  %s\n",
    "kernel", "regs", "smem", "stack", "spill-st", "spill-ld", "bar", occ_head))
  for _, name in ipairs(names) do
    local f = res.functions[name]
    local occ = "-"
    if f.occupancy then
      occ = f.occupancy.active_blocks > 0
        and string.format("%.2f (%d blocks/SM, %s)", f.occupancy.fraction, f.occupancy.active_blocks, f.occupancy.limited_by)
        or "0 (" .. tostring(f.occupancy.why_zero) .. ")"
    end
    out:write(string.format("  %-28s %5d %8d %6d %7d %7d %4d  %s\n", name, f.registers, f.smem,
      f.stack, f.spill_stores, f.spill_loads, f.barriers, occ))
  end
end

-- The options, as args.parse takes them (tests/lua/cli_input_spec.lua
-- holds the help to them).
local FLAGS = { arch = "string", json = "boolean", option = "list", threads = "number", smem = "number" }

return {
  flags = FLAGS,
  summary = "compile a CUDA file with NVRTC and print its resource report",
  usage = "usage: klineage compile FILE.cu [--arch sm_90] [--json] [--threads N] [--smem BYTES] [--option OPT]...",
  help = [[
Compiles FILE.cu with NVRTC for a real architecture and prints, for each
__global__ function, what ptxas reports: registers per thread, static
shared memory, stack frame, spill stores and loads, and barriers. Needs no
GPU. With them, the theoretical occupancy at a block size (the rules of
the driver's occupancy calculator, computed here). A compile error prints
file:line:col (an error of ptxas, which has no line, prints ptxas's own
line) and exits 1. A file that is missing, unreadable, not a regular file
(a directory, a FIFO, a device), over 4 MiB or binary exits 2, and so does
an option NVRTC refuses.

options:
  --arch ARCH   target, sm_XX (default sm_90); compute_XX yields PTX only
  --json        print the report as JSON
  --threads N   block size for the occupancy column (default 256)
  --smem BYTES  dynamic shared memory per block for it (default 0)
  --option OPT  pass OPT to NVRTC; repeatable. An OPT that starts with
                "--" is written --option=OPT (--option=--use_fast_math)]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    local arch = a.arch or "sm_90"
    if not (arch:match("^sm_%d+%a?$") or arch:match("^compute_%d+%a?$")) then
      args.usage_error("--arch needs sm_XX or compute_XX (sm_90, compute_90), got '%s'", files.display(arch))
    end
    local threads, smem = math.tointeger(a.threads or 256), math.tointeger(a.smem or 0)
    if not threads or threads < 1 or threads > 1024 then args.usage_error("--threads must be an integer in 1..1024") end
    if not smem or smem < 0 then args.usage_error("--smem must be a non-negative integer") end
    local path = a.positional[1]
    local src, err = files.read_text(path)
    if not src then args.usage_error("%s", err.message) end
    local res, msg, details = nvrtc.compile(src, {
      arch = arch,
      name = path,
      options = a.option,
    })
    -- An arch or option NVRTC does not know is a usage error, not the source's.
    if not res and details and details.result == "NVRTC_ERROR_INVALID_OPTION" then args.usage_error("%s", msg) end
    if not res then
      io.stderr:write(msg .. "\n")
      if details and details.log and details.log ~= "" then io.stderr:write(details.log) end
      return exit_codes.of("compile_error")
    end
    if res.cubin then add_occupancy(res, threads, smem) end
    if a.json then
      print(require("klineage.base.stable_json").encode({
        file = path, arch = res.arch, cubin_bytes = res.cubin and #res.cubin or 0,
        ptx_bytes = #res.ptx, functions = res.functions,
      }))
    else
      report_text(path, res, io.stdout)
    end
    return exit_codes.of("ok")
  end,
}
