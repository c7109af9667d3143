-- kl.match and klineage.pattern.match: the golden cases under tests/match/, then
-- unit tests for the pattern language, matching options, rewriting,
-- structural diff and anti-unification.
local match = require "klineage.pattern.match"
local pattern = require "klineage.pattern"
local source = require "kl.source"
local kmatch = require "kl.match"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local golden = here .. "/../match"

local function read(path)
  local h = io.open(path, "rb")
  if not h then return nil end
  local s = h:read("a")
  h:close()
  return s
end

local function squash(s) return (s:gsub("%s+", "")) end

-- Annotations: `// match: [$NAME=text ...]` and `// nomatch: why`, at the
-- end of a code line (about that line) or alone on a line (about the next
-- code line). Binding texts are compared without whitespace.
local function annotations(src)
  local want, pending, n = {}, nil, 0
  for line in (src .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local code, kind, rest = line:match("^(.-)//%s*(n?o?match):(.*)$")
    if kind then
      local a = { kind = kind, bindings = {} }
      for name, text in rest:gmatch("%$([%w_]+)=(%S+)") do a.bindings[name] = text end
      if code:match("^%s*$") then pending = a else want[n] = a end
    elseif pending and line:match("%S") then
      want[n] = pending
      pending = nil
    end
  end
  return want
end

local function case_names()
  local names = {}
  local p = io.popen('ls "' .. golden .. '"')
  for name in p:lines() do
    if not name:find(".", 1, true) then names[#names + 1] = name end -- folders, not README.md
  end
  p:close()
  table.sort(names)
  return names
end

describe("golden cases (tests/match)", function()
  local names = case_names()
  it("finds the cases", function() expect(#names):at_least(12) end)
  for _, name in ipairs(names) do
    it(name, function()
      local dir = golden .. "/" .. name .. "/"
      local ptext = assert(read(dir .. "pattern"), "no pattern file"):gsub("\n$", "")
      local src = assert(read(dir .. "in.cu"), "no in.cu")
      local pat, msg = match.compile(ptext)
      if not pat then fail("pattern does not compile: %s", msg) end
      local unit = source.parse(src, name .. "/in.cu")
      local matches = pat:find(unit)
      -- the prefilter (words, signatures, structural checks) only saves work
      expect(#pat:find(unit, { prefilter = false })):equals(#matches)
      local want = annotations(src)
      local by_line = {}
      for _, m in ipairs(matches) do by_line[m.line] = by_line[m.line] or m end
      for line, a in pairs(want) do
        local m = by_line[line]
        if a.kind == "match" then
          if not m then fail("%s:%d: expected a match", name, line) end
          for bname, text in pairs(a.bindings) do
            local b = m.bindings[bname]
            if not b then fail("%s:%d: no binding $%s", name, line, bname) end
            if squash(b.text) ~= text then
              fail("%s:%d: $%s bound %q, expected %q", name, line, bname, b.text, text)
            end
          end
        elseif m then
          fail("%s:%d: unexpected match %q", name, line, m.text)
        end
      end
      for _, m in ipairs(matches) do
        if not (want[m.line] and want[m.line].kind == "match") then
          fail("%s:%d: match on a line without a // match: annotation: %q", name, m.line, m.text)
        end
      end
      local tpl = read(dir .. "template")
      if tpl then
        local out, edits = pat:rewrite(unit, (tpl:gsub("\n$", "")))
        if not out then fail("rewrite failed: %s", edits) end
        expect(out):equals(assert(read(dir .. "expected.cu"), "no expected.cu"))
        expect(#edits):at_least(1)
        -- The edit script's kinds, when the case lists them.
        local want_edits = read(dir .. "edits")
        if want_edits then
          local kinds = {}
          for _, e in ipairs(edits) do kinds[#kinds + 1] = e.kind end
          expect(table.concat(kinds, " ")):equals((want_edits:gsub("%s+$", "")))
        end
      end
    end)
  end
end)

describe("pattern language", function()
  it("parses every metavariable kind", function()
    local p = assert(pattern.parse("__shared__ $T:type $n:ident[$N:int]; ... $S foo($X, $...XS);"))
    local sorts = {}
    for _, m in ipairs(p.metas) do sorts[m.name] = m.sort end
    expect(sorts):equals({ T = "type", n = "ident", N = "int", S = "stmt", X = "expr", XS = "seq" })
    expect(p.shape):equals("stmts")
  end)
  it("reports a malformed pattern with row:col and a caret", function()
    local p, msg = pattern.parse("for (int i = 0;\n     i < n; i++ {")
    expect(p):is_nil()
    expect(msg.error.row):equals(2)
    expect(msg.error.col):equals(17)
    expect(msg):contains("2:17: unexpected '{'")
    expect(msg):contains("\n     i < n; i++ {\n                ^")
  end)
  it("reads a bare metavariable as an expression where one may stand", function()
    local sorts = function(text)
      local out = {}
      for _, m in ipairs(assert(pattern.parse(text)).metas) do out[#out + 1] = m.name .. ":" .. m.sort end
      return table.concat(out, " ")
    end
    expect(sorts("($a) - $b")):equals("a:expr b:expr")
    expect(sorts("sizeof($X)")):equals("X:expr")
    expect(sorts("sizeof($T:type)")):equals("T:type")
    expect(sorts("($T:type)$X")):equals("T:type X:expr")
    expect(sorts("reinterpret_cast<$T>($p)")):equals("T:type p:expr")
    expect(sorts("$T $v = $X;")):equals("T:type v:ident X:expr")
    expect(sorts("$S foo($X);")):equals("S:stmt X:expr")
  end)
  it("rejects an unknown sort and a lone $", function()
    local _, m1 = pattern.parse("$X:float + 1")
    expect(m1):contains("1:1: unknown metavariable sort 'float'")
    local _, m2 = pattern.parse("a + $")
    expect(m2):contains("1:5:")
  end)
  it("rejects one name with two sorts", function()
    local _, msg = pattern.parse("$N:int + $N:type")
    expect(msg.message):matches("^1:%d+:")
  end)
  it("warns when there is no literal token", function()
    expect(#assert(pattern.parse("$X")).warnings):equals(1)
    expect(#assert(pattern.parse("$X + 1")).warnings):equals(0)
  end)
  it("dispatches on the first node's kind", function()
    local p = assert(match.compile("$a[$i] += $v"))
    local _, info = p.compiled:steps()
    expect(info.root_kind):equals("assign")
    expect(info.words):equals({})
    local q = assert(match.compile("for (int $i = 0; $i < $n; ++$i) $S"))
    local _, qi = q.compiled:steps()
    expect(qi.root_kind):equals("for")
    expect(qi.words):equals({ "for", "int" })
  end)
  it("never raises on random input, and always says where", function()
    local alphabet = { "$X", "$...S", "$N:int", "$T:type", "$q:", "...", "(", ")", "{", "}", "[", "]",
      ";", ",", "for", "if", "int", "a", "1", "+", "=", "<<<", ">>>", "#pragma unroll\n", "\"s", "/*",
      "$", "'c'", "<", ">", "*", "&", "?", ":", "\n", " " }
    local seed = 12345
    local function rand(n)
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n + 1
    end
    for _ = 1, 1500 do
      local parts = {}
      for k = 1, rand(12) do parts[k] = alphabet[rand(#alphabet)] end
      local text = table.concat(parts, " ")
      local ok, p, f = pcall(pattern.parse, text)
      if not ok then fail("raised on %q: %s", text, p) end
      if not p then
        if not (f.error and f.error.row and f.error.col and f.message:match("^%d+:%d+: ")) then fail("no position for %q", text) end
      else
        local cok, cerr = pcall(function() kmatch.pattern(p):compile() end)
        if not cok then fail("parsed but did not compile: %q: %s", text, cerr) end
      end
    end
    local deep = string.rep("(", 3000) .. "x" .. string.rep(")", 3000)
    local p, msg = pattern.parse(deep)
    expect(p == nil and msg.message:match("^%d+:%d+:") ~= nil):is_true()
  end)
  it("derives structural checks below the root", function()
    local p = assert(pattern.parse("$a = $a + $b;"))
    expect(#p.checks):equals(2)
    expect(p.checks[1]):equals({ path = { 0 }, kind = "assign", op = "=" })
    expect(p.checks[2]):equals({ path = { 0, 1 }, kind = "binary", op = "+" })
    expect(#assert(pattern.parse("$X * $Y")).checks):equals(0)
  end)
  it("caches compiled steps on the pattern", function()
    local p = assert(match.compile("__syncthreads();"))
    local s1 = p.compiled:steps()
    expect(#s1):equals(5)
    expect(s1[1].op):equals("token")
    expect(s1[5].op):equals("end")
  end)
end)

local kernel = [[
__global__ void k(float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < n; ++j) a[i] += b[j] * 2.0f;
  for (int j = 0; j < 16; ++j) a[i] += b[j] * 3.0f;
  __syncthreads();
}
]]

describe("matching", function()
  it("returns bindings with text, ranges and node handles", function()
    local p = assert(match.compile("$acc += $b[$j] * $c"))
    local ms = p:find(kernel)
    expect(#ms):equals(2)
    local b = ms[1].bindings
    expect(b.acc.text):equals("a[i]")
    expect(b.acc.node.kind):equals("index")
    expect(b.c.text):equals("2.0f")
    expect(b.c.line):equals(3)
    expect(ms[1].node.kind):equals("assign")
    expect(ms[1].line):equals(3)
    expect(kernel:sub(ms[1].begin, ms[1]["end"])):equals(ms[1].text)
  end)
  it("filters with where predicates over the bindings", function()
    local p = assert(match.compile("for (int $i = 0; $i < $n; ++$i) $S"))
    expect(#p:find(kernel)):equals(2)
    local ms = p:find(kernel, { where = function(b) return b.n.node.kind == "int_lit" end })
    expect(#ms):equals(1)
    expect(ms[1].bindings.n.text):equals("16")
  end)
  it("restricts matches to a node", function()
    local u = source.parse(kernel .. "void h(float *a) { __syncthreads(); }\n")
    local p = assert(match.compile("__syncthreads();"))
    expect(#p:find(u)):equals(2)
    local fns = u:functions()
    local ms = p:find(u, { within = fns[2] })
    expect(#ms):equals(1)
    expect(ms[1].line):equals(7)
  end)
  it("prefilters on literal words without changing the result", function()
    local p = assert(match.compile("atomicAdd($p, $v)"))
    local ms, st = p:find(kernel)
    expect(#ms):equals(0)
    expect(st.prefiltered):equals(1)
    expect(st.candidates):equals(0)
    local q = assert(match.compile("$x * 2.0f"))
    local a = q:find(kernel)
    local b, st2 = q:find(kernel, { prefilter = false })
    expect(#a):equals(#b)
    expect(st2.prefiltered):equals(0)
  end)
  it("skips top-level items that lack a pattern's words", function()
    local src = kernel .. "__global__ void h(int *c) { atomicAdd(&c[0], 1); }\n"
    local p = assert(match.compile("atomicAdd($p, $v)"))
    local a, st = p:find(src)
    local b = p:find(src, { prefilter = false })
    expect(#a):equals(1)
    expect(#b):equals(1)
    expect(st.prefiltered):equals(0)
    expect(st.prefiltered_items):at_least(1)
  end)
  it("caps the work per match attempt", function()
    local args = {}
    for i = 1, 60 do args[i] = "0" end
    local src = "void f() { g(" .. table.concat(args, ", ") .. "); }"
    local p = assert(match.compile("g(..., ..., ..., ..., ..., 1)"))
    local ms, st = p:find(src, { max_steps = 5000 })
    expect(#ms):equals(0)
    expect(st.capped):equals(1)
    expect(st.steps):at_most(5001)
  end)
  it("matches all patterns of a set in one walk like one by one", function()
    local pats = {
      assert(match.compile("__syncthreads();")),
      assert(match.compile("$a[$i]")),
      assert(match.compile("for (...) $S")),
    }
    local all = match.find_all(pats, kernel)
    for k, p in ipairs(pats) do expect(#all[k]):equals(#p:find(kernel)) end
    local counts = match.find_all(pats, kernel, { count = true })
    expect(counts[1]):equals(1)
    expect(counts[2]):equals(#all[2])
    local set = match.set(pats)
    local u = source.parse(kernel)
    for _ = 1, 2 do
      local again = set:find_all(u, { count = true })
      expect(again):equals(counts)
    end
  end)
  it("dispatches on the statement's expression without losing matches", function()
    for _, text in ipairs({ "$a += $b;", "$x = $y;", "__syncthreads();", "$f($...A);", "$a[$i] += $v;" }) do
      local t1 = assert(pattern.parse(text))
      local t2 = assert(pattern.parse(text))
      expect(t1.child_kind ~= nil):is_true()
      t2.child_kind, t2.child_op = nil, nil
      local a = kmatch.pattern(t1):find(kernel)
      local b = kmatch.pattern(t2):find(kernel)
      expect(#a):equals(#b)
    end
  end)
  it("needs equal code for a repeated metavariable, ignoring trivia", function()
    local p = assert(match.compile("$x = $x;"))
    expect(#p:find("void f() { a = /*c*/ a; a = b; }")):equals(1)
  end)
  it("matches token-level inside opaque regions", function()
    local src = "void f() { @@ junk foo(1, 2) @@; }"
    local u = source.parse(src)
    local ms = assert(match.compile("foo($a, $b)")):find(u)
    expect(#ms):equals(1)
    expect(ms[1].bindings.b.text):equals("2")
    expect(tostring(u)):equals(src)
  end)
end)

describe("rewriting", function()
  it("reports overlapping edits instead of picking one", function()
    local p = assert(match.compile("$X + $Y"))
    local out, err = p:rewrite("int f() { return a + b + c; }", "add($X, $Y)")
    expect(out):is_nil()
    expect(err):contains("overlapping edits")
  end)
  it("refuses to copy a `...` that matched into nested statements", function()
    local src = "void f(int c) { if (c) { for (;;) { __syncthreads(); } x(); } }"
    local p = assert(match.compile("if ($c) { ... __syncthreads(); ... }"))
    expect(#p:find(src)):equals(1)
    local out, err = p:rewrite(src, "if ($c) { ... }")
    expect(out):is_nil()
    expect(err):contains("matched into nested statements")
    -- a template that does not copy it is fine
    expect((p:rewrite(src, "divergent_barrier($c);"))):equals("void f(int c) { divergent_barrier(c); }")
  end)
  it("rejects a template naming an unbound metavariable", function()
    local p = assert(match.compile("$X + 1"))
    local out, err = p:rewrite("int f() { return a + 1; }", "$Z")
    expect(out):is_nil()
    expect(err):contains("$Z")
  end)
  it("applies edits bottom-up and reports new ranges", function()
    local p = assert(match.compile("__syncthreads();"))
    local src = "void f() {\n  __syncthreads();\n  x();\n  __syncthreads();\n}\n"
    local out, edits = p:rewrite(src, "__syncwarp();")
    expect(out):equals("void f() {\n  __syncwarp();\n  x();\n  __syncwarp();\n}\n")
    expect(#edits):equals(2)
    expect(edits[2].kind):equals("update")
    expect(edits[2].new.line):equals(4)
    expect(edits[2].new.text):equals("__syncwarp")
  end)
  it("applies several rules together and refuses overlaps between them", function()
    local bar = assert(match.compile("__syncthreads();"))
    local mul = assert(match.compile("$x * 2.0f"))
    local out, edits = match.rewrite_all(kernel, { { bar, "__syncwarp();" }, { mul, "2.0f * $x" } })
    expect(out):contains("a[i] += 2.0f * b[j];")
    expect(out):contains("__syncwarp();")
    expect(#edits):at_least(2)
    local loop = assert(match.compile("for (...) $S"))
    local bad, err = match.rewrite_all(kernel, { { loop, "$S" }, { mul, "2.0f * $x" } })
    expect(bad):is_nil()
    expect(err):contains("overlapping edits: the match at 3:3")
  end)
  it("rewrites only the matches a where predicate keeps", function()
    local p = assert(match.compile("for (int $i = 0; $i < $n; ++$i) $S"))
    local out = p:rewrite(kernel, "#pragma unroll\nfor (int $i = 0; $i < $n; ++$i) $S",
      { where = function(b) return b.n.text == "16" end })
    local _, count = out:gsub("#pragma unroll", "")
    expect(count):equals(1)
    expect(out):contains("  #pragma unroll\n  for (int j = 0; j < 16; ++j)")
  end)
end)

describe("structural diff", function()
  local a = "void f() {\n  x = 1;\n  y = 2;\n  z = g(3);\n}\n"
  it("finds no edit between equal units", function()
    expect(#match.diff(a, a)):equals(0)
  end)
  it("finds updates, inserts, deletes and moves", function()
    local b = "void f() {\n  z = g(3);\n  x = 1;\n  y = 5;\n  w();\n}\n"
    local kinds = {}
    for _, op in ipairs(match.diff(a, b)) do
      kinds[#kinds + 1] = op.kind .. ":" .. op.node_kind .. ":" .. ((op.b_range or op.a_range).text)
    end
    table.sort(kinds)
    expect(kinds):equals({ "insert:expr_stmt:w();", "move:expr_stmt:z = g(3);", "update:int_lit:5" })
    local s1 = "__global__ void k(const float *a, float *b) { b[0] = a[0]; }"
    local s2 = "__global__ void k(const float *__restrict__ a, float *b) { b[0] = a[0]; }"
    local sig = match.diff(s1, s2)
    expect(#sig):equals(1)
    expect(sig[1].kind):equals("update")
    expect(sig[1].b_range.text):equals("const float *__restrict__")
    local m1 = "void f() {\n  if (c) {\n    x = 1;\n  }\n  y = 2;\n}\n"
    local m2 = "void f() {\n  if (c) {\n  }\n  y = 2;\n  x = 1;\n}\n"
    local across = match.diff(m1, m2)
    expect(#across):equals(1)
    expect(across[1].kind):equals("move")
    expect(across[1].a_range.line):equals(3)
    expect(across[1].b_range.line):equals(5)
    local c = "void f() {\n  x = 1;\n  z = g(3);\n}\n"
    local ops = match.diff(a, c)
    expect(#ops):equals(1)
    expect(ops[1].kind):equals("delete")
    expect(ops[1].a_range.text):equals("y = 2;")
  end)
end)

describe("anti-unification", function()
  it("generalizes differing subtrees and links repeated differences", function()
    local g = match.generalize({ "a[i] = b[i] + 1;", "c[j] = b[j] + 2;" })
    expect(g.text):equals("$I1:ident[$I2:ident] = b[$I2:ident] + $N1:int;")
    expect(#g.holes):equals(3)
    expect(g.holes[2].texts):equals({ "i", "j" })
    expect(g.pattern):exists()
  end)
  it("covers every instance of a list", function()
    local inst = {
      "for (int i = 0; i < n; ++i) acc += x[i] * y[i];",
      "for (int k = 0; k < m; ++k) acc += p[k] * q[k];",
      "for (int t = 0; t < 64; ++t) acc += x[t] * w[t];",
    }
    local g = match.generalize(inst)
    expect(g.pattern):exists()
    expect(g.text):contains("acc +=")
    for _, s in ipairs(inst) do
      expect(#g.pattern:find("void f() { " .. s .. " }")):equals(1)
    end
    -- most specific: code all instances share stays literal
    expect(g.text):contains("++")
  end)
  it("keeps the statements all instances share, with ... between", function()
    local g = match.generalize({ "x = 1;\ny = 2;\n__syncthreads();", "x = 1;\n__syncthreads();" })
    expect(g.text):equals("x = 1; ...\n__syncthreads();")
    expect(#g.pattern:find("void f() { x = 1; q(); r(); __syncthreads(); }")):equals(1)
  end)
  it("generalizes statement-sequence matches", function()
    local src = [[
void f() {
  a = 1;
  __syncthreads();
  b[i] = a;
}
void g() {
  c = 2;
  __syncthreads();
  b[j] = c;
}
]]
    local p = assert(match.compile("__syncthreads();\n$S"))
    local ms = p:find(src)
    expect(#ms):equals(2)
    expect(#ms[1].nodes):equals(2)
    local g = match.generalize(ms)
    expect(g.text):equals("__syncthreads();\n  b[$I1:ident] = $I2:ident;")
  end)
  it("generalizes edits into a pattern and a template that replay them", function()
    local g = match.generalize_edits({
      { before = "acc += A[i] * B[i];", after = "acc = fmaf(A[i], B[i], acc);" },
      { before = "s += x[k] * y[k];", after = "s = fmaf(x[k], y[k], s);" },
    })
    expect(g.text):equals("$I1:ident += $I2:ident[$I3:ident] * $I4:ident[$I3:ident];")
    expect(g.after_text):equals("$I1:ident = fmaf($I2:ident[$I3:ident], $I4:ident[$I3:ident], $I1:ident);")
    expect(g.template_error):is_nil()
    local out = g.pattern:rewrite("void f() { t += p[j] * q[j]; u += p[j] * q[j + 1]; }", g.after_text)
    expect(out):equals("void f() { t = fmaf(p[j], q[j], t); u += p[j] * q[j + 1]; }")
  end)
  it("flags a template hole the pattern cannot bind", function()
    local g = match.generalize_edits({
      { before = "for (int i = 0; i < n; ++i) s += a[i];", after = "#pragma unroll 4\nfor (int i = 0; i < n; ++i) s += a[i];" },
      { before = "for (int j = 0; j < m; ++j) s += b[j];", after = "#pragma unroll 8\nfor (int j = 0; j < m; ++j) s += b[j];" },
    })
    expect(g.template_error):contains("$")
  end)
  it("generalizes matches found in code", function()
    local p = assert(match.compile("for (...) $S"))
    local ms = p:find(kernel)
    local g = match.generalize(ms)
    -- n and 16 differ in kind (an identifier, a literal): an expression hole
    expect(g.text):equals("for (int j = 0; j < $X1; ++j) a[i] += b[j] * $X2;")
    expect(#g.pattern:find(kernel)):equals(2)
  end)
end)

describe("klineage match (CLI)", function()
  local cmd = require "klineage.cli.commands.match"
  local function run(argv)
    local out, err = {}, {}
    local env = {
      stdout = { write = function(_, s) out[#out + 1] = s end },
      stderr = { write = function(_, s) err[#err + 1] = s end },
    }
    local ok, code = pcall(cmd.run, argv, env)
    if not ok then
      if type(code) == "table" and code.usage then return 2, table.concat(out), code.usage end
      error(code, 0)
    end
    return code, table.concat(out), table.concat(err)
  end
  local path = os.tmpname()
  local h = io.open(path, "w")
  h:write(kernel)
  h:close()
  it("prints matches grep-like with bindings", function()
    local code, out = run({ "__syncthreads();", path })
    expect(code):equals(0)
    expect(out):contains(path .. ":5:3: __syncthreads();")
    local c2, o2 = run({ "for (int $i = 0; $i < 16; ++$i) $S", path })
    expect(c2):equals(0)
    expect(o2):contains("    $S = a[i] += b[j] * 3.0f;")
  end)
  it("reads the pattern and the template from files", function()
    local dir = golden .. "/move_barrier/"
    local code, out = run({ "--pattern-file", dir .. "pattern", dir .. "in.cu", "--rewrite-file", dir .. "template" })
    expect(code):equals(0)
    expect(out):contains("-  __syncthreads();\n   v = buf[threadIdx.x] * 2.0f;\n+  __syncthreads();")
  end)
  it("prints the edit script as JSON with --rewrite --json", function()
    local dir = golden .. "/move_barrier/"
    local code, out = run({ "--pattern-file", dir .. "pattern", dir .. "in.cu", "--rewrite-file", dir .. "template",
      "--json" })
    expect(code):equals(0)
    local rec = require("cjson").decode(out)
    expect(#rec.edits):equals(1)
    expect(rec.edits[1].kind):equals("move")
    expect(rec.edits[1].old.line):equals(5)
    expect(rec.edits[1].new.line):equals(6)
  end)
  it("searches the CUDA files under a folder", function()
    local code, out = run({ "if ($c) { ... __syncthreads(); ... }", golden .. "/deep_barrier" })
    expect(code):equals(0)
    expect(out):contains("deep_barrier/in.cu:5:3: if (threadIdx.x < 16)")
  end)
  it("exits 1 when nothing matches", function()
    expect((run({ "atomicAdd($p, $v)", path }))):equals(1)
  end)
  it("exits 2 with row:col and a caret on a bad pattern", function()
    local code, _, err = run({ "for (int i = 0;", path })
    expect(code):equals(2)
    expect(err):contains("1:16:")
    expect(err):contains("^")
  end)
  it("prints a unified diff for --rewrite and writes with --in-place", function()
    local code, out = run({ "__syncthreads();", path, "--rewrite", "__syncwarp();" })
    expect(code):equals(0)
    expect(out):contains("-  __syncthreads();\n+  __syncwarp();")
    expect(out):contains("@@ -2,5 +2,5 @@")
    expect((run({ "__syncthreads();", path, "--rewrite", "__syncwarp();", "--in-place" }))):equals(0)
    expect(read(path)):equals((kernel:gsub("__syncthreads", "__syncwarp")))
  end)
  os.remove(path)
end)

describe("kl.match misuse", function()
  it("raises on wrong arguments with the argument's name", function()
    local p = assert(match.compile("$x + 1"))
    expect(function() p.compiled:find(5) end):raises("kl.SourceUnit expected")
    expect(function() kmatch.generalize({}) end):raises("expected 1 to 64 instances")
    expect(function() kmatch.set({ 1 }) end):raises("entry 1 of the pattern list is a number")
    expect(function()
      p.compiled:rewrite("int f() { return a + 1; }", { text = "x", uses = { { name = "x", s = 5, e = 2 } } })
    end):raises("template use out of order")
    local u = source.parse("int f() { return a + 1; }")
    local node = p:find(u)[1].node
    do local closing <close> = u end
    expect(function() p.compiled:find(u) end):raises("source unit is closed")
    expect(function() return node.kind end):raises("closed")
  end)
  it("raises on a bad pattern table", function()
    expect(function() kmatch.pattern({ tokens = {} }):compile() end):raises("kl.match")
    expect(function() kmatch.pattern({ tokens = { { kind = "punct", text = ")" } } }):compile() end)
      :raises("unbalanced")
  end)
end)
