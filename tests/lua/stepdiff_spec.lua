-- klineage.pattern.stepdiff: hunks between adjacent versions, revertible all at
-- once (byte for byte) or one at a time (parseable, only that change
-- undone), on every step of the seven lineages and on small cases.
local stepdiff = require "klineage.pattern.stepdiff"
local workload = require "klineage.workload"
local source = require "kl.source"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local workloads = here .. "/../../gpu/workloads"
local NAMES = { "bfs", "conv2d", "raytrace", "reduction", "sgemm", "softmax", "transpose" }

local read = read_file -- the runner's helpers

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
        local before = s.new:sub(1, h.new.begin - 1)
        expect(h.new.line):equals(select(2, before:gsub("\n", "")) + 1)
        expect(h.new.col):equals(h.new.begin - (before:match(".*\n()") or 1) + 1)
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

  it("stays bounded and exact on long lists, deep nesting and garbage", function()
    local function body(n, changed)
      local t = {}
      for i = 1, n do t[i] = string.format("  a[%d] = %d;", i, (changed and i % 2 == 0) and -i or i) end
      return "void f() {\n" .. table.concat(t, "\n") .. "\n}\n"
    end
    for _, n in ipairs({ 900, 3000 }) do -- under and over MAX_CELLS
      local old, new = body(n), body(n, true)
      local hunks = stepdiff.diff(old, new)
      expect(#hunks):at_least(1)
      expect(stepdiff.revert(new, hunks)):equals(old)
      if n * n <= stepdiff.MAX_CELLS then expect(#hunks):equals(n // 2) end
    end
    local depth = stepdiff.MAX_DEPTH + 50
    local function nest(x)
      return "void f() {\n" .. string.rep("if (c) {\n", depth) .. x .. string.rep("}\n", depth) .. "}\n"
    end
    local old, new = nest("x = 1;\n"), nest("x = 2;\n")
    local hunks = stepdiff.diff(old, new)
    expect(#hunks):equals(1)
    expect(stepdiff.revert(new, hunks)):equals(old)
    local rng = 12345
    local function junk(n)
      local t = {}
      for i = 1, n do
        rng = (rng * 1103515245 + 12345) % 2147483648
        t[i] = string.char(rng % 256)
      end
      return table.concat(t)
    end
    for _ = 1, 20 do
      local a, b = junk(400), junk(400)
      expect(stepdiff.revert(b, stepdiff.diff(a, b))):equals(a)
      local c = a:sub(1, 200) .. "{ x; }" .. a:sub(201)
      expect(stepdiff.revert(c, stepdiff.diff(a, c))):equals(a)
    end
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

-- The node-level script beside the step diff: engine/match/diff.c.
describe("match.diff on the lineages", function()
  local match = require "klineage.pattern.match"
  local function function_name(n)
    while n do
      if n.kind == "function" then return n:name() end
      n = n:parent()
    end
    return nil
  end

  it("gives inserts, deletes and moves a position on the other side", function()
    local a = "void f() {\n  x = 1;\n  y = 2;\n  z = g(3);\n}\n"
    local b = "void f() {\n  z = g(3);\n  x = 1;\n  y = 5;\n  w();\n}\n"
    local seen = {}
    for _, op in ipairs(match.diff(a, b)) do
      seen[op.kind] = op
    end
    -- w() goes after y = 2 in a; z moved: before x = 1 in a, after y = 5 in b
    expect(a:sub(1, seen.insert.a_at.byte - 1)):matches("y = 2;$")
    expect(seen.insert.a_at.line):equals(3)
    expect(seen.insert.a_at.col):equals(9)
    expect(seen.insert.b_at):is_nil()
    expect(a:sub(seen.move.a_at.byte)):matches("^x = 1;")
    expect(b:sub(1, seen.move.b_at.byte - 1)):matches("y = 5;$")
    local c = "void f() {\n  x = 1;\n  z = g(3);\n}\n"
    local del = match.diff(a, c)[1]
    expect(del.kind):equals("delete")
    expect(c:sub(1, del.b_at.byte - 1)):matches("x = 1;$")
    expect(del.a_at):is_nil()
    -- into an emptied block: after its brace
    local m1 = "void f() {\n  if (c) {\n    x = 1;\n  }\n  y = 2;\n}\n"
    local m2 = "void f() {\n  if (c) {\n  }\n  y = 2;\n  x = 1;\n}\n"
    local mv = match.diff(m1, m2)[1]
    expect(m2:sub(1, mv.b_at.byte - 1)):matches("if %(c%) {$")
    expect(m1:sub(1, mv.a_at.byte - 1)):matches("y = 2;$")
  end)

  it("never pairs across functions, never lists a moved node's children, always places", function()
    local moved_children, across, unplaced, total = 0, 0, 0, 0
    for _, name in ipairs(NAMES) do
      local w = assert(workload.load(workloads .. "/" .. name))
      for i = 2, #w.lineage do
        local ops = match.diff(read(workloads .. "/" .. name .. "/" .. w.lineage[i - 1]),
          read(workloads .. "/" .. name .. "/" .. w.lineage[i]))
        local moved = {}
        for _, op in ipairs(ops) do
          if op.kind == "move" then moved[op.a.id .. ":" .. op.b.id] = true end
        end
        for _, op in ipairs(ops) do
          total = total + 1
          if op.kind == "move" and moved[op.a:parent().id .. ":" .. op.b:parent().id] then
            moved_children = moved_children + 1
          end
          if op.a and op.b and function_name(op.a) ~= function_name(op.b) then across = across + 1 end
          if (op.kind == "insert" or op.kind == "move") and not op.a_at then unplaced = unplaced + 1 end
          if (op.kind == "delete" or op.kind == "move") and not op.b_at then unplaced = unplaced + 1 end
        end
      end
    end
    expect(total):at_least(500)
    expect(moved_children):equals(0)
    expect(across):equals(0)
    expect(unplaced):equals(0)
  end)

  it("keeps reduction v1->v2 and v3->v4 to their real edits", function()
    local dir = workloads .. "/reduction/"
    local ops = match.diff(read(dir .. "v1_strided_index.cu"), read(dir .. "v2_sequential.cu"))
    local moves = 0
    for _, op in ipairs(ops) do
      if op.kind == "move" then moves = moves + 1 end
    end
    expect(moves):at_most(2) -- was 25 of 30 ops
    ops = match.diff(read(dir .. "v3_first_add_on_load.cu"), read(dir .. "v4_unroll_last_warp.cu"))
    local inserted = 0
    for _, op in ipairs(ops) do
      -- the new helper is inserted whole: nothing of the kernel moved into it
      if op.a and op.b then expect(function_name(op.b) == "warp_reduce"):is_false() end
      if op.kind == "insert" and op.node_kind == "function" then inserted = inserted + 1 end
    end
    expect(inserted):equals(1)
  end)
end)
