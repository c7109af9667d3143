-- randgen.rmat_csr (engine/core/rmat.c) against the Lua RMAT generator it
-- replaced in gpu/workloads/bfs/workload.lua: the same bytes and the same
-- number of draws, so graphs (and every gate result built on them) stay
-- what they were.
local randgen = require "kl.randgen"
local workload = require "klineage.workload"

-- The oracle: the former Lua code, unchanged except that the quadrant
-- thresholds are arguments (the workload's are 146, 195, 244).
local function luts(QA, QB, QC)
  local LUT_U, LUT_V = {}, {}
  local function quadrant(b)
    if b < QA then return 0 elseif b < QB then return 1 elseif b < QC then return 2 end
    return 3
  end
  for x = 0, 65535 do
    local q1, q2 = quadrant(x >> 8), quadrant(x & 255)
    LUT_U[x] = ((q1 >> 1) << 1) | (q2 >> 1)
    LUT_V[x] = ((q1 & 1) << 1) | (q2 & 1)
  end
  return LUT_U, LUT_V
end

local function log2_exact(n)
  local s = 0
  while (1 << s) < n do s = s + 1 end
  assert((1 << s) == n, "RMAT needs V = 2^scale")
  return s
end

local function pack_range(out, t, first, last)
  local CH = 4096
  local i = first
  while i <= last do
    local j = math.min(i + CH - 1, last)
    out[#out + 1] = string.pack("<" .. string.rep("i4", j - i + 1), table.unpack(t, i, j))
    i = j + 1
  end
end

local function csr(V, src, dst, m)
  local deg = {}
  for v = 0, V do deg[v] = 0 end
  for e = 1, m do
    local u, v = src[e], dst[e]
    deg[u] = deg[u] + 1
    deg[v] = deg[v] + 1
  end
  local off, pos = {}, {}
  local acc = 0
  for v = 0, V - 1 do
    off[v] = acc
    pos[v] = acc
    acc = acc + deg[v]
  end
  off[V] = acc
  local cols = {}
  for i = 1, acc do cols[i] = 0 end
  for e = 1, m do
    local u, v = src[e], dst[e]
    cols[pos[u] + 1] = v; pos[u] = pos[u] + 1
    cols[pos[v] + 1] = u; pos[v] = pos[v] + 1
  end
  local out = {}
  pack_range(out, off, 0, V)
  pack_range(out, cols, 1, acc)
  return table.concat(out)
end

local function rmat(p, rng, q)
  local LUT_U, LUT_V = luts(q[1], q[2], q[3])
  local V, E = p.V, p.E
  local scale = log2_exact(V)
  assert(E % (2 * V) == 0, "RMAT needs E = 2 * edge factor * V")
  local m = E // 2
  local pairs_needed = (scale + 1) // 2
  local drop = pairs_needed * 2 - scale
  local bits = rng.bits
  local perm = {}
  for v = 0, V - 1 do perm[v] = v end
  for v = V - 1, 2, -1 do
    local j = rng:int(1, v)
    perm[v], perm[j] = perm[j], perm[v]
  end
  local src, dst = {}, {}
  local lut_u, lut_v = LUT_U, LUT_V
  for e = 1, m do
    local u, v, left = 0, 0, pairs_needed
    while left > 0 do
      local word = bits(rng)
      for _ = 1, (left < 4 and left or 4) do
        local x = word & 0xFFFF
        word = word >> 16
        u = (u << 2) | lut_u[x]
        v = (v << 2) | lut_v[x]
      end
      left = left - 4
    end
    src[e], dst[e] = perm[u >> drop], perm[v >> drop]
  end
  return csr(V, src, dst, m)
end

local GRAPH500 = { 146, 49 + 146, 49 + 49 + 146 }

-- Builds with both and compares the bytes, then the next draw of each rng.
local function same_as_lua(scale, factor, seed, q, skip)
  q = q or GRAPH500
  local V = 1 << scale
  local E = 2 * factor * V
  local a, b = randgen.rng(seed, 7), randgen.rng(seed, 7)
  for _ = 1, skip or 0 do a:bits(); b:bits() end
  local want = rmat({ V = V, E = E }, a, q)
  local got = randgen.rmat_csr(b, V, E, q[1], q[2], q[3])
  if got ~= want then
    local i = 1
    while got:byte(i) == want:byte(i) do i = i + 1 end
    fail("scale %d, edge factor %d, seed %d: %d bytes, Lua %d; first difference at byte %d",
         scale, factor, seed, #got, #want, i)
  end
  expect(#got):equals(4 * (V + 1 + E))
  expect(b:bits()):equals(a:bits())
end

describe("randgen.rmat_csr", function()
  it("gives the Lua generator's bytes and draws, odd and even scales", function()
    -- Scales 1-8 need one 64-bit word per edge, 9-16 two, 17-22 three.
    for _, c in ipairs({
      { 1, 1, 1 }, { 2, 4, 2 }, { 3, 1, 3 }, { 5, 1, 1 }, { 5, 16, 2 }, { 7, 2, 3 },
      { 8, 8, 1 }, { 8, 16, 4 }, { 9, 2, 1 }, { 9, 16, 5 }, { 10, 1, 2 }, { 10, 16, 1 },
      { 12, 2, 1 }, { 12, 8, 3 }, { 13, 1, 6 }, { 16, 1, 1 }, { 17, 1, 2 },
    }) do
      same_as_lua(c[1], c[2], c[3])
    end
  end)
  it("draws from where the rng stands", function()
    same_as_lua(9, 2, 4, nil, 3)
    same_as_lua(10, 1, 5, nil, 1000)
  end)
  it("follows the thresholds it is given", function()
    same_as_lua(9, 2, 1, { 64, 128, 192 })
    same_as_lua(8, 4, 2, { 0, 0, 0 })        -- every edge in the last quadrant
    same_as_lua(8, 4, 3, { 256, 256, 256 })  -- every edge in the first: all on vertex 0
    same_as_lua(7, 2, 4, { 10, 10, 250 })
  end)
  it("refuses bad arguments with a message", function()
    local r = randgen.rng(1, 0)
    local function call(...) local args = { ... } return function() randgen.rmat_csr(table.unpack(args, 1, 6)) end end
    expect(call(r, 100, 200, 146, 195, 244)):raises("power of two")
    expect(call(r, 1, 2, 146, 195, 244)):raises("power of two")
    expect(call(r, 0, 0, 146, 195, 244)):raises("power of two")
    expect(call(r, -4, 8, 146, 195, 244)):raises("power of two")
    expect(call(r, 1 << 31, 1 << 32, 146, 195, 244)):raises("power of two")
    expect(call(r, 16, 48, 146, 195, 244)):raises("edge factor")
    expect(call(r, 16, -32, 146, 195, 244)):raises("edge factor")
    expect(call(r, 1 << 20, 1 << 31, 146, 195, 244)):raises("2^31")
    expect(call(r, 16, 32, 195, 146, 244)):raises("qa <= qb <= qc")
    expect(call(r, 16, 32, -1, 146, 244)):raises("qa <= qb <= qc")
    expect(call(r, 16, 32, 146, 195, 257)):raises("qa <= qb <= qc")
    expect(call("rng", 16, 32, 146, 195, 244)):raises("kl.Rng expected")
    expect(call(r, 16.5, 32, 146, 195, 244)):raises("number has no integer representation")
    -- a refused call draws nothing
    expect(r:bits()):equals(randgen.bits(1, 0, 0))
  end)
end)

describe("the bfs workload", function()
  local w = assert(workload.load("bfs"))
  it("loads with the scale 22 bench size", function()
    expect(w.params.V):equals(1 << 22)
    expect(w.params.E):equals(2 * 16 * (1 << 22))
  end)
  it("builds its RMAT and grid test graphs", function()
    local stream
    for _, b in ipairs(w.buffer_list) do
      if b.name == "graph" then stream = b.stream end
    end
    for _, s in ipairs(workload.sizes(w)) do
      if not s.bench then
        local p = s.params
        local data = assert(workload.host_inputs(w, p, 2))
        expect(#data.graph):equals(4 * (p.V + 1 + p.E))
        if p.kind == 0 then
          local rng = randgen.rng(2, stream)
          rng:bits()  -- the graph cache's key
          expect(data.graph == rmat(p, rng, GRAPH500)):is_true()
        end
        -- offsets: 0 first, E last
        expect(string.unpack("<i4", data.graph, 1)):equals(0)
        expect(string.unpack("<i4", data.graph, 4 * p.V + 1)):equals(p.E)
      end
    end
  end)
end)
