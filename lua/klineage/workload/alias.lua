-- Aliasing between a workload's buffers: the spec's `alias` field, what
-- the gate does with it, and what the transforms are told.
--
-- The vocabulary (the spec's field):
--   alias absent      unknown: the kernel may be launched with one device
--                     buffer for any two of its pointers. The gate runs it
--                     out of place only; restrict and ldg refuse a pointer
--                     that may alias a written one.
--   alias = {}        never in place: no two pointers of a launch share
--                     memory (the gate holds a run's binds to it).
--   alias = { { "out", "in" }, ... }
--                     these pairs are launched with one buffer: the gate
--                     also runs the kernel in place at every test size,
--                     both arguments bound to the output, which starts
--                     with the input's contents (its init and stream), and
--                     compares it with the baseline run the same way.
-- A pair names two buffers of the spec: one output and one input (neither
-- output nor scratch), of the same element type and the same count at every
-- size, each buffer in one pair at most.
--
--   alias.check(path, spec, by_name) -> pairs | nil (absent), or raises the
--       message "<path>: alias...: <why>" (workload.load makes it bad_input);
--       pairs = { { output = name, input = name } ... }
--   alias.check_counts(w, counts, label) -> true | nil, message: the counts
--       of each pair agree at one size
--   alias.in_place(w) -> w' | nil: the workload as an in-place launch sees
--       it (nil when no pair is declared); see the comment there
--   alias.label(w) -> "in place (out = in, ...)"
--   alias.declaration(w) -> nil (unknown) | { kernel = w.kernel, pairs =
--       { { i, j } ... } } by 1-based argument position: what restrict and
--       ldg take as facts.alias (transforms/lib/aliasing.lua)
--   alias.declared(w, a, b) -> true when args a and b may share one buffer
local M = {}

local function fail(path, field, fmt, ...)
  error({ alias_invalid = string.format("%s: %s: " .. fmt, path, field, ...) }, 0)
end

local function role(b)
  if b.output then return "output" end
  if b.scratch then return "scratch" end
  if b.poisoned then return "a buffer without an init" end
  return "input"
end

-- Raises { alias_invalid = message } for a field that is not a declaration.
function M.check(path, spec, by_name)
  local a = spec.alias
  if a == nil then return nil end
  if type(a) ~= "table" then
    fail(path, "alias", "must be a list of { \"output\", \"input\" } pairs ({} when never in place), got %s", type(a))
  end
  local n = #a
  for k in pairs(a) do
    if math.type(k) ~= "integer" or k < 1 or k > n then
      fail(path, "alias", "must be a list of pairs, has key %s", tostring(k))
    end
  end
  local seen, out = {}, {}
  for i = 1, n do
    local pair, field = a[i], string.format("alias[%d]", i)
    if type(pair) ~= "table" or #pair ~= 2 or next(pair, 2) ~= nil
        or type(pair[1]) ~= "string" or type(pair[2]) ~= "string" then
      fail(path, field, "must be a pair of buffer names { \"output\", \"input\" }")
    end
    local bs = {}
    for j = 1, 2 do
      local b = by_name[pair[j]]
      if not b then fail(path, field, "'%s' is not a buffer", pair[j]) end
      if seen[b.name] then fail(path, field, "'%s' is already in %s (a buffer aliases one other at most)", b.name, seen[b.name]) end
      bs[j] = b
    end
    if bs[1] == bs[2] then fail(path, field, "names '%s' twice", bs[1].name) end
    seen[bs[1].name], seen[bs[2].name] = field, field
    if bs[1].type ~= bs[2].type then
      fail(path, field, "'%s' is %s and '%s' is %s: one buffer has one element type", bs[1].name, bs[1].type,
        bs[2].name, bs[2].type)
    end
    local o, x
    if role(bs[1]) == "output" and role(bs[2]) == "input" then o, x = bs[1], bs[2]
    elseif role(bs[2]) == "output" and role(bs[1]) == "input" then o, x = bs[2], bs[1]
    else
      fail(path, field, "pairs an output with an input: '%s' is %s and '%s' is %s", bs[1].name, role(bs[1]),
        bs[2].name, role(bs[2]))
    end
    out[i] = { output = o.name, input = x.name }
  end
  return out
end

function M.check_counts(w, counts, label)
  for i, pair in ipairs(w.alias_pairs or {}) do
    local co, ci = counts[pair.output], counts[pair.input]
    if co ~= ci then
      return nil, string.format("%s: alias[%d]: '%s' has %d elements and '%s' %d at the %s size: one buffer has one count",
        w.path, i, pair.output, co, pair.input, ci, label)
    end
  end
  return true
end

function M.label(w)
  local parts = {}
  for i, pair in ipairs(w.alias_pairs or {}) do parts[i] = pair.output .. " = " .. pair.input end
  return "in place (" .. table.concat(parts, ", ") .. ")"
end

-- The in-place view: w's fields, with each pair's two buffers made one.
-- The merged buffer keeps the output's name and flags and takes the
-- input's init, bounds, stream and `after` (so its bytes are those the
-- input gets out of place); buffer_by_name maps both names to it, so
-- every argument, bind, zero and read of either name reaches it. Its
-- sha256 differs from w's, so nothing the worker keeps by (spec, size,
-- seed) is shared between the two launch forms.
function M.in_place(w)
  local pairs_ = w.alias_pairs
  if not pairs_ or #pairs_ == 0 then return nil end
  local into, from = {}, {}
  for _, pair in ipairs(pairs_) do into[pair.input], from[pair.output] = pair.output, pair.input end
  local v = {}
  for k, x in pairs(w) do v[k] = x end
  v.buffer_list, v.buffer_by_name, v.outputs = {}, {}, {}
  for _, b in ipairs(w.buffer_list) do
    if not into[b.name] then
      local e = b
      if from[b.name] then
        local src = w.buffer_by_name[from[b.name]]
        e = {}
        for k, x in pairs(b) do e[k] = x end
        e.init, e.int_bounds, e.stream, e.after = src.init, src.int_bounds, src.stream, src.after
        e.poisoned, e.init_name = false, src.name
      end
      v.buffer_list[#v.buffer_list + 1] = e
      v.buffer_by_name[b.name] = e
      if e.output then v.outputs[#v.outputs + 1] = e.name end
    end
  end
  for input, output in pairs(into) do v.buffer_by_name[input] = v.buffer_by_name[output] end
  v.sha256 = (w.sha256 or w.path) .. "|" .. M.label(w)
  v.in_place = M.label(w)
  return v
end

function M.declaration(w)
  if w.alias_pairs == nil then return nil end
  local pos = {}
  for i, a in ipairs(w.args) do pos[a] = i end
  local out = {}
  for i, pair in ipairs(w.alias_pairs) do out[i] = { pos[pair.output], pos[pair.input] } end
  return { kernel = w.kernel, pairs = out }
end

function M.declared(w, a, b)
  for _, pair in ipairs(w.alias_pairs or {}) do
    if (pair.output == a and pair.input == b) or (pair.output == b and pair.input == a) then return true end
  end
  return false
end

return M
