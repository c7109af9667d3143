local nvrtc = require "kl.nvrtc"
local files = require "klineage.files"
local args = require "klineage.args"

local function report_text(path, res, out)
  local names = {}
  for name, f in pairs(res.functions) do
    if f.entry then names[#names + 1] = name end
  end
  table.sort(names)
  out:write(string.format("%s: %s, cubin %d bytes, ptx %d bytes\n", path, res.arch,
    res.cubin and #res.cubin or 0, #res.ptx))
  if #names == 0 then
    out:write("  no __global__ functions\n")
    return
  end
  out:write(string.format("  %-28s %5s %8s %6s %7s %7s %4s\n",
    "kernel", "regs", "smem", "stack", "spill-st", "spill-ld", "bar"))
  for _, name in ipairs(names) do
    local f = res.functions[name]
    out:write(string.format("  %-28s %5d %8d %6d %7d %7d %4d\n", name, f.registers, f.smem,
      f.stack, f.spill_stores, f.spill_loads, f.barriers))
  end
end

return {
  summary = "compile a CUDA file with NVRTC and print its resource report",
  usage = "usage: klineage compile FILE.cu [--arch sm_90] [--json] [-D NAME=VALUE]...",
  help = [[
Compiles FILE.cu with NVRTC for a real architecture and prints, for each
__global__ function, what ptxas reports: registers per thread, static
shared memory, stack frame, spill stores and loads, and barriers. Needs no
GPU. A compile error prints file:line:col and exits 1; a missing,
unreadable or binary file exits 2.

options:
  --arch ARCH   target, sm_XX (default sm_90); compute_XX yields PTX only
  --json        print the report as JSON
  --option OPT  pass OPT to NVRTC (repeatable as --option=OPT)]],
  run = function(argv)
    local a = args.parse(argv, { flags = { arch = "string", json = "boolean", option = "string" }, min = 1, max = 1 })
    local path = a.positional[1]
    local src, err = files.read_text(path)
    if not src then args.usage_error("%s", err) end
    local res, msg, details = nvrtc.compile(src, {
      arch = a.arch or "sm_90",
      name = path,
      options = a.option and { a.option } or nil,
    })
    if not res then
      io.stderr:write(msg .. "\n")
      if details and details.log and details.log ~= "" then io.stderr:write(details.log) end
      return 1
    end
    if a.json then
      local cjson = require "cjson"
      print(cjson.encode({
        file = path, arch = res.arch, cubin_bytes = res.cubin and #res.cubin or 0,
        ptx_bytes = #res.ptx, functions = res.functions,
      }))
    else
      report_text(path, res, io.stdout)
    end
    return 0
  end,
}
