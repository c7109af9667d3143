-- Primary rays against a BVH over a procedural triangle scene: for each
-- pixel of a W x H image, the index of the closest triangle its camera ray
-- hits (-1 for a miss). Ties break deterministically: smallest t, then
-- smallest triangle index, so the output compares exactly.
--
-- The scene is generated on the host by `scene`'s init from the rng the
-- gate gives it: a terrain of G x G quads (2 G^2 triangles, a height field
-- of sines plus noise) and B small random "debris" triangles above it,
-- T = 2 G^2 + B triangles in all. The same init builds the BVH: triangles
-- are sorted by the Morton code of their centroid and split at the middle
-- of each range (a median split along the Morton curve) down to leaves of
-- at most 4 triangles. One f32 buffer holds both, because each buffer's
-- init gets its own rng stream:
--   nodes, cdiv(T, 2) of 16 floats (four float4; every leaf holds >= 2
--   triangles, so a tree has fewer than T / 2 inner nodes; unused ones are 0):
--     (c0.lo.x, c0.hi.x, c0.lo.y, c0.hi.y) (c1.lo.x, c1.hi.x, c1.lo.y, c1.hi.y)
--     (c0.lo.z, c0.hi.z, c1.lo.z, c1.hi.z) (child0, child1, count0, count1)
--     the last four are int bits: count = 0, child is an inner node index;
--     count > 0, child is the first of `count` triangles of a leaf. Node 0
--     is the root. Boxes are padded by PAD so that rounding never drops a hit.
--   then T triangles of 12 floats (three float4): (v0, 0) (e1, 0) (e2, 0),
--     e1 = v1 - v0 and e2 = v2 - v0, in BVH (Morton) order: the triangle
--     index of the output is the position in this array.
-- Camera rays are made in the kernel from the pixel index (same code in
-- every version and in reference.c).
local M = {}

local PAD = 1e-5
local LEAF = 4

-- Bits of a 10-bit integer spread to every third position (Morton codes).
local SPREAD = {}
for x = 0, 1023 do
  local s = 0
  for b = 0, 9 do
    if (x >> b) & 1 == 1 then s = s | (1 << (3 * b)) end
  end
  SPREAD[x] = s
end

local function generate(p, rng)
  local G, B = p.G, p.B
  local ax, ay, az, bx, by, bz, cx, cy, cz = {}, {}, {}, {}, {}, {}, {}, {}, {}
  local n = 0
  local function add(x0, y0, z0, x1, y1, z1, x2, y2, z2)
    n = n + 1
    ax[n], ay[n], az[n] = x0, y0, z0
    bx[n], by[n], bz[n] = x1, y1, z1
    cx[n], cy[n], cz[n] = x2, y2, z2
  end
  local hgt = {}
  for j = 0, G do
    for i = 0, G do
      local x, z = i / G, j / G
      hgt[j * (G + 1) + i] = 0.08 * math.sin(6.3 * x) * math.cos(5.1 * z) + 0.02 * rng:uniform()
    end
  end
  for j = 0, G - 1 do
    for i = 0, G - 1 do
      local x0, x1, z0, z1 = i / G, (i + 1) / G, j / G, (j + 1) / G
      local h00, h10 = hgt[j * (G + 1) + i], hgt[j * (G + 1) + i + 1]
      local h01, h11 = hgt[(j + 1) * (G + 1) + i], hgt[(j + 1) * (G + 1) + i + 1]
      add(x0, h00, z0, x1, h10, z0, x1, h11, z1)
      add(x0, h00, z0, x1, h11, z1, x0, h01, z1)
    end
  end
  local size = 1.5 / math.sqrt(B)
  for _ = 1, B do
    local mx, my, mz = 0.5 + 0.5 * rng:uniform(), 0.25 + 0.15 * rng:uniform(), 0.5 + 0.5 * rng:uniform()
    add(mx + size * rng:uniform(), my + size * rng:uniform(), mz + size * rng:uniform(),
        mx + size * rng:uniform(), my + size * rng:uniform(), mz + size * rng:uniform(),
        mx + size * rng:uniform(), my + size * rng:uniform(), mz + size * rng:uniform())
  end
  return n, { ax, ay, az, bx, by, bz, cx, cy, cz }
end

-- Triangle indices (1-based) sorted by the Morton code of their centroids.
local function morton_order(n, v)
  local ax, ay, az, bx, by, bz, cx, cy, cz = table.unpack(v)
  local lo = { math.huge, math.huge, math.huge }
  local hi = { -math.huge, -math.huge, -math.huge }
  local cen = { {}, {}, {} }
  for t = 1, n do
    local c1, c2, c3 = (ax[t] + bx[t] + cx[t]) / 3, (ay[t] + by[t] + cy[t]) / 3, (az[t] + bz[t] + cz[t]) / 3
    cen[1][t], cen[2][t], cen[3][t] = c1, c2, c3
    if c1 < lo[1] then lo[1] = c1 end; if c1 > hi[1] then hi[1] = c1 end
    if c2 < lo[2] then lo[2] = c2 end; if c2 > hi[2] then hi[2] = c2 end
    if c3 < lo[3] then lo[3] = c3 end; if c3 > hi[3] then hi[3] = c3 end
  end
  local sc = {}
  for k = 1, 3 do sc[k] = 1023.999 / math.max(hi[k] - lo[k], 1e-12) end
  -- key = code * 2^21 + index: one integer sort, ties broken by index.
  assert(n < (1 << 21), "at most 2^21 - 1 triangles")
  local keys = {}
  local c1, c2, c3 = cen[1], cen[2], cen[3]
  for t = 1, n do
    local code = (SPREAD[math.floor((c1[t] - lo[1]) * sc[1])] << 2)
               | (SPREAD[math.floor((c2[t] - lo[2]) * sc[2])] << 1)
               | SPREAD[math.floor((c3[t] - lo[3]) * sc[3])]
    keys[t] = (code << 21) | t
  end
  table.sort(keys)
  for t = 1, n do keys[t] = keys[t] & 0x1FFFFF end
  return keys
end

-- Built scenes, by (G, B, first 64 bits of the init's rng stream): the
-- gate refills the inputs for every trial with the same few seeds, and a
-- scene depends on nothing else, so a cached scene has exactly the bytes a
-- rebuild would give.
local built, built_order, BUILT_MAX = {}, {}, 8

function M.scene(p, rng)
  local key = string.format("%d:%d:%d", p.G, p.B, rng:bits())
  if built[key] then return built[key] end
  local bytes = (function()
    local n, v = generate(p, rng)
    assert(n == 2 * p.G * p.G + p.B and n >= 8)
    local ax, ay, az, bx, by, bz, cx, cy, cz = table.unpack(v)
    local order = morton_order(n, v)
    local node_slots = (n + 1) // 2
    local nd = {}  -- 16 values per node, 1-based: nd[16 * node + k]
    local nodes = 0
    local min, max = math.min, math.max
    -- Builds the subtree over sorted positions [lo, hi) (0-based) and
    -- returns its box and its entry (child, count) for the parent.
    local function build(lo, hi, is_root)
      if hi - lo <= LEAF and not is_root then
        local x0, y0, z0, x1, y1, z1 = math.huge, math.huge, math.huge, -math.huge, -math.huge, -math.huge
        for k = lo + 1, hi do
          local t = order[k]
          x0 = min(x0, ax[t], bx[t], cx[t]); x1 = max(x1, ax[t], bx[t], cx[t])
          y0 = min(y0, ay[t], by[t], cy[t]); y1 = max(y1, ay[t], by[t], cy[t])
          z0 = min(z0, az[t], bz[t], cz[t]); z1 = max(z1, az[t], bz[t], cz[t])
        end
        return x0, y0, z0, x1, y1, z1, lo, hi - lo
      end
      local node = nodes
      nodes = nodes + 1
      assert(nodes <= node_slots, "BVH larger than its slots")
      local mid = (lo + hi) // 2
      local lx0, ly0, lz0, lx1, ly1, lz1, lch, lcnt = build(lo, mid)
      local rx0, ry0, rz0, rx1, ry1, rz1, rch, rcnt = build(mid, hi)
      local b = 16 * node
      nd[b + 1], nd[b + 2], nd[b + 3], nd[b + 4] = lx0 - PAD, lx1 + PAD, ly0 - PAD, ly1 + PAD
      nd[b + 5], nd[b + 6], nd[b + 7], nd[b + 8] = rx0 - PAD, rx1 + PAD, ry0 - PAD, ry1 + PAD
      nd[b + 9], nd[b + 10], nd[b + 11], nd[b + 12] = lz0 - PAD, lz1 + PAD, rz0 - PAD, rz1 + PAD
      nd[b + 13], nd[b + 14], nd[b + 15], nd[b + 16] = lch, rch, lcnt, rcnt
      return min(lx0, rx0), min(ly0, ry0), min(lz0, rz0), max(lx1, rx1), max(ly1, ry1), max(lz1, rz1), node, 0
    end
    build(0, n, true)
    local out = {}
    local spack = string.pack
    for node = 0, node_slots - 1 do
      local b = 16 * node
      if node < nodes then
        out[#out + 1] = spack("<ffffffffffffiiii", nd[b + 1], nd[b + 2], nd[b + 3], nd[b + 4], nd[b + 5],
          nd[b + 6], nd[b + 7], nd[b + 8], nd[b + 9], nd[b + 10], nd[b + 11], nd[b + 12],
          nd[b + 13], nd[b + 14], nd[b + 15], nd[b + 16])
      else
        out[#out + 1] = string.rep("\0", 64)
      end
    end
    for k = 1, n do
      local t = order[k]
      out[#out + 1] = spack("<ffffffffffff", ax[t], ay[t], az[t], 0,
        bx[t] - ax[t], by[t] - ay[t], bz[t] - az[t], 0, cx[t] - ax[t], cy[t] - ay[t], cz[t] - az[t], 0)
    end
    return table.concat(out)
  end)()
  built[key] = bytes
  built_order[#built_order + 1] = key
  if #built_order > BUILT_MAX then built[table.remove(built_order, 1)] = nil end
  return bytes
end

return {
  name = "raytrace",
  kernel = "raytrace",
  -- 2 * 640^2 + 262144 = 1,081,344 triangles, 1920 x 1080 rays.
  params = { G = 640, B = 262144, W = 1920, H = 1080 },
  -- Second bench size: a small scene (2 * 64^2 + 4096 = 12,288 triangles,
  -- a tree about 6 levels shallower) at the same image size. v0 (brute
  -- force) takes seconds on the large scene; it is the gate's reference
  -- there too.
  bench_params = { { G = 64, B = 4096 } },
  test_params = {
    { G = 8, B = 40, W = 37, H = 23 },      -- 168 triangles, ragged image
    { G = 16, B = 200, W = 64, H = 48 },    -- 712 triangles
    { G = 24, B = 500, W = 80, H = 61 },    -- 1652 triangles, odd height
  },
  buffers = {
    scene = { "f32", "16*cdiv(2*G*G + B, 2) + 12*(2*G*G + B)", init = M.scene },
    hit = { "i32", "W*H", output = true },
    work = { "i32", "4", scratch = true },  -- the ray counter of the persistent versions (v5 on)
  },
  args = { "W", "H", "G", "B", "scene", "hit", "work" },
  -- void reference(<args>) in C: v0 is checked against it at the test sizes (gate/reference.lua)
  reference = "reference.c",
  -- hit is i32: exact comparison. The only sure lower bound on the work is
  -- writing every pixel's index: bytes = 4 W H; flops counts rays.
  flops = "W*H",
  bytes = "4*W*H",
  rate = { unit = "Mrays/s", count = "W*H", per = 1e6 },
  lineage = {
    "v0_brute_force.cu",
    "v1_bvh_if_if.cu",
    "v2_while_while.cu",
    "v3_float4.cu",
    "v4_ordered.cu",
    "v5_persistent.cu",
    "v6_speculative.cu",
  },
  -- The steps measured to pay at the bench size (README.md, "The lineage");
  -- the others did not there. tests/gpu/monotone.lua holds the lineage to it.
  monotone = {
    "v2_while_while.cu",
    "v3_float4.cu",
    "v4_ordered.cu",
    "v6_speculative.cu",
  },
  -- One launch; the counter the persistent versions fetch rays from starts
  -- at 0 in every run (the others ignore it).
  run = function(ctx, p)
    ctx:zero("work")
    ctx:launch({})
  end,
}
