-- Complete unrolling (Harris's step 6): the block size is the compile-time
-- constant E instead of blockDim.x, so the shared-memory tree loop has a
-- constant trip count, unrolls fully, and its index math folds away.
--
-- The static check: a global kernel whose launch line says block(E), E an
-- integer #define in 1..1024 (so blockDim.x == E whenever it runs), with
-- the lineage's sum tree (lib/redux.lua, tree_at)
--   apply: `for (unsigned|int S = blockDim.x / 2; ...)` with no pragma,
--   undo:  `#pragma unroll` + `for (int S = E / 2; ...)`.
-- The loop becomes the other form, and every other blockDim.x (apply) or E
-- (undo) of the body is swapped too where the swap cannot change a value:
-- where it meets an unsigned operand (a variable declared unsigned once in
-- the kernel, a builtin index, a cast to unsigned) in + - * / or a
-- comparison, possibly through * + / with a literal first. So `i +
-- blockDim.x` (i unsigned) becomes `i + E`, but `k < blockDim.x` with k an
-- int stays as it is (its meaning would change for k < 0), as do array
-- sizes. Comments in the body naming one spelling follow the code.
local support = require "klineage.transforms.support"
local R = require "klineage.transforms.lib.redux"

local T = {
  name = "complete_unroll",
  intent = "use the compile-time block size instead of blockDim.x so the shared-memory tree loop unrolls fully and its index math folds",
}

local BUILTIN = { ["threadIdx.x"] = true, ["blockIdx.x"] = true, ["blockDim.x"] = true, ["gridDim.x"] = true }
local MIXED = { ["+"] = true, ["-"] = true, ["*"] = true, ["/"] = true, ["<"] = true, ["<="] = true,
                [">"] = true, [">="] = true, ["=="] = true, ["!="] = true }
local WITH_LITERAL = { ["+"] = true, ["*"] = true, ["/"] = true }

-- Names declared exactly once in fn, as unsigned (or unsigned int).
local function unsigned_vars(fn)
  local count, uns, seen = {}, {}, {}
  for d in fn:body():walk({ "decl_stmt", "decl" }) do
    local decl = d:declaration()
    for _, dc in ipairs(decl and decl.declarators or {}) do
      local n = dc.name.text
      if seen[dc.node.id] then goto next end
      seen[dc.node.id] = true
      count[n] = (count[n] or 0) + 1
      local ty = R.norm(decl.type.text)
      if (ty == "unsigned" or ty == "unsigned int") and (dc.stars or 0) == 0 then uns[n] = true end
      ::next::
    end
  end
  for _, p in ipairs(fn:params()) do if p.name then count[p.name] = (count[p.name] or 0) + 1 end end
  for n in pairs(uns) do if count[n] ~= 1 then uns[n] = nil end end
  return uns
end

local function unsigned_operand(node, uns)
  local t = R.norm(node)
  return BUILTIN[t] or (node.kind == "ident" and uns[t]) or t:match("^%(unsigned%)") ~= nil
end

-- Whether swapping `node` (blockDim.x <-> E, same value) keeps its
-- expression's value: it meets an unsigned operand first.
local function safe(node, uns)
  local p = node:parent()
  while p and p.kind == "paren" do node, p = p, p:parent() end
  if not (p and p.kind == "binary" and MIXED[p.op]) then return false end
  local lhs, rhs = p:field("lhs"), p:field("rhs")
  local other = lhs.id == node.id and rhs or lhs
  if unsigned_operand(other, uns) then return true end
  local k = other.kind == "int_lit" and tonumber(R.norm(other)) or nil
  return k ~= nil and k > 0 and k <= 1024 and WITH_LITERAL[p.op] and safe(p, uns)
end

local function check(unit, fn)
  local st = R.stmts(fn)
  for k = 1, #st do
    local f = R.tree_at(unit, fn, st, k)
    if f then
      local l = R.launch(unit, fn:name())
      local e = l and l.block and l.block:match("^[%a_][%w_]*$") and l.block
      local v = e and R.define_int(unit, e)
      if not (v and v > 0 and v <= 1024) then return nil, "no launch line block(E) with E an integer #define in 1..1024" end
      local prev = st[k - 1]
      local pragma = prev and prev.kind == "pragma" and prev
      if f.c == "blockDim.x" and not pragma then
        f.direction = "apply"
      elseif f.c == e and f.ty == "int" and pragma and R.norm(pragma) == "#pragma unroll"
        and not (st[k - 2] and st[k - 2].kind == "pragma") then
        f.direction, f.pragma = "undo", pragma
      else
        goto next
      end
      f.e = e
      return f
    end
    ::next::
  end
  return nil, "no shared-memory sum tree over blockDim.x or an unrolled one over the launch's block"
end

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    local f = check(unit, fn)
    if f then
      sites[#sites + 1] = support.site(T, unit, fn, { direction = f.direction, key = fn:name() .. ":" .. f.sd, form = f,
        line = f.loop.line,
        check = string.format("the launch says block(%s), so blockDim.x == %s; the tree over %s is %s", f.e, f.e, f.sd,
          f.direction == "apply" and "bounded by blockDim.x" or "unrolled over " .. f.e) })
    end
  end
  return sites
end

local function edit(site, direction)
  local ok, f0 = support.same_unit(site, T, direction)
  if not ok then return nil, f0 end
  local unit = site.unit
  local fn = R.function_named(unit, site.fn)
  local f = fn and check(unit, fn)
  if not f or f.direction ~= direction or site.key ~= fn:name() .. ":" .. f.sd then
    return support.refuse(site, "the tree is no longer in the form this site found")
  end
  local from, to = "blockDim.x", f.e
  if direction == "undo" then from, to = f.e, "blockDim.x" end
  local init = f.loop:field("init")
  local edits = { { node = init, text = string.format("%s %s = %s / 2;", direction == "apply" and "int" or "unsigned", f.s, to) } }
  if direction == "apply" then
    -- At column 0, as the lineage writes its pragmas.
    local _, p = f.loop:pragmas()
    local prefix = p.prefix:match("^[ \t]*$") and "" or p.prefix
    edits[2] = { begin = p.begin, ["end"] = p["end"], text = prefix .. "#pragma unroll" .. p.suffix }
  else
    edits[2] = R.delete_lines(unit, f.pragma)
    if not edits[2] then return support.refuse(site, "the pragma shares its line") end
  end
  local uns = unsigned_vars(fn)
  local kinds = direction == "apply" and { "member" } or { "ident" }
  for n in fn:body():walk(kinds) do
    local p = n:parent()
    local is_member_name = p and p.kind == "member"
    if R.norm(n) == from and not is_member_name and not R.within(n, init) and safe(n, uns) then
      edits[#edits + 1] = { node = n, text = to }
    end
  end
  -- Comments of the body naming the old spelling follow the code.
  local text = tostring(unit)
  local bb, be = R.span(fn:body())
  local pos = bb
  while true do
    local cb, ce = text:find("//[^\n]*", pos)
    if not cb or cb > be then break end
    local c = text:sub(cb, ce)
    local pat = from:gsub("%.", "%%.")
    local new = c:gsub("%f[%w_]" .. pat .. "%f[^%w_]", to)
    if new ~= c then edits[#edits + 1] = { begin = cb, ["end"] = ce, text = new } end
    pos = ce + 1
  end
  return support.edit(site, edits)
end

function T.apply(site) return edit(site, "apply") end
function T.undo(site) return edit(site, "undo") end

return T
