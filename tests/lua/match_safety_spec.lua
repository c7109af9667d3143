-- kl.match safety (issue 13): no binding across an operator boundary the
-- parser did not structure, rewrites that keep meaning, bounded work with a
-- verdict when a cap stops it, and patterns that can never match refused.
-- Opaque inputs start each statement with a stray byte (or are garbage
-- bytes) so that no parser fix will ever structure them.
local match = require "klineage.pattern.match"
local source = require "kl.source"

local function bindings(m)
  local out = {}
  for k, b in pairs(m.bindings) do out[k] = b.text end
  return out
end

local function texts(matches)
  local out = {}
  for i, m in ipairs(matches) do out[i] = m.text end
  return out
end

local function compile_error(text)
  local p, f = match.compile(text)
  expect(p):is_nil()
  expect(f.verdict):equals("bad_input")
  return f
end

describe("precedence in opaque code", function()
  it("does not bind $i = SharedIdx + 4 (the issue's sample)", function()
    local src = "__global__ void k(float *LocalBlock, float *out) {\n"
      .. "  ` out[0] = LocalBlock[SharedIdx + 4 * ib + 0];\n"
      .. "  ` out[1] = LocalBlock[i * 4 + ib];\n}\n"
    local pat = assert(match.compile("$a[$i * $n + $j]"))
    local ms = pat:find(src)
    expect(texts(ms)):equals({ "LocalBlock[i * 4 + ib]" })
    expect(bindings(ms[1])):equals({ a = "LocalBlock", i = "i", n = "4", j = "ib" })
    local out = assert(pat:rewrite(src, "out[($i) * ($n) + ($j)]"))
    expect(out):contains("LocalBlock[SharedIdx + 4 * ib + 0]")
    expect(out):contains("out[(i) * (4) + (ib)]")
  end)

  it("is opaque where the test says so", function()
    local u = source.parse("void k() {\n  ` x = a - b * c;\n}\n")
    local kinds = {}
    for _, n in ipairs(u:functions()[1]:body():children()) do kinds[#kinds + 1] = n.kind end
    expect(kinds):equals({ "opaque" })
  end)

  it("takes only subexpressions, with associativity", function()
    local pat = assert(match.compile("$x - $y"))
    -- a - b - c is (a - b) - c: `b - c` is no subexpression
    local ms = pat:find("void k() {\n  ` r = a - b - c;\n}\n")
    expect(texts(ms)):equals({ "a - b" })
    -- assignment is right to left: a = b = c holds b = c, never a = b
    local asg = assert(match.compile("$x = $y"))
    local am = asg:find("void k() {\n  ` r; a = b = c;\n}\n")
    expect(texts(am)):equals({ "a = b = c", "b = c" })
    expect(bindings(am[1])):equals({ x = "a", y = "b = c" })
    -- after a stray byte (a macro? garbage?) nothing but a postfix
    -- expression may start
    expect(texts(asg:find("void k() {\n  ` a = b;\n}\n"))):equals({})
  end)

  it("refuses a run cut by a cast, a postfix or a prefix operator", function()
    local pat = assert(match.compile("$x * $y"))
    -- (a) may cast -b, so b * c may not be a subexpression
    expect(#pat:find("void k() {\n  ` r = (a) - b * c;\n}\n")):equals(0)
    -- a * b++ holds b++, never `a * b` followed by ++
    expect(bindings(pat:find("void k() {\n  ` r = a * b++;\n}\n")[1])):equals({ x = "a", y = "b++" })
    -- *p[i] is *(p[i]): $a[$i] binds p, not *p
    local idx = assert(match.compile("$a[$i]"))
    expect(bindings(idx:find("void k() {\n  ` r = *p[i];\n}\n")[1])):equals({ a = "p", i = "i" })
  end)

  it("never reads a declaration as an expression", function()
    expect(#assert(match.compile("$x * $y")):find("void k() {\n  ` r; int *p = q;\n}\n")):equals(0)
    expect(#assert(match.compile("$a[$i]")):find("void k() {\n  ` r; float t[16];\n}\n")):equals(0)
    local cast = assert(match.compile("$x + $y")):find("void k() {\n  ` r = float(a) + b;\n}\n")
    expect(bindings(cast[1])):equals({ x = "float(a)", y = "b" })
  end)

  it("never reads two arguments as a comma expression", function()
    local pat = assert(match.compile("$x, $y"))
    expect(#pat:find("void k() {\n  ` f(a, b);\n}\n")):equals(0)
  end)

  it("refuses juxtaposed or garbage code in a binding", function()
    local pat = assert(match.compile("$a[$i]"))
    local ms = pat:find("void k() {\n  @@ garbage x[i] = 1; @@\n}\n")
    expect(texts(ms)):equals({ "x[i]" })
    expect(#pat:find("void k() {\n  ` \xff\xff[i] = 1;\n}\n")):equals(0)
  end)

  it("starts a statement pattern only where a statement can start", function()
    local pat = assert(match.compile("$x = $y;"))
    -- `*p = c;` is a statement, `p = c;` is not; nor is anything right
    -- after a stray byte
    local ms = pat:find("void k() {\n  ` r = 0; q = 1; *p = c;\n}\n")
    expect(texts(ms)):equals({ "q = 1;", "*p = c;" })
    expect(bindings(ms[2])):equals({ x = "*p", y = "c" })
  end)
end)

describe("precedence in parsed code", function()
  it("binds one node per metavariable", function()
    local pat = assert(match.compile("$i * $n + $j"))
    expect(#pat:find("void k(int *L) { L[0] = L[S + 4 * ib + 0]; }")):equals(0)
    local ms = pat:find("void k(int *L) { L[0] = L[S * 4 + ib]; }")
    expect(bindings(ms[1])):equals({ i = "S", n = "4", j = "ib" })
  end)

  it("keeps `...` inside an expression to a subexpression", function()
    local pat = assert(match.compile("$x - ..."))
    local ms = pat:find("void k(int a, int b, int c, int *r) { r[0] = a - b - c; }")
    -- the outer node (a - b) - c: `...` = c with $x = a - b; never $x = a, ... = b - c
    local outer
    for _, m in ipairs(ms) do if m.text == "a - b - c" then outer = m end end
    expect(outer):exists()
    expect(bindings(outer)):equals({ x = "a - b" })
  end)
end)

describe("rewrites keep meaning", function()
  local src = "void f(float *o, int a, int b, int c) { o[0] = g(a + b); o[1] = g(a * b); o[2] = g(-a); }\n"
  local pat = assert(match.compile("g($x)"))
  it("parenthesizes a binding next to a tighter operator", function()
    local out = assert(pat:rewrite(src, "$x * 2"))
    expect(out):contains("o[0] = (a + b) * 2;")
    expect(out):contains("o[1] = a * b * 2;")
    expect(out):contains("o[2] = -a * 2;")
    out = assert(pat:rewrite(src, "2 - $x"))
    expect(out):contains("o[0] = 2 - (a + b);")
    expect(out):contains("o[1] = 2 - a * b;")
  end)
  it("leaves a binding between delimiters alone", function()
    local out = assert(pat:rewrite(src, "h($x)"))
    expect(out):contains("o[0] = h(a + b);")
  end)
  it("never pastes two operators into one token", function()
    local out = assert(pat:rewrite(src, "-$x"))
    expect(out):contains("o[2] = -(-a);")
    expect(out):contains("o[0] = -(a + b);")
  end)
  it("parenthesizes a postfix use", function()
    local out = assert(pat:rewrite(src, "$x.y"))
    expect(out):contains("o[0] = (a + b).y;")
    expect(out):contains("o[2] = (-a).y;")
  end)
end)

describe("bounded work", function()
  it("reports a whole search stopped at its total cap", function()
    local deep = "void f(int a, int b) {\n" .. string.rep("if (a) ", 3000) .. "b = a * b;\n}\n"
    local pat = assert(match.compile("$S"))
    local _, st = pat:find(deep, { max_total_steps = 5000 })
    expect(st.stopped):is_true()
    expect(st.capped):at_least(1)
    expect(st.max_total_steps):equals(5000)
    expect(st.steps):at_most(5000)
    local _, full = pat:find(deep)
    expect(full.max_steps):equals(20000)
    expect(full.max_total_steps):at_least(1000000)
  end)

  it("reports capped attempts without stopping the search", function()
    local pat = assert(match.compile("if ($c) $S"))
    local deep = "void f(int a, int b) {\n" .. string.rep("if (a) ", 600) .. "b = 1;\n}\n"
    local ms, st = pat:find(deep, { max_steps = 3 })
    expect(st.capped):equals(600)
    expect(st.stopped):is_false()
    expect(#ms):equals(0)
    ms, st = pat:find(deep)
    expect(#ms):equals(600)
    expect(st.capped):equals(0)
  end)

  it("stays linear on 64 KB of 0xFF bytes", function()
    local u = source.parse(string.rep("\xff", 65536))
    local ms, st = assert(match.compile("$X * $Y")):find(u)
    expect(#ms):equals(0)
    expect(st.steps):at_most(4 * 65536)
    expect(st.capped):equals(0)
  end)

  it("stays linear on a long chain and on deep nesting, and finds the right match", function()
    local chain = "void f(int a) {\n  int x = a" .. string.rep("*a", 100000) .. ";\n}\n"
    local ms, st = assert(match.compile("$X * $Y")):find(chain)
    expect(st.capped):equals(0)
    expect(st.steps):at_most(10 * 200000)
    for _, m in ipairs(ms) do expect(m.text):equals("a*a") end
    local ifs = "void f(int a, int b) {\n" .. string.rep("if (a) ", 20000) .. "b = a * b;\n}\n"
    ms, st = assert(match.compile("$X * $Y")):find(ifs)
    expect(texts(ms)):equals({ "a * b" })
    expect(st.capped):equals(0)
    expect(st.steps):at_most(10 * 80000)
  end)

  it("refuses a rewrite whose search stopped", function()
    local deep = "void f(int a, int b) {\n" .. string.rep("if (a) ", 3000) .. "b = a * b;\n}\n"
    local pat = assert(match.compile("$S"))
    local out, f = pat:rewrite(deep, "$S", { max_total_steps = 5000 })
    expect(out):is_nil()
    expect(f.message):contains("stopped")
  end)
end)

describe("patterns that can never match", function()
  it("refuses a metavariable inside a #define", function()
    local f = compile_error("#define BM $N:int")
    expect(f.message):contains("1:12: metavariables inside a preprocessor line never match")
    expect(f.message):contains("unit:defines()")
    expect(f.message):contains("\n#define BM $N:int\n           ^")
  end)
  it("refuses a metavariable inside a #pragma, keeps literal pragmas", function()
    local f = compile_error("#pragma unroll $N\nfor (...) $S")
    expect(f.message):contains("1:16:")
    expect(f.message):contains("stmt:pragmas()")
    local src = "void k(float *a) {\n#pragma unroll\n  for (int i = 0; i < 4; ++i) a[i] = 0;\n"
      .. "#pragma unroll 4\n  for (int i = 0; i < 4; ++i) a[i] = 1;\n}\n"
    expect(#assert(match.compile("#pragma unroll")):find(src)):equals(1)
    expect(#assert(match.compile("#pragma unroll 4")):find(src)):equals(1)
  end)
  it("refuses __launch_bounds__", function()
    local f = compile_error("__launch_bounds__($N)")
    expect(f.message):contains("1:1: __launch_bounds__ belongs to a function header")
    expect(f.message):contains("fn:launch_bounds()")
  end)
  it("refuses a parameter declaration", function()
    local f = compile_error("const float *__restrict__ $p")
    expect(f.message):contains("parameter declaration")
    expect(f.message):contains("fn:params()")
    expect(f.error.row):equals(1)
  end)
  it("refuses a function header", function()
    local f = compile_error("__global__ void $k($...P) $S")
    expect(f.message):contains("'__global__' starts a function header")
    expect(f.message):contains("unit:functions()")
  end)
  it("refuses a template's directive with a metavariable", function()
    local pat = assert(match.compile("for (...) $S"))
    local out, f = pat:rewrite("void k() { for (;;) x(); }", "#pragma unroll $N\nfor (;;) $S")
    expect(out):is_nil()
    expect(f.message):contains("never be replaced")
  end)
  it("reaches what it documents", function()
    local src = "#define BM 64\n__shared__ float gt[256];\n"
      .. "__global__ void k(float *b) {\n  __shared__ float t[128];\n  b[0] = f<8>(b[1]);\n}\n"
    expect(#assert(match.compile("#define BM 64")):find(src)):equals(1)
    local sh = assert(match.compile("__shared__ float $t[$N:int];")):find(src)
    expect(#sh):equals(2)
    expect(sh[1].bindings.t.text):equals("gt")
    local ta = assert(match.compile("f<$N:int>($x)")):find(src)
    expect(bindings(ta[1])):equals({ N = "8", x = "b[1]" })
  end)
end)

describe("kl.match: result tables are bounded", function()
  -- n nested statements matched by `if ($c) $S` copy overlapping texts:
  -- O(n * length) bytes. The tables stop at max_result_bytes; the rest
  -- are counted in stats.dropped.
  local function nest(n) return "void f(int c, int x) {\n" .. string.rep("if (c) ", n) .. "x = 1;\n}\n" end
  local function text_bytes(ms)
    local total = 0
    for _, m in ipairs(ms) do
      total = total + #m.text
      for _, b in pairs(m.bindings) do total = total + #b.text end
    end
    return total
  end
  it("drops the matches past the budget and says how many", function()
    local p = assert(match.compile("if ($c) $S"))
    local all, st = p:find(nest(300))
    expect(#all):equals(300)
    expect(st.dropped):equals(0)
    local some, st2 = p:find(nest(300), { max_result_bytes = 20000 })
    expect(#some + st2.dropped):equals(300)
    expect(st2.dropped):at_least(1)
    expect(text_bytes(some) <= 20000):is_true()
    expect(st2.max_result_bytes):equals(20000)
    for i, m in ipairs(some) do expect(m.text):equals(all[i].text) end
  end)
  it("keeps the default budget on a 20,000-deep nest", function()
    local p = assert(match.compile("if ($c) $S"))
    local text = nest(20000)
    local ms, st = p:find(text)
    expect(st.dropped):at_least(1)
    expect(text_bytes(ms) <= st.max_result_bytes):is_true()
    expect(st.max_result_bytes):equals(64 * 1024 * 1024 + 16 * #text)
  end)
  it("bounds find_all the same way, and counts need no budget", function()
    local p = assert(match.compile("if ($c) $S"))
    local lists, st = match.find_all({ p }, nest(300), { max_result_bytes = 20000 })
    expect(#lists[1] + st.dropped):equals(300)
    expect(st.dropped):at_least(1)
    local counts, st2 = match.find_all({ p }, nest(300), { max_result_bytes = 20000, count = true })
    expect(counts[1]):equals(300)
    expect(st2.dropped):equals(0)
  end)
end)
