-- Register blocking, 1-D (sgemm v2 -> v3): each thread accumulates TM
-- outputs of one column in registers, so each B value read from shared
-- memory feeds TM multiply-adds; the tiles become BM x BK and BK x BN for
-- a 1-D block of BM * BN / TM threads, each loading one element of each.
--
-- The static check is the lineage's idiom on both sides, as the whole
-- kernel: apply takes the T x T shared-memory tiled product (the form
-- smem_tiling writes, with `#define T n`, the launch grid(cdiv(N, T),
-- cdiv(M, T)) block(T, T)) and writes v3's constants (BM = BN = 64,
-- BK = TM = 8), its 1-D launch and the `requires` line that its edge-free
-- loads need. undo takes that v3 form token for token (its #define block
-- and static_assert verbatim, the launch and requires lines, the body) and
-- writes the T = 32 tiled product, which needs no requires line. The
-- epilogue (one statement storing the output) moves over with its
-- accumulator read as `acc[i]` (apply) or `acc` (undo). Names the other
-- form introduces must be free in the unit, and the constants one form
-- drops must be left unused.
local support = require "klineage.transforms.support"
local tiling = require "klineage.transforms.lib.tiling"
local smem = require "klineage.transforms.smem_tiling"

local T = {
  name = "register_blocking",
  intent = "give each thread TM outputs held in registers so each shared-memory load of B feeds TM multiply-adds",
}

local HEADER = [[#define BM 64
#define BN 64
#define BK 8
#define TM 8
#define THREADS (BM * BN / TM)

// Each thread loads exactly one element of each tile.
static_assert(BM * BK == THREADS && BK * BN == THREADS, "tile shape must match the block size");
]]

local BLOCKED = [[{ __shared__ float $AS [ BM ] [ BK ] ; __shared__ float $BS [ BK ] [ BN ] ;
  int tid = threadIdx . x ; int thread_col = tid % BN ; int thread_row = tid / BN ;
  int a_row = tid / BK , a_col = tid % BK ; int b_row = tid / BN , b_col = tid % BN ;
  const float * Ablock = $A + blockIdx . y * BM * $K ; const float * Bblock = $B + blockIdx . x * BN ;
  float $ACC [ TM ] ; #pragma_unroll for ( int i = 0 ; i < TM ; ++ i ) $ACC [ i ] = 0.0f ;
  for ( int $K0 = 0 ; $K0 < $K ; $K0 += BK ) {
    $AS [ a_row ] [ a_col ] = Ablock [ a_row * $K + $K0 + a_col ] ;
    $BS [ b_row ] [ b_col ] = Bblock [ ( $K0 + b_row ) * $N + b_col ] ;
    __syncthreads ( ) ;
    #pragma_unroll for ( int $KK = 0 ; $KK < BK ; ++ $KK ) { float b = $BS [ $KK ] [ thread_col ] ;
      #pragma_unroll for ( int i = 0 ; i < TM ; ++ i ) $ACC [ i ] += $AS [ thread_row * TM + i ] [ $KK ] * b ; }
    __syncthreads ( ) ; }
  int $COL = blockIdx . x * BN + thread_col ;
  #pragma_unroll for ( int i = 0 ; i < TM ; ++ i ) { int $ROW = blockIdx . y * BM + thread_row * TM + i ; $*EPI }
  ( void ) $M ; }]]

local BLOCKED_NAMES = { "tid", "thread_col", "thread_row", "a_row", "a_col", "b_row", "b_col", "Ablock", "Bblock",
                        "i", "b", "BM", "BN", "BK", "TM", "THREADS" }
local TILED_NAMES = { "tx", "ty", "TILE" }

local function fresh(unit, names)
  for _, n in ipairs(names) do if tiling.taken(unit, n) then return false end end
  return true
end

-- The epilogue with every read of the accumulator `from` written `to`, or
-- nil when it names the accumulator any other way.
local function move_epilogue(epi, from_pat, to, acc)
  local text, n = epi:gsub(from_pat, to)
  local bare = 0
  for _ in epi:gmatch("%f[%w_]" .. acc .. "%f[^%w_]") do bare = bare + 1 end
  if n == 0 or n ~= bare then return nil end
  return text
end

-- The text span of `line` (1-based) of the unit, its newline included.
local function line_span(text, line)
  local at = 1
  for _ = 2, line do at = assert(text:find("\n", at, true)) + 1 end
  return at, (text:find("\n", at, true) or #text)
end

function T.find(unit)
  local sites = {}
  local fn = tiling.kernel(unit)
  local l = fn and tiling.launch(unit)
  if not l then return sites end
  local text, body = tostring(unit), fn:body()
  local toks, stmts = tiling.tokens(body), body:children()
  local lb = fn:launch_bounds()
  local c = tiling.match(smem.TILED, toks)
  local site = { body = body, launch = l, lb = lb }
  if c then
    local def = unit:define(c.T)
    if not (def and not def.redefined and not def.in_function and math.type(def.value.int) == "integer"
            and def.value.int >= 1 and def.value.int <= 32) then return sites end
    if lb.present or not lb.insert or #stmts ~= 8 or stmts[8].kind ~= "if" or stmts[8]:field("else") then return sites end
    if not (#l.block == 2 and l.block[1] == c.T and l.block[2] == c.T and #l.grid == 2
            and l.grid[1] == "cdiv(" .. c.N .. ", " .. c.T .. ")" and l.grid[2] == "cdiv(" .. c.M .. ", " .. c.T .. ")") then return sites end
    if not fresh(unit, BLOCKED_NAMES) then return sites end
    c.EPI = move_epilogue(stmts[8]:field("then"):text(), "%f[%w_]" .. c.ACC .. "%f[^%w_]", c.ACC .. "[i]", c.ACC)
    if not c.EPI then return sites end
    site.direction, site.define = "apply", def
  else
    c = tiling.match(BLOCKED, toks)
    if not c or not lb.present or lb.whole.text ~= "__launch_bounds__(THREADS)" then return sites end
    local bm = unit:define("BM")
    if not bm or text:sub(bm.line.begin, bm.line.begin + #HEADER - 1) ~= HEADER then return sites end
    if not (#l.block == 1 and l.block[1] == "cdiv(BM * BN, TM)" and #l.grid == 2
            and l.grid[1] == "cdiv(" .. c.N .. ", BN)" and l.grid[2] == "cdiv(" .. c.M .. ", BM)") then return sites end
    local req
    for _, a in ipairs(unit:annotations()) do
      if a.text:match("^requires") then
        if req or a.text ~= string.format("requires %s %% BM == 0 && %s %% BN == 0 && %s %% BK == 0", c.M, c.N, c.K) then
          return sites
        end
        req = a
      end
    end
    if not req or not fresh(unit, TILED_NAMES) then return sites end
    local last = stmts[#stmts - 1]
    local inner = last.kind == "for" and last:field("body")
    if not (inner and inner.kind == "compound" and #inner:children() == 2) then return sites end
    c.EPI = move_epilogue(inner:children()[2]:text(), "%f[%w_]" .. c.ACC .. "%s*%[%s*i%s*%]", c.ACC, c.ACC)
    if not c.EPI or c.EPI:find("%f[%w_]i%f[^%w_]") then return sites end
    site.direction, site.header = "undo", { begin = bm.line.begin, ["end"] = bm.line.begin + #HEADER - 1 }
    site.requires = { line_span(text, req.line) }
  end
  site.caps, site.key, site.line = c, fn:name() .. ":" .. c.ACC, body.line
  site.check = string.format("the whole kernel is the lineage's %s product of %s and %s into %s",
    site.direction == "apply" and "T x T shared-memory tiled" or "1-D register-blocked (TM outputs a thread)", c.A, c.B, c.ACC)
  sites[1] = support.site(T, unit, fn, site)
  return sites
end

-- The edit is only good when the constants it drops are used nowhere else.
local function checked(site, text, dropped)
  if not text then return nil end
  local u = require("kl.source").parse(text)
  for _, n in ipairs(dropped) do
    if tiling.taken(u, n) then return support.refuse(site, n .. " is still used after the edit") end
  end
  return text
end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local c, l, d = site.caps, site.launch, site.define
  local text = tostring(site.unit)
  local _, launch_end = line_span(text, select(2, text:sub(1, l.begin):gsub("\n", "")) + 1)
  local ins = site.lb.insert
  return checked(site, support.edit(site, {
    tiling.launch_edit(l, { "cdiv(" .. c.N .. ", BN)", "cdiv(" .. c.M .. ", BM)" }, { "cdiv(BM * BN, TM)" }),
    { begin = launch_end + 1, ["end"] = launch_end,
      text = string.format("// @kl requires %s %% BM == 0 && %s %% BN == 0 && %s %% BK == 0\n", c.M, c.N, c.K) },
    { begin = d.line.begin, ["end"] = d.line["end"], text = HEADER },
    { begin = ins.begin, ["end"] = ins["end"], text = ins.prefix .. "__launch_bounds__(THREADS)" .. ins.suffix },
    { node = site.body, text = tiling.fill({
      "{",
      "  __shared__ float $AS[BM][BK];",
      "  __shared__ float $BS[BK][BN];",
      "  int tid = threadIdx.x;",
      "  int thread_col = tid % BN;",
      "  int thread_row = tid / BN;  // owns rows thread_row * TM .. + TM - 1",
      "  int a_row = tid / BK, a_col = tid % BK;",
      "  int b_row = tid / BN, b_col = tid % BN;",
      "  const float *Ablock = $A + blockIdx.y * BM * $K;",
      "  const float *Bblock = $B + blockIdx.x * BN;",
      "  float $ACC[TM];",
      "#pragma unroll",
      "  for (int i = 0; i < TM; ++i) $ACC[i] = 0.0f;",
      "",
      "  for (int $K0 = 0; $K0 < $K; $K0 += BK) {",
      "    $AS[a_row][a_col] = Ablock[a_row * $K + $K0 + a_col];",
      "    $BS[b_row][b_col] = Bblock[($K0 + b_row) * $N + b_col];",
      "    __syncthreads();",
      "#pragma unroll",
      "    for (int $KK = 0; $KK < BK; ++$KK) {",
      "      float b = $BS[$KK][thread_col];",
      "#pragma unroll",
      "      for (int i = 0; i < TM; ++i)",
      "        $ACC[i] += $AS[thread_row * TM + i][$KK] * b;",
      "    }",
      "    __syncthreads();",
      "  }",
      "  int $COL = blockIdx.x * BN + thread_col;",
      "#pragma unroll",
      "  for (int i = 0; i < TM; ++i) {",
      "    int $ROW = blockIdx.y * BM + thread_row * TM + i;",
      "    $EPI",
      "  }",
      "  (void)$M;",
      "}" }, c) },
  }), { c.T })
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local c, l = site.caps, site.launch
  c.T, c.TX, c.TY = "TILE", "tx", "ty"
  return checked(site, support.edit(site, {
    tiling.launch_edit(l, { "cdiv(" .. c.N .. ", TILE)", "cdiv(" .. c.M .. ", TILE)" }, { "TILE", "TILE" }),
    { begin = site.requires[1], ["end"] = site.requires[2], text = "" },
    { begin = site.header.begin, ["end"] = site.header["end"], text = "#define TILE 32\n" },
    { begin = site.lb.whole.remove.begin, ["end"] = site.lb.whole.remove["end"], text = "" },
    { node = site.body, text = smem.tiled_body(c) },
  }), { "BM", "BN", "BK", "TM", "THREADS" })
end

return T
