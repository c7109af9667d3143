-- Kernel annotations: each kernel file states its own launch geometry and
-- validity in expressions over the workload parameters and its own integer
-- constants.
--
--   // @kl launch grid(cdiv(N, BN), cdiv(M, BM)) block(cdiv(BM * BN, TM * TN)) smem(BM * BK * 4 * 2)
--   // @kl launch(contract) grid(cdiv(V, 256)) block(256)      -- another extern "C" entry
--   // @kl requires M % BM == 0 && N % BN == 0
--
-- grid and block take 1 to 3 expressions (x, y, z); smem, the dynamic shared
-- memory in bytes, is optional. Every `requires` line must hold.
--
--   annotations.parse(source [, file])  -> ann | nil, failure ("file:line: message")
--   annotations.constants(source)       -> { NAME = integer }
--   annotations.environment(params, constants) -> envs | nil, failure
--   annotations.geometry(ann, envs [, kernel]) -> geom | nil, failure
--       geom = { grid = {x, y, z}, block = {x, y, z}, threads, smem, optin }
--   annotations.check(ann, envs) -> true | false, "requires ... (file:line)" | nil, failure
--   annotations.resolve(source, params [, { file, bind, kernel }])
--       -> { geometry = geom | nil, allowed = bool, why } | nil, failure
--       all of the above for one launch at one size: allowed = false (with
--       why) when a requires line rules the size out, an expected outcome;
--       nil, failure when the annotations themselves are broken.
-- Every failure is verdict bad_input: the kernel's author wrote it.
--
-- The `@kl` lines and the integer constants come from kl.source.
local expr = require "klineage.base.expr"

local verdicts = require "klineage.base.verdicts"

local M = {}

-- Dynamic shared memory above this needs cuFuncSetAttribute(
-- CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) before the launch.
M.SMEM_DEFAULT_LIMIT = 48 * 1024

-- The `@kl` comment lines of a source: { { line = n, text = "launch ..." } }.
-- The gate resolves annotations for every launch (a BFS run launches once
-- per level): the units of the last few sources are kept, not reparsed.
local recent, RECENT_MAX = {}, 8
local function unit_of(source)
  for i, e in ipairs(recent) do
    if e.source == source then
      table.insert(recent, 1, table.remove(recent, i))
      return e.unit
    end
  end
  local unit = require("kl.source").parse(source)
  table.insert(recent, 1, { source = source, unit = unit })
  recent[RECENT_MAX + 1] = nil
  return unit
end

function M.scan(source)
  local found = {}
  for _, a in ipairs(unit_of(source):annotations()) do
    found[#found + 1] = { line = a.line, text = a.text }
  end
  return found
end

-- Splits "a, f(b, c), d" at its top-level commas.
local function split_args(s)
  local parts, depth, start = {}, 0, 1
  for i = 1, #s do
    local ch = s:sub(i, i)
    if ch == "(" then depth = depth + 1
    elseif ch == ")" then depth = depth - 1
    elseif ch == "," and depth == 0 then
      parts[#parts + 1] = s:sub(start, i - 1)
      start = i + 1
    end
  end
  parts[#parts + 1] = s:sub(start)
  return parts
end

-- Reads "name(balanced...)" clauses from text; returns { {name, body} } or
-- nil, message.
local function clauses(text)
  local out, i = {}, 1
  while i <= #text do
    local s, e, name = text:find("^%s*([%a_][%w_]*)%s*%(", i)
    if not s then
      if text:sub(i):match("^%s*$") then break end
      return nil, string.format("expected name(...) at '%s'", text:sub(i))
    end
    local depth, j = 1, e + 1
    while j <= #text and depth > 0 do
      local ch = text:sub(j, j)
      if ch == "(" then depth = depth + 1 elseif ch == ")" then depth = depth - 1 end
      j = j + 1
    end
    if depth ~= 0 then return nil, string.format("unbalanced parentheses in %s(...)", name) end
    out[#out + 1] = { name = name, body = text:sub(e + 1, j - 2) }
    i = j
  end
  return out
end

local function compile_list(body, what, where)
  local list = {}
  local parts = split_args(body)
  if #parts < 1 or #parts > 3 then
    return nil, string.format("%s: %s takes 1 to 3 expressions, got %d", where, what, #parts)
  end
  for k, part in ipairs(parts) do
    local c, err = expr.compile(part)
    if not c then return nil, string.format("%s: %s argument %d: %s", where, what, k, err.message) end
    list[k] = c
  end
  return list
end

local function parse_launch(text, where)
  local kernel, rest = text:match("^launch%s*%(%s*([%a_][%w_]*)%s*%)(.*)$")
  if not kernel then rest = text:match("^launch(.*)$") end
  local list, err = clauses(rest)
  if not list then return nil, where .. ": " .. err end
  local launch = { kernel = kernel, where = where }
  for _, cl in ipairs(list) do
    if launch[cl.name] then return nil, string.format("%s: %s(...) given twice", where, cl.name) end
    if cl.name == "grid" or cl.name == "block" then
      local l, lerr = compile_list(cl.body, cl.name, where)
      if not l then return nil, lerr end
      launch[cl.name] = l
    elseif cl.name == "smem" then
      local c, cerr = expr.compile(cl.body)
      if not c then return nil, string.format("%s: smem: %s", where, cerr.message) end
      launch.smem = c
    else
      return nil, string.format("%s: unknown launch clause '%s' (grid, block, smem)", where, cl.name)
    end
  end
  if not launch.grid then return nil, where .. ": launch needs grid(...)" end
  if not launch.block then return nil, where .. ": launch needs block(...)" end
  return launch
end

-- Parses the annotations of a kernel source. ann = {
--   launch = the default launch (nil when the file has none),
--   launches = { [kernel] = launch } for `launch(kernel)` lines,
--   requires = { { expr = compiled, text, where } },
--   unknown = { { text, where } } -- other @kl lines, left to other tools }
local function parse_(source, file)
  file = file or "kernel.cu"
  local ann = { launches = {}, requires = {}, unknown = {}, file = file }
  for _, a in ipairs(M.scan(source)) do
    local where = file .. ":" .. a.line
    local word = a.text:match("^([%a_]+)")
    if word == "launch" then
      local launch, err = parse_launch(a.text, where)
      if not launch then return nil, err end
      if launch.kernel then
        if ann.launches[launch.kernel] then return nil, where .. ": a second launch(" .. launch.kernel .. ") line" end
        ann.launches[launch.kernel] = launch
      else
        if ann.launch then return nil, where .. ": a second launch line (first at " .. ann.launch.where .. ")" end
        ann.launch = launch
      end
    elseif word == "requires" then
      local text = a.text:match("^requires%s*(.*)$")
      local c, err = expr.compile(text)
      if not c then return nil, string.format("%s: requires: %s", where, err.message) end
      ann.requires[#ann.requires + 1] = { expr = c, text = text, where = where }
    else
      ann.unknown[#ann.unknown + 1] = { text = a.text, where = where }
    end
  end
  return ann
end

-- The kernel's integer constants, as kl.source evaluates them: `#define
-- NAME <int expr>`, `constexpr` / `const` integers and template parameter
-- defaults; anything that is not a constant integer is left out.
function M.constants(source)
  local consts = {}
  for _, c in ipairs(unit_of(source):constants()) do
    if math.type(c.value) == "integer" then consts[c.name] = c.value end
  end
  return consts
end

-- The lookup tables for evaluating annotations: the parameters (overlaid by
-- `bind`), then the kernel's constants. A name that is both a parameter and
-- a constant with another value is an error: which one the author meant is
-- unknowable.
local function environment_(params, constants, bind)
  for name, v in pairs(constants or {}) do
    local p = (bind and bind[name]) or params[name]
    if p ~= nil and p ~= v then
      return nil, string.format("'%s' is both a workload parameter (%s) and a kernel constant (%s)",
        name, tostring(p), tostring(v))
    end
  end
  return { bind or {}, params, constants or {} }
end

local function eval_positive(c, envs, what, where)
  local v, err = c:eval(table.unpack(envs))
  if v == nil then return nil, string.format("%s: %s: %s", where, what, err.message) end
  if math.type(v) ~= "integer" then
    return nil, string.format("%s: %s = %s is not an integer", where, what, tostring(v))
  end
  return v
end

-- CUDA's launch limits.
local GRID_MAX = { 2147483647, 65535, 65535 }
local BLOCK_MAX = { 1024, 1024, 64 }
local AXES = { "x", "y", "z" }

local function geometry_(ann, envs, kernel)
  local launch
  if kernel then
    launch = ann.launches[kernel]
    if not launch then return nil, string.format("%s: no '// @kl launch(%s) ...' line", ann.file, kernel) end
  else
    launch = ann.launch
    if not launch then return nil, string.format("%s: no '// @kl launch grid(...) block(...)' line", ann.file) end
  end
  local geom = { grid = { 1, 1, 1 }, block = { 1, 1, 1 }, smem = 0 }
  for _, what in ipairs({ "grid", "block" }) do
    for k, c in ipairs(launch[what]) do
      local label = what .. "." .. AXES[k]
      local v, err = eval_positive(c, envs, label, launch.where)
      if not v then return nil, err end
      local max = (what == "grid" and GRID_MAX or BLOCK_MAX)[k]
      if v < 1 or v > max then
        return nil, string.format("%s: %s = %d is outside 1..%d", launch.where, label, v, max)
      end
      geom[what][k] = v
    end
  end
  geom.threads = geom.block[1] * geom.block[2] * geom.block[3]
  if geom.threads > 1024 then
    return nil, string.format("%s: block of %d threads is more than 1024", launch.where, geom.threads)
  end
  if launch.smem then
    local v, err = eval_positive(launch.smem, envs, "smem", launch.where)
    if not v then return nil, err end
    if v < 0 then return nil, string.format("%s: smem = %d is negative", launch.where, v) end
    geom.smem = v
  end
  geom.optin = M.needs_optin(geom.smem)
  return geom
end

-- Whether a launch must raise the dynamic shared memory attribute first.
-- static_smem (from ptxas) counts towards the same 48 KiB default limit.
function M.needs_optin(dynamic_smem, static_smem)
  return dynamic_smem + (static_smem or 0) > M.SMEM_DEFAULT_LIMIT
end

local function check_(ann, envs)
  for _, r in ipairs(ann.requires) do
    local v, err = r.expr:eval(table.unpack(envs))
    if v == nil then return nil, string.format("%s: requires: %s", r.where, err.message) end
    if type(v) == "number" then v = v ~= 0 end
    if not v then return false, string.format("requires %s (%s)", r.text, r.where) end
  end
  return true
end

local function resolve_(source, params, opts)
  opts = opts or {}
  local ann, err = parse_(source, opts.file)
  if not ann then return nil, err end
  local envs, eerr = environment_(params, M.constants(source), opts.bind)
  if not envs then return nil, (opts.file or "kernel.cu") .. ": " .. eerr end
  local allowed, why = check_(ann, envs)
  if allowed == nil then return nil, why end
  if not allowed then return { allowed = false, why = why } end
  local geom, gerr = geometry_(ann, envs, opts.kernel)
  if not geom then return nil, gerr end
  return { geometry = geom, allowed = true }
end

-- The exported functions: the helpers above compose plain messages; at
-- the boundary a message becomes a bad_input failure.
for name, fn in pairs({ parse = parse_, environment = environment_, geometry = geometry_, check = check_,
                        resolve = resolve_ }) do
  M[name] = function(...) return verdicts.lift("bad_input", fn(...)) end
end

return M
