-- kir.lift on every held-out kernel, matmul and the lineages' first
-- versions: each lifts or says why in one line; golden IR of a few;
-- hostile kernels refuse with a reason and never raise.
package.path = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") .. "/?.lua;" .. package.path
local support = require "kir_support"
local kir = require "klineage.kir"
local ir = require "klineage.kir.ir"

-- The kernels expected to refuse (the kernel their workload launches
-- first), and the reason's words: reduction's v0 is already a block tree
-- in shared memory.
local REFUSED = {
  ["reduction/v0_interleaved.cu"] = "uses __shared__ memory: already scheduled",
}

describe("kir.lift on the held-out suite", function()
  for _, t in ipairs(support.tasks()) do
    it(t.name .. " lifts, and emits again", function()
      local k, why = kir.lift(t.text)
      if not k then fail("%s: %s", t.name, why) end
      expect(#k.axes):at_least(1)
      local text = assert(kir.emit(k))
      expect(text):contains("void " .. k.name .. "(")
      expect(text):contains("@kl launch")
      -- lifting the emitted text again gives the same code
      local again = assert(kir.lift(text))
      expect(assert(kir.emit(again))):equals(text)
    end)
  end
end)

describe("kir.lift on matmul and the lineages' first versions", function()
  for _, t in ipairs(support.extra()) do
    it(t.name .. (REFUSED[t.name] and " refuses with its reason" or " lifts"), function()
      local k, why = kir.lift(t.text, { kernel = support.workload(t).kernel })
      if REFUSED[t.name] then
        expect(k):is_nil()
        expect(why):contains(REFUSED[t.name])
      else
        if not k then fail("%s: %s", t.name, why) end
        expect(assert(kir.emit(k))):contains("@kl launch")
      end
    end)
  end
end)

describe("files of several kernels", function()
  local function lineage(name)
    for _, t in ipairs(support.extra()) do
      if t.name:match("^" .. name .. "/") then return t end
    end
  end

  it("lift without a name refuses and names the kernels; lift_all lifts each on its own", function()
    local bfs = lineage("bfs")
    local k, why = kir.lift(bfs.text)
    expect(k):is_nil()
    expect(why):contains("several __global__ functions (bfs_init, bfs): name one (--kernel)")
    local all = kir.lift_all(bfs.text)
    expect(#all):equals(2)
    expect(all[1].name):equals("bfs_init")
    expect(all[2].name):equals("bfs")
    for _, one in ipairs(all) do
      if not one.kernel then fail("%s: %s", one.name, one.why) end
      expect(one.kernel.name):equals(one.name)
      -- the other kernel stays in the emitted file, untouched
      local text = assert(kir.emit(one.kernel))
      expect(text):contains("void bfs_init(")
      expect(text):contains("void bfs(")
    end
  end)

  it("reduction: both kernels refuse, each with its reason", function()
    local all = kir.lift_all(lineage("reduction").text)
    expect(#all):equals(2)
    for _, one in ipairs(all) do
      expect(one.kernel):is_nil()
      expect(one.why):contains("already scheduled")
    end
  end)

  it("bfs: the guard reads the level, the CSR loop is sequential; a multi-declarator pointer let keeps one star", function()
    local k = assert(kir.lift(lineage("bfs").text, { kernel = "bfs" }))
    expect(ir.text(k.guard.cond)):equals("v >= V || level[v] != depth")
    local text = assert(kir.emit(k))
    expect(text):contains("const int *row = graph;")
    expect(text):contains("const int *col = graph + V + 1;")
    local a = kir.analyze(k)
    expect(a.loops.list[1].kind):equals("seq")
    -- the scatter into level is indirect: no primitive may give a thread two vertices
    local names = {}
    for _, c in ipairs(kir.candidates(k)) do names[c.name] = true end
    expect(names.map):is_true()
    expect(names.coarsen):is_nil()
  end)

  it("raytrace: device functions writing through references are opaque calls that write their arguments", function()
    local k = assert(kir.lift(lineage("raytrace").text))
    local writes = {}
    ir.walk(k.body, function(s)
      if s.refs then writes[s.e.fn] = s.refs end
    end)
    expect(table.concat(writes.camera_ray, ",")):equals("4,5")
    expect(table.concat(writes.intersect, ",")):equals("7,8")
    local a = kir.analyze(k)
    expect(a.loops.list[1].why):contains("calls intersect")
    expect(assert(kir.emit(k))):contains("(void)work;")
  end)
end)

describe("opaque calls", function()
  local HEAD = "// @kl launch grid(cdiv(n, 32)) block(32)\n"
  local function kernel(body)
    return "extern \"C\" __global__ void k(int n, const float *x, float *y) {\n  int i = blockIdx.x * 32 + threadIdx.x;\n"
      .. "  if (i >= n) return;\n  " .. body .. "\n}\n"
  end
  local function refs_of(k)
    local out = {}
    ir.walk(k.body, function(s) if s.refs then out[s.e.fn] = table.concat(s.refs, ",") end end)
    return out
  end

  it("a helper declared before the kernel and defined after it is checked by its definition", function()
    local text = HEAD .. "__device__ void twice(float &v);\n" .. kernel("float a = x[i];\n  twice(a);\n  y[i] = a;")
      .. "__device__ void twice(float &v) { v = 2.0f * v; }\n"
    local k, why = kir.lift(text)
    if not k then fail("%s", why) end
    expect(refs_of(k).twice):equals("1")
    local _, again = kir.lift((text:gsub("v = 2.0f %* v;", "v = 2.0f * v; y_global = v;")))
    expect(again):contains("writes y_global, which is not its own")
  end)

  it("a variable a call writes is not read as its first value: the analysis keeps its name", function()
    local text = HEAD .. "__device__ void next(int &j) { j = j + 1; }\n" .. kernel("int j = 0;\n  next(j);\n  y[i] = x[j];")
    local k = assert(kir.lift(text))
    local load
    for _, a in ipairs(kir.analyze(k).accesses) do if a.kind == "load" then load = a end end
    expect(ir.text(load.index)):equals("j")
  end)

  it("an address passed to a builtin is a write of that variable", function()
    local k = assert(kir.lift(HEAD .. kernel("float s, c;\n  sincosf(x[i], &s, &c);\n  y[i] = s + c;")))
    expect(refs_of(k).sincosf):equals("2,3")
    expect(ir.writes(k.body[3]).s):is_true()
  end)
end)

local function lift_task(name)
  for _, t in ipairs(support.tasks()) do
    if t.name == name then return assert(kir.lift(t.text)) end
  end
end

describe("golden IR", function()
  it("matmul_abt: two axes from a 2D grid, a wrapped guard, one reduction loop", function()
    local k = lift_task("matmul_abt")
    expect(#k.axes):equals(2)
    expect(k.axes[1].name):equals("n")
    expect(k.axes[1].dim):equals("x")
    expect(ir.text(k.axes[1].block)):equals("TILE")
    expect(k.axes[2].dim):equals("y")
    expect(k.guard.form):equals("wrap")
    expect(k.axes[1].extent_ann):equals("N")
    expect(k.axes[2].extent_ann):equals("M")
    expect(k.launch.grid[1]):equals("cdiv(N, TILE)")
    expect(k.body[2].s):equals("for")
    expect(ir.text(k.body[2].cond)):equals("k < K")
  end)

  it("batched_gemm: a 64-bit flat axis, the digits lifted as per-point lets", function()
    local k = lift_task("batched_gemm")
    expect(#k.axes):equals(1)
    expect(k.axes[1].type):equals("long")
    expect(k.axes[1].cast):equals("long")
    expect(k.guard.form):equals("return")
    expect(k.axes[1].extent_ann):equals("batch * M * N")
    expect(k.body[1].s):equals("let")
    expect(ir.text(k.body[1].init)):equals("(int)(t % N)")
  end)

  it("rmsnorm: a blockIdx-only axis, the guard on the other", function()
    local k = lift_task("rmsnorm")
    expect(k.axes[2].name):equals("r")
    expect(k.axes[2].block):is_nil()
    expect(k.axes[1].extent_ann):equals("cols")
  end)

  it("segmented_scan: the loop without a condition is kept opaque", function()
    local k = lift_task("segmented_scan")
    local raw
    for _, s in ipairs(k.body) do if s.s == "raw" then raw = s end end
    expect(raw):exists()
    expect(raw.writes.sum):is_true()
  end)
end)

local HOSTILE = {
  { "syncthreads", "extern \"C\" __global__ void k(int n, float *y) { // @kl launch grid(1) block(32)\n __syncthreads(); }", "__syncthreads" },
  { "shared", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, float *y) { __shared__ float s[32]; int i = threadIdx.x; y[i] = s[i]; }", "__shared__" },
  { "goto", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; again: if (i < n) goto again; }", "goto" },
  { "deref", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; *(y + i) = 1.0f; }", "dereferences" },
  { "no launch line", "extern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i < n) y[i] = 0; }", "launch" },
  { "no coordinate", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, float *y) { y[0] = 1.0f; }", "no output coordinate" },
  { "thread ids after the guard", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; y[i] = threadIdx.y; }", "threadIdx" },
  { "grid stride", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, float *y) { for (int i = blockIdx.x * 32 + threadIdx.x; i < n; i += gridDim.x * 32) y[i] = 0; }", "gridDim" },
  { "writes its coordinate", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; i = i + 1; y[i] = 0; }", "writes i" },
  { "local array", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; float t[4]; if (i >= n) return; y[i] = 0; }", "local array" },
  { "no kernel", "int main() { return 0; }", "no __global__" },
  { "bound from a store", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, int *len, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; len[i] = i; for (int j = 0; j < len[i]; ++j) y[i * n + j] = 0; }", "depends on a store (len)" },
  { "pointer arithmetic on an argument", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; x = x + i; y[i] = x[0]; }", "writes the parameter x" },
  { "shadowing", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; float n = x[i]; y[i] = n; }", "redeclares n" },
  { "aliasing write through a macro", "// @kl launch grid(1) block(32)\n#define AT(p, i) (*((p) + (i)))\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; AT(y, i) = x[i]; }", "" },
  { "garbage", "}}}{{{ __global__ ((( void", "" },
  { "a helper that takes a pointer", "// @kl launch grid(1) block(32)\n__device__ float ld(const float *p, int i) { return p[i]; }\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; y[i] = ld(x, i); }", "takes a pointer (p)" },
  { "a helper that writes a global", "// @kl launch grid(1) block(32)\n__device__ int g;\n__device__ void bump(float &v) { g = 1; v += 1; }\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; float a = x[i]; bump(a); y[i] = a; }", "writes g, which is not its own" },
  { "a helper two calls down that writes a global", "// @kl launch grid(1) block(32)\n__device__ float h[4];\n__device__ void w(float v) { h[0] = v; }\n__device__ void o(float &v) { w(v); }\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; float a = x[i]; o(a); y[i] = a; }", "it calls w, and it writes h" },
  { "a recursive helper that passes a global by reference to itself", "// @kl launch grid(1) block(32)\n__device__ float g[4];\n__device__ void f(float &a, int d) { if (d > 0) f(g[d], d - 1); a = 1; }\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; float a = x[i]; f(a, 2); y[i] = a; }", "passes by reference g, which is not its own" },
  { "a helper with a static local", "// @kl launch grid(1) block(32)\n__device__ void w(float &v) { static float last = 0; v = v + last; last = v; }\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; float a = x[i]; w(a); y[i] = a; }", "state every call shares" },
  { "a helper that reads threadIdx", "// @kl launch grid(1) block(32)\n__device__ int lane() { return threadIdx.x % 32; }\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; y[i] = lane(); }", "reads threadIdx" },
  { "a helper that writes through a pointer", "// @kl launch grid(1) block(32)\n__device__ void w(float &v) { float t[2]; float *p = t; *p = v; v = t[0]; }\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; float a = x[i]; w(a); y[i] = a; }", "writes through p" },
  { "a helper without a body", "// @kl launch grid(1) block(32)\n__device__ void w(float &v);\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; float a = x[i]; w(a); y[i] = a; }", "without a body" },
  { "a coordinate passed by reference", "// @kl launch grid(1) block(32)\n__device__ void inc(int &v) { v++; }\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; inc(i); y[i] = 0; }", "inc writes its argument i" },
  { "a reference write inside an expression", "// @kl launch grid(1) block(32)\n__device__ float take(float &v) { v = 0; return 1.0f; }\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; float a = x[i]; y[i] = take(a) + a; }", "inside an expression" },
  { "an element's address to a builtin", "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; float c; sincosf(x[i], &y[i], &c); }", "a store the IR does not see" },
  { "an opaque loop passing a parameter by reference", "// @kl launch grid(1) block(32)\n__device__ void inc(int &v) { v++; }\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; int j = 0; while (j < 3) { inc(n); j++; } y[i] = j; }", "an opaque loop writes the parameter n" },
  { "a call cast to void", "// @kl launch grid(1) block(32)\n__device__ int f(int v) { return v; }\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; (void)f(i); y[i] = 0; }", "a call cast to void" },
  { "macro body", "// @kl launch grid(1) block(32)\n#define BODY y[i] = 0;\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; BODY }", "" },
}

describe("hostile kernels", function()
  for _, h in ipairs(HOSTILE) do
    it(h[1] .. " refuses with a reason, without raising", function()
      local ok, k, why = pcall(kir.lift, h[2])
      if not ok then fail("lift raised: %s", tostring(k)) end
      if k then fail("lifted where it should refuse") end
      expect(type(why)):equals("string")
      expect(why):contains(h[3])
      expect(why):never_contains("\n")
    end)
  end

  it("a deeply nested expression refuses, without raising", function()
    local e = string.rep("(", 300) .. "x[i]" .. string.rep(")", 300)
    local text = "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, const float *x, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; y[i] = " .. e .. "; }"
    local ok, k, why = pcall(kir.lift, text)
    expect(ok):is_true()
    if k then fail("lifted a 300-deep expression") end
    expect(why):exists()
  end)

  it("a chain of lets that doubles at each step is analyzed without blowing up", function()
    -- a40 = 2^40 copies of i if inlined: the analysis keeps such a let a name
    local parts = { "// @kl launch grid(cdiv(n, 128)) block(128)\nextern \"C\" __global__ void k(int n, const float *x, float *y) {\n  int i = blockIdx.x * 128 + threadIdx.x;\n  if (i >= n) return;\n  int a0 = i;\n" }
    for j = 1, 40 do parts[#parts + 1] = string.format("  int a%d = a%d + a%d;\n", j, j - 1, j - 1) end
    for j = 1, 20 do parts[#parts + 1] = string.format("  y[i] += x[a40 + %d];\n", j) end
    parts[#parts + 1] = "}\n"
    local k = assert(kir.lift(table.concat(parts)))
    local c = kir.candidates(k)
    expect(#c):at_least(1)
    expect(#kir.analyze(k).accesses):equals(40) -- 20 stores, 20 loads
  end)

  it("a deeply nested loop refuses, without raising", function()
    local text = "// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(int n, float *y) { int i = blockIdx.x * 32 + threadIdx.x; if (i >= n) return; float s = 0; " ..
      string.rep("for (int a = 0; a < n; ++a) ", 250) .. "s += 1; y[i] = s; }"
    local ok, k, why = pcall(kir.lift, text)
    expect(ok):is_true()
    if k then fail("lifted a 250-deep loop nest") end
    expect(why):exists()
  end)
end)

describe("klineage lift and klineage schedule", function()
  local suite = support.suite

  it("lift prints the IR and the legal applications, exit 0; --json parses", function()
    local out, code = klineage("lift", suite .. "/gemv/kernel.cu")
    expect(code):equals(0)
    expect(out):contains("axis i      on x")
    expect(out):contains("reused across i")
    expect(out):contains("split_reduce(warp)  -- legal: ")
    local json, jcode = klineage("lift", suite .. "/gemv/kernel.cu", "--json")
    expect(jcode):equals(0)
    expect(json):matches('^{"accesses":')
    expect(json):contains('"candidates":')
  end)

  it("lift of a kernel that does not lift: one line with the reason, exit 1; a missing file exits 2", function()
    local path = scratch_file("// @kl launch grid(1) block(32)\nextern \"C\" __global__ void k(float *y) { __syncthreads(); }\n", ".cu")
    local out, code = klineage("lift", path)
    expect(code):equals(1)
    expect(out):contains("not lifted: uses __syncthreads: already scheduled")
    local _, mcode = klineage("lift", path .. ".missing")
    expect(mcode):equals(2)
  end)

  it("schedule writes the kernel with the new launch and prints the reasons; a refusal exits 1", function()
    local dir = scratch_dir()
    local out, code = klineage("schedule", suite .. "/colsum/kernel.cu", "--workload", suite .. "/colsum",
      "--apply", "map(block=128) coarsen(2)", "--out", dir .. "/colsum.cu")
    expect(code):equals(0)
    expect(out):contains("coarsen(2): legal: ")
    expect(read_file(dir .. "/colsum.cu")):contains("// @kl launch grid(cdiv(cols, 128 * 2)) block(128)")
    local rout, rcode = klineage("schedule", suite .. "/colsum/kernel.cu", "--workload", suite .. "/colsum",
      "--apply", "vectorize(4)")
    expect(rcode):equals(1)
    expect(rout):contains("refused: vectorize(4): a loop in the per-point code")
    local _, ucode = klineage("schedule", suite .. "/colsum/kernel.cu", "--workload", suite .. "/colsum", "--apply", "nope(1)")
    expect(ucode):equals(2)
  end)

  it("schedule --help names every primitive", function()
    local help = klineage("schedule", "--help")
    for _, name in ipairs(require("klineage.kir").PRIMITIVES) do expect(help):contains(name .. "(") end
  end)
end)

describe("mutated suite kernels", function()
  -- Each suite kernel with one or two names replaced by something else (a
  -- load, a thread id, an index through an index): lift, every primitive's
  -- candidates and the emitter never raise and never fail inside (a
  -- "failed" reason is a bug caught by pcall, not a refusal).
  it("lift, every primitive and emit refuse or succeed, never raise", function()
    local REPLACEMENTS = { "i", "0", "n", "x[i]", "(i + 1)", "threadIdx.x", "k", "-1", "sum", "row[k]", "1.0f", "c % 3", "t / 2", "a[b[i]]" }
    local schedule = require "klineage.kir.schedule"
    math.randomseed(31)
    local mutants, lifted = 0, 0
    for _, t in ipairs(support.tasks()) do
      for _ = 1, 8 do
        local text = t.text
        for _ = 1, math.random(1, 2) do
          local words = {}
          for s, e in text:gmatch("()[%w_]+()") do words[#words + 1] = { s, e } end
          local w = words[math.random(1, #words)]
          text = text:sub(1, w[1] - 1) .. REPLACEMENTS[math.random(1, #REPLACEMENTS)] .. text:sub(w[2])
        end
        mutants = mutants + 1
        local ok, k, why = pcall(kir.lift, text)
        if not ok then fail("lift raised on a mutant of %s: %s", t.name, tostring(k)) end
        if not k then
          check(not why:match("^lift failed"), "lift failed inside on a mutant of %s: %s", t.name, why)
        else
          lifted = lifted + 1
          for _, name in ipairs(kir.PRIMITIVES) do
            local p = schedule.primitive(name)
            for _, params in ipairs(p.candidates(k)) do
              local aok, out = pcall(p.apply, k, params)
              if not aok then fail("%s raised on a mutant of %s: %s", name, t.name, tostring(out)) end
              if out then
                local eok, e = pcall(kir.emit, out)
                if not eok then fail("emit raised after %s on a mutant of %s: %s", name, t.name, tostring(e)) end
              end
            end
          end
        end
      end
    end
    expect(mutants):equals(8 * #support.tasks())
    expect(lifted):at_least(mutants // 4)
  end)
end)
