-- kl.source from Lua: the structures of tests/c/test_parse_reach.c as the
-- walk sees them (pragmas of a loop body, parameters beside directives, the
-- new expression kinds and field names).
local source = require "kl.source"

local function kinds_of(list)
  local out = {}
  for i, n in ipairs(list) do out[i] = n.kind end
  return table.concat(out, " ")
end

describe("kl.source: pragmas before unbraced bodies", function()
  it("stmt:pragmas() and pragma:pragma_target() meet on the real body", function()
    local u = source.parse([[
void f(float *s, const float *a) {
  for (int k = 0; k < 8; ++k)
#pragma unroll 4
#pragma nounroll
    for (int j = 0; j < 4; ++j) s[k] += a[j];
}]])
    local outer = u:nodes("for")[1]
    local inner = outer:field("body")
    expect(inner.kind):equals("for")
    local ps = inner:pragmas()
    expect(#ps):equals(2)
    expect(ps[1]:text()):equals("#pragma unroll 4")
    expect(ps[1]:pragma_target() == inner):is_true()
    expect(ps[2]:pragma_target() == inner):is_true()
    expect(ps[1]:parent() == outer):is_true()
    expect(#outer:pragmas()):equals(0)
    expect(#inner:field("body"):pragmas()):equals(0)
  end)
  it("an else branch led by a pragma", function()
    local u = source.parse("void f() { if (c) a(); else\n#pragma unroll\n while (d) b(); }")
    local iff = u:nodes("if")[1]
    expect(iff:field("else").kind):equals("while")
    expect(#iff:field("else"):pragmas()):equals(1)
    expect(#iff:field("then"):pragmas()):equals(0)
  end)
end)

describe("kl.source: parameter lists with directives", function()
  it("fn:params() lists the parameters and skips the directives", function()
    local u = source.parse("__global__ void k(int n\n#if X\n, float *a\n#endif\n) { }")
    local fn = u:functions()[1]
    local ps = fn:params()
    expect(#ps):equals(2)
    expect(ps[1].name):equals("n")
    expect(ps[2].name):equals("a")
    expect(ps[2].pointer_depth):equals(1)
    expect(kinds_of(fn:field("params"):children())):equals("param preproc param preproc")
  end)
end)

describe("kl.source: new kinds and fields", function()
  it("new, delete and throw are kinds; placement is a field", function()
    local u = source.parse("void f(void *b) { T *p = new (b) T(1); delete[] p; throw 1; }")
    local nw = u:nodes("new")[1]
    expect(nw:field("placement"):text()):equals("b")
    expect(nw:field("type"):text()):equals("T")
    expect(#u:nodes("delete")):equals(1)
    expect(#u:nodes("throw")):equals(1)
    expect(#u:nodes("opaque")):equals(0)
  end)
  it("__grid_constant__ is part of the parameter type, not of its base", function()
    local u = source.parse("__global__ void k(__grid_constant__ const P p) {}")
    local p = u:functions()[1]:params()[1]
    expect(p.type):equals("__grid_constant__ const P")
    expect(p.base):equals("P")
    expect(p.const):is_true()
  end)
end)

describe("kl.match over a pragma-led body", function()
  local match = require "klineage.pattern.match"
  local src = "void f(float *s, const float *a) {\n  for (int k = 0; k < 8; ++k)\n#pragma unroll\n" ..
              "    for (int j = 0; j < 4; ++j) s[k] += a[j];\n}\n"
  it("finds the inner loop with its pragma", function()
    local p = assert(match.compile("#pragma unroll\nfor (int $j = 0; $j < $n; ++$j) $S"))
    local ms = p:find(src)
    expect(#ms):equals(1)
    expect(ms[1].bindings.n.text):equals("4")
    expect(ms[1].bindings.S.text):equals("s[k] += a[j];")
  end)
  it("never binds the outer loop's body to the pragma alone", function()
    -- with the pragma as the body, $S was "#pragma unroll" and a rewrite
    -- to $S dropped the inner loop
    -- now $S is the pragma with the loop it applies to
    local p = assert(match.compile("for (int $k = 0; $k < 8; ++$k) $S"))
    local all = p:find(src)
    expect(#all):equals(1)
    expect(all[1].bindings.S.text):equals("#pragma unroll\n    for (int j = 0; j < 4; ++j) s[k] += a[j];")
    local text = assert(p:rewrite(src, "for (int $k = 0; $k < 8; $k += 1) $S"))
    -- the pragma keeps a line of its own, or it would stop being a directive
    expect(text):contains("for (int k = 0; k < 8; k += 1)\n  #pragma unroll\n      for (int j = 0; j < 4; ++j) s[k] += a[j];")
    local q = assert(match.compile("for (int $k = 0; $k < 8; ++$k)\n#pragma unroll\n$S"))
    local ms = q:find(src)
    expect(#ms):equals(1)
    expect(ms[1].bindings.S.text):equals("for (int j = 0; j < 4; ++j) s[k] += a[j];")
  end)
end)

describe("kl.match rewrites keep directives on lines of their own", function()
  local match = require "klineage.pattern.match"
  it("ends a line after a binding that ends with a directive", function()
    local src = "void f(int *p) {\n  if (p) {\n    p[0] = 1;\n#pragma unroll\n  }\n}\n"
    local pat = assert(match.compile("if ($c) { $...XS }"))
    local text = assert(pat:rewrite(src, "if ($c) { $...XS p[1] = 2; }"))
    expect(text):contains("#pragma unroll\n")
    expect(text):never_contains("#pragma unroll p[1]")
    local _, diags = require("kl.source").parse(text)
    expect(#diags):equals(0)
  end)
end)
