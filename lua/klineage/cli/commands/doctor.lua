-- klineage doctor: what the engine found, where, and whether it works.
-- Hard requirements (the engine cannot do its job without them) make the
-- exit code non-zero; a missing GPU does not, unless --require-gpu.
local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

local SMOKE_KERNEL = [[
extern "C" __global__ void doctor_smoke(float *out) { out[threadIdx.x] = threadIdx.x; }
]]

local function check(report, name, hard, fn)
  local ok, value, where, detail = pcall(fn)
  local entry = { name = name, hard = hard }
  if ok and value then
    entry.ok, entry.version, entry.where, entry.detail = true, value, where, detail
  else
    entry.ok = false
    entry.reason = ok and (where or "not found") or tostring(value)
  end
  report.checks[#report.checks + 1] = entry
  return entry
end

local function gather(home)
  local report = { checks = {}, gpus = {} }
  local host = require "kl.host"
  local libs = host.libraries()
  check(report, "klineage", true, function()
    return host.version, home, "lua tree " .. home .. "/lua"
  end)
  check(report, "Lua", true, function() return host.lua_release:gsub("^Lua ", ""), libs.lua end)
  check(report, "LPeg", true, function()
    local lpeg = require "lpeg"
    return lpeg.version and (type(lpeg.version) == "function" and lpeg.version() or lpeg.version) or "?", libs.lpeg
  end)
  check(report, "lua-cjson", true, function()
    local cjson = require "cjson"
    assert(cjson.decode(cjson.encode({ 1, 2 }))[2] == 2, "cjson round trip failed")
    return cjson._VERSION:gsub("^lua%-cjson ", ""), libs.cjson
  end)
  check(report, "cmark", true, function()
    local md = require "kl.md"
    assert(md.html("*x*"):find("<em>x</em>", 1, true), "cmark did not render emphasis")
    assert(md.html("| a |\n|---|\n| b |\n"):find("<table>", 1, true), "cmark-gfm did not render a table (reports need its table extension)")
    return md.version, md.library()
  end)
  check(report, "libcurl", true, function()
    local http = require "kl.http"
    return http.version, http.library()
  end)
  check(report, "NVRTC", true, function()
    local nvrtc = require "kl.nvrtc"
    local major, minor = nvrtc.version()
    local res, err = nvrtc.compile(SMOKE_KERNEL, { arch = "sm_90", name = "doctor.cu" })
    if not res then error("cannot compile a test kernel: " .. err, 0) end
    return string.format("%d.%d", major, minor), nvrtc.library(),
      "archs " .. table.concat(nvrtc.archs(), " ")
  end)
  check(report, "CUPTI", true, function()
    local cupti = require "kl.cupti"
    local v, err = cupti.version()
    if not v then error(err, 0) end
    return tostring(v), cupti.library()
  end)
  local driver = check(report, "CUDA driver", false, function()
    local cuda = require "kl.cuda"
    local ok, why = cuda.load()
    if not ok then return nil, why end
    local v = cuda.driver_version()
    return string.format("%d.%d", v // 1000, (v % 1000) // 10), cuda.library()
  end)
  if driver.ok then
    report.driver = driver.version
    local cuda = require "kl.cuda"
    local ok, devices = pcall(cuda.devices)
    if ok then
      report.gpus = devices
    else
      driver.ok, driver.reason = false, tostring(devices)
    end
  end
  return report
end

local function print_report(report, out)
  for _, c in ipairs(report.checks) do
    if c.ok then
      out:write(string.format("  ok    %-12s %-10s %s\n", c.name, c.version, c.where or ""))
      if c.detail then out:write(string.format("        %-12s %s\n", "", c.detail)) end
    else
      out:write(string.format("  %-5s %-12s %s\n", c.hard and "FAIL" or "no", c.name, c.reason))
    end
  end
  if #report.gpus == 0 then
    out:write("  no GPU visible: the cuda backend is unavailable; emu and static work\n")
  end
  for _, g in ipairs(report.gpus) do
    out:write(string.format("  gpu %d %s, sm_%d%d, %d SMs, %.1f GiB, L2 %d MiB, driver %s\n",
      g.index, g.name, g.major, g.minor, g.sms, g.memory / 2 ^ 30, (g.l2_bytes or 0) // 2 ^ 20, report.driver))
  end
end

local FLAGS = { json = "boolean", require_gpu = "boolean" }

return {
  flags = FLAGS,
  summary = "report the dependencies, where they were found, and the GPUs",
  usage = "usage: klineage doctor [--json] [--require-gpu]",
  help = [[
Checks every dependency the engine uses and says where it was loaded
from: Lua, LPeg, lua-cjson, cmark, libcurl, NVRTC (version, supported
architectures, and a test compile), CUPTI, and the CUDA driver (loaded or
not, and why). Lists each visible GPU with its compute capability, SMs,
memory and driver version.

Exits 1 when a hard requirement is missing or broken. A missing GPU is not
an error unless --require-gpu is given.

options:
  --json          print the report as JSON
  --require-gpu   exit 1 unless at least one GPU is visible]],
  run = function(argv, env)
    local a = args.parse(argv, { flags = FLAGS, max = 0 })
    local report = gather(env.home)
    local failed = false
    for _, c in ipairs(report.checks) do
      if c.hard and not c.ok then failed = true end
    end
    if a.require_gpu and #report.gpus == 0 then failed = true end
    if a.json then
      print((require("klineage.base.stable_json").encode(report):gsub("\\/", "/")))
    else
      io.stdout:write("klineage doctor\n")
      print_report(report, io.stdout)
      if a.require_gpu and #report.gpus == 0 then io.stdout:write("  FAIL  --require-gpu: no GPU visible\n") end
    end
    return exit_codes.of(failed and "failed" or "ok")
  end,
}
