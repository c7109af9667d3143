-- The skill repository: records (klineage.skills.record), their text
-- (serialize), the folder (store), English (explain), matching a kernel
-- (match) and `klineage skills`. The records under tests/skills/ are
-- hand-written fixtures, not learned skills.
local record = require "klineage.skills.record"
local serialize = require "klineage.skills.serialize"
local store = require "klineage.skills.store"
local explain = require "klineage.skills.explain"
local smatch = require "klineage.skills.match"
local fs = require "kl.fs"
local testing = require "klineage.cli.testing"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local FIXTURES = here .. "/../skills/sm_90"
local home = require("kl.host").home
local SGEMM = home .. "/gpu/workloads/sgemm"

local function deep_copy(t)
  if type(t) ~= "table" then return t end
  local c = {}
  for k, v in pairs(t) do c[k] = deep_copy(v) end
  return c
end

-- Deep equality that tells 3 from 3.0 (testing's equals does not).
local function same(a, b, path)
  path = path or "record"
  if type(a) ~= type(b) then return false, path .. ": " .. type(a) .. " vs " .. type(b) end
  if type(a) == "number" and math.type(a) ~= math.type(b) then return false, path .. ": " .. math.type(a) .. " vs " .. math.type(b) end
  if type(a) ~= "table" then
    if a == b then return true end
    return false, path .. ": " .. tostring(a) .. " vs " .. tostring(b)
  end
  for k, v in pairs(a) do
    local ok, why = same(v, b[k], path .. "." .. tostring(k))
    if not ok then return false, why end
  end
  for k in pairs(b) do
    if a[k] == nil then return false, path .. "." .. tostring(k) .. ": only on one side" end
  end
  return true
end

local TRICKY = "quote \" backslash \\ newline\nreturn\r tab\t ]] [[ ]=] NUL\0 bell\7 del\127 é ≥ 日本 bad\255\192\128 digit\0019"

-- A record with every field kind the schema has.
local function full_record()
  return {
    schema = 1, id = "every_field-1", arch = "sm_90", status = "learned",
    intent = "stage a reused operand in shared memory; " .. TRICKY,
    materialize = { transform = "smem_tiling", params = { BK = 8, SCALE = 3.0, NAME = "x", ON = true } },
    pattern = { transform = "smem_tiling" },
    preconditions = {
      { "size.N.div8", "==", true, support = { helped = 3, not_helped = 0 },
        evidence = { { run = "r1", key = "k1" } } },
      { "occupancy_after", ">=", 0.25, why = TRICKY },
    },
    guards = {
      { "registers_after", ">", 128, source = "walk", why = "slowed sgemm v5 by 1.3x", support = { helped = 0, not_helped = 1 } },
      { "occupancy.limited_by", "==", "registers", source = "probe" },
    },
    effect = { speedup = { median = 1.45, min = 1.1, max = 1.9, n = 3 },
               resources = { registers = 6, smem_per_block = 8192, occupancy = -0.25 }, metrics = { dram_pct = -41.5 } },
    confidence = { supporting = 3, contradicting = 1, level = "low" },
    evidence = {
      { run = "walk-sgemm", key = "dc917f79", candidate = "ab", lineage = "sgemm", step = "v1 -> v2", outcome = "helped",
        speedup = 1.448, ci = { 1.44, 1.46 }, measured = true, params = { BK = 8 }, kind = "walk_step" },
      { run = "walk-sgemm", key = "zz", outcome = "hurt", speedup = 0.1 + 0.2, measured = false },
    },
    example = { before = TRICKY, after = "a\n]]\n" },
  }
end

describe("serialize", function()
  it("round-trips a record with every field kind and tricky strings, deterministically", function()
    local r = full_record()
    expect(select(2, record.validate(r))):is_nil()
    local text = assert(serialize.record(r))
    expect(text:sub(1, #serialize.HEADER)):equals(serialize.HEADER)
    check(not text:find("[%z\1-\9\11-\31\127]"), "a raw control byte in the text")
    local back = assert(load(text, "=record", "t", {}))()
    local ok, why = same(r, back)
    check(ok, "round trip differs: %s", tostring(why))
    expect(serialize.record(back)):equals(text)
    expect(serialize.record(deep_copy(r))):equals(text)
    expect(math.type(back.materialize.params.SCALE)):equals("float")
    expect(math.type(back.materialize.params.BK)):equals("integer")
    expect(back.evidence[2].speedup):equals(0.1 + 0.2)
  end)

  it("writes sorted keys, two-space indentation and short lists on one line", function()
    local text = assert(serialize.record({ b = 1, a = { 1, 2, "x" }, ["not ident"] = true, ["end"] = 2.0, c = { d = {} } }))
    expect(text):contains('return {\n  a = { 1, 2, "x" },\n  b = 1,\n  c = {\n    d = {},\n  },\n  ["end"] = 2.0,\n  ["not ident"] = true,\n}\n')
  end)

  it("writes the integer extremes and odd floats so they read back the same", function()
    local t = { math.mininteger, math.maxinteger, -0.0, 1e300, 5e-324, 2^53 + 0.0, 1 / 3 }
    local back = assert(load(assert(serialize.value(t)) and ("return " .. serialize.value(t)), "=v", "t", {}))()
    for i = 1, #t do
      expect(math.type(back[i])):equals(math.type(t[i]))
      expect(back[i]):equals(t[i])
    end
  end)

  it("round-trips random nested tables of random bytes and numbers (fixed seed)", function()
    math.randomseed(20261202)
    local function rand_string()
      local b = {}
      for i = 1, math.random(0, 12) do b[i] = string.char(math.random(0, 255)) end
      return table.concat(b)
    end
    local function rand_scalar()
      local k = math.random(1, 5)
      if k == 1 then return math.random(math.mininteger, math.maxinteger) end
      if k == 2 then return (math.random() - 0.5) * 10 ^ math.random(-300, 300) end
      if k == 3 then return math.random(0, 1) == 1 end
      if k == 4 then return math.random(-5, 5) + 0.0 end
      return rand_string()
    end
    local function rand_table(depth)
      local t = {}
      for i = 1, math.random(0, 4) do t[i] = depth < 3 and math.random(1, 3) == 1 and rand_table(depth + 1) or rand_scalar() end
      for _ = 1, math.random(0, 4) do
        t[rand_string() .. "k"] = depth < 3 and math.random(1, 3) == 1 and rand_table(depth + 1) or rand_scalar()
      end
      return t
    end
    for _ = 1, 200 do
      local t = rand_table(0)
      local text = assert(serialize.record(t))
      local back = assert(load(text, "=random", "t", {}))()
      local ok, why = same(t, back)
      if not ok then fail("round trip differs: %s\n%s", why, text) end
      expect(serialize.record(back)):equals(text)
    end
  end)

  it("refuses functions, userdata, NaN, infinities, cycles, sparse lists and odd keys, naming where", function()
    local cyc = { a = {} }
    cyc.a.back = cyc
    local cases = {
      { { f = print }, "f: a function" },
      { { x = { io.stdout } }, "x[1]: a userdata" },
      { { v = 0 / 0 }, "v: NaN" },
      { { v = -math.huge }, "v: an infinity" },
      { cyc, "a.back: a cycle" },
      { { 1, nil, 3 }, "no holes" },
      { { [1.5] = 1 }, "float key" },
      { { [true] = 1 }, "boolean key" },
    }
    for _, c in ipairs(cases) do
      local text, f = serialize.record(c[1])
      expect(text):is_nil()
      expect(f.verdict):equals("bad_input")
      expect(f.message):contains(c[2])
    end
    expect(function() serialize.record("x") end):raises("a table expected")
  end)
end)

describe("record.validate", function()
  local function message(mutate)
    local r = full_record()
    mutate(r)
    local ok, f = record.validate(r)
    expect(ok):is_nil()
    expect(f.verdict):equals("bad_input")
    return f.message
  end
  it("accepts the fixtures", function()
    local records, problems = store.load(FIXTURES)
    expect(#problems):equals(0)
    expect(#records):equals(2)
  end)
  it("names the exact bad field", function()
    expect(message(function(r) r.guards[2][2] = "=" end)):contains("guards[2][2]: op must be one of")
    expect(message(function(r) r.gaurds = {} end)):contains("gaurds: unknown field")
    expect(message(function(r) r.schema = 2 end)):contains("schema: must be 1")
    expect(message(function(r) r.id = "Smem Tiling" end)):contains("id: must be")
    expect(message(function(r) r.arch = "hopper" end)):contains("arch: must be an architecture")
    expect(message(function(r) r.preconditions[1][3] = nil end)):contains("preconditions[1][3]: missing")
    expect(message(function(r) r.preconditions[1][3] = 0 / 0 end)):contains("preconditions[1][3]: must be a finite number")
    expect(message(function(r) r.preconditions[2].whyy = "x" end)):contains("preconditions[2].whyy: unknown field")
    expect(message(function(r) r.guards[1].source = "guess" end)):contains("guards[1].source: must be one of")
    expect(message(function(r) r.evidence[2].run = nil end)):contains("evidence[2].run: missing")
    expect(message(function(r) r.evidence[1].outcome = "great" end)):contains("evidence[1].outcome: must be one of")
    expect(message(function(r) r.confidence.level = "certain" end)):contains("confidence.level: must be one of")
    expect(message(function(r) r.effect.speedup.n = 0 end)):contains("effect.speedup.n: must be a whole number >= 1")
    expect(message(function(r) r.materialize = { transform = "smem_tiling", extra = 1 } end)):contains("materialize.extra: unknown field")
    expect(message(function(r) r.pattern = {} end)):contains("pattern: must be")
    expect(message(function(r) r.status = "transferred" end)):contains("transferred_from: missing")
    expect(message(function(r) r.guards[3] = nil; r.guards[4] = { "x", "<", 1 } end)):matches("guards%[%d%]: a list has")
  end)
end)

-- A fresh folder holding the fixtures and the given extra files.
local function repo_with(extra)
  local dir = scratch_dir()
  for _, name in ipairs(fs.list(FIXTURES)) do write_file(dir .. "/" .. name, read_file(FIXTURES .. "/" .. name)) end
  for name, text in pairs(extra or {}) do write_file(dir .. "/" .. name, text) end
  return dir
end

local function problem_of(problems, name)
  for _, p in ipairs(problems) do
    if p.path:sub(-#name) == name then return p.message end
  end
end

describe("store.load", function()
  it("loads a folder sorted by id and refuses a folder that is not there", function()
    local records = assert(store.load(FIXTURES))
    expect(records[1].id):equals("fixture-smem-tiling")
    expect(records[2].id):equals("fixture-template")
    local r, f = store.load(FIXTURES .. "/nope")
    expect(r):is_nil()
    expect(f.message):contains("no skill repository")
    local _, f2 = store.load(FIXTURES .. "/fixture-template.lua")
    expect(f2.message):contains("not a skill repository folder")
  end)

  it("loads hostile skill files as data: each one a problem, the rest of the folder loaded", function()
    local marker = os.tmpname()
    os.remove(marker)
    local good = assert(serialize.record(full_record()))
    local dir = repo_with {
      ["every_field-1.lua"] = good,
      ["execute.lua"] = "os.execute('touch " .. marker .. "') return {}",
      ["loop.lua"] = "while true do end",
      ["strings.lua"] = "local s = ('x'):rep(1024) for i = 1, 40 do s = s .. s end return {}",
      ["huge.lua"] = "return {} --" .. string.rep("x", 10 * 1024 * 1024),
      ["bytecode.lua"] = string.dump(function() return {} end),
      ["unknown.lua"] = (good:gsub("schema = 1,", "schema = 1,\n  sneaky = true,")),
      ["renamed.lua"] = good,
      ["syntax.lua"] = "return {",
      ["not_a_table.lua"] = "return 42",
      ["notes.txt"] = "not a skill",
    }
    local records, problems = store.load(dir)
    local ids = {}
    for i, r in ipairs(records) do ids[i] = r.id end
    expect(ids):equals({ "every_field-1", "fixture-smem-tiling", "fixture-template" })
    expect(#problems):equals(9)
    expect(problem_of(problems, "execute.lua")):contains("raised:")
    expect(problem_of(problems, "loop.lua")):contains("instruction limit")
    expect(problem_of(problems, "strings.lua")):contains("memory limit")
    expect(problem_of(problems, "huge.lua")):contains("MiB limit")
    expect(problem_of(problems, "bytecode.lua")):contains("precompiled")
    expect(problem_of(problems, "unknown.lua")):contains("skill every_field-1: sneaky: unknown field")
    expect(problem_of(problems, "renamed.lua")):contains("its id is 'every_field-1'")
    expect(problem_of(problems, "syntax.lua")):contains("syntax.lua")
    expect(problem_of(problems, "not_a_table.lua")):contains("returns a number")
    check(not fs.stat(marker), "the hostile file ran os.execute")
  end)
end)

local function listing(dir)
  local names = assert(fs.list(dir))
  table.sort(names)
  return names
end

describe("store.save", function()
  it("writes <id>.lua that loads back, making the folder", function()
    local dir = scratch_dir() .. "/sub/sm_90"
    local path = assert(store.save(dir, full_record()))
    expect(path):equals(dir .. "/every_field-1.lua")
    local records = assert(store.load(dir))
    local ok, why = same(full_record(), records[1])
    check(ok, "%s", tostring(why))
  end)

  it("leaves the old file intact and no temporary when the write fails halfway", function()
    local dir = scratch_dir()
    local path = assert(store.save(dir, full_record()))
    local before = read_file(path)
    local changed = full_record()
    changed.intent = "a different intent"
    local torn = function(tmp)
      local h = assert(io.open(tmp, "wb"))
      return {
        write = function(_, data) h:write(data:sub(1, #data // 2)) return nil, "No space left on device" end,
        close = function() return h:close() end,
      }
    end
    local ok, f = store.save(dir, changed, torn)
    expect(ok):is_nil()
    expect(f.verdict):equals("io_error")
    expect(f.message):contains("No space left on device")
    expect(read_file(path)):equals(before)
    expect(listing(dir)):equals({ "every_field-1.lua" })
  end)

  it("fails cleanly when the target cannot be replaced, leaving no temporary", function()
    local dir = scratch_dir()
    assert(os.execute("mkdir " .. testing.shell_quote(dir .. "/every_field-1.lua")))
    write_file(dir .. "/every_field-1.lua/inside", "kept")
    local ok, f = store.save(dir, full_record())
    expect(ok):is_nil()
    expect(f.verdict):equals("io_error")
    expect(listing(dir)):equals({ "every_field-1.lua" })
    expect(read_file(dir .. "/every_field-1.lua/inside")):equals("kept")
  end)

  it("refuses an invalid record before writing anything", function()
    local dir = scratch_dir()
    local r = full_record()
    r.guards[1][2] = "=>"
    local ok, f = store.save(dir, r)
    expect(ok):is_nil()
    expect(f.message):contains("guards[1][2]: op must be one of")
    expect(#listing(dir)):equals(0)
  end)
end)

describe("store.write_all", function()
  it("writes every record and removes the .lua files of ids no longer present", function()
    local dir = repo_with { ["README.md"] = "kept" }
    local records = assert(store.load(FIXTURES))
    local r = full_record()
    local done = assert(store.write_all(dir, { r, records[2] }))
    expect(#done.written):equals(2)
    expect(#done.removed):equals(1)
    expect(listing(dir)):equals({ "README.md", "every_field-1.lua", "fixture-template.lua" })
    expect(read_file(dir .. "/fixture-template.lua")):equals(read_file(FIXTURES .. "/fixture-template.lua"))
    local _, f = store.write_all(dir, { r, r })
    expect(f.message):contains("two records have the id every_field-1")
    expect(listing(dir)):equals({ "README.md", "every_field-1.lua", "fixture-template.lua" })
  end)

  it("gives the fixtures' files back byte for byte (the files are the serializer's text)", function()
    for _, r in ipairs(assert(store.load(FIXTURES))) do
      expect(serialize.record(r)):equals(read_file(FIXTURES .. "/" .. r.id .. ".lua"))
    end
  end)
end)

local function fixture(id)
  for _, r in ipairs(assert(store.load(FIXTURES))) do
    if r.id == id then return r end
  end
  error("no fixture " .. id)
end

describe("explain", function()
  it("says the skill, its conditions, effect and evidence in English", function()
    local text = explain.skill(fixture("fixture-smem-tiling"))
    expect(text):contains("fixture-smem-tiling (sm_90, learned, confidence low: 3 supporting, 1 contradicting)\n")
    expect(text):contains("\nIntent: FIXTURE")
    expect(text):contains("\nApplied by: the transform smem_tiling.")
    expect(text):contains("\nApplies when: N % 8 == 0 (3 helped, 0 did not).")
    expect(text):contains("\nNot when: barriers.in_loop > 1 after the change: FIXTURE: slowed sgemm v5 by 1.3x (invented for the test) (guard, from the walk, 0 helped, 1 did not).")
    expect(text):contains("\nEffect: 1.45x median (1.10x to 1.90x over 3 measurements); occupancy -25 %, registers +6 per thread, shared memory +8 KiB.")
    expect(text):contains("\n  sgemm v1_coalesced.cu -> v2_smem_tiles.cu: helped, 1.448x (run fixture-run, record dc917f79)")
  end)
  it("says a skill seen once, a template and a transfer", function()
    local text = explain.skill(fixture("fixture-template"))
    expect(text):contains("(sm_90, transferred, seen once: 1 supporting, 0 contradicting)")
    expect(text):contains("Effect: 2.50x (seen once).")
    expect(text):contains("Applies when: profile.time_ms < 5 ms.")
    expect(text):contains("Transferred from sm_80:\n  FIXTURE: nothing changed")
    local r = full_record()
    r.preconditions, r.guards, r.effect, r.evidence = {}, {}, nil, {}
    local t2 = explain.skill(r)
    expect(t2):contains("Applies when: always (no precondition was learned).")
    expect(t2):contains("Effect: not measured.")
    expect(t2):contains("Evidence: none recorded.")
  end)
end)

describe("match", function()
  local w = assert(require("klineage.workload").load("sgemm"))
  local v1 = read_file(SGEMM .. "/v1_coalesced.cu")

  it("blocks smem_tiling on sgemm v1 by its guard on the kernel after the change", function()
    local rows = assert(smatch.kernel({ fixture("fixture-smem-tiling") }, v1, { workload = w }))
    expect(#rows):equals(1)
    local row = rows[1]
    expect(row.skill):equals("fixture-smem-tiling")
    expect(row.site):equals("sgemm:A,B")
    expect(row.transform):equals("smem_tiling")
    expect(row.status):equals("blocked")
    expect(row.blocked_by.kind):equals("guard")
    expect(row.blocked_by.condition[1]):equals("barriers.in_loop_after")
    expect(row.blocked_by.text):contains("barriers.in_loop > 1 after the change: FIXTURE: slowed")
    expect(#row.unknown):equals(0)
  end)

  it("gives a candidate when the precondition holds and no guard fires", function()
    local r = deep_copy(fixture("fixture-smem-tiling"))
    r.guards[1][3] = 2 -- v2's loop has two barriers: > 2 does not hold
    local rows = assert(smatch.kernel({ r }, v1, { workload = w }))
    expect(rows[1].status):equals("candidate")
    expect(rows[1].blocked_by):is_nil()
  end)

  it("blocks on a precondition that fails, and on one whose fact is absent, saying so", function()
    local r = deep_copy(fixture("fixture-smem-tiling"))
    r.guards = {}
    r.preconditions = { { "size.N", "<", 1024 } }
    local rows = assert(smatch.kernel({ r }, v1, { workload = w }))
    expect(rows[1].status):equals("blocked")
    expect(rows[1].blocked_by.text):equals("precondition N < 1024 does not hold: N ≥ 1024")
    r.preconditions = { { "profile.time_ms", "<", 5 } }
    r.guards = { { "profile.dram_throughput_pct_after", ">", 90 } }
    rows = assert(smatch.kernel({ r }, v1, { workload = w }))
    expect(rows[1].status):equals("blocked")
    expect(rows[1].blocked_by.kind):equals("precondition")
    expect(rows[1].blocked_by.text):contains("fact profile.time_ms could not be computed")
    expect(#rows[1].unknown):equals(2)
  end)

  it("matches a template pattern with klineage.pattern.match, and offers nothing where the transform has no site", function()
    local rows = assert(smatch.kernel({ fixture("fixture-template") }, v1, { workload = w }))
    expect(#rows):equals(1)
    expect(rows[1].site):matches("^pattern@%d+:%d+$")
    expect(rows[1].blocked_by.text):contains("fact profile.time_ms could not be computed")
    local v2 = read_file(SGEMM .. "/v2_smem_tiles.cu")
    local none = assert(smatch.kernel({ fixture("fixture-smem-tiling") }, v2, { workload = w }))
    expect(#none):equals(0)
  end)

  it("refuses a file with no kernel", function()
    local rows, f = smatch.kernel({}, "__device__ float f(float x) { return x; }\n", {})
    expect(rows):is_nil()
    expect(f.message):contains("no __global__ function")
  end)
end)

describe("klineage skills", function()
  it("lists, shows and explains", function()
    local out, code = klineage("skills", "list", "--dir", FIXTURES)
    expect(code):equals(0)
    expect(out):matches("fixture%-smem%-tiling%s+learned%s+low%s+1 pre%s+1 guards%s+1%.45x%s+FIXTURE")
    out, code = klineage("skills", "list", "--dir", FIXTURES, "--json")
    expect(code):equals(0)
    local list = require("cjson").decode(out:match("^[^\n]*"))
    expect(list[2].id):equals("fixture-template")
    expect(list[2].confidence):equals("seen once")
    out, code = klineage("skills", "show", "fixture-template", "--dir", FIXTURES)
    expect(code):equals(0)
    expect(out):equals(read_file(FIXTURES .. "/fixture-template.lua"))
    out, code = klineage("skills", "explain", "fixture-smem-tiling", "--dir", FIXTURES)
    expect(code):equals(0)
    expect(out):contains("Applies when: N % 8 == 0 (3 helped, 0 did not).")
  end)

  it("matches a kernel, saying what blocks in English", function()
    local out, code = klineage("skills", "match", SGEMM .. "/v1_coalesced.cu", "--workload", SGEMM, "--dir", FIXTURES)
    expect(code):equals(0)
    expect(out):matches("8%s+fixture%-smem%-tiling%s+sgemm:A,B%s+blocked%s+guard: barriers.in_loop > 1 after the change")
    out, code = klineage("skills", "match", SGEMM .. "/v1_coalesced.cu", "--workload", SGEMM, "--dir", FIXTURES, "--json")
    expect(code):equals(0)
    local rows = require("cjson").decode(out:match("^[^\n]*"))
    expect(rows[1].blocked_by.kind):equals("guard")
    expect(rows[1].blocked_by.fact):equals("barriers.in_loop_after")
  end)

  it("exits 2 with a clear message on bad input", function()
    local out, code = klineage("skills", "explain", "fixture-smem-tilin", "--dir", FIXTURES)
    expect(code):equals(2)
    expect(out):contains("no skill 'fixture-smem-tilin'")
    expect(out):contains("the nearest: fixture-smem-tiling")
    out, code = klineage("skills", "list", "--dir", FIXTURES .. "/nope")
    expect(code):equals(2)
    expect(out):contains("no skill repository at")
    local bad = repo_with { ["loop.lua"] = "while true do end" }
    out, code = klineage("skills", "list", "--dir", bad)
    expect(code):equals(2)
    expect(out):contains("1 bad skill file in")
    expect(out):contains("loop.lua: exceeded the instruction limit")
    out, code = klineage("skills", "frob")
    expect(code):equals(2)
    expect(out):contains("unknown verb 'frob'")
    out, code = klineage("skills", "match", "--dir", FIXTURES, SGEMM .. "/nope.cu")
    expect(code):equals(2)
    expect(out):contains("cannot open")
    out, code = klineage("skills", "transfer", "--to", "hopper", "--dir", FIXTURES)
    expect(code):equals(2)
    expect(out):contains("--to needs an architecture")
  end)

  -- Only while merge and transfer are written on another branch: once they
  -- are in the build, their own specs test the verbs.
  for _, verb in ipairs({ "merge", "transfer" }) do
    if not package.searchpath("klineage.skills." .. verb, package.path) then
      it(verb .. " says it is not available in this build", function()
        local argv = verb == "merge" and { "skills", "merge", FIXTURES, "--out", scratch_dir() }
          or { "skills", "transfer", "--to", "sm_80", "--dir", FIXTURES, "--out", scratch_dir() }
        local out, code = klineage(table.unpack(argv))
        expect(code):equals(2)
        expect(out):contains("klineage skills " .. verb .. ": not available in this build")
      end)
    end
  end
end)
