-- Shared-memory tiling of a matrix product's reduction (sgemm v1 -> v2):
-- the T x T block stages a T x T tile of each operand in shared memory
-- per step of T along k, so each global element is loaded once per block
-- instead of once per thread that uses it.
--
-- The static check is the lineage's idiom, token for token, as the whole
-- body of the unit's one kernel (any other statement and the site is not
-- offered). apply: the one-output-per-thread product
--   int COL = blockIdx.x * T + threadIdx.x;  int ROW = blockIdx.y * T + threadIdx.y;
--   if (ROW < M && COL < N) { float ACC = 0.0f;
--     for (int k = 0; k < K; ++k) ACC += A[ROW * K + k] * B[k * N + COL];  EPILOGUE }
-- undo: the tiled form apply writes (v2: zero-filled edge tiles, the load
-- phase, a __syncthreads pair around the T-step dot product). Both need T
-- a #define of 1..32, the launch's block (T, T) (the tiles assume exactly
-- T x T threads), A and B float pointer parameters, the epilogue one
-- statement that reads none of the tiling's names, and the names the
-- other form introduces free in the unit.
local support = require "klineage.transforms.support"
local tiling = require "klineage.transforms.lib.tiling"
local forms = require "klineage.transforms.lib.sgemm_forms"

local T = {
  name = "smem_tiling",
  intent = "stage T x T tiles of both operands of a matrix product in shared memory so each global element is loaded once per block",
}

-- The names the tiled form introduces (apply) or the flat one (undo).
local TILE_NAMES = { AS = "As", BS = "Bs", TX = "tx", TY = "ty", K0 = "k0", KK = "kk" }

-- Why the captures do not make a correct kernel of either form, or nil.
local function refuted(unit, fn, c, epi)
  local def = unit:define(c.T)
  if not (def and math.type(def.value.int) == "integer" and def.value.int >= 1 and def.value.int <= 32) then
    return "the tile size is no #define of 1..32"
  end
  local l = tiling.launch(unit)
  if not (l and #l.block == 2 and l.block[1] == c.T and l.block[2] == c.T) then
    return "the launch's block is not (" .. c.T .. ", " .. c.T .. ")"
  end
  if not (tiling.float_pointer(fn, c.A) and tiling.float_pointer(fn, c.B)) then return "the operands are not float pointers" end
  local distinct = {}
  for _, k in ipairs({ "COL", "ROW", "ACC", "A", "B", "M", "N", "K", "T", "k" }) do
    if distinct[c[k]] then return "two roles share the name " .. c[k] end
    distinct[c[k]] = true
  end
  if epi.kind == "decl_stmt" or epi.kind == "compound" and #epi:children() == 0 then return "the epilogue is no statement" end
end

function T.find(unit)
  local sites = {}
  local fn = tiling.kernel(unit)
  if not fn then return sites end
  local body = fn:body()
  local c, dir = forms.match(forms.flat, body), "apply"
  local epi = c and forms.flat.epilogue(body)
  if c then
    if not epi then return sites end
    for role, name in pairs(TILE_NAMES) do
      if tiling.taken(unit, name) then return sites end
      c[role] = name
    end
  else
    c, dir = forms.match(forms.tiled, body), "undo"
    epi = c and forms.tiled.epilogue(body)
    if not epi then return sites end
    if tiling.taken(unit, "k") then return sites end
    for role in pairs(TILE_NAMES) do
      for id in epi:walk({ "ident" }) do if id:text() == c[role] then return sites end end
    end
    c.k = "k"
  end
  if refuted(unit, fn, c, epi) then return sites end
  sites[1] = support.site(T, unit, fn, {
    direction = dir, key = fn:name() .. ":" .. c.A .. "," .. c.B, line = body.line, body = body, caps = c, epilogue = epi,
    check = string.format("(%s, %s) of %s x %s summed over %s, one %s x %s block per tile: the lineage's %s product",
      c.ROW, c.COL, c.A, c.B, c.K, c.T, c.T, dir == "apply" and "one-output-per-thread" or "shared-memory tiled"),
  })
  return sites
end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local c = site.caps
  c.EPI = site.epilogue:text()
  return support.edit(site, { { node = site.body, text = forms.text(forms.tiled, c) } })
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local c = site.caps
  c.EPI = site.epilogue:text()
  return support.edit(site, { { node = site.body, text = forms.text(forms.flat, c) } })
end

return T
