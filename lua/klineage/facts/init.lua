-- Facts: one documented vocabulary, with units, of what is true of a
-- kernel at a site (klineage/facts/vocabulary.lua lists every name). The
-- walk records them before and after each step; skills learn
-- preconditions over them ({ "occupancy", "<", 0.25 }); reports explain
-- with them.
--
--   facts.new() -> f;  f:set(name, value, from);  f.values[name], f.from[name]
--   f:unit(name) -> the vocabulary unit;  f:names() -> sorted names
--   facts.describe(name) -> { name = entry name, unit, meaning, from } | nil
--   facts.vocabulary -> the entries
--   facts.of(unit_or_source, fn_name [, opts]) -> f | nil, failure (bad_input)
--     opts = { workload = w (klineage.workload.load), params = p (merged over
--              w.params), arch = "sm_90", compile = kl.nvrtc result
--              (compiled here when absent and opts.compile ~= false),
--              record = gate record, sm_count = the device's SMs (role
--              facts; default klineage.facts.roles.SM_COUNT[arch]),
--              roles = false: no role facts }
--     role.* facts (klineage.facts.roles) say what the kernel's parts do
--     with no name of its own in their keys: the ones skills learn on
--   facts.for_arch(f, arch [, compile]) -> f2 | nil, failure
--     the same kernel at another arch: arch.* and occupancy.* recomputed
--     from f's register and shared-memory numbers; with a compile result
--     for that arch, its registers replace them. Without one, the
--     registers stay those of f's compile and `registers_arch` says so
--     (ptxas allocates differently per arch: sgemm v2 uses 32 on sm_90,
--     38 on sm_86).
--   facts.profile(f, record) adds the profile facts of a gate record.
--
-- A fact that could not be computed is absent, never 0: no record, no
-- profile facts; no compile (no NVRTC, or it failed), no resources.
local annotations = require "klineage.workload.annotations"
local roles = require "klineage.facts.roles"
local static = require "klineage.facts.static"
local verdicts = require "klineage.base.verdicts"
local vocabulary = require "klineage.facts.vocabulary"

local M = {}

M.vocabulary = vocabulary
M.DIVISORS = { 2, 4, 8, 16, 32 }

-- Each vocabulary name as an anchored Lua pattern: <x> is one name part.
local compiled = {}
for _, e in ipairs(vocabulary) do
  local pat = e.name:gsub("[%.%-%+%*%?%[%]%^%$%%()]", "%%%0"):gsub("<[%w_]+>", "[%%w_]+")
  compiled[#compiled + 1] = { pattern = "^" .. pat .. "$", entry = e, literal = not e.name:find("<", 1, true) }
end

function M.describe(name)
  if type(name) ~= "string" then return nil end
  for _, c in ipairs(compiled) do
    if c.literal and c.entry.name == name then return c.entry end
  end
  for _, c in ipairs(compiled) do
    if not c.literal and name:match(c.pattern) then return c.entry end
  end
end

local Facts = {}
Facts.__index = Facts

local FROM = { source = true, nvrtc = true, occupancy = true, workload = true, arch = true, profile = true }

function M.new()
  return setmetatable({ values = {}, from = {} }, Facts)
end

-- set(name, nil) leaves the fact absent. A name outside the vocabulary is
-- a bug here, so it raises.
function Facts:set(name, value, from)
  if value == nil then return end
  if not FROM[from] then error("facts: unknown provenance '" .. tostring(from) .. "'", 2) end
  local t = type(value)
  if t ~= "number" and t ~= "boolean" and t ~= "string" then
    error("facts: " .. name .. " must be a number, boolean or string, got " .. t, 2)
  end
  if t == "number" and value ~= value then return end -- NaN is no measurement
  if not M.describe(name) then error("facts: '" .. name .. "' is not in the vocabulary", 2) end
  self.values[name], self.from[name] = value, from
end

function Facts:unit(name)
  local e = self.values[name] ~= nil and M.describe(name)
  return e and e.unit or nil
end

function Facts:names()
  local out = {}
  for k in pairs(self.values) do out[#out + 1] = k end
  table.sort(out)
  return out
end

local function copy(f)
  local g = M.new()
  for k, v in pairs(f.values) do g.values[k], g.from[k] = v, f.from[k] end
  g.context = f.context
  return g
end

-- ---- architecture and occupancy -----------------------------------------------

local function add_arch(f, arch)
  local occ = require "kl.occupancy"
  local limits = occ.limits(arch)
  if not limits then return end
  f:set("arch", arch, "arch")
  for k, v in pairs(limits) do
    if type(v) == "number" or type(v) == "boolean" or type(v) == "string" then f:set("arch." .. k, v, "arch") end
  end
end

local function clear(f, prefix)
  for k in pairs(f.values) do
    if k == prefix or k:sub(1, #prefix + 1) == prefix .. "." then f.values[k], f.from[k] = nil, nil end
  end
end

local function add_occupancy(f, arch)
  local v = f.values
  if not (v.registers and v.smem_static and v["launch.threads"]) then return end
  local o = require("kl.occupancy").compute {
    arch = arch, registers = v.registers, smem = v.smem_static, threads = v["launch.threads"],
    dynamic_smem = v["launch.smem_dynamic"] or 0, barriers = f.context and f.context.barriers or 0,
  }
  if not o then return end
  f:set("occupancy", o.occupancy, "occupancy")
  f:set("occupancy.active_blocks", o.active_blocks, "occupancy")
  f:set("occupancy.active_warps", o.active_warps, "occupancy")
  if o.active_blocks > 0 then f:set("occupancy.limited_by", o.limited_by, "occupancy") end
  f:set("occupancy.why_zero", o.why_zero, "occupancy")
  for k, n in pairs(o.limits or {}) do f:set("occupancy.limit." .. k, n, "occupancy") end
end

local function add_resources(f, res, fn_name)
  local r = res and res.functions and res.functions[fn_name]
  if not r then return end
  f:set("registers", r.registers, "nvrtc")
  f:set("registers_arch", res.arch, "nvrtc")
  f:set("smem_static", r.smem, "nvrtc")
  f:set("stack", r.stack, "nvrtc")
  f:set("spill_stores", r.spill_stores, "nvrtc")
  f:set("spill_loads", r.spill_loads, "nvrtc")
  if r.spill_stores and r.spill_loads then f:set("spills", r.spill_stores + r.spill_loads > 0, "nvrtc") end
  if r.smem then f:set("smem_per_block", r.smem + (f.values["launch.smem_dynamic"] or 0), "nvrtc") end
  f.context = f.context or {}
  f.context.barriers = r.barriers
end

function M.for_arch(f, arch, res)
  if getmetatable(f) ~= Facts then error("facts.for_arch: facts expected", 2) end
  if type(arch) ~= "string" or not require("kl.occupancy").limits(arch) then
    return nil, verdicts.failure("bad_input", "facts.for_arch: unknown architecture '" .. tostring(arch) .. "'")
  end
  local g = copy(f)
  clear(g, "arch")
  clear(g, "occupancy")
  local fn_name = g.context and g.context.fn
  if res then
    if res.arch ~= arch then
      return nil, verdicts.failure("bad_input", string.format("facts.for_arch: the compile is for %s, not %s",
        tostring(res.arch), arch))
    end
    for _, k in ipairs({ "registers", "registers_arch", "smem_static", "stack", "spill_stores", "spill_loads",
                         "spills", "smem_per_block" }) do g.values[k], g.from[k] = nil, nil end
    add_resources(g, res, fn_name)
  end
  add_arch(g, arch)
  add_occupancy(g, arch)
  return g
end

-- ---- workload ------------------------------------------------------------------

local function pow2_align(n)
  local a = 1
  while a < 256 and n % (a * 2) == 0 do a = a * 2 end
  return a
end

local function add_workload(f, w, p, consts, tile_names)
  for name, v in pairs(p) do
    if math.type(v) == "integer" and name:match("^[%w_]+$") then
      f:set("size." .. name, v, "workload")
      for _, d in ipairs(M.DIVISORS) do f:set("size." .. name .. ".div" .. d, v % d == 0, "workload") end
      for c in pairs(tile_names) do
        local cv = consts[c]
        if math.type(cv) == "integer" and cv > 0 then f:set("size." .. name .. ".div." .. c, v % cv == 0, "workload") end
      end
    end
  end
  if not w then return end
  local counts = require("klineage.workload").counts(w, p)
  local types = require "klineage.base.types"
  for _, b in ipairs(counts and w.buffer_list or {}) do
    local n, size = counts[b.name], types.size(b.type)
    if n and size and b.name:match("^[%w_]+$") then
      local bytes = n * size
      f:set("buffer." .. b.name .. ".bytes", bytes, "workload")
      f:set("buffer." .. b.name .. ".align", pow2_align(bytes), "workload")
      f:set("buffer." .. b.name .. ".align16", bytes % 16 == 0, "workload")
    end
  end
end

-- The launch at p: the named launch of fn_name, else the default one when
-- fn_name is the workload's kernel (or there is no workload); with no
-- launch line for it, bad_input. Without params, facts.of adds no launch facts.
local function add_launch(f, source, fn_name, w, p, tile_names)
  local ann, err = annotations.parse(source)
  if not ann then return nil, err end
  local kernel
  if ann.launches and ann.launches[fn_name] then kernel = fn_name
  elseif not w or w.kernel == fn_name then
    -- the kernel a workload launches, with no launch line: the gate refuses it too
    if not ann.launch then
      return nil, verdicts.failure("bad_input", string.format("facts: '%s' has no '// @kl launch grid(...) block(...)' line",
        fn_name:sub(1, 80)))
    end
  else
    return true -- a helper kernel the workload does not launch: no launch facts
  end
  local launch = kernel and ann.launches[kernel] or ann.launch
  for _, what in ipairs({ "grid", "block" }) do
    for _, c in ipairs(launch[what] or {}) do for _, nm in ipairs(c.names or {}) do tile_names[nm] = true end end
  end
  if launch.smem then for _, nm in ipairs(launch.smem.names or {}) do tile_names[nm] = true end end
  local res, rerr = annotations.resolve(source, p, { kernel = kernel })
  if not res then return nil, rerr end
  f:set("launch.allowed", res.allowed, "workload")
  local g = res.geometry
  if not g then return true end
  for i, axis in ipairs({ "x", "y", "z" }) do
    f:set("launch.grid." .. axis, g.grid[i], "workload")
    f:set("launch.block." .. axis, g.block[i], "workload")
  end
  f:set("launch.threads", g.threads, "workload")
  f:set("launch.blocks", g.grid[1] * g.grid[2] * g.grid[3], "workload")
  f:set("launch.smem_dynamic", g.smem, "workload")
  return true
end

-- ---- profile -------------------------------------------------------------------

local METRICS = {
  ["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = { "profile.dram_throughput_pct", 1 },
  ["sm__warps_active.avg.pct_of_peak_sustained_active"] = { "profile.achieved_occupancy", 0.01 },
  ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = { "profile.smem_bank_conflicts", 1 },
  ["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"] = { "profile.global_ld_bytes_per_sector_pct", 1 },
}

local function num(x) return type(x) == "number" and x == x and x or nil end

function M.profile(f, record)
  if type(record) ~= "table" or type(record.stages) ~= "table" then return end
  local p = record.stages.profile
  if type(p) == "table" and p.verdict == "ok" then
    f:set("profile.time_ms", num(p.median_ms), "profile")
    f:set("profile.pct_of_roofline", num(p.pct_of_roofline), "profile")
    f:set("profile.effective_gbps", num(p.gbps), "profile")
    f:set("profile.gflops", num(p.gflops), "profile")
  end
  local m = record.stages.metrics
  local values = type(m) == "table" and m.verdict == "ok" and type(m.values) == "table" and m.values
  if not values then return end
  for metric, to in pairs(METRICS) do
    local v = num(values[metric])
    if v then f:set(to[1], v * to[2], "profile") end
  end
  local rd, wr = num(values["dram__bytes_read.sum"]), num(values["dram__bytes_write.sum"])
  if rd and wr then f:set("profile.dram_bytes", rd + wr, "profile") end
  local sectors = num(values["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"])
  local requests = num(values["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"])
  if sectors and requests and requests > 0 then f:set("profile.sectors_per_request", sectors / requests, "profile") end
end

-- ---- the entry point -----------------------------------------------------------

local function bad(fmt, ...) return nil, verdicts.failure("bad_input", "facts: " .. string.format(fmt, ...)) end

local MAX_SOURCE = 4 * 1024 * 1024

local function of_(unit_or_source, fn_name, opts)
  local S = require "kl.source"
  local unit, source
  if type(unit_or_source) == "string" then
    if #unit_or_source > MAX_SOURCE then return bad("source of %d bytes is over %d", #unit_or_source, MAX_SOURCE) end
    source = unit_or_source
    unit = S.parse(source)
  elseif type(unit_or_source) == "userdata" and pcall(function() return unit_or_source:functions() end) then
    unit, source = unit_or_source, tostring(unit_or_source)
  else
    return bad("a kl.source unit or a source text expected, got %s", type(unit_or_source))
  end
  if type(fn_name) ~= "string" then return bad("a function name expected, got %s", type(fn_name)) end
  local fn
  for _, x in ipairs(unit:functions()) do
    if x:name() == fn_name and x:body() then fn = x end
  end
  if not fn then return bad("no function '%s' with a body in the unit", fn_name:sub(1, 80)) end
  local arch = opts.arch or "sm_90"
  if type(arch) ~= "string" or not require("kl.occupancy").limits(arch) then
    return bad("unknown architecture '%s'", tostring(arch))
  end
  local w = opts.workload
  local p = {}
  if w then for k, v in pairs(w.params or {}) do p[k] = v end end
  if opts.params ~= nil and type(opts.params) ~= "table" then return bad("params must be a table") end
  for k, v in pairs(opts.params or {}) do p[k] = v end
  local have_params = next(p) ~= nil

  local f = M.new()
  f.context = { fn = fn_name }
  local consts = {}
  for _, c in ipairs(unit:constants()) do
    if math.type(c.value) == "integer" and c.name:match("^[%w_]+$") then consts[c.name] = c.value end
  end
  local tile_names = static.add(f, unit, fn, consts, have_params and p or nil)
  if have_params then
    local ok, err = add_launch(f, source, fn_name, w, p, tile_names)
    if not ok then return nil, err end
    add_workload(f, w, p, consts, tile_names)
  end
  add_arch(f, arch)
  local res = opts.compile
  if res == nil then
    local okn, nvrtc = pcall(require, "kl.nvrtc")
    if okn then res = nvrtc.compile(source, { arch = arch }) end
  end
  if type(res) == "table" then add_resources(f, res, fn_name) end
  add_occupancy(f, arch)
  M.profile(f, opts.record)
  if opts.roles ~= false then
    roles.add(f, { text = source, fn_name = fn_name, workload = w, params = p, arch = arch, sm_count = opts.sm_count })
  end
  return f
end

function M.of(unit_or_source, fn_name, opts)
  if opts ~= nil and type(opts) ~= "table" then error("facts.of: opts must be a table", 2) end
  return verdicts.catch(of_, unit_or_source, fn_name, opts or {})
end

return M
