-- const __restrict__ on a pointer parameter the kernel only reads through:
-- the compiler may then keep its loads in registers across stores to other
-- pointers and route them through the read-only cache.
--
-- The static check: every use of the parameter in the function body is
-- the array of a subscript read (`p[i]` that is not assigned, incremented
-- or had its address taken). Any other use (`p + i`, passing p on, `*p`)
-- could write or alias, and the site is not offered. Undo removes
-- __restrict__ and keeps the const, which the kernel's reads allow anyway.
local support = require "klineage.transforms.support"

local T = {
  name = "restrict",
  intent = "mark a read-only pointer parameter const __restrict__ so its loads can be cached and reordered past stores",
}

local WRITES = { ["++"] = true, ["--"] = true, ["&"] = true }

-- Whether the subscript node `ix` is only read. A member of the element
-- (p[i].x) is still its storage: the check looks past it and parentheses.
local function read_only(ix)
  local p = ix:parent()
  while p and (p.kind == "paren" or (p.kind == "member" and p:field("object") and p:field("object").id == ix.id)) do
    ix, p = p, p:parent()
  end
  if not p then return true end
  if p.kind == "assign" and p:field("lhs") and p:field("lhs").id == ix.id then return false end
  if (p.kind == "unary" or p.kind == "postfix") and WRITES[p.op] then return false end
  if p.kind == "index" and p:field("object") and p:field("object").id == ix.id then return false end -- p[i][j]: not a flat pointer
  return true
end

-- nil when every use of the name is a subscript read, else why not.
local function only_subscript_reads(fn, name)
  local uses = support.uses(fn, name)
  if #uses == 0 then return "the kernel never reads through it" end
  for _, id in ipairs(uses) do
    local ix = id:parent()
    if not (ix and ix.kind == "index" and ix:field("object") and ix:field("object").id == id.id) then
      return string.format("line %d uses it as '%s', not as a subscript", id.line, ix and ix:text() or name)
    end
    if not read_only(ix) then return string.format("line %d writes through it", id.line) end
  end
end

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    for _, p in ipairs(fn:params()) do
      if p.pointer_depth == 1 and not p.reference and p.name and p.name ~= "" and not only_subscript_reads(fn, p.name) then
        local key = fn:name() .. ":" .. p.name
        if p.restrict then
          sites[#sites + 1] = support.site(T, unit, fn, { direction = "undo", key = key, param = p, line = p.node.line,
            check = "parameter " .. p.name .. " is __restrict__ and only read through subscripts" })
        else
          sites[#sites + 1] = support.site(T, unit, fn, { direction = "apply", key = key, param = p, line = p.node.line,
            check = "parameter " .. p.name .. " is only read through subscripts, so no store of the kernel goes through it" })
        end
      end
    end
  end
  return sites
end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local p = site.param
  local edits = { { begin = p.restrict_insert.begin, ["end"] = p.restrict_insert["end"],
                    text = p.restrict_insert.prefix .. "__restrict__" .. p.restrict_insert.suffix } }
  if p.const_insert then
    table.insert(edits, 1, { begin = p.const_insert.begin, ["end"] = p.const_insert["end"],
                             text = (p.const_insert.prefix or "") .. "const" .. p.const_insert.suffix })
  end
  return support.edit(site, edits)
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local r = site.param.restrict_span.remove
  return support.edit(site, { { begin = r.begin, ["end"] = r["end"], text = "" } })
end

return T
