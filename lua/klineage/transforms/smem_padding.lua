-- One padding column on a 2-D __shared__ tile, `tile[R][C + 1]`: with C a
-- multiple of 32 four-byte words, the elements of a column all sit in one
-- bank and a warp reading down a column serializes 32 ways; one extra word
-- per row moves each row one bank over.
--
-- The static check, both directions: the array is declared in the function
-- with two dimensions R x C of 4-byte elements, R == C a multiple of 32
-- (C without its padding), every use of its name is a full subscript
-- tile[a][b] (no decay to a pointer, no &tile[a][b], no sizeof, no macro
-- naming it), so the row length only changes the layout; some first index
-- moves with threadIdx.x (the column walk the padding is for); and every
-- second index has, by its affine form, the form of a first index, so it
-- stays below R == C and the unpadded array still holds every access (this
-- refuses `+ 1` columns that are a halo rather than padding). Undo reads
-- `C + 1` or `C + PAD` (PAD a #define of 1) and writes `C`.
local support = require "klineage.transforms.support"

local T = {
  name = "smem_padding",
  intent = "pad a shared 2-D tile by one column so column-wise accesses of a warp hit 32 different banks",
}

local WORD = { float = true, int = true, unsigned = true, ["unsigned int"] = true, uint32_t = true, int32_t = true }

-- The affine form of an index as a comparable string, or nil.
local function signature(node, fn)
  local a = node:affine(fn)
  if not a.affine then return nil end
  local parts = {}
  for _, t in ipairs(a.terms) do
    parts[#parts + 1] = string.format("%s*%s*%s", t.var, tostring(t.coef), table.concat(t.syms, "*"))
  end
  table.sort(parts)
  return table.concat(parts, "+"), a
end

-- The subscripts tile[a][b] of `name` in fn, or nil and why not.
local function accesses(fn, name, unit)
  for _, d in ipairs(unit:defines()) do
    if d.value.text:find("%f[%w_]" .. name .. "%f[^%w_]") then return nil, "macro " .. d.name.text .. " names it" end
  end
  local out = {}
  for _, id in ipairs(support.uses(fn, name)) do
    local inner = id:parent()
    if inner and inner.kind == "declarator" then goto next end
    if not (inner and inner.kind == "index" and inner:field("object").id == id.id) then
      return nil, string.format("line %d uses it other than as tile[a][b]", id.line)
    end
    local outer = inner:parent()
    if not (outer and outer.kind == "index" and outer:field("object").id == inner.id) then
      return nil, string.format("line %d uses a whole row of it", id.line)
    end
    local p = outer:parent()
    if p and p.kind == "unary" and p.op == "&" then return nil, string.format("line %d takes an element's address", id.line) end
    out[#out + 1] = { first = inner:field("index"), second = outer:field("index") }
    ::next::
  end
  if #out == 0 then return nil, "never accessed" end
  return out
end

-- The padding of an inner dimension: its unpadded span text, or nil.
local function padded(dim, defs)
  local base, pad = dim.text:match("^(.-)%s*%+%s*([%w_]+)$")
  if not base or base == "" then return nil end
  if pad == "1" or (defs[pad] and defs[pad] == 1) then return base end
end

-- Whether the accesses are those of a transposing tile: some first index
-- moves with threadIdx.x (a warp walks down a column: the conflict), and
-- every second index has the affine form of a first one (so, below R).
local function transposed(acc, fn)
  local firsts, walks = {}, false
  for _, a in ipairs(acc) do
    local s, af = signature(a.first, fn)
    if s then firsts[s] = true end
    if af and af.affine and tostring(af.tx_coef) ~= "0" then walks = true end
  end
  for _, a in ipairs(acc) do
    local s = signature(a.second, fn)
    if not (s and firsts[s]) then return false end
  end
  return walks
end

function T.find(unit)
  local sites, defs = {}, {}
  for _, d in ipairs(unit:defines()) do defs[d.name.text] = d.value.int end
  for _, fn in ipairs(support.functions(unit)) do
    for stmt in fn:body():walk({ "decl_stmt" }) do
      local dc = stmt:declaration()
      if dc and dc.shared and not dc.extern and WORD[dc.base.text] then
        for _, dd in ipairs(dc.declarators) do
          local rows, cols = dd.dims[1], dd.dims[2]
          if #dd.dims == 2 and dd.stars == 0 and (not dd.init or dd.init.text == "") and rows.int and cols.int then
            local acc = accesses(fn, dd.name.text, unit)
            local key = fn:name() .. ":" .. dd.name.text
            local base = padded(cols, defs)
            local width = base and cols.int - 1 or cols.int
            if acc and rows.int == width and width % 32 == 0 and transposed(acc, fn) then
              local what = string.format("shared %s[%s][%s] is only accessed as %s[a][b], some a moves with threadIdx.x and every b is one of the a (< %s)",
                dd.name.text, rows.text, cols.text, dd.name.text, rows.text)
              sites[#sites + 1] = support.site(T, unit, fn, { direction = base and "undo" or "apply", key = key,
                line = stmt.line, dim = cols, base = base, check = what })
            end
          end
        end
      end
    end
  end
  return sites
end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local d = site.dim
  return support.edit(site, { { begin = d.begin, ["end"] = d["end"], text = d.text .. " + 1" } })
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local d = site.dim
  return support.edit(site, { { begin = d.begin, ["end"] = d["end"], text = site.base } })
end

return T
