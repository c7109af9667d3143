-- klineage.stepdiff: hunks between adjacent versions, revertible all at
-- once (byte for byte) or one at a time (parseable, only that change
-- undone), on every step of the seven lineages and on small cases.
local stepdiff = require "klineage.stepdiff"
local workload = require "klineage.workload"
local source = require "kl.source"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local workloads = here .. "/../../gpu/workloads"
local NAMES = { "bfs", "conv2d", "raytrace", "reduction", "sgemm", "softmax", "transpose" }

local function read(path)
  local h = assert(io.open(path, "rb"))
  local s = h:read("a")
  h:close()
  return s
end

local function parse(text)
  local u, diags = source.parse(text)
  return u, #diags
end

-- Every adjacent step of every lineage: { name, i, old_text, new_text }.
local function steps()
  local out = {}
  for _, name in ipairs(NAMES) do
    local w = assert(workload.load(workloads .. "/" .. name))
    expect(#w.lineage):at_least(2)
    for i = 2, #w.lineage do
      out[#out + 1] = { name = name, i = i - 1, old = read(workloads .. "/" .. name .. "/" .. w.lineage[i - 1]),
        new = read(workloads .. "/" .. name .. "/" .. w.lineage[i]) }
    end
  end
  return out
end

local function structural(hunks)
  local n = 0
  for _, h in ipairs(hunks) do
    if not h.trivia then n = n + 1 end
  end
  return n
end

describe("stepdiff on the lineages", function()
  local all = steps()

  it("covers all seven lineages", function()
    local seen = {}
    for _, s in ipairs(all) do seen[s.name] = true end
    for _, name in ipairs(NAMES) do expect(seen[name]):is_true() end
    expect(#all):at_least(50)
  end)

  it("reverting every hunk turns vN back into vN-1, byte for byte", function()
    for _, s in ipairs(all) do
      local uo, un = parse(s.old), parse(s.new)
      local hunks = stepdiff.diff(uo, un)
      expect(structural(hunks)):at_least(1) -- every step changes code
      local text = assert(stepdiff.revert(un, hunks))
      check(text == s.old, "%s step %d: the revert is not v%d", s.name, s.i, s.i - 1)
      expect(parse(text):root():equals(uo:root())):is_true()
    end
  end)

  it("reverting one hunk alone parses and undoes only that hunk", function()
    local seams = 0
    for _, s in ipairs(all) do
      local uo, dold = parse(s.old)
      local un, dnew = parse(s.new)
      local hunks = stepdiff.diff(uo, un)
      local last_new, last_old = 0, 0
      for k, h in ipairs(hunks) do
        -- in text order on both sides, and disjoint
        expect(h.new.begin):at_least(last_new + 1)
        expect(h.old.begin):at_least(last_old + 1)
        last_new, last_old = h.new["end"], h.old["end"]
        expect(s.new:sub(h.new.begin, h.new["end"])):equals(h.new.text)
        expect(s.old:sub(h.old.begin, h.old["end"])):equals(h.old.text)
        local text = assert(stepdiff.revert(un, hunks, { k }))
        -- vN around the hunk, its old text inside (with at most a newline
        -- or a space at each seam, where vN's neighbours need one)
        local pre, post = s.new:sub(1, h.new.begin - 1), s.new:sub(h.new["end"] + 1)
        expect(text:sub(1, #pre)):equals(pre)
        expect(text:sub(#text - #post + 1)):equals(post)
        local mid = text:sub(#pre + 1, #text - #post)
        local at = mid:find(h.old.text, 1, true)
        check(at and at <= 2 and #mid - #h.old.text <= 2 and mid:sub(1, at - 1):match("^%s*$")
          and mid:sub(at + #h.old.text):match("^%s*$"), "%s step %d hunk %d: %q in place of %q", s.name, s.i, k, mid,
          h.old.text)
        seams = seams + #mid - #h.old.text
        local ur, dr = parse(text)
        check(dr <= math.max(dold, dnew), "%s step %d hunk %d: %d diagnostics after the revert", s.name, s.i, k, dr)
        -- structure changes exactly when the hunk is more than trivia
        check(ur:root():equals(un:root()) == h.trivia, "%s step %d hunk %d: trivia flag %s", s.name, s.i, k,
          tostring(h.trivia))
        -- and the result differs from vN in that hunk only
        local back = stepdiff.diff(ur, un)
        expect(#back):at_least(1)
        for _, b in ipairs(back) do
          check(b.new.begin >= h.new.begin and b.new["end"] <= h.new["end"],
            "%s step %d hunk %d (%d..%d): the diff back has %d..%d", s.name, s.i, k, h.new.begin, h.new["end"],
            b.new.begin, b.new["end"])
        end
      end
    end
  end)
end)

describe("stepdiff on small cases", function()
  it("pairs functions by name and never statements across functions", function()
    local old = "#define N 1\n__global__ void k(float *s, float v) {\n  int t = 1;\n  s[t] = v;\n  __syncthreads();\n}\n"
    local new = "#define N 1\n__device__ void put(float *s, int t, float v) {\n  s[t] = v;\n}\n"
      .. "__global__ void k(float *s, float v) {\n  int t = 1;\n  put(s, t, v);\n  __syncthreads();\n}\n"
    local hunks = stepdiff.diff(old, new)
    expect(#hunks):equals(2)
    expect(hunks[1].kind):equals("insert")
    expect(hunks[1].level):equals("item")
    expect(hunks[1].new_nodes[1]:name()):equals("put")
    expect(hunks[2].kind):equals("replace")
    expect(hunks[2].level):equals("statement")
    expect(hunks[2].old.text):equals("\n  s[t] = v;")
    expect(hunks[2].new.text):equals("\n  put(s, t, v);")
    -- anchors: the unchanged neighbours on both sides, with positions
    local a = hunks[2].anchors
    expect(a.old.prev.node:text()):equals("int t = 1;")
    expect(a.old.prev.unchanged):is_true()
    expect(a.new.next.node:text()):equals("__syncthreads();")
    expect(new:sub(a.new.next.begin, a.new.next["end"])):equals("\n  __syncthreads();")
    expect(a.old.parent.node:name()):equals("k")
    expect(stepdiff.revert(new, hunks)):equals(old)
  end)

  it("keeps a changed loop header to the changed tokens", function()
    local old = "void f() {\n  for (int s = n; s > 0; s >>= 1) {\n    a[s] += b;\n  }\n}\n"
    local new = "void f() {\n  for (int s = n; s > 32; s >>= 1) {\n    a[s] += b;\n  }\n  tail();\n}\n"
    local hunks = stepdiff.diff(old, new)
    expect(#hunks):equals(2)
    expect(hunks[1].level):equals("header")
    expect(hunks[1].old.text):equals(" 0")
    expect(hunks[1].new.text):equals(" 32")
    expect(hunks[1].anchors.new.parent.node.kind):equals("for")
    expect(hunks[2].kind):equals("insert")
    expect(hunks[2].new.text):equals("\n  tail();")
    expect(hunks[2].old.begin - 1):equals(hunks[2].old["end"])
    expect(stepdiff.revert(new, hunks, { 1 })):equals(
      "void f() {\n  for (int s = n; s > 0; s >>= 1) {\n    a[s] += b;\n  }\n  tail();\n}\n")
  end)

  it("recurses into nested bodies with the same header", function()
    local old = "void f() {\n  for (int i = 0; i < n; ++i) {\n    if (i) {\n      x = 1;\n      y = 2;\n    }\n  }\n}\n"
    local new = "void f() {\n  for (int i = 0; i < n; ++i) {\n    if (i) {\n      x = 1;\n      y = 3;\n    }\n  }\n}\n"
    local hunks = stepdiff.diff(old, new)
    expect(#hunks):equals(1)
    expect(hunks[1].old.text):equals("\n      y = 2;")
    expect(hunks[1].new.text):equals("\n      y = 3;")
    expect(hunks[1].anchors.old.prev.node:text()):equals("x = 1;")
  end)

  it("marks comment-only changes as trivia, the @kl lines among them", function()
    local old = "// @kl launch grid(n) block(256)\n#define B 256\nvoid f() { x = 1; }\n"
    local new = "// @kl launch grid(cdiv(n, 2)) block(256)\n#define B 256\nvoid f() { x = 1; /* why */ }\n"
    local hunks = stepdiff.diff(old, new)
    expect(#hunks):equals(2)
    expect(hunks[1].trivia):is_true()
    expect(hunks[1].new.text):contains("cdiv(n, 2)")
    expect(hunks[2].trivia):is_true()
    expect(stepdiff.revert(new, hunks)):equals(old)
    expect(#stepdiff.diff(old, old)):equals(0)
  end)

  it("pairs #defines by name and deletes in order at one point", function()
    local old = "#define A 1\n#define B 2\nint x;\nint y;\nint z;\n"
    local new = "#define A 1\n#define B 4\nint z;\n"
    local hunks = stepdiff.diff(old, new)
    expect(#hunks):equals(3)
    expect(hunks[1].old.text):equals("\n#define B 2")
    expect(hunks[2].kind):equals("delete")
    expect(hunks[3].kind):equals("delete")
    expect(hunks[2].new.begin):equals(hunks[3].new.begin)
    expect(stepdiff.revert(new, hunks)):equals(old)
    expect(stepdiff.revert(new, hunks, { 3, 2 })):equals("#define A 1\n#define B 4\nint x;\nint y;\nint z;\n")
  end)

  it("keeps a reverted hunk off a directive's line and apart from words", function()
    -- hunk 2's old side began the old file; alone it lands after #define P
    local old = "// v1\n#define T 32\nint x;\n"
    local new = "// v2\n#define P 4\n#define T 64\nint x;\n"
    local hunks = stepdiff.diff(old, new)
    expect(#hunks):equals(2)
    expect(hunks[2].old.text):equals("// v1\n#define T 32")
    local one = stepdiff.revert(new, hunks, { 2 })
    expect(one):equals("// v2\n#define P 4\n// v1\n#define T 32\nint x;\n")
    expect(source.parse(one):constant("P")):equals(4)
    expect(stepdiff.revert(new, hunks)):equals(old)
    -- the new side put a directive before code that had none
    hunks = stepdiff.diff("int a;int b;\n", "#define A 1\nint b;\n")
    for k = 1, #hunks do
      local text = stepdiff.revert("#define A 1\nint b;\n", hunks, { k })
      expect(text):never_contains("1int")
      expect(text):never_contains("#define A 1int")
    end
    hunks = stepdiff.diff("void f() { return x; }", "void f() { return (x); }")
    expect(#hunks):equals(1)
    expect(stepdiff.revert("void f() { return (x); }", hunks)):equals("void f() { return x; }")
  end)

  it("refuses hunks that do not fit and bad choices", function()
    local a, b, c = "void f() { x = 1; }\n", "void f() { x = 2; }\n", "void f() { y = 22; }\n"
    local hunks = stepdiff.diff(a, b)
    local text, f = stepdiff.revert(c, hunks)
    expect(text):is_nil()
    expect(f.verdict):equals("bad_input")
    expect(f.message):contains("hunk 1 does not fit")
    expect(function() stepdiff.revert(b, hunks, { 2 }) end):raises("no hunk 2")
    expect(function() stepdiff.revert(b, hunks, "1") end):raises("which must be")
    expect(function() stepdiff.revert(b, nil) end):raises("hunks must be a list")
    expect(function() stepdiff.diff(42, b) end):raises("kl.source unit or text")
    expect(stepdiff.revert(b, hunks, {})):equals(b)
  end)
end)
