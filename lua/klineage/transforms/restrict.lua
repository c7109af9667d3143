-- const __restrict__ on a pointer parameter the kernel only reads through:
-- the compiler may then keep its loads in registers across stores to other
-- pointers and route them through the read-only cache.
--
-- The static check, in both directions (find offers undo only where apply
-- could come back):
--   * every use of the parameter is a subscript read (lib/reads.lua: no
--     store, ++/--, &p[i], p[i][j], reference binding, element passed to
--     a function taking a reference, nothing in an opaque region or asm);
--   * no parameter that may be the same buffer is written
--     (lib/aliasing.lua: the workload's alias declaration, given as
--     facts.alias; unknown without one, when every written pointer of the
--     same element type counts);
--   * where apply adds a const, the function's address is never taken
--     (the const changes its type, which a function-pointer table or a
--     cast would no longer match; __restrict__ alone does not).
-- Earlier prototypes of the function (same name and parameter count) get
-- the same const and __restrict__, so every declaration agrees. Undo
-- removes __restrict__ from the definition and keeps the const, which the
-- kernel's reads allow anyway.
local aliasing = require "klineage.transforms.lib.aliasing"
local reads = require "klineage.transforms.lib.reads"
local support = require "klineage.transforms.support"

local T = {
  name = "restrict",
  family = "decoration",
  intent = "mark a read-only pointer parameter const __restrict__ so its loads can be cached and reordered past stores",
  -- undo removes __restrict__ alone: a const apply added stays, true of a
  -- pointer only read, and undo cannot tell it from the author's
  round_trip = "tokens",
  undo_keeps = { "const" },
}

-- Where the unit takes fn's address (anything but its declarations, a
-- call and a launch), as "line N", or nil.
local function address_taken(unit, fn)
  local name = fn:name()
  for id in unit:walk({ "ident" }) do
    if id:text() == name then
      local p = id:parent()
      local callee = p and (p.kind == "call" or p.kind == "launch") and p:field("callee")
      if p and p.kind ~= "function" and not (callee and callee.id == id.id) then return "line " .. id.line end
    end
  end
end

-- The prototypes of fn (before or after it) with as many parameters.
local function prototypes(unit, fn)
  local out, n = {}, #fn:params()
  for _, g in ipairs(unit:functions()) do
    if g:info().prototype and g:name() == fn:name() and #g:params() == n then out[#out + 1] = g end
  end
  return out
end

function T.find(unit, facts)
  local sites = {}
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    for index, p in ipairs(fn:params()) do
      if p.pointer_depth == 1 and not p.reference and p.name and p.name ~= "" and reads.of(unit, fn, p.name)
          and not aliasing.conflict(unit, fn, index, facts) then
        local key = fn:name() .. ":" .. p.name
        local protos = prototypes(unit, fn)
        -- a const added changes the function's type; __restrict__ alone does
        -- not (a top-level qualifier), so undo and a const pointer are free
        local adds_const = p.const_insert ~= nil
        for _, g in ipairs(protos) do adds_const = adds_const or g:params()[index].const_insert ~= nil end
        local taken = not p.restrict and adds_const and address_taken(unit, fn)
        if not taken then
          local also = #protos > 0 and string.format(" (and in its %d prototype%s)", #protos, #protos > 1 and "s" or "") or ""
          local apart = (facts and facts.alias) and "the workload's alias declaration keeps it apart from every written pointer"
            or "no pointer of its element type is written"
          if p.restrict then
            sites[#sites + 1] = support.site(T, unit, fn, { direction = "undo", key = key, param = p, index = index,
              prototypes = protos, line = p.node.line,
              check = "parameter " .. p.name .. " is __restrict__ and only read through subscripts; " .. apart })
          else
            sites[#sites + 1] = support.site(T, unit, fn, { direction = "apply", key = key, param = p, index = index,
              prototypes = protos, line = p.node.line,
              check = "parameter " .. p.name .. " is only read through subscripts, so no store of the kernel goes through it; "
                .. apart .. (adds_const and "; its address is never taken" or "") .. also })
          end
        end
      end
    end
  end
  return sites
end

-- The edits that make param q const __restrict__ (what it lacks of both).
local function qualify(q, edits)
  if q.restrict_insert then
    edits[#edits + 1] = { begin = q.restrict_insert.begin, ["end"] = q.restrict_insert["end"],
                          text = (q.restrict_insert.prefix or "") .. "__restrict__" .. (q.restrict_insert.suffix or "") }
  end
  if q.const_insert then
    edits[#edits + 1] = { begin = q.const_insert.begin, ["end"] = q.const_insert["end"],
                          text = (q.const_insert.prefix or "") .. "const" .. (q.const_insert.suffix or "") }
  end
end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local edits = {}
  qualify(site.param, edits)
  for _, g in ipairs(site.prototypes or {}) do qualify(g:params()[site.index], edits) end
  table.sort(edits, function(a, b) return a.begin < b.begin end)
  return support.edit(site, edits)
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  -- from the prototypes too, as apply put it there
  local edits = {}
  edits[1] = site.param.restrict_span.remove
  for _, g in ipairs(site.prototypes or {}) do
    local q = g:params()[site.index]
    if q.restrict_span then edits[#edits + 1] = q.restrict_span.remove end
  end
  for i, r in ipairs(edits) do edits[i] = { begin = r.begin, ["end"] = r["end"], text = "" } end
  table.sort(edits, function(a, b) return a.begin < b.begin end)
  return support.edit(site, edits)
end

return T
