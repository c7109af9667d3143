-- kl.source's bounds as Lua sees them: a bounded diagnostics table for any
-- input, and the scoping rules of the affine analysis (which the indexed
-- lookups must keep) on the shapes that made the old scans quadratic.
-- Behaviour only: bench/source_bounds.lua shows the times.
local source = require "kl.source"

local CAP = 256 -- KL_SOURCE_DIAG_CAP (source.h)
local TEXT_MAX = 256 -- a diagnostic's text is at most this many bytes

local function random_bytes(n, seed)
  local t, x = {}, seed
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    t[i] = string.char((x >> 16) & 255)
  end
  return table.concat(t)
end

-- count per id, total bytes, and the shape checks every table must pass
local function survey(diags)
  local per, bytes, texts_ok = {}, 0, true
  for i, d in ipairs(diags) do
    per[d.id] = (per[d.id] or 0) + 1
    bytes = bytes + #d.id + #d.message + #d.text
    if #d.text > TEXT_MAX or d.len < #d.text then texts_ok = false end
    if d.id == "KLS006" and i ~= #diags then texts_ok = false end
  end
  return per, bytes, texts_ok
end

describe("kl.source: bounded diagnostics", function()
  it("1 MB of random bytes: a bounded table, and the rest counted", function()
    local text = random_bytes(1 << 20, 7)
    local u, diags = source.parse(text)
    expect(tostring(u)):equals(text)
    local per, bytes, texts_ok = survey(diags)
    expect(texts_ok):is_true()
    for id, n in pairs(per) do
      if id ~= "KLS006" then expect(n):at_most(CAP) end
    end
    expect(#diags):at_most(5 * CAP + 1)
    expect(bytes):at_most(512 * 1024) -- it was 5.4 MB here, 403 MB in the issue
    local last = diags[#diags]
    expect(last.id):equals("KLS006")
    expect(last.suppressed):at_least(1)
    expect(last.message):contains(tostring(last.suppressed) .. " more diagnostics suppressed")
    expect(u:diagnostics()[#diags].suppressed):equals(last.suppressed)
  end)

  it("1 MB of 0xFF: one invalid-byte diagnostic over the whole run", function()
    local text = string.rep("\xff", 1 << 20)
    local u, diags = source.parse(text)
    expect(tostring(u)):equals(text)
    local per, bytes = survey(diags)
    expect(per.KLS004):equals(1)
    expect(per.KLS006):is_nil()
    expect(#diags):at_most(3)
    expect(bytes):at_most(4096)
    for _, d in ipairs(diags) do
      if d.id == "KLS004" then
        expect(d.len):equals(#text)
        expect(#d.text):equals(TEXT_MAX)
        expect(d.line):equals(1)
        expect(d.col):equals(1)
      end
    end
  end)

  it("cuts the text of a large region and gives its full length", function()
    local text = "void f() { x = (1 + " .. string.rep("y ", 5000) .. "; }"
    local _, diags = source.parse(text)
    expect(diags[1].id):equals("KLS001")
    expect(#diags[1].text):equals(TEXT_MAX)
    expect(diags[1].len):at_least(10000)
    expect(text:sub(diags[1].col, diags[1].col + TEXT_MAX - 1)):equals(diags[1].text)
  end)

  it("keeps one diagnostic per opaque region, and merges only adjacent bytes", function()
    local _, diags = source.parse("void f() { x = (1 + ; y = (2 + ; }")
    expect(survey(diags).KLS001):equals(2)
    _, diags = source.parse("\xff\xfe z \xfd")
    expect(survey(diags).KLS004):equals(2)
  end)
end)

-- the accesses of fn's parameter `a`, in source order
local function accesses(u, fn, name)
  local ap = u:access_patterns(fn or u:functions()[1])
  return ap[name or "a"] and ap[name or "a"].accesses or {}
end

describe("kl.source: locals in scope for the affine analysis", function()
  it("an inner block's declaration shadows the outer one only inside it", function()
    local u = source.parse([[
__global__ void k(float *a, int n) {
  int i = threadIdx.x;
  { int i = threadIdx.x * 2; a[i] = 0; }
  a[i] = 1;
}]])
    local as = accesses(u)
    expect(#as):equals(2)
    expect(as[1].tx_stride):equals(2)
    expect(as[2].tx_stride):equals(1)
  end)

  it("a declaration after the use, or in the same statement, is not in scope", function()
    local u = source.parse([[
__global__ void k(float *a) {
  a[j] = 0;
  int j = threadIdx.x;
}]])
    expect(accesses(u)[1].tx_stride_kind):equals("unknown")
  end)

  it("a variable assigned again in its block is unknown", function()
    local u = source.parse([[
__global__ void k(float *a) {
  int i = threadIdx.x;
  i = i * 2;
  a[i] = 0;
}]])
    expect(accesses(u)[1].tx_stride_kind):equals("unknown")
  end)

  it("a for-init declares for the loop: grid-stride loops", function()
    local u = source.parse([[
__global__ void k(float *a, int n) {
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += blockDim.x * gridDim.x)
    a[t] = 0;
}]])
    local a = accesses(u)[1]
    expect(a.tx_stride):equals(1)
    expect(a.loop_stride):equals("gridDim.x*blockDim.x") -- symbols sorted by length, then text
  end)

  it("10k sibling blocks declaring the same name leave the outer one visible", function()
    local parts = { "__global__ void k(float *a) {\n  int t = threadIdx.x;\n" }
    for _ = 1, 10000 do parts[#parts + 1] = "  { int t = 5; a[t] = 0; }\n" end
    parts[#parts + 1] = "  a[t] = 1;\n}\n"
    local u = source.parse(table.concat(parts))
    local as = accesses(u)
    expect(#as):equals(10001)
    local inner_ok = true
    for i = 1, 10000 do
      if as[i].tx_stride_kind ~= "zero" or as[i].form.const ~= 5 then inner_ok = false end
    end
    expect(inner_ok):is_true()
    expect(as[10001].tx_stride):equals(1)
  end)

  it("the innermost loop of a variable's name, not a closed one of the same name", function()
    local u = source.parse([[
__global__ void k(float *a, int n) {
  for (int i = 0; i < n; i++) {
    for (int i = 0; i < 4; i++) { }
    a[i * 32 + threadIdx.x] = 0;
  }
}]])
    local a = accesses(u)[1]
    expect(a.loop_stride):equals(32)
    expect(a.loop:text():sub(1, 15)):equals("for (int i = 0;")
    expect(a.loop:field("cond"):text()):equals("i < n")
  end)

  it("parameters and constants by name among 20k parameters and 10k defines", function()
    local ps, ds = {}, {}
    for k = 1, 20000 do ps[#ps + 1] = "float *p" .. k end
    for k = 1, 10000 do ds[#ds + 1] = string.format("#define W%d %d\n", k, k) end
    local u = source.parse(table.concat(ds) .. "__global__ void k(" .. table.concat(ps, ", ") ..
      ") { p20000[threadIdx.x * W9999] = 0; p1[W1] = 0; }")
    local fn = u:functions()[1]
    local hi, lo = accesses(u, fn, "p20000")[1], accesses(u, fn, "p1")[1]
    expect(hi.tx_stride):equals(9999)
    expect(lo.tx_stride_kind):equals("zero")
    expect(lo.form.const):equals(1)
  end)

  it("node:affine over every subscript of a function agrees with access_patterns", function()
    local parts = { "__global__ void k(float *a, int n) {\n  int i = threadIdx.x;\n" }
    for k = 1, 2000 do parts[#parts + 1] = string.format("  a[i * %d + n] = %d;\n", k, k) end
    parts[#parts + 1] = "}\n"
    local u = source.parse(table.concat(parts))
    local fn = u:functions()[1]
    local as = accesses(u, fn)
    expect(#as):equals(2000)
    local same = true
    for k, a in ipairs(as) do
      local f = a.node:field("index"):affine(fn)
      if f.tx_coef ~= tostring(k) or a.tx_stride ~= k then same = false end
    end
    expect(same):is_true()
  end)
end)
