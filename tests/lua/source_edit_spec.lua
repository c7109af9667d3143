-- The structured edit API of kl.source: unit:defines(), fn:launch_bounds(),
-- the edit sites of fn:params(), node:template_args(), stmt:pragmas() and
-- stmt:unroll(), unit:declarations(). Every site is read, edited with a
-- splice over its byte positions, reparsed, and read back: the edited part
-- has the new value and every other byte is the same. On every lineage
-- kernel, then on golden inputs and hostile ones.
local source = require "kl.source"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local workloads = here .. "/../../gpu/workloads"

local read = read_file -- the runner's helpers

local function lineage_files()
  local files = {}
  local p = io.popen('ls "' .. workloads .. '"/*/*.cu')
  for f in p:lines() do files[#files + 1] = f end
  p:close()
  table.sort(files)
  return files
end

-- The shared splice: edits by 1-based inclusive byte positions, applied
-- at once, overlaps refused (a refusal fails the test).
local match = require "klineage.pattern.match"
local function splice(text, edits)
  local out, failure = match.splice(text, edits)
  assert(out, failure and failure.message)
  return out
end

-- Edits from a span or an insertion point.
local function replace(span, text) return { begin = span.begin, ["end"] = span["end"], text = text } end
local function insert(at, construct)
  return { begin = at.begin, ["end"] = at["end"], text = at.prefix .. construct .. at.suffix }
end

-- The text outside [b, e] (1-based inclusive, in the old text) is the same
-- in the new text, which put `len` bytes in its place.
local function same_outside(old, new, b, e, len)
  expect(new:sub(1, b - 1) == old:sub(1, b - 1)):is_true()
  expect(new:sub(b + len) == old:sub(e + 1)):is_true()
end

local function parse(text)
  local u = source.parse(text)
  expect(tostring(u)):equals(text)
  return u
end

local function kernel_functions(u)
  local out = {}
  for _, fn in ipairs(u:functions()) do
    if not fn:info().prototype then out[#out + 1] = fn end
  end
  return out
end

local function loops(u)
  local out = {}
  for n in u:walk({ "for", "while", "do" }) do out[#out + 1] = n end
  return out
end

describe("unit:defines() on every lineage kernel", function()
  local files = lineage_files()
  it("finds the kernels", function() expect(#files):at_least(50) end)
  it("changes every integer #define and reads it back, all else unchanged", function()
    local edited = 0
    for _, file in ipairs(files) do
      local text = read(file)
      local u = parse(text)
      local defs = u:defines()
      for i, d in ipairs(defs) do
        expect(text:sub(d.name.begin, d.name["end"])):equals(d.name.text)
        expect(text:sub(d.value.begin, d.value["end"])):equals(d.value.text)
        expect(text:sub(d.directive.begin, d.directive["end"])):equals(d.directive.text)
        expect(d.directive.text:sub(1, 1)):equals("#")
        if d.value.int and not d.function_like then
          expect(u:constant(d.name.text)):equals(u:define(d.name.text).value.int)
          local new = splice(text, { replace(d.value, "77") })
          same_outside(text, new, d.value.begin, d.value["end"], 2)
          local v = parse(new)
          local back = v:defines()
          expect(#back):equals(#defs)
          expect(back[i].value.text):equals("77")
          expect(back[i].value.int):equals(77)
          for j, o in ipairs(defs) do
            if j ~= i then expect(back[j].value.text):equals(o.value.text) end
          end
          edited = edited + 1
        end
      end
    end
    expect(edited):at_least(100)
  end)
  it("removes a whole #define line and puts it back byte for byte", function()
    for _, file in ipairs(files) do
      local text = read(file)
      local u = parse(text)
      local d = u:defines()[1]
      if d then
        local new = splice(text, { replace(d.line, "") })
        expect(parse(new):define(d.name.text) == nil or u:define(d.name.text).redefined):is_true()
        local at = { begin = d.line.begin, ["end"] = d.line.begin - 1, prefix = "", suffix = "" }
        expect(splice(new, { insert(at, d.line.text) })):equals(text)
      end
    end
  end)
end)

describe("fn:launch_bounds() on every lineage kernel", function()
  it("adds and removes __launch_bounds__(256), or removes and restores the one there", function()
    local with, without = 0, 0
    for _, file in ipairs(lineage_files()) do
      local text = read(file)
      local u = parse(text)
      for k, fn in ipairs(kernel_functions(u)) do
        local lb = fn:launch_bounds()
        if lb.present then
          with = with + 1
          expect(text:sub(lb.whole.begin, lb.whole["end"])):equals(lb.whole.text)
          expect(lb.whole.text:match("^__launch_bounds__%(")):exists()
          expect(lb.max_threads.int):at_least(32)
          local dropped = splice(text, { replace(lb.whole.remove, "") })
          local v = parse(dropped)
          local back = kernel_functions(v)[k]:launch_bounds()
          expect(back.present):is_false()
          expect(kernel_functions(v)[k]:name()):equals(fn:name())
          -- putting the same text back at the insertion point restores the file
          expect(splice(dropped, { insert(back.insert, lb.whole.text) })):equals(text)
        else
          without = without + 1
          local added = splice(text, { insert(lb.insert, "__launch_bounds__(256)") })
          local v = parse(added)
          local back = kernel_functions(v)[k]:launch_bounds()
          expect(back.present):is_true()
          expect(back.max_threads.int):equals(256)
          expect(back.nargs):equals(1)
          expect(kernel_functions(v)[k]:name()):equals(fn:name())
          expect(#v:functions()):equals(#u:functions())
          expect(splice(added, { replace(back.whole.remove, "") })):equals(text)
        end
      end
    end
    expect(with):at_least(10)
    expect(without):at_least(10)
  end)
end)

describe("fn:params() edit sites on every lineage kernel", function()
  it("adds and removes const __restrict__ on every pointer parameter", function()
    local n = 0
    for _, file in ipairs(lineage_files()) do
      local text = read(file)
      local u = parse(text)
      for k, fn in ipairs(kernel_functions(u)) do
        for j, p in ipairs(fn:params()) do
          if p.stars > 0 and p.name then
            local edits = {}
            if not p.const_span then edits[#edits + 1] = insert(p.const_insert, "const") end
            if not p.restrict_span then edits[#edits + 1] = insert(p.restrict_insert, "__restrict__") end
            local added = splice(text, edits)
            local q = kernel_functions(parse(added))[k]:params()[j]
            expect(q.name):equals(p.name)
            expect(q.const):is_true()
            expect(q.restrict):is_true()
            expect(q.const_span.text):equals("const")
            expect(q.restrict_span.text):equals("__restrict__")
            expect(q.base):equals(p.base)
            expect(q.stars):equals(p.stars)
            -- removing both gives the kernel back; where the original had
            -- them, removing and adding back does too
            local removed = splice(added, { replace(q.const_span.remove, ""), replace(q.restrict_span.remove, "") })
            local r = kernel_functions(parse(removed))[k]:params()[j]
            expect(r.restrict):is_false()
            expect(r.const_span == nil):is_true()
            if #edits == 2 then expect(removed):equals(text) end
            n = n + 1
          end
        end
      end
    end
    expect(n):at_least(100)
  end)
end)

describe("stmt:unroll() and stmt:pragmas() on every lineage kernel", function()
  it("adds #pragma unroll 4 before every loop without one, and removes it", function()
    local n = 0
    for _, file in ipairs(lineage_files()) do
      local text = read(file)
      local u = parse(text)
      local ls = loops(u)
      for i, loop in ipairs(ls) do
        local un, at = loop:unroll()
        if not un then
          local added = splice(text, { insert(at, "#pragma unroll 4") })
          local v = parse(added)
          local back = loops(v)
          expect(#back):equals(#ls)
          local got = back[i]:unroll()
          expect(got.count.int):equals(4)
          expect(got.node.kind):equals("pragma")
          expect(back[i]:text()):equals(loop:text())
          expect(splice(added, { replace(got.line, "") })):equals(text)
          n = n + 1
        end
      end
    end
    expect(n):at_least(50)
  end)
  it("sets the count of every #pragma unroll to 4 and puts the old text back", function()
    local n = 0
    for _, file in ipairs(lineage_files()) do
      local text = read(file)
      local u = parse(text)
      local ls = loops(u)
      for i, loop in ipairs(ls) do
        local un = loop:unroll()
        if un then
          expect(un.directive.text:match("^#pragma%s+unroll")):exists()
          local edit = un.count and replace(un.count, "4") or insert(un.count_insert, "4")
          local new = splice(text, { edit })
          local got = loops(parse(new))[i]:unroll()
          expect(got.count.int):equals(4)
          local old = un.count and un.count.text or ""
          local undo = un.count and replace(got.count, old) or replace({ begin = got.count.begin - 1, ["end"] = got.count["end"] }, "")
          expect(splice(new, { undo })):equals(text)
          n = n + 1
        end
      end
    end
    expect(n):at_least(100)
  end)
  it("finds the pragma of an unbraced loop body that starts with #pragma", function()
    local text = read(workloads .. "/sgemm/v4_blocktile_2d.cu")
    local u = parse(text)
    local found = 0
    for _, loop in ipairs(loops(u)) do
      local un = loop:unroll()
      local prev = loop:parent()
      if un and loop.line == un.directive.line + 1 then found = found + 1 end
      expect(prev ~= nil):is_true()
    end
    expect(found):equals(#loops(u) - 1) -- one loop (k0) has no pragma
  end)
end)

describe("unit:declarations() on every lineage kernel", function()
  it("reads __shared__ arrays with their dimensions (locals through node:declaration())", function()
    local n = 0
    for _, file in ipairs(lineage_files()) do
      local text = read(file)
      local u = parse(text)
      local decls = u:nodes("decl_stmt")
      for i, d in ipairs(decls) do
        local info = d:declaration()
        if info.shared then
          for j, dc in ipairs(info.declarators) do
            for k, dim in ipairs(dc.dims) do
              expect(text:sub(dim.begin, dim["end"])):equals(dim.text)
              if dim.int then
                local new = splice(text, { replace(dim, "(" .. dim.text .. ")") })
                local back = parse(new):nodes("decl_stmt")[i]:declaration()
                expect(back.declarators[j].name.text):equals(dc.name.text)
                expect(back.declarators[j].dims[k].text):equals("(" .. dim.text .. ")")
                expect(back.declarators[j].dims[k].int):equals(dim.int)
                n = n + 1
              end
            end
          end
        end
      end
    end
    expect(n):at_least(20)
  end)
end)

describe("golden edits", function()
  it("adds and removes const __restrict__ exactly", function()
    local text = "__global__ void k(float *a, float* b, float *const c, int *, const float *__restrict__ d) {}\n"
    local u = parse(text)
    local ps = u:functions()[1]:params()
    local edits = {}
    for i = 1, 4 do
      local p = ps[i]
      if p.const_insert then edits[#edits + 1] = insert(p.const_insert, "const") end
      if p.restrict_insert then edits[#edits + 1] = insert(p.restrict_insert, "__restrict__") end
    end
    expect(ps[5].const_insert == nil and ps[5].restrict_insert == nil):is_true()
    local added = splice(text, edits)
    expect(added):equals("__global__ void k(const float *__restrict__ a, const float* __restrict__ b, "
      .. "const float *const __restrict__ c, const int * __restrict__, const float *__restrict__ d) {}\n")
    local qs = parse(added):functions()[1]:params()
    local removes = {}
    for i = 1, 5 do
      removes[#removes + 1] = replace(qs[i].const_span.remove, "")
      removes[#removes + 1] = replace(qs[i].restrict_span.remove, "")
    end
    expect(splice(added, removes)):equals("__global__ void k(float *a, float* b, float *const c, int *, float *d) {}\n")
  end)
  it("adds __launch_bounds__ after the return type and removes it", function()
    local text = "extern \"C\" __global__ void\nk(int n) {}\ntemplate <int B> __global__ void t() {}\n"
    local u = parse(text)
    local a = u:functions()[1]:launch_bounds()
    local b = u:functions()[2]:launch_bounds()
    local added = splice(text, { insert(a.insert, "__launch_bounds__(256)"), insert(b.insert, "__launch_bounds__(B, 2)") })
    expect(added):equals("extern \"C\" __global__ void __launch_bounds__(256)\nk(int n) {}\n"
      .. "template <int B> __global__ void __launch_bounds__(B, 2) t() {}\n")
    local v = parse(added)
    local la, lb = v:functions()[1]:launch_bounds(), v:functions()[2]:launch_bounds()
    expect(la.max_threads.int):equals(256)
    expect(lb.max_threads.text):equals("B")
    expect(lb.max_threads.int):is_nil()
    expect(lb.min_blocks.int):equals(2)
    expect(splice(added, { replace(la.whole.remove, ""), replace(lb.whole.remove, "") })):equals(text)
    -- change the argument in place
    local changed = splice(added, { replace(la.max_threads, "128") })
    expect(parse(changed):functions()[1]:launch_bounds().max_threads.int):equals(128)
    -- a constructor is no kernel: nowhere to add one
    local ctor = parse("struct S { S() {} };\n"):functions()[1]:launch_bounds()
    expect(ctor.present):is_false()
    expect(ctor.insert):is_nil()
  end)
  it("reads all three arguments and a __launch_bounds__ on a line of its own", function()
    local text = "#define T 64\n__global__ void\n__launch_bounds__(T * 4, 2, 1) k();\n"
    local lb = parse(text):functions()[1]:launch_bounds()
    expect(lb.nargs):equals(3)
    expect(lb.max_threads.int):equals(256)
    expect(lb.min_blocks.int):equals(2)
    expect(lb.max_cluster.int):equals(1)
    expect(lb.whole.line):equals(3)
    expect(lb.whole.col):equals(1)
    expect(splice(text, { replace(lb.whole.remove, "") })):equals("#define T 64\n__global__ void\nk();\n")
  end)
  it("changes a #define value across a continuation, keeping comments", function()
    local text = "#define BM \\\n  128 /* rows */ // per block\nint x;\n"
    local d = parse(text):define("BM")
    expect(d.value.text):equals("128")
    expect(d.value.int):equals(128)
    expect(d.value.line):equals(2)
    expect(d.value.col):equals(3)
    local new = splice(text, { replace(d.value, "64") })
    expect(new):equals("#define BM \\\n  64 /* rows */ // per block\nint x;\n")
    expect(parse(new):constant("BM")):equals(64)
  end)
  it("adds, changes and removes #pragma unroll 4 before loops", function()
    local text = "void f() {\n  for (int i = 0; i < 8; ++i)\n    for (int j = 0; j < 8; ++j) s += j;\n"
      .. "  if (c) while (x) {}\n}\n"
    local u = parse(text)
    local ls = loops(u)
    local edits = {}
    for _, l in ipairs(ls) do
      local un, at = l:unroll()
      expect(un):is_nil()
      edits[#edits + 1] = insert(at, "#pragma unroll 4")
    end
    local added = splice(text, edits)
    expect(added):equals("void f() {\n  #pragma unroll 4\n  for (int i = 0; i < 8; ++i)\n"
      .. "    #pragma unroll 4\n    for (int j = 0; j < 8; ++j) s += j;\n"
      .. "  if (c) \n#pragma unroll 4\nwhile (x) {}\n}\n")
    local v = parse(added)
    local back = loops(v)
    expect(#back):equals(3)
    local removes = {}
    for _, l in ipairs(back) do
      local un = l:unroll()
      expect(un.count.int):equals(4)
      expect(#l:pragmas()):equals(1)
      removes[#removes + 1] = replace(un.line, "")
    end
    -- the mid-line one leaves "if (c) " + "while": removing its line keeps
    -- the newline inserted before it
    expect(splice(added, removes)):equals("void f() {\n  for (int i = 0; i < 8; ++i)\n"
      .. "    for (int j = 0; j < 8; ++j) s += j;\n  if (c) \nwhile (x) {}\n}\n")
  end)
  it("reads template arguments of calls and launches", function()
    local text = "#define W 4\nvoid h() { f<128, W * 2>(x); k<T, 8><<<g, b>>>(y); g(x); }\n"
    local u = parse(text)
    local call = u:nodes("call")[1]
    local ta = call:template_args()
    expect(ta.whole.text):equals("<128, W * 2>")
    expect(#ta.args):equals(2)
    expect(ta.args[1].int):equals(128)
    expect(ta.args[2].int):equals(8)
    local la = u:nodes("launch")[1]:template_args()
    expect(la.args[1].text):equals("T")
    expect(la.args[1].int):is_nil()
    expect(la.args[2].int):equals(8)
    expect(u:nodes("call")[2]:template_args()):is_nil()
    local new = splice(text, { replace(ta.args[1], "256"), replace(la.args[2], "16") })
    expect(new):equals("#define W 4\nvoid h() { f<256, W * 2>(x); k<T, 16><<<g, b>>>(y); g(x); }\n")
    local v = parse(new)
    expect(v:nodes("call")[1]:template_args().args[1].int):equals(256)
    expect(v:nodes("launch")[1]:template_args().args[2].int):equals(16)
  end)
  it("reads and edits template parameters and their defaults", function()
    local text = "#define W 2\ntemplate <int BM = 64 * W, typename T, int BN>\n__global__ void k(T *x) {}\n"
      .. "template <class T> struct S;\nvoid g() {}\n"
    local u = parse(text)
    local tp = u:functions()[1]:template_params()
    expect(tp.whole.text):equals("template <int BM = 64 * W, typename T, int BN>")
    expect(#tp.params):equals(3)
    expect(tp.params[1].kind):equals("value")
    expect(tp.params[1].name.text):equals("BM")
    expect(tp.params[1].default.int):equals(128)
    expect(tp.params[2].kind):equals("type")
    expect(tp.params[2].default):is_nil()
    expect(tp.params[3].default_insert.prefix):equals(" = ")
    expect(u:nodes("struct")[1]:template_params().params[1].kind):equals("type")
    expect(u:functions()[2]:template_params()):is_nil()
    local new = splice(text, { replace(tp.params[1].default, "256"), insert(tp.params[3].default_insert, "8") })
    expect(new):equals("#define W 2\ntemplate <int BM = 256, typename T, int BN = 8>\n__global__ void k(T *x) {}\n"
      .. "template <class T> struct S;\nvoid g() {}\n")
    local back = parse(new):functions()[1]:template_params()
    expect(back.params[1].default.int):equals(256)
    expect(back.params[3].default.int):equals(8)
  end)
  it("reads top-level declarations, inside extern \"C\" and namespaces too", function()
    local text = "#define BM 64\n__shared__ __align__(16) float tile[BM][BM + 1];\n"
      .. "extern \"C\" { __constant__ float w[9]; }\nnamespace a { namespace b { static constexpr int kW = BM / 2; } }\n"
      .. "extern __shared__ float dyn[];\ntypedef int I;\nvoid f() { __shared__ int local[4]; }\n"
    local u = parse(text)
    local ds = u:declarations()
    expect(#ds):equals(5)
    expect(ds[1].shared):is_true()
    expect(ds[1].base.text):equals("float")
    expect(ds[1].qualifiers[1].text):equals("__shared__")
    expect(ds[1].declarators[1].name.text):equals("tile")
    expect(ds[1].declarators[1].dims[1].int):equals(64)
    expect(ds[1].declarators[1].dims[2].int):equals(65)
    expect(ds[2].constant):is_true()
    expect(ds[2].declarators[1].dims[1].int):equals(9)
    expect(ds[3].static and ds[3].constexpr):is_true()
    expect(ds[3].declarators[1].init.int):equals(32)
    expect(ds[4].extern and ds[4].shared):is_true()
    expect(ds[4].declarators[1].dims[1].text):equals("")
    expect(ds[5].alias):is_true()
    -- change a dimension, drop a qualifier, add one
    local new = splice(text, {
      replace(ds[1].declarators[1].dims[2], "BM"),
      replace(ds[3].qualifiers[1].remove, ""),
      insert(ds[2].qualifier_insert, "static"),
    })
    local v = parse(new)
    local es = v:declarations()
    expect(es[1].declarators[1].dims[2].int):equals(64)
    expect(es[2].static and es[2].constant):is_true()
    expect(es[3].static):is_false()
    expect(es[3].constexpr):is_true()
    expect(v:nodes("decl_stmt")[1]:declaration().declarators[1].dims[1].int):equals(4)
  end)
end)

describe("hostile input", function()
  it("reads #  define, comments between the words, continuations, empty and non-integer values", function()
    local text = "#  define A 4\n# /* c */ define B (A * 2) // trailing\n#define C \\\n  (A + 1)   /* tail */\n"
      .. "#define E\n#define FL 1.5f\n#define S \"x // y\"\n#define F(x, ...) ((x) + 1)\n#define G (x)\n"
    local u = parse(text)
    local d = {}
    for _, x in ipairs(u:defines()) do d[x.name.text] = x end
    expect(d.A.value.int):equals(4)
    expect(d.B.value.text):equals("(A * 2)")
    expect(d.C.value.text):equals("(A + 1)")
    expect(d.C.value.int):equals(5)
    expect(d.C.directive.text):equals("#define C \\\n  (A + 1)   /* tail */")
    expect(d.C.line.text):equals("#define C \\\n  (A + 1)   /* tail */\n")
    expect(d.E.value.text):equals("")
    expect(d.E.value["end"]):equals(d.E.value.begin - 1)
    expect(d.FL.value.int):is_nil()
    expect(d.FL.value.text):equals("1.5f")
    expect(d.S.value.text):equals("\"x // y\"")
    expect(d.F.function_like):is_true()
    expect(d.F.value.int):is_nil()
    expect(#d.F.params):equals(2)
    expect(d.F.params[2].text):equals("...")
    expect(d.G.function_like):is_false() -- a space before '(': object-like
    -- an empty value can be given one
    local new = splice(text, { insert({ begin = d.E.value.begin, ["end"] = d.E.value["end"], prefix = " ", suffix = "" }, "9") })
    expect(parse(new):constant("E")):equals(9)
  end)
  it("does not count an include guard as a conditional", function()
    local text = "#ifndef K_CUH\n#define K_CUH\n#define BM 64\n#if X\n#define BN 8\n#endif\n#define BK 4\n#endif\n#define AFTER 1\n"
    local d = {}
    for _, x in ipairs(parse(text):defines()) do d[x.name.text] = x end
    expect(d.K_CUH.conditional):is_false()
    expect(d.BM.conditional):is_false()
    expect(d.BN.conditional):is_true()
    expect(d.BK.conditional):is_false()
    expect(d.AFTER.conditional):is_false()
    -- #ifndef A then #define B is a conditional
    local e = parse("#ifndef A\n#define B 1\n#endif\n"):defines()[1]
    expect(e.conditional):is_true()
  end)
  it("flags redefinitions, #undef, conditionals and defines inside functions", function()
    local text = "#define N 4\n#ifdef X\n#define N 8\n#endif\n#define M 1\n#undef M\n"
      .. "void f() {\n#define IN 3\n#pragma unroll N\n  for (;;) {}\n}\n#define N 16\n"
    local u = parse(text)
    local ds = u:defines()
    expect(#ds):equals(5)
    expect(ds[1].redefined):is_true()
    expect(ds[1].same_name):equals(3)
    expect(ds[2].conditional):is_true()
    expect(ds[1].conditional):is_false()
    expect(ds[3].name.text):equals("M")
    expect(ds[3].redefined):is_true() -- #undef M counts
    expect(ds[4].in_function):is_true()
    expect(ds[5].in_function):is_false()
    expect(u:define("N").value.int):equals(16)
    -- the pragma sees the N defined before it, not the later one
    expect(u:nodes("for")[1]:unroll().count.int):equals(8)
  end)
  it("finds pragmas of unbraced bodies however the parser attaches them", function()
    local text = "void f() {\n  for (int i = 0; i < 4; ++i)\n#pragma unroll\n    for (int j = 0; j < 4; ++j)\n"
      .. "#pragma unroll 2\n      while (k) s;\n  if (c)\n#pragma unroll (8)\n    do {} while (0);\n}\n"
    local u = parse(text)
    local ls = loops(u)
    expect(#ls):equals(4)
    expect(ls[1]:unroll()):is_nil()
    local inner = ls[2]:unroll()
    expect(inner.count):is_nil()
    expect(ls[3]:unroll().count.int):equals(2)
    expect(ls[4]:unroll().count.int):equals(8)
    expect(ls[4]:unroll().count.text):equals("(8)")
    -- give the count-less one a count
    local new = splice(text, { insert(inner.count_insert, "4") })
    expect(new:find("#pragma unroll 4\n    for (int j", 1, true)):exists()
    expect(loops(parse(new))[2]:unroll().count.int):equals(4)
    -- an expression's first node has no pragmas: only the statement does
    local v = parse("void f() {\n#pragma unroll\n  x = 1;\n}\n")
    expect(#v:nodes("expr_stmt")[1]:pragmas()):equals(1)
    expect(#v:nodes("assign")[1]:pragmas()):equals(0)
    expect(#v:nodes("ident")[1]:pragmas()):equals(0)
    local w = parse("#pragma once\ntemplate <int N> void g() {\n#pragma unroll\n  int a = 1;\n}\n")
    expect(#w:functions()[1]:pragmas()):equals(1)
    expect(#w:nodes("template")[1]:pragmas()):equals(0)
    expect(#w:nodes("decl_stmt")[1]:pragmas()):equals(1)
    expect(#w:nodes("decl")[1]:pragmas()):equals(0)
    expect(#w:nodes("type")[1]:pragmas()):equals(0)
  end)
  it("inserts a pragma line after a comment line, never inside a block comment", function()
    local text = "void f() {\n  // note\n  for (;;) {}\n  /* a\n   b */ for (;;) {}\n}\n"
    local u = parse(text)
    local _, a = u:nodes("for")[1]:pragmas()
    local _, b = u:nodes("for")[2]:pragmas()
    local new = splice(text, { insert(a, "#pragma unroll 4"), insert(b, "#pragma unroll 4") })
    expect(new):equals("void f() {\n  // note\n  #pragma unroll 4\n  for (;;) {}\n  /* a\n   b */ \n#pragma unroll 4\nfor (;;) {}\n}\n")
    local v = parse(new)
    expect(v:nodes("for")[1]:unroll().count.int):equals(4)
    expect(v:nodes("for")[2]:unroll().count.int):equals(4)
  end)
  it("keeps CRLF line ends", function()
    local text = "#define BM 128\r\nvoid f() {\r\n  for (;;) {}\r\n}\r\n"
    local u = parse(text)
    local d = u:define("BM")
    expect(d.value.text):equals("128")
    expect(d.line.text):equals("#define BM 128\r\n")
    local _, at = u:nodes("for")[1]:pragmas()
    local new = splice(text, { insert(at, "#pragma unroll 4") })
    expect(new):equals("#define BM 128\r\nvoid f() {\r\n  #pragma unroll 4\r\n  for (;;) {}\r\n}\r\n")
    local un = parse(new):nodes("for")[1]:unroll()
    expect(un.count.int):equals(4)
    expect(splice(new, { replace(un.line, "") })):equals(text)
    expect(splice(text, { replace(d.line, "") })):equals("void f() {\r\n  for (;;) {}\r\n}\r\n")
  end)
  it("survives malformed directives and heads", function()
    for _, text in ipairs({
      "#define", "#define 1 2", "#define X(", "#define X(a, b", "# define\\\n Y 3", "#pragma", "#pragma unroll",
      "#pragma unroll (", "__global__ void __launch_bounds__ k();", "__global__ void __launch_bounds__( k() {}",
      "__global__ void __launch_bounds__(,) k();", "void f(float *", "template <int N> f<N>(", "\xff#define\xfe X 1",
      "#define A \\", "#define B /* open", "void f() { for (;;)\n#pragma unroll", "extern \"C\" { __shared__ float s[",
    }) do
      local u = parse(text)
      for _, d in ipairs(u:defines()) do
        expect(text:sub(d.value.begin, d.value["end"])):equals(d.value.text)
        expect(d.line.begin):at_least(1)
        expect(d.line["end"]):at_most(#text)
      end
      for _, fn in ipairs(u:functions()) do
        local lb = fn:launch_bounds()
        if lb.present then expect(text:sub(lb.whole.begin, lb.whole["end"])):equals(lb.whole.text) end
        for _, p in ipairs(fn:params()) do
          if p.const_span then expect(p.const_span.text):equals("const") end
        end
      end
      for n in u:walk() do
        local ps, at = n:pragmas()
        expect(at.begin):at_least(1)
        expect(at.begin):at_most(#text + 1)
        for _, p in ipairs(ps) do expect(p:pragma_info().directive.text:sub(1, 1)):equals("#") end
        if n.kind == "call" or n.kind == "launch" then n:template_args() end
      end
      u:declarations()
    end
    expect(#parse("#define X(a, b"):defines()[1].params):equals(2)
  end)
  it("raises on misuse", function()
    local u = parse("#pragma once\nint x;\nvoid f() {}\n")
    expect(function() u:nodes("decl")[1]:launch_bounds() end):raises("not a function node")
    expect(function() u:functions()[1]:pragma_info() end):raises("not a pragma node")
    expect(function() u:functions()[1]:declaration() end):raises("not a decl")
    expect(function() u:define() end):raises("string expected")
    expect(u:nodes("pragma")[1]:pragma_info().name.text):equals("once")
  end)
  it("keeps the work linear on many defines and pragmas", function()
    local parts = {}
    for i = 1, 20000 do parts[#parts + 1] = "#define N" .. i .. " " .. i .. "\n#pragma unroll N" .. i .. "\n" end
    parts[#parts + 1] = "void f() { for (;;) {} }\n"
    local u = parse(table.concat(parts))
    local ds = u:defines()
    expect(#ds):equals(20000)
    expect(ds[20000].value.int):equals(20000)
    expect(ds[1].same_name):equals(1)
    expect(#u:nodes("for")[1]:pragmas()):equals(0)
    local ps = u:functions()[1]:pragmas()
    expect(#ps):equals(1)
    expect(ps[1]:pragma_info().count.int):equals(20000)
    -- one name defined 50k times: each define counts the others in log time
    local same = parse(string.rep("#define X 1\n", 50000)):defines()
    expect(#same):equals(50000)
    expect(same[1].same_name):equals(50000)
    expect(same[50000].redefined):is_true()
  end)
end)

-- Every edit of this file on outside code (read-only, never in the
-- repository): KL_EDIT_CORPUS=/work/corpus klineage test .../source_edit_spec.lua
-- prints the sites found and asserts that every edit reads back and undoes.
local function roundtrip(file, text, stats, fails)
  local function count(k) stats[k] = (stats[k] or 0) + 1 end
  local function fail(what, line) fails[#fails + 1] = what .. " " .. file .. ":" .. tostring(line) end
  local u = source.parse(text)
  for _, d in ipairs(u:defines()) do
    count("defines")
    if text:sub(d.value.begin, d.value["end"]) ~= d.value.text then fail("define span", d.name.line) end
    if d.value.int and not d.function_like and not d.redefined then
      count("define edits")
      local new = splice(text, { replace(d.value, "77") })
      local back = source.parse(new):define(d.name.text)
      if not back or back.value.int ~= 77 or splice(new, { replace(back.value, d.value.text) }) ~= text then
        fail("define edit", d.name.line)
      end
    end
  end
  local fs = u:functions()
  for k, fn in ipairs(fs) do
    local lb = fn:launch_bounds()
    if fn:info().global then
      count("kernels")
      if lb.present then
        count("launch_bounds removed")
        local dropped = splice(text, { replace(lb.whole.remove, "") })
        local back = source.parse(dropped):functions()[k]
        local restored = back and not back:launch_bounds().present and splice(dropped, { insert(back:launch_bounds().insert, lb.whole.text) })
        local again = restored and source.parse(restored):functions()[k]
        if not again or again:launch_bounds().whole.text ~= lb.whole.text or again:name() ~= fn:name() then
          fail("launch_bounds remove", fn.line)
        end
      elseif lb.insert then
        count("launch_bounds added")
        local added = splice(text, { insert(lb.insert, "__launch_bounds__(256)") })
        local back = source.parse(added):functions()[k]
        local b = back and back:launch_bounds()
        if not b or not b.present or b.max_threads.int ~= 256 or back:name() ~= fn:name()
          or splice(added, { replace(b.whole.remove, "") }) ~= text then
          fail("launch_bounds add", fn.line)
        end
      end
    end
    for j, p in ipairs(fn:params()) do
      if p.stars > 0 and p.name and (p.const_insert or p.restrict_insert) then
        count("pointer params")
        local e = {}
        if p.const_insert then e[#e + 1] = insert(p.const_insert, "const") end
        if p.restrict_insert then e[#e + 1] = insert(p.restrict_insert, "__restrict__") end
        local added = splice(text, e)
        local back = source.parse(added):functions()[k]
        local q = back and back:params()[j]
        if not q or not q.const_span or not q.restrict_span or q.name ~= p.name then
          fail("param add", fn.line)
        else
          local r = {}
          if p.const_insert then r[#r + 1] = replace(q.const_span.remove, "") end
          if p.restrict_insert then r[#r + 1] = replace(q.restrict_span.remove, "") end
          if splice(added, r) ~= text then fail("param remove", fn.line) end
        end
      end
    end
  end
  local ls = loops(u)
  for i, l in ipairs(ls) do
    count("loops")
    local _, at = l:unroll()
    local added = splice(text, { insert(at, "#pragma unroll 4") })
    local back = loops(source.parse(added))
    local got = #back == #ls and back[i]:unroll()
    -- a pragma put mid-line leaves its line break when removed
    local want = at.prefix == "\n" and splice(text, { { begin = at.begin, ["end"] = at["end"], text = "\n" } }) or text
    if not got or not got.count or got.count.int ~= 4 or splice(added, { replace(got.line, "") }) ~= want then
      fail("pragma add", l.line)
    end
  end
  for _, d in ipairs(u:declarations()) do
    count("declarations")
    for _, dc in ipairs(d.declarators) do
      for _, dim in ipairs(dc.dims) do
        if text:sub(dim.begin, dim["end"]) ~= dim.text then fail("dim span", dim.line) end
      end
    end
  end
end

describe("outside corpus (KL_EDIT_CORPUS)", function()
  local root = os.getenv("KL_EDIT_CORPUS")
  if not root then
    it.skip("round-trips every edit site of every .cu/.cuh file", "set KL_EDIT_CORPUS to a folder of CUDA sources")
    return
  end
  it("round-trips every edit site of every .cu/.cuh file", function()
    local stats, fails, files = {}, {}, 0
    local p = io.popen("find '" .. root:gsub("'", "'\\''") .. "' -type f \\( -name '*.cu' -o -name '*.cuh' \\) | sort")
    for file in p:lines() do
      files = files + 1
      roundtrip(file, read(file), stats, fails)
    end
    p:close()
    local keys = {}
    for k in pairs(stats) do keys[#keys + 1] = k end
    table.sort(keys)
    print(string.format("%-24s %d", "files", files))
    for _, k in ipairs(keys) do print(string.format("%-24s %d", k, stats[k])) end
    for i = 1, math.min(#fails, 20) do print("FAIL " .. fails[i]) end
    expect(files):at_least(1)
    expect(#fails):equals(0)
  end)
end)
