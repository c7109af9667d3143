-- Measured device ceilings for the gate's roofline bound: copy bandwidth
-- (bytes read + written), read bandwidth and the fp32 FMA rate, timed by
-- the worker like any kernel (CUPTI, L2 flushed, median of adaptive
-- samples). Measured once per device and driver, then cached as JSON next
-- to the cubin cache.
--
--   ceilings.get(pool [, worker [, { refresh = true }]]) -> c | nil, failure
--   c = { copy_gbps, read_gbps, fp32_tflops, device, driver, measured_at }
local cache = require "klineage.device.cache"
local files = require "klineage.base.files"
local protocol = require "klineage.device.worker.protocol"
local hash = require "kl.hash"
local host = require "kl.host"
local nvrtc = require "kl.nvrtc"
local cjson = require "cjson"
local verdicts = require "klineage.base.verdicts"

local M = {}

M.COPY_BYTES = 1 << 30 -- 1 GiB per buffer: about 18 times the H200's L2
M.FMA_ITERS = 4096

local function path_for(dev)
  local key = hash.sha256(table.concat({ dev.name, dev.arch, tostring(dev.sm_count), tostring(dev.driver) }, "|"))
  return cache.dir():gsub("/cubin$", "") .. "/ceilings-" .. key:sub(1, 16) .. ".json"
end

local function measure(pool, i, dev)
  local src = assert(files.read_text(host.home .. "/gpu/device/ceilings.cu"))
  local r, err = nvrtc.compile(src, { arch = dev.arch, name = "ceilings.cu" })
  if not r then verdicts.raise("internal", "ceilings.cu: " .. err) end
  local function call(req)
    local reply, f = pool:request(i, req, 300)
    if not reply then
      f.message = "ceilings: " .. f.message
      error(f, 0)
    end
    return reply
  end
  call { op = "load", module = "kl_ceilings", cubin_b64 = protocol.base64(r.cubin),
         kernels = { "kl_ceiling_copy", "kl_ceiling_read", "kl_ceiling_fma" } }
  local n4 = M.COPY_BYTES // 16
  call { op = "alloc", buffers = { { name = "a", type = "f32", count = n4 * 4 }, { name = "b", type = "f32", count = n4 * 4 },
                                   { name = "sink", type = "f32", count = 1024 } } }
  call { op = "init", seed = 1, buffers = { { name = "a", init = "zeros", stream = 0 } } }
  local blocks = dev.sm_count * 32 -- enough loads in flight to saturate HBM
  local function time(kernel, args, grid)
    local t = call { op = "time", max_seconds = 2, sequence = { { op = "launch", module = "kl_ceilings", kernel = kernel,
      grid = { grid or blocks }, block = { 256 }, args = args } } }
    return t.median_ms / 1e3
  end
  local copy_s = time("kl_ceiling_copy", { { "buf", "a" }, { "buf", "b" }, { "i64", n4 } })
  local read_s = time("kl_ceiling_read", { { "buf", "a" }, { "i64", n4 }, { "buf", "sink" } })
  local fma_blocks = dev.sm_count * 64
  local fma_s = time("kl_ceiling_fma", { { "buf", "sink" }, { "i32", M.FMA_ITERS } }, fma_blocks)
  return {
    copy_gbps = 2 * M.COPY_BYTES / copy_s / 1e9,
    read_gbps = M.COPY_BYTES / read_s / 1e9,
    fp32_tflops = fma_blocks * 256 * M.FMA_ITERS * 16 / fma_s / 1e12,
    device = dev.name, driver = dev.driver, measured_at = os.date("!%Y-%m-%dT%H:%M:%SZ"),
  }
end

function M.get(pool, i, opts)
  i = i or 1
  local dev, df = pool:device(i)
  if not dev then return nil, df end
  if pool.backend ~= "cuda" then return nil, verdicts.failure("unsupported", "ceilings are measured on the cuda backend only") end
  local path = path_for(dev)
  if not (opts and opts.refresh) then
    local text = files.read_text(path)
    local ok, c = pcall(cjson.decode, text or "")
    if text and ok and type(c) == "table" and c.copy_gbps then c.cached = true return c end
  end
  local c, f = verdicts.catch(measure, pool, i, dev)
  if not c then return nil, f end
  require("kl.proc").mkdir_p(path:match("^(.*)/[^/]*$"))
  files.write_atomic(path, cjson.encode(c))
  return c
end

return M
