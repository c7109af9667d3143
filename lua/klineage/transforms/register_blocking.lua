-- Register blocking (thread coarsening) of the sgemm lineage's tiled
-- product: each thread accumulates several outputs in registers, so each
-- value it reads from shared memory feeds several multiply-adds.
--   step 1d (v2 -> v3): the T x T tiled product, one output a thread,
--     becomes BM x BK / BK x BN tiles (64, 64, 8) for a 1-D block of
--     BM * BN / TM threads, each computing TM = 8 rows of one column;
--   step 2d (v3 -> v4): 128 x 128 x 8 tiles, each thread a TM x TN = 8 x 8
--     sub-tile from register fragments of A and B.
-- undo goes one step back: v4 -> v3, v3 -> v2 (with T = 32).
--
-- The static check: the kernel's whole body is one of the lineage's forms
-- (lib/sgemm_forms.lua) token for token, with the form's surroundings as
-- the lineage writes them: v2 a `#define T n` (1..32), launch grid(cdiv(N,
-- T), cdiv(M, T)) block(T, T) and no __launch_bounds__; v3 and v4 their
-- #define block and static_assert verbatim, their launch, their
-- `requires M % BM == 0 && N % BN == 0 && K % BK == 0` (the edge-free
-- loads need it) and __launch_bounds__(THREADS). The epilogue (the
-- statement storing an output) moves over with its accumulator read
-- rewritten (acc, acc[i], acc[i][j]) and must name nothing else of either
-- form; names and constants the other form introduces must be free, and
-- those it drops unused after the edit.
local support = require "klineage.transforms.support"
local tiling = require "klineage.transforms.lib.tiling"
local forms = require "klineage.transforms.lib.sgemm_forms"

local T = {
  name = "register_blocking",
  intent = "give each thread several outputs held in registers so each shared-memory load feeds several multiply-adds",
}

local STEPS = { { from = forms.tiled, to = forms.blocked1, tag = "1d" }, { from = forms.blocked1, to = forms.blocked2, tag = "2d" } }
local FORMS = { forms.tiled, forms.blocked1, forms.blocked2 }

local function requires_text(c)
  return string.format("requires %s %% BM == 0 && %s %% BN == 0 && %s %% BK == 0", c.M, c.N, c.K)
end

-- Bytes of line `n` of text, its newline included.
local function line_span(text, n)
  local at = 1
  for _ = 2, n do at = assert(text:find("\n", at, true)) + 1 end
  return at, (text:find("\n", at, true) or #text)
end

local function same(a, b) return table.concat(a, "\0") == table.concat(b, "\0") end

-- The surroundings of form f in the unit: { header = span, requires = span
-- or nil, lb, launch }, or nil when they are not the lineage's.
local function surroundings(unit, fn, f, c)
  local l, lb, text = tiling.launch(unit), fn:launch_bounds(), tostring(unit)
  if not l or not same(l.grid, f.grid(c)) or not same(l.block, f.block(c)) then return nil end
  local out = { launch = l, lb = lb }
  if f.bounds then
    if not (lb.present and lb.count == 1 and lb.whole.text == "__launch_bounds__(THREADS)") then return nil end
  elseif lb.present or not lb.insert then return nil end
  if f.header then
    local bm = unit:define(f.consts[1])
    if not bm or text:sub(bm.line.begin, bm.line.begin + #f.header - 1) ~= f.header then return nil end
    out.header = { bm.line.begin, bm.line.begin + #f.header - 1 }
  else
    local d = unit:define(c.T)
    if not (d and not d.redefined and not d.in_function and math.type(d.value.int) == "integer"
            and d.value.int >= 1 and d.value.int <= 32) then return nil end
    out.header = { d.line.begin, d.line["end"] }
  end
  for _, a in ipairs(unit:annotations()) do
    if a.text:match("^requires") and a.text == requires_text(c) then
      if out.requires then return nil end
      out.requires = { line_span(text, a.line) }
    end
  end
  if f.requires and not out.requires then return nil end
  return out
end

local function words_of(...)
  local set = {}
  for _, list in ipairs({ ... }) do for _, w in ipairs(list) do set[w] = true end end
  return set
end

-- The epilogue with the accumulator read as `to` reads it, or nil.
local function move_epilogue(epi, from, to, c, banned)
  local text, n = epi:gsub((from.acc_pat:gsub("%$ACC", c.ACC)), (tiling.fill({ to.acc }, c):gsub("%%", "%%%%")))
  local bare = select(2, epi:gsub("%f[%w_]" .. c.ACC .. "%f[^%w_]", ""))
  if n == 0 or n ~= bare then return nil end
  for w in epi:gsub((from.acc_pat:gsub("%$ACC", c.ACC)), ""):gmatch("[%a_][%w_]*") do
    if banned[w] then return nil end
  end
  return text
end

local function site_for(unit, fn, f, g, tag, direction, c, around, epi)
  local fresh = words_of(g.names, g.consts, g == forms.tiled and { "TILE" } or {})
  for w in pairs(words_of(f.names, f.consts)) do fresh[w] = nil end
  for w in pairs(fresh) do if tiling.taken(unit, w) then return nil end end
  local d = {}
  for k, v in pairs(c) do d[k] = v end
  if g == forms.tiled then d.T, d.TX, d.TY = "TILE", "tx", "ty" end
  d.EPI = move_epilogue(epi:text(), f, g, d, words_of(f.names, g.names, f.loops, g.loops, f.consts, g.consts))
  if not d.EPI then return nil end
  return support.site(T, unit, fn, {
    direction = direction, key = fn:name() .. ":" .. c.ACC .. ":" .. tag, line = fn:body().line,
    from = f, to = g, caps = d, dropped = f.header and f.consts or { c.T }, body = fn:body(),
    header = around.header, requires = around.requires, lb = around.lb, launch = around.launch,
    check = string.format("the whole kernel is the lineage's %s form of the product of %s and %s, with its launch, constants and requires as the lineage writes them",
      f.name, c.A, c.B),
  })
end

function T.find(unit)
  local sites = {}
  local fn = tiling.kernel(unit)
  if not fn then return sites end
  local f, c
  for _, form in ipairs(FORMS) do
    c = forms.match(form, fn:body())
    if c then f = form break end
  end
  local epi = f and f.epilogue(fn:body())
  if not epi or table.concat(tiling.tokens(epi), " ") ~= c.EPI then return sites end
  local around = surroundings(unit, fn, f, c)
  if not around or not (tiling.float_pointer(fn, c.A) and tiling.float_pointer(fn, c.B)) then return sites end
  for _, step in ipairs(STEPS) do
    local s
    if step.to == f then s = site_for(unit, fn, f, step.from, step.tag, "undo", c, around, epi) end
    if step.from == f then s = site_for(unit, fn, f, step.to, step.tag, "apply", c, around, epi) end
    sites[#sites + 1] = s
  end
  return sites
end

local function rewrite(site, direction)
  local ok, fail = support.same_unit(site, T, direction)
  if not ok then return nil, fail end
  local f, g, c, l = site.from, site.to, site.caps, site.launch
  local edits = {
    tiling.launch_edit(l, g.grid(c), g.block(c)),
    { begin = site.header[1], ["end"] = site.header[2], text = g.header or "#define TILE 32\n" },
    { node = site.body, text = forms.text(g, c) },
  }
  if f.requires and not g.requires then
    edits[#edits + 1] = { begin = site.requires[1], ["end"] = site.requires[2], text = "" }
  elseif g.requires and not site.requires then
    local text = tostring(site.unit)
    local _, eol = line_span(text, select(2, text:sub(1, l.begin):gsub("\n", "")) + 1)
    edits[#edits + 1] = { begin = eol + 1, ["end"] = eol, text = "// @kl " .. requires_text(c) .. "\n" }
  end
  if f.bounds and not g.bounds then
    local r = site.lb.whole.remove
    edits[#edits + 1] = { begin = r.begin, ["end"] = r["end"], text = "" }
  elseif g.bounds and not f.bounds then
    local i = site.lb.insert
    edits[#edits + 1] = { begin = i.begin, ["end"] = i["end"], text = i.prefix .. "__launch_bounds__(THREADS)" .. i.suffix }
  end
  local text, err = support.edit(site, edits)
  if not text then return nil, err end
  -- the constants the old form owned must be gone with it
  local u = require("kl.source").parse(text)
  for _, n in ipairs(site.dropped) do
    if tiling.taken(u, n) and not words_of(g.consts)[n] then return support.refuse(site, n .. " is still used after the edit") end
  end
  return text
end

function T.apply(site) return rewrite(site, "apply") end
function T.undo(site) return rewrite(site, "undo") end

return T
