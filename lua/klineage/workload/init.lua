-- Workload specs: gpu/workloads/<name>/workload.lua (ARCHITECTURE.md,
-- "Workload spec"), loaded and validated with errors that name the file and
-- the field.
--
-- A spec comes from a stranger: it is untrusted Lua. The file runs in a
-- restricted environment (klineage.workload.spec_sandbox lists what it may use: no
-- os, io, require, load, debug or collectgarbage) within an instruction and
-- a memory limit (M.LIMITS), and so does every later call of its functions:
-- w.run and each init function are wrappers that run the spec's function
-- under the same kind of limits. What the file returns is copied raw into
-- plain tables: a metatable, a userdata, or a function anywhere but `run`
-- and a buffer's `init` is refused. Passing a limit, or raising, gives a
-- bad_input failure that names the file and the field.
--
--   workload.load(name_or_path [, { root = dir, limits = {...} }]) -> w | nil, failure (bad_input)
--       name: gpu/workloads/<name>/workload.lua under the klineage home (or
--       opts.root); a path: a workload.lua file or the folder holding one.
--       opts.limits is merged over M.LIMITS (one level deep) for this spec.
--   workload.sizes(w) -> { { label = "test 1", params = p, bench = false }, ...,
--                          { label = "bench", params = p, bench = true }, ... }
--       every test_params entry merged over params, then the bench size
--       (params itself, then each bench_params entry merged over it).
--   workload.params_text(p) -> "B = 4096, G = 64": a size in words, names sorted
--   workload.counts(w, p [, max_bytes]) -> { [buffer] = elements } | nil, failure
--       refused when the buffers together take more than
--       w.limits.buffer_bytes (or max_bytes, the backend's memory, where
--       smaller), before anything is allocated
--   workload.init_of(w, buffer, p) -> the buffer's init at params p (an
--       { "int", lo, hi } with its bounds evaluated) | nil, failure
--   workload.flops(w, p), workload.bytes(w, p) -> number | nil, failure
--   workload.rate(w, p, seconds) -> the spec's rate (GTEPS, Mrays/s) | nil
--   workload.args(w, p)    -> { { buffer = name } | { param = name, value = v } }
--   workload.tolerance(w, buffer) -> { rtol, atol } (integer buffers: exact)
--   workload.is_float(type) -> true for f32, f64, f16, bf16
--   workload.run(w, ctx, p) -> true | nil, failure: w.run(ctx, p), caught
--   workload.host_inputs(w, p, seed [, names]) -> { [buffer] = packed bytes } | nil, failure
--       the buffers named (default: every buffer), each after the buffers
--       its `after` lists, which are built too; the deterministic generator
--       of engine/core/randgen.h for the others. A buffer's stream is its
--       index in w.buffer_list (sorted by name, 0-based).
--
-- Init functions are called init(p, rng, ctx): p the merged params (a
-- copy), rng the buffer's own stream, ctx = { seed, name, type, count,
-- buffers = { [name] = packed bytes } } with the bytes of every buffer the
-- spec lists in the buffer's `after` (randgen.unpack(type, bytes) reads
-- them), so that buffers that must agree (CSR offsets and columns) are
-- built from one another instead of through upvalues. An init returns a
-- list of `count` numbers or the packed bytes. A run is called run(ctx, p)
-- with ctx:zero, ctx:launch and ctx:read (ARCHITECTURE.md); w.run raises a
-- bad_input failure for the spec's own errors and passes the engine's
-- (a kernel's fault) through unchanged.
--
-- w keeps the spec's fields and adds: path, dir, limits, buffer_list (sorted
-- { name, type, count (compiled expr), init, after, output, stream }),
-- outputs (names), flops_expr, bytes_expr, reference, and alias_pairs.
--
-- alias: whether the kernel is launched in place (klineage.workload.alias has the
-- rest). Absent: unknown, so transforms that need two pointers apart
-- (restrict, ldg) refuse a pointer that may alias a written one.
-- alias = {}: never in place. alias = { { "out", "in" } }: out and in are
-- launched with one buffer, and the gate also runs the kernel that way at
-- every test size. Each pair is an output and an input of the same element
-- type and the same count at every size; a buffer is in one pair at most,
-- and no buffer is passed twice in args (that is an in-place launch too).
-- w.alias_pairs = nil (absent) or { { output = name, input = name } }.
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
local alias = require "klineage.workload.alias"
local expr = require "klineage.base.expr"
local sandbox = require "klineage.workload.spec_sandbox"
local verdicts = require "klineage.base.verdicts"
local types = require "klineage.base.types"
local memcap = require "kl.memcap"
local randgen = require "kl.randgen"

local M = {}

local MiB, GiB = 1 << 20, 1 << 30

-- What a spec may take. Instructions are the spec's own Lua instructions
-- (each call into the engine, a ctx:launch, counts as
-- spec_sandbox.ENGINE_COST); memory is what the Lua state may grow by
-- during one call. The largest real needs: raytrace's bench scene, 340 M
-- instructions and 0.8 GB; bfs's RMAT graph, 0.6 GB built in C. An endless
-- loop in an init ends after some 15 s of CPU (the count hook makes Lua
-- code about 40% slower while a spec runs). Seconds bound the wall-clock
-- time of the spec's own code in one call (not the engine's: a run's
-- launches are not counted), C functions included (spec_sandbox says how).
M.LIMITS = {
  file_bytes = 4 * MiB,                                      -- the spec file
  chunk = { instructions = 100000000, memory = 256 * MiB, seconds = 60 },  -- running the file
  -- one init function call, with the collector paused (spec_sandbox says why)
  init = { instructions = 2000000000, memory = 4 * GiB, seconds = 300, pause_gc = true },
  run = { instructions = 1000000000, memory = 1 * GiB, seconds = 300 },  -- one run function call
  -- Every buffer of one size together: a quarter of the host's memory,
  -- since emu keeps the buffers, the reference's outputs and the copies it
  -- checksums on the host, and either backend builds init functions'
  -- buffers there. The cuda device must hold them too: a caller that knows
  -- its memory passes it to counts.
  buffer_bytes = (memcap.physical() or 16 * GiB) // 4,
}

-- The buffer element types (klineage.base.types is the vocabulary).
M.TYPES = types.BUFFER
local TYPE_SET = {}
for _, t in ipairs(M.TYPES) do TYPE_SET[t] = true end

-- The fields a spec may have; anything else is a typo or an unknown extension.
M.FIELDS = {
  name = true, kernel = true, params = true, test_params = true, bench_params = true,
  buffers = true, args = true, tolerance = true, flops = true, bytes = true,
  lineage = true, run = true, description = true, reference = true, vendor = true,
  rate = true, monotone = true, alias = true,
}

-- The vendor routines a workload can be compared with (kl.vendor), and the
-- number of arguments each takes.
M.VENDOR_ROUTINES = { sgemm_rowmajor = 8, conv2d_nchw_3x3 = 8 }
M.VENDOR_LIBRARIES = { cublas = true, cudnn = true }

local function home() return require("kl.host").home or "." end

-- Something there that is not a folder: io.open would block on a FIFO, so
-- the check is kl.nvrtc.read_source's, which looks at the type first. A
-- FIFO or a device is "there": reading it is refused later, with the reason.
local function is_file(path)
  local _, why, stage = require("kl.nvrtc").read_source(path, 0)
  if stage == nil or stage == "size" then return true end
  return stage == "type" and not why:find("^a directory")
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

-- Returns the init and, for { "int", lo, hi } with a bound that is an
-- expression over params ("N - 1"), the compiled bounds { lo, hi } (each an
-- integer or a compiled expression), evaluated per size by init_of.
local function check_init(path, field, init, ty, params)
  if type(init) == "function" then return init end
  if init == "zeros" then return init end
  if init == "uniform" or init == "normal" then
    if not types.is_float(ty) then
      invalid(path, field, "\"%s\" needs a float type, the buffer is %s (use { \"int\", lo, hi })", init, ty)
    end
    return init
  end
  if type(init) == "table" then
    local function bound(v)
      return math.type(v) == "integer" or (type(v) == "string" and not v:match("^%s*$"))
    end
    if init[1] ~= "int" or not bound(init[2]) or not bound(init[3]) or #init ~= 3 or next(init, 3) ~= nil then
      invalid(path, field, "a table init must be { \"int\", lo, hi } with integer bounds (or expressions over params)")
    end
    if math.type(init[2]) == "integer" and math.type(init[3]) == "integer" then
      if init[2] > init[3] then invalid(path, field, "{ \"int\", %d, %d } has lo > hi", init[2], init[3]) end
      return init
    end
    local function compiled(v, which)
      if math.type(v) == "integer" then return v end
      return compile_expr(path, field .. " " .. which, v, params)
    end
    return init, { compiled(init[2], "lo"), compiled(init[3], "hi") }
  end
  invalid(path, field, "must be \"uniform\", \"normal\", \"zeros\", { \"int\", lo, hi } or a function(p, rng), got %s",
    type(init) == "string" and string.format("%q", init) or type(init))
end

local BUFFER_FIELDS = { [1] = true, [2] = true, init = true, after = true, output = true, scratch = true }

local function copy_params(p)
  local c = {}
  for k, v in pairs(p) do c[k] = v end
  return c
end

-- A failure of the spec's own code at `field` (nil: the file itself), from
-- what the sandbox said; a limit's message names the limit to change.
local function spec_failure(path, field, class, message, kind)
  if kind == "instructions" or kind == "memory" or kind == "seconds" then
    message = string.format("%s (workload.LIMITS.%s.%s)", message, class, kind)
  end
  return verdicts.failure("bad_input", field and string.format("%s: %s: %s", path, field, message)
    or string.format("%s: %s", path, message))
end

-- b.init for an init function: the spec's function under the init limits;
-- its result checked and packed outside them, read raw (a table it returns
-- must have no metatable). Returns the packed bytes or raises bad_input.
local function init_function(w, b, raw, sb)
  local field = "buffers." .. b.name .. ".init"
  local function refuse(fmt, ...)
    verdicts.raise("bad_input", string.format("%s: %s" .. fmt, w.path, field, ...))
  end
  return function(p, rng, ctx)
    if type(ctx) ~= "table" or math.type(ctx.count) ~= "integer" then
      error("an init is called init(p, rng, ctx) with ctx.count", 2)
    end
    local ok, v, kind = sb:call(w.limits.init, raw, copy_params(p), rng, ctx)
    if not ok then error(spec_failure(w.path, field, "init", v, kind), 0) end
    local n, size = ctx.count, randgen.size(b.type)
    if type(v) == "table" then
      if debug.getmetatable(v) ~= nil then refuse(" returned a table with a metatable") end
      if rawlen(v) ~= n then refuse(" returned %d values, the count is %d", rawlen(v), n) end
      local pok, packed = pcall(randgen.pack, b.type, v)
      if not pok then refuse(": %s", tostring(packed)) end
      return packed
    elseif type(v) == "string" then
      if #v ~= n * size then refuse(" returned %d bytes, expected %d", #v, n * size) end
      return v
    end
    refuse(" must return a list of numbers or packed bytes, got %s", type(v))
  end
end

-- w.run: the spec's run under the run limits, given a ctx whose functions
-- run as the engine (each call charged, none limited). The spec's own
-- errors raise bad_input; the engine's pass through.
local function run_function(w, raw, sb)
  return function(ctx, p)
    local sctx = {}
    for k, v in pairs(ctx) do sctx[k] = type(v) == "function" and sandbox.engine(v) or v end
    local ok, msg, kind = sb:call(w.limits.run, raw, sctx, copy_params(p))
    if not ok then error(spec_failure(w.path, "run", "run", msg, kind), 0) end
  end
end

-- `after = { names }` on a buffer whose init is a function: those buffers
-- are built before it and handed to it (ctx.buffers). Each must be an input
-- (an output or scratch buffer without an init has nothing to hand over),
-- and there must be an order (no cycle).
local function check_after(path, spec_buffers, list, by_name)
  for _, b in ipairs(list) do
    local after = spec_buffers[b.name].after
    local field = "buffers." .. b.name .. ".after"
    if after ~= nil then
      if type(b.init) ~= "function" then invalid(path, field, "is for an init function: it lists what the function is given") end
      if type(after) ~= "table" then invalid(path, field, "must be a list of buffer names") end
      for k in pairs(after) do
        if math.type(k) ~= "integer" or k < 1 or k > #after then invalid(path, field, "must be a list of buffer names") end
      end
      for i, d in ipairs(after) do
        local at = string.format("%s[%d]", field, i)
        local dep = type(d) == "string" and by_name[d]
        if not dep then invalid(path, at, "'%s' is not a buffer", tostring(d)) end
        if dep == b then invalid(path, at, "is the buffer itself") end
        if dep.poisoned then invalid(path, at, "'%s' has no init: there is nothing to hand over", d) end
        b.after[#b.after + 1] = d
      end
    end
  end
  local state = {}
  local function visit(b, trail)
    if state[b.name] == "done" then return end
    if state[b.name] == "open" then
      invalid(path, "buffers." .. trail[1] .. ".after", "is a cycle: %s", table.concat(trail, " -> "))
    end
    state[b.name] = "open"
    for _, d in ipairs(b.after) do
      trail[#trail + 1] = d
      visit(by_name[d], trail)
      trail[#trail] = nil
    end
    state[b.name] = "done"
  end
  for _, b in ipairs(list) do visit(b, { b.name }) end
end

local element_counts

local function validate(spec, path, dir, sb, limits)
  if type(spec) ~= "table" then invalid(path, "spec", "the file must return a table, got %s", type(spec)) end
  for _, k in ipairs(keys_sorted(spec)) do
    if not M.FIELDS[k] then
      local known = keys_sorted(M.FIELDS)
      invalid(path, tostring(k), "unknown field (known: %s)", table.concat(known, ", "))
    end
  end
  local w = {}
  for k, v in pairs(spec) do w[k] = v end
  w.path, w.dir, w.limits = path, dir, limits
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
      if not BUFFER_FIELDS[k] then invalid(path, field .. "." .. tostring(k), "unknown buffer field (init, after, output, scratch)") end
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
    local int_bounds
    init, int_bounds = check_init(path, field .. ".init", init, ty, spec.params)
    local entry = { name = name, type = ty, count = count, init = init, int_bounds = int_bounds,
                    after = {}, output = b.output == true, scratch = b.scratch == true, stream = #w.buffer_list,
                    poisoned = b.init == nil } -- no init given: poisoned before each launch
    if type(init) == "function" then
      entry.init = init_function(w, entry, init, sb)
      b.init = entry.init -- w.buffers too holds only the wrapper
    end
    w.buffer_list[#w.buffer_list + 1] = entry
    by_name[name] = entry
    if entry.output then w.outputs[#w.outputs + 1] = name end
  end
  if #w.outputs == 0 then invalid(path, "buffers", "no buffer has output = true") end
  w.buffer_by_name = by_name
  check_after(path, spec.buffers, w.buffer_list, by_name)

  if type(spec.args) ~= "table" or #spec.args == 0 then invalid(path, "args", "missing: the kernel's arguments in order") end
  local used = {}
  for i, a in ipairs(spec.args) do
    if by_name[a] then
      if used[a] then
        invalid(path, string.format("args[%d]", i), "'%s' is passed twice (a kernel launched in place takes two buffers and alias = { { \"out\", \"in\" } })", a)
      end
      used[a] = true
    elseif spec.params[a] == nil then
      invalid(path, string.format("args[%d]", i), "'%s' is neither a buffer nor a key of params", tostring(a))
    end
  end
  for _, b in ipairs(w.buffer_list) do
    if not used[b.name] then invalid(path, "buffers." .. b.name, "is not passed in args") end
  end

  local aok, pairs_ = pcall(alias.check, path, spec, by_name)
  if not aok then
    if type(pairs_) == "table" and pairs_.alias_invalid then error(setmetatable({ msg = pairs_.alias_invalid }, Invalid), 0) end
    error(pairs_, 0)
  end
  w.alias_pairs = pairs_

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
    if type(v) ~= "number" or v ~= v or v < 0 or v == math.huge then
      invalid(path, "tolerance." .. k, "must be a number >= 0 and finite, got %s", tostring(v))
    end
  end
  -- |out - ref| <= rtol * max|ref| with rtol >= 1 holds for an output of zeros.
  if tol.rtol and tol.rtol >= 1 then
    invalid(path, "tolerance.rtol", "must be below 1 (rtol = %s passes an output of zeros)", tostring(tol.rtol))
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
      -- ../ or a link may not lead out of the spec's folder: the file would be copied into the run
      local inside, of = require("klineage.base.files").inside(dir, dir .. "/" .. f)
      if not inside then invalid(path, string.format("lineage[%d]", i), "%s", of.message) end
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
  if spec.run then w.run = run_function(w, spec.run, sb) end
  if spec.description ~= nil and type(spec.description) ~= "string" then
    invalid(path, "description", "must be a string")
  end
  w.reference = nil
  if spec.reference ~= nil and spec.reference ~= false then
    local f = spec.reference
    if type(f) ~= "string" or f == "" or f:sub(1, 1) == "/" then
      invalid(path, "reference", "must name a C file in the spec's folder (a relative path), got %s",
        type(f) == "string" and string.format("%q", f) or type(f))
    end
    local rpath = dir .. "/" .. f
    local inside, of = require("klineage.base.files").inside(dir, rpath)
    if not inside and of.stage == "outside" then invalid(path, "reference", "%s", of.message) end
    -- read_text refuses a missing file, a folder and a binary file
    local text, rerr = require("klineage.base.files").read_text(rpath)
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

  -- Every size must evaluate now, not halfway through a run (the size of
  -- the buffers is held to the host's memory when they are allocated: a
  -- bench size may be meant for a GPU machine).
  for _, size in ipairs(M.sizes(w)) do
    local ok, err = element_counts(w, size.params)
    if ok then
      local cok, cmsg = alias.check_counts(w, ok, size.label)
      if not cok then error(setmetatable({ msg = cmsg }, Invalid), 0) end
    end
    for _, b in ipairs(w.buffer_list) do
      if ok and b.int_bounds then ok, err = M.init_of(w, b.name, size.params) end
    end
    if ok then ok, err = M.flops(w, size.params) end
    if ok then ok, err = M.bytes(w, size.params) end
    if ok and w.rate then ok, err = M.rate(w, size.params, 1) end
    if not ok then error(setmetatable({ msg = string.format("%s (at %s size)", err.message, size.label) }, Invalid), 0) end
  end
  return w
end

-- The spec file's text, or nil (no such file, a folder) and, for a file
-- over the limit, its size.
local function read_spec(path, limit)
  local text, why, stage = require("kl.nvrtc").read_source(path, limit)
  if text then return text end
  if stage == "size" then return nil, tonumber(why:match("^(%d+) bytes")) end
  return nil -- missing, a folder, a FIFO or a device: not a spec
end

local function merged_limits(over)
  local l = {}
  for k, v in pairs(M.LIMITS) do l[k] = v end
  for k, v in pairs(over or {}) do
    if type(v) == "table" and type(l[k]) == "table" then
      local t = {}
      for kk, vv in pairs(l[k]) do t[kk] = vv end
      for kk, vv in pairs(v) do t[kk] = vv end
      v = t
    end
    l[k] = v
  end
  return l
end

-- Functions are spec code the engine calls later: only these may be one.
local function function_allowed(at)
  return at == "run" or at:match("^buffers%.[%a_][%w_]*%.init$") ~= nil
end

function M.load(name_or_path, opts)
  opts = opts or {}
  local limits = merged_limits(opts.limits)
  local path = M.find(name_or_path, opts)
  local text, size = read_spec(path, limits.file_bytes)
  if not text then
    if size then
      return nil, verdicts.failure("bad_input", string.format("%s: the file is %d bytes, over the limit of %d (workload.LIMITS.file_bytes)",
        path, size, limits.file_bytes))
    end
    return nil, verdicts.failure("bad_input", string.format("no workload '%s' (looked for %s)", name_or_path, path))
  end
  -- Compiling is bounded by the file's size and the memory limit; running
  -- the chunk by both limits.
  local sb = sandbox.new("the workload spec " .. require("klineage.base.files").display(path))
  local ok, chunk, err = sb:call(limits.chunk, load, text, "@" .. path, "t", sb.env)
  if not ok then return nil, spec_failure(path, nil, "chunk", chunk, err) end
  if not chunk then return nil, verdicts.failure("bad_input", err) end
  local spec, kind
  ok, spec, kind = sb:call(limits.chunk, chunk)
  if not ok then return nil, spec_failure(path, nil, "chunk", spec, kind) end
  local perr
  spec, perr = sandbox.plain(spec, "the value it returns", function_allowed)
  if perr then return nil, verdicts.failure("bad_input", string.format("%s: %s", path, perr)) end
  local dir = path:match("^(.*)/[^/]*$") or "."
  local vok, w = pcall(validate, spec, path, dir, sb, limits)
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

function element_counts(w, p)
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

local function bytes_text(n)
  if n >= GiB then return string.format("%.1f GiB", n / GiB) end
  return string.format("%.1f MiB", n / MiB)
end

function M.params_text(p)
  local parts = {}
  for _, k in ipairs(keys_sorted(p)) do parts[#parts + 1] = string.format("%s = %s", k, tostring(p[k])) end
  return table.concat(parts, ", ")
end

function M.counts(w, p, max_bytes)
  local counts, err = element_counts(w, p)
  if not counts then return nil, err end
  local limit = (w.limits or M.LIMITS).buffer_bytes
  local what = "workload.LIMITS.buffer_bytes"
  if max_bytes and max_bytes > 0 and max_bytes < limit then limit, what = max_bytes, "the device's memory" end
  local left, total, over, biggest, most = limit, 0.0, false, nil, -1
  for _, b in ipairs(w.buffer_list) do
    local n, size = counts[b.name], types.size(b.type)
    local bytes = n * 1.0 * size -- a float: it may be past 2^63
    total = total + bytes
    if bytes > most then biggest, most = b.name, bytes end
    if n > left // size then over = true else left = left - n * size end
  end
  if over then
    return nil, verdicts.failure("bad_input", string.format(
      "%s: buffers: %s in all at %s (buffers.%s: %s), over the limit of %s (%s)",
      w.path, bytes_text(total), M.params_text(p), biggest, bytes_text(most), bytes_text(limit), what))
  end
  return counts
end

function M.init_of(w, name, p)
  local b = w.buffer_by_name[name]
  if not b then error("workload.init_of: no buffer '" .. tostring(name) .. "'", 2) end
  if not b.int_bounds then return b.init end
  local v = {}
  for i, c in ipairs(b.int_bounds) do
    local which = i == 1 and "lo" or "hi"
    if type(c) == "table" then
      local x, err = c:eval(p)
      if x == nil then
        return nil, verdicts.failure("bad_input", string.format("%s: buffers.%s.init %s: %s", w.path, name, which, err.message))
      end
      c = math.tointeger(x)
      if not c then
        return nil, verdicts.failure("bad_input", string.format("%s: buffers.%s.init %s '%s' = %s, not an integer",
          w.path, name, which, b.int_bounds[i].text, tostring(x)))
      end
    end
    v[i] = c
  end
  if v[1] > v[2] then
    return nil, verdicts.failure("bad_input", string.format("%s: buffers.%s.init: { \"int\", %d, %d } has lo > hi at %s",
      w.path, name, v[1], v[2], M.params_text(p)))
  end
  return { "int", v[1], v[2] }
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

function M.run(w, ctx, p)
  if not w.run then error("workload.run: " .. tostring(w.name) .. " has no run function", 2) end
  return verdicts.catch(function()
    w.run(ctx, p)
    return true
  end)
end

function M.host_inputs(w, p, seed, names)
  local counts, err = M.counts(w, p)
  if not counts then return nil, err end
  local order, placed = {}, {}
  local function place(b)
    if placed[b.name] then return end
    placed[b.name] = true
    for _, d in ipairs(b.after) do place(w.buffer_by_name[d]) end
    order[#order + 1] = b
  end
  for i, name in ipairs(names or {}) do
    local b = w.buffer_by_name[name]
    if not b then error(string.format("workload.host_inputs: names[%d] '%s' is not a buffer", i, tostring(name)), 2) end
    place(b)
  end
  if not names then
    for _, b in ipairs(w.buffer_list) do place(b) end
  end
  local data = {}
  for _, b in ipairs(order) do
    local n = counts[b.name]
    if type(b.init) == "function" then
      local given = {}
      -- by the names the init knows; in an in-place view (klineage.workload.alias)
      -- a name may stand for a merged buffer
      for _, d in ipairs(b.after) do given[d] = data[w.buffer_by_name[d].name] end
      local bytes, f = verdicts.catch(b.init, p, randgen.rng(seed, b.stream),
        { seed = seed, name = b.init_name or b.name, type = b.type, count = n, buffers = given })
      if not bytes then return nil, f end
      data[b.name] = bytes
    else
      local init, f = M.init_of(w, b.name, p)
      if not init then return nil, f end
      data[b.name] = randgen.fill(b.type, n, init, seed, b.stream)
    end
  end
  return data
end

return M
