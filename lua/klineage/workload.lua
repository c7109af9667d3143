-- Workload specs: gpu/workloads/<name>/workload.lua (ARCHITECTURE.md,
-- "Workload spec"), loaded and validated with errors that name the file and
-- the field.
--
--   workload.load(name_or_path [, { root = dir }]) -> w | nil, failure (bad_input)
--       name: gpu/workloads/<name>/workload.lua under the klineage home (or
--       opts.root); a path: a workload.lua file or the folder holding one.
--   workload.sizes(w) -> { { label = "test 1", params = p, bench = false }, ...,
--                          { label = "bench", params = p, bench = true }, ... }
--       every test_params entry merged over params, then the bench size
--       (params itself, then each bench_params entry merged over it).
--   workload.counts(w, p)  -> { [buffer] = elements } | nil, failure
--   workload.flops(w, p), workload.bytes(w, p) -> number | nil, failure
--   workload.rate(w, p, seconds) -> the spec's rate (GTEPS, Mrays/s) | nil
--   workload.args(w, p)    -> { { buffer = name } | { param = name, value = v } }
--   workload.tolerance(w, buffer) -> { rtol, atol } (integer buffers: exact)
--   workload.is_float(type) -> true for f32, f64, f16, bf16
--   workload.host_inputs(w, p, seed) -> { [buffer] = packed bytes } | nil, failure
--       the deterministic generator of engine/core/randgen.h; a buffer's
--       stream is its index in w.buffer_list (sorted by name, 0-based).
--
-- w keeps the spec's fields and adds: path, dir, buffer_list (sorted
-- { name, type, count (compiled expr), init, output, stream }), outputs
-- (names), flops_expr, bytes_expr, and reference.
--
-- reference = "reference.c": the workload's C reference, a file in the
-- spec's folder (a path relative to it) that defines
-- `void reference(<the args, in the order of args>)`, a buffer as a pointer
-- to its element type, a parameter as its scalar type. gate/reference.lua
-- checks the baseline against it at the test sizes. There is no default:
-- a spec without `reference` (or with reference = false) has none, and its
-- baseline is the reference. w.reference is then nil, else
-- { file = as written, path, sha256, source = the text read here }.
-- The declaration itself is checked against args when the reference is
-- compiled (gate/reference.lua), where the types are needed.
local expr = require "klineage.expr"
local randgen = require "kl.randgen"
local verdicts = require "klineage.verdicts"
local types = require "klineage.types"

local M = {}

-- The buffer element types (klineage.types is the vocabulary).
M.TYPES = types.BUFFER
local TYPE_SET = {}
for _, t in ipairs(M.TYPES) do TYPE_SET[t] = true end

-- The fields a spec may have; anything else is a typo or an unknown extension.
M.FIELDS = {
  name = true, kernel = true, params = true, test_params = true, bench_params = true,
  buffers = true, args = true, tolerance = true, flops = true, bytes = true,
  lineage = true, run = true, description = true, reference = true, vendor = true,
  rate = true, monotone = true,
}

-- The vendor routines a workload can be compared with (kl.vendor), and the
-- number of arguments each takes.
M.VENDOR_ROUTINES = { sgemm_rowmajor = 8, conv2d_nchw_3x3 = 8 }
M.VENDOR_LIBRARIES = { cublas = true, cudnn = true }

local function home() return require("kl.host").home or "." end

local function is_file(path)
  local h = io.open(path, "rb")
  if not h then return false end
  local ok = h:read(0) ~= nil or h:seek("end") == 0
  h:close()
  return ok
end

-- The workload.lua a name or path refers to: a .lua file, a folder holding
-- workload.lua (a path, or a bare name that is such a folder here), else a
-- name under gpu/workloads (or opts.root).
function M.find(name_or_path, opts)
  opts = opts or {}
  if name_or_path:match("%.lua$") then return name_or_path end
  local local_spec = (name_or_path:gsub("/+$", "")) .. "/workload.lua"
  if name_or_path:find("/", 1, true) or (not opts.root and is_file(local_spec)) then return local_spec end
  local root = opts.root or (home() .. "/gpu/workloads")
  return string.format("%s/%s/workload.lua", root, name_or_path)
end

local function keys_sorted(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end

local function is_ident(s) return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil end

-- A validator accumulates nothing: the first problem raises a message that
-- load turns into nil, message.
local Invalid = {}
local function invalid(path, field, fmt, ...)
  error(setmetatable({ msg = string.format("%s: %s: " .. fmt, path, field, ...) }, Invalid), 0)
end

local function check_params_table(path, field, t, base)
  if type(t) ~= "table" then invalid(path, field, "must be a table of NAME = number, got %s", type(t)) end
  for _, k in ipairs(keys_sorted(t)) do
    local v = t[k]
    if not is_ident(k) then invalid(path, field, "key %s is not a name", tostring(k)) end
    if type(v) ~= "number" then invalid(path, field .. "." .. k, "must be a number, got %s", type(v)) end
    if base and base[k] == nil then
      invalid(path, field .. "." .. k, "is not in params (an entry only overrides keys of params)")
    end
  end
end

local function check_names(path, field, c, params)
  for _, n in ipairs(c.names) do
    if params[n] == nil then invalid(path, field, "'%s' uses '%s', which is not in params", c.text, n) end
  end
end

local function compile_expr(path, field, v, params)
  if math.type(v) == "integer" then v = tostring(v) end
  if type(v) ~= "string" then invalid(path, field, "must be an expression string, got %s", type(v)) end
  local c, err = expr.compile(v)
  if not c then invalid(path, field, "%s", err.message) end
  check_names(path, field, c, params)
  return c
end

local function check_init(path, field, init, ty)
  if type(init) == "function" then return init end
  if init == "zeros" then return init end
  if init == "uniform" or init == "normal" then
    if not types.is_float(ty) then
      invalid(path, field, "\"%s\" needs a float type, the buffer is %s (use { \"int\", lo, hi })", init, ty)
    end
    return init
  end
  if type(init) == "table" then
    if init[1] ~= "int" or math.type(init[2]) ~= "integer" or math.type(init[3]) ~= "integer" or #init ~= 3 then
      invalid(path, field, "a table init must be { \"int\", lo, hi } with integer bounds")
    end
    if init[2] > init[3] then invalid(path, field, "{ \"int\", %d, %d } has lo > hi", init[2], init[3]) end
    return init
  end
  invalid(path, field, "must be \"uniform\", \"normal\", \"zeros\", { \"int\", lo, hi } or a function(p, rng), got %s",
    type(init) == "string" and string.format("%q", init) or type(init))
end

local BUFFER_FIELDS = { [1] = true, [2] = true, init = true, output = true, scratch = true }

local function validate(spec, path, dir)
  if type(spec) ~= "table" then invalid(path, "spec", "the file must return a table, got %s", type(spec)) end
  for _, k in ipairs(keys_sorted(spec)) do
    if not M.FIELDS[k] then
      local known = keys_sorted(M.FIELDS)
      invalid(path, tostring(k), "unknown field (known: %s)", table.concat(known, ", "))
    end
  end
  local w = {}
  for k, v in pairs(spec) do w[k] = v end
  w.path, w.dir = path, dir
  w.name = spec.name or dir:match("([^/]+)/*$")
  if type(w.name) ~= "string" then invalid(path, "name", "must be a string") end
  if not is_ident(spec.kernel) then invalid(path, "kernel", "must name the extern \"C\" __global__ entry, got %s", tostring(spec.kernel)) end

  if spec.params == nil then invalid(path, "params", "missing (the bench size)") end
  check_params_table(path, "params", spec.params)
  if next(spec.params) == nil then invalid(path, "params", "is empty") end
  for _, list in ipairs({ "test_params", "bench_params" }) do
    local l = spec[list]
    if l ~= nil then
      if type(l) ~= "table" then invalid(path, list, "must be a list of tables") end
      for i, entry in ipairs(l) do check_params_table(path, string.format("%s[%d]", list, i), entry, spec.params) end
      for k in pairs(l) do
        if math.type(k) ~= "integer" then invalid(path, list, "must be a list, has key %s", tostring(k)) end
      end
    end
  end

  if type(spec.buffers) ~= "table" or next(spec.buffers) == nil then
    invalid(path, "buffers", "missing or empty")
  end
  w.buffer_list, w.outputs = {}, {}
  local by_name = {}
  for _, name in ipairs(keys_sorted(spec.buffers)) do
    local b = spec.buffers[name]
    local field = "buffers." .. tostring(name)
    if not is_ident(name) then invalid(path, field, "a buffer name must be an identifier") end
    if spec.params[name] ~= nil then invalid(path, field, "has the name of a parameter") end
    if type(b) ~= "table" then invalid(path, field, "must be { TYPE, COUNT, init = ..., output = bool }") end
    for k in pairs(b) do
      if not BUFFER_FIELDS[k] then invalid(path, field .. "." .. tostring(k), "unknown buffer field (init, output, scratch)") end
    end
    local ty = b[1]
    if not TYPE_SET[ty] then
      invalid(path, field, "unknown type %s (%s)", type(ty) == "string" and "'" .. ty .. "'" or tostring(ty), table.concat(M.TYPES, " "))
    end
    if b[2] == nil then invalid(path, field, "missing the element count expression") end
    local count = compile_expr(path, field .. " count", b[2], spec.params)
    if b.output ~= nil and type(b.output) ~= "boolean" then invalid(path, field .. ".output", "must be true or false") end
    -- scratch: working memory of a multi-launch run (partial sums, a
    -- frontier): neither an input the kernel must keep nor an output to compare.
    if b.scratch ~= nil and type(b.scratch) ~= "boolean" then invalid(path, field .. ".scratch", "must be true or false") end
    if b.scratch and b.output then invalid(path, field, "cannot be both output and scratch") end
    local init = b.init
    if init == nil then
      if not b.output and not b.scratch then invalid(path, field .. ".init", "missing (an input needs an init)") end
      init = "zeros"
    end
    init = check_init(path, field .. ".init", init, ty)
    local entry = { name = name, type = ty, count = count, init = init, output = b.output == true,
                    scratch = b.scratch == true, stream = #w.buffer_list,
                    poisoned = b.init == nil } -- no init given: poisoned before each launch
    w.buffer_list[#w.buffer_list + 1] = entry
    by_name[name] = entry
    if entry.output then w.outputs[#w.outputs + 1] = name end
  end
  if #w.outputs == 0 then invalid(path, "buffers", "no buffer has output = true") end
  w.buffer_by_name = by_name

  if type(spec.args) ~= "table" or #spec.args == 0 then invalid(path, "args", "missing: the kernel's arguments in order") end
  local used = {}
  for i, a in ipairs(spec.args) do
    if by_name[a] then used[a] = true
    elseif spec.params[a] == nil then
      invalid(path, string.format("args[%d]", i), "'%s' is neither a buffer nor a key of params", tostring(a))
    end
  end
  for _, b in ipairs(w.buffer_list) do
    if not used[b.name] then invalid(path, "buffers." .. b.name, "is not passed in args") end
  end

  local has_float_output = false
  for _, name in ipairs(w.outputs) do has_float_output = has_float_output or types.is_float(by_name[name].type) end
  local tol = spec.tolerance
  if tol == nil then
    if has_float_output then invalid(path, "tolerance", "missing: { rtol = ..., atol = ... } for float outputs") end
    tol = { rtol = 0, atol = 0 }
  end
  if type(tol) ~= "table" then invalid(path, "tolerance", "must be { rtol = ..., atol = ... }") end
  for k, v in pairs(tol) do
    if k ~= "rtol" and k ~= "atol" then invalid(path, "tolerance." .. tostring(k), "unknown (rtol, atol)") end
    if type(v) ~= "number" or v < 0 or v ~= v then invalid(path, "tolerance." .. k, "must be a number >= 0") end
  end
  w.tolerance = { rtol = tol.rtol or 0, atol = tol.atol or 0 }

  for _, k in ipairs({ "flops", "bytes" }) do
    if spec[k] == nil then invalid(path, k, "missing: an expression over params (for roofline bounds)") end
    w[k .. "_expr"] = compile_expr(path, k, spec[k], spec.params)
  end

  if spec.lineage ~= nil then
    if type(spec.lineage) ~= "table" or #spec.lineage == 0 then invalid(path, "lineage", "must be a non-empty list of files") end
    for i, f in ipairs(spec.lineage) do
      if type(f) ~= "string" then invalid(path, string.format("lineage[%d]", i), "must be a file name") end
      if not is_file(dir .. "/" .. f) then
        invalid(path, string.format("lineage[%d]", i), "'%s' does not exist in %s", f, dir)
      end
    end
  end
  -- rate = { unit = "GTEPS", count = "E / 2", per = 1e9 }: the workload's own
  -- throughput (traversed edges, rays), count / seconds / per, where GFLOP/s
  -- and GB/s say little.
  if spec.rate ~= nil then
    local r = spec.rate
    if type(r) ~= "table" then invalid(path, "rate", "must be { unit, count, per }") end
    if type(r.unit) ~= "string" or r.unit == "" then invalid(path, "rate.unit", "must be a name such as \"GTEPS\"") end
    if type(r.per) ~= "number" or not (r.per > 0) then invalid(path, "rate.per", "must be a number > 0 (1e9 for G...)") end
    w.rate = { unit = r.unit, per = r.per, count_expr = compile_expr(path, "rate.count", r.count, spec.params) }
  end
  -- monotone = { "v3_x.cu", ... }: the versions measured to beat the one
  -- before them at the bench size; a GPU test holds the lineage to it with
  -- the gate's interleaved compare. Steps left out are the ones that did not
  -- pay there (the README says where they do).
  if spec.monotone ~= nil then
    if type(spec.monotone) ~= "table" then invalid(path, "monotone", "must be a list of lineage files") end
    local index = {}
    for i, f in ipairs(spec.lineage or {}) do index[f] = i end
    for i, f in ipairs(spec.monotone) do
      local at = index[f]
      if not at then invalid(path, string.format("monotone[%d]", i), "'%s' is not in the lineage", tostring(f)) end
      if at == 1 then invalid(path, string.format("monotone[%d]", i), "'%s' has no version before it", f) end
    end
  end
  if spec.run ~= nil and type(spec.run) ~= "function" then invalid(path, "run", "must be a function(ctx, p)") end
  w.reference = nil
  if spec.reference ~= nil and spec.reference ~= false then
    local f = spec.reference
    if type(f) ~= "string" or f == "" or f:sub(1, 1) == "/" then
      invalid(path, "reference", "must name a C file in the spec's folder (a relative path), got %s",
        type(f) == "string" and string.format("%q", f) or type(f))
    end
    local rpath = dir .. "/" .. f
    -- read_text refuses a missing file, a folder and a binary file
    local text, rerr = require("klineage.files").read_text(rpath)
    if not text then invalid(path, "reference", "%s", rerr.message) end
    w.reference = { file = f, path = rpath, sha256 = require("kl.hash").sha256(text), source = text }
  end
  -- vendor = { name = "cuBLAS SGEMM", routine = "sgemm_rowmajor", args = { names of params and buffers } }:
  -- the library routine the bench measures in the same run, as the bar.
  if spec.vendor ~= nil then
    local v = spec.vendor
    if type(v) ~= "table" then invalid(path, "vendor", "must be { name, routine, args }") end
    local want = M.VENDOR_ROUTINES[v.routine]
    if not want then invalid(path, "vendor.routine", "unknown routine '%s'", tostring(v.routine)) end
    if type(v.args) ~= "table" or #v.args ~= want then invalid(path, "vendor.args", "%s takes %d arguments", v.routine, want) end
    for i, a in ipairs(v.args) do
      if spec.params[a] == nil and (type(spec.buffers) ~= "table" or spec.buffers[a] == nil) then
        invalid(path, string.format("vendor.args[%d]", i), "'%s' is neither a parameter nor a buffer", tostring(a))
      end
    end
    if type(v.name) ~= "string" then invalid(path, "vendor.name", "must be a string") end
    if v.library ~= nil and not M.VENDOR_LIBRARIES[v.library] then
      invalid(path, "vendor.library", "unknown library '%s' (cublas, cudnn)", tostring(v.library))
    end
  end

  -- Every size must evaluate now, not halfway through a run.
  for _, size in ipairs(M.sizes(w)) do
    local ok, err = M.counts(w, size.params)
    if ok then ok, err = M.flops(w, size.params) end
    if ok then ok, err = M.bytes(w, size.params) end
    if ok and w.rate then ok, err = M.rate(w, size.params, 1) end
    if not ok then error(setmetatable({ msg = string.format("%s (at %s size)", err.message, size.label) }, Invalid), 0) end
  end
  return w
end

function M.load(name_or_path, opts)
  local path = M.find(name_or_path, opts)
  local h = io.open(path, "rb")
  local text = h and h:read("a") -- nil for a folder too
  if h then h:close() end
  if not text then
    return nil, verdicts.failure("bad_input", string.format("no workload '%s' (looked for %s)", name_or_path, path))
  end
  local chunk, err = load(text, "@" .. path, "t", setmetatable({}, { __index = _G }))
  if not chunk then return nil, verdicts.failure("bad_input", err) end
  local ok, spec = pcall(chunk)
  if not ok then return nil, verdicts.failure("bad_input", string.format("%s: %s", path, tostring(spec))) end
  local dir = path:match("^(.*)/[^/]*$") or "."
  local vok, w = pcall(validate, spec, path, dir)
  if vok then
    -- names this version of the spec: the worker keeps host-built inputs
    -- under it, so an edited init never reuses the old bytes
    w.sha256 = require("kl.hash").sha256(text)
    return w
  end
  if getmetatable(w) == Invalid then return nil, verdicts.failure("bad_input", w.msg) end
  error(w, 0)
end

local function merged(base, over)
  local p = {}
  for k, v in pairs(base) do p[k] = v end
  for k, v in pairs(over or {}) do p[k] = v end
  return p
end

function M.sizes(w)
  local out = {}
  for i, t in ipairs(w.test_params or {}) do
    out[#out + 1] = { label = "test " .. i, params = merged(w.params, t), bench = false }
  end
  out[#out + 1] = { label = "bench", params = merged(w.params), bench = true }
  for i, t in ipairs(w.bench_params or {}) do
    out[#out + 1] = { label = "bench " .. (i + 1), params = merged(w.params, t), bench = true }
  end
  return out
end

function M.counts(w, p)
  local counts = {}
  for _, b in ipairs(w.buffer_list) do
    local n, err = b.count:eval(p)
    if n == nil then return nil, verdicts.failure("bad_input", string.format("%s: buffers.%s count: %s", w.path, b.name, err.message)) end
    if math.type(n) ~= "integer" or n < 1 then
      return nil, verdicts.failure("bad_input", string.format("%s: buffers.%s count '%s' = %s, not a positive integer",
        w.path, b.name, b.count.text, tostring(n)))
    end
    counts[b.name] = n
  end
  return counts
end

local function eval_number(w, field, c, p)
  local v, err = c:eval(p)
  if v == nil then return nil, verdicts.failure("bad_input", string.format("%s: %s: %s", w.path, field, err.message)) end
  if type(v) ~= "number" or v < 0 then
    return nil, verdicts.failure("bad_input", string.format("%s: %s '%s' = %s, not a number >= 0", w.path, field, c.text, tostring(v)))
  end
  return v
end

function M.flops(w, p) return eval_number(w, "flops", w.flops_expr, p) end
function M.bytes(w, p) return eval_number(w, "bytes", w.bytes_expr, p) end
-- The workload's rate (w.rate) for a run of `seconds` at params p, or nil.
function M.rate(w, p, seconds)
  if not w.rate then return nil end
  local n, err = eval_number(w, "rate.count", w.rate.count_expr, p)
  if not n then return nil, err end
  return n / seconds / w.rate.per
end

function M.args(w, p)
  local out = {}
  for i, a in ipairs(w.args) do
    if w.buffer_by_name[a] then out[i] = { buffer = a } else out[i] = { param = a, value = p[a] } end
  end
  return out
end

function M.is_float(ty) return types.is_float(ty) == true end

function M.tolerance(w, buffer)
  local b = w.buffer_by_name[buffer]
  if b and not types.is_float(b.type) then return { rtol = 0, atol = 0 } end
  return { rtol = w.tolerance.rtol, atol = w.tolerance.atol }
end

function M.host_inputs(w, p, seed)
  local counts, err = M.counts(w, p)
  if not counts then return nil, err end
  local data = {}
  for _, b in ipairs(w.buffer_list) do
    local n = counts[b.name]
    if type(b.init) == "function" then
      local ok, v = pcall(b.init, p, randgen.rng(seed, b.stream))
      if not ok then return nil, verdicts.failure("bad_input", string.format("%s: buffers.%s.init: %s", w.path, b.name, tostring(v))) end
      if type(v) == "table" then
        if #v ~= n then
          return nil, verdicts.failure("bad_input", string.format("%s: buffers.%s.init returned %d values, the count is %d", w.path, b.name, #v, n))
        end
        local pok, packed = pcall(randgen.pack, b.type, v)
        if not pok then return nil, verdicts.failure("bad_input", string.format("%s: buffers.%s.init: %s", w.path, b.name, tostring(packed))) end
        v = packed
      elseif type(v) == "string" then
        if #v ~= n * randgen.size(b.type) then
          return nil, verdicts.failure("bad_input", string.format("%s: buffers.%s.init returned %d bytes, expected %d", w.path, b.name, #v, n * randgen.size(b.type)))
        end
      else
        return nil, verdicts.failure("bad_input", string.format("%s: buffers.%s.init must return a list of numbers or packed bytes, got %s", w.path, b.name, type(v)))
      end
      data[b.name] = v
    else
      data[b.name] = randgen.fill(b.type, n, b.init, seed, b.stream)
    end
  end
  return data
end

return M
