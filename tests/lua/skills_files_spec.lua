-- A skill record's two files: <id>.lua citing its observations by index
-- (klineage.skills.layout) and <id>.observations.jsonl beside it
-- (klineage.skills.observations_file), as store reads and writes them.
-- The learned records used here are tests/skills/old_layout/, two shipped
-- records as they were before the observations moved out.
local layout = require "klineage.skills.layout"
local ofile = require "klineage.skills.observations_file"
local serialize = require "klineage.skills.serialize"
local store = require "klineage.skills.store"
local fs = require "kl.fs"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local OLD_LAYOUT = here .. "/../skills/old_layout"
local ID = "grid_stride_reduce"

-- Deep equality that tells 3 from 3.0.
local function same(a, b, path)
  path = path or "value"
  if type(a) ~= type(b) then return false, path .. ": " .. type(a) .. " vs " .. type(b) end
  if type(a) == "number" and math.type(a) ~= math.type(b) then return false, path .. ": " .. math.type(a) .. " vs " .. math.type(b) end
  if type(a) ~= "table" then
    if a == b or (a ~= a and b ~= b) then return true end
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

local function expect_same(a, b)
  local ok, why = same(a, b)
  check(ok, "differs: %s", tostring(why))
end

local function learned(id)
  for _, r in ipairs(assert(store.load(OLD_LAYOUT))) do
    if r.id == id then return r end
  end
  error("no record " .. id)
end

local function listing(dir)
  local names = assert(fs.list(dir))
  table.sort(names)
  return names
end

local function problem_of(problems, name)
  for _, p in ipairs(problems) do
    if p.path:sub(-#name) == name then return p.message end
  end
end

describe("observations_file", function()
  local TRICKY = "quote \" backslash \\ slash / newline\n tab\t bell\7 del\127 NUL\0 é ≥ 日本 😀"

  it("round-trips integers apart from floats, strings and nesting, one sorted line an observation", function()
    local list = {
      { b = 2.0, a = 1, c = { 64, 64.0, -0.0, 1e300, 5e-324, 0.1 + 0.2, 2 ^ 53 + 0.0, math.maxinteger, math.mininteger } },
      { s = TRICKY, t = true, f = false, empty = {}, nested = { x = { { y = 1.5 } } } },
    }
    local text = assert(ofile.encode(list))
    expect(select(2, text:gsub("\n", ""))):equals(2)
    expect(text:sub(1, #'{"a":1,"b":2.0,"c":[64,64.0,-0.0,')):equals('{"a":1,"b":2.0,"c":[64,64.0,-0.0,')
    check(not text:find("[%z\1-\9\11-\31\127]"), "a raw control byte in the text")
    local back = assert(ofile.decode(text))
    expect_same(list, back)
    expect(1 / back[1].c[3]):equals(-math.huge) -- negative zero kept
    expect(ofile.encode(back)):equals(text)
  end)

  it("round-trips random observations (fixed seed)", function()
    math.randomseed(20261205)
    local function rand_string()
      local cps = {}
      for i = 1, math.random(0, 8) do
        local k = math.random(1, 4)
        cps[i] = k == 1 and math.random(0, 127) or k == 2 and math.random(128, 0xD7FF) or k == 3 and math.random(0xE000, 0xFFFF)
          or math.random(0x10000, 0x10FFFF)
      end
      return utf8.char(table.unpack(cps))
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
      if depth > 0 and math.random(1, 2) == 1 then
        for i = 1, math.random(1, 4) do t[i] = depth < 3 and math.random(1, 3) == 1 and rand_table(depth + 1) or rand_scalar() end
      else
        for _ = 1, math.random(0, 4) do
          t[rand_string() .. "k"] = depth < 3 and math.random(1, 3) == 1 and rand_table(depth + 1) or rand_scalar()
        end
      end
      return t
    end
    for _ = 1, 100 do
      local list = {}
      for i = 1, math.random(1, 4) do list[i] = rand_table(0) end
      local text = assert(ofile.encode(list))
      local back = assert(ofile.decode(text))
      local ok, why = same(list, back)
      if not ok then fail("round trip differs: %s\n%s", why, text) end
      expect(ofile.encode(back)):equals(text)
    end
  end)

  it("refuses what JSON cannot give back, naming where", function()
    local cases = {
      { { { s = "bad\255" } }, "observation 1.s: a string that is not UTF-8" },
      { { { x = 0 / 0 } }, "observation 1.x:" },
      { { { x = math.huge } }, "observation 1.x:" },
      { { {}, { m = { 1, k = 2 } } }, "observation 2.m: a table must be a list" },
      { { { [2] = 1 } }, "observation 1: a table must be a list" },
      { { { f = print } }, "observation 1.f: a function" },
      { { "x" }, "observation 1: an observation is a table of named fields, got a string" },
      { { { 1, 2 } }, "observation 1: an observation is a table of named fields, got a list" },
    }
    for _, c in ipairs(cases) do
      local text, f = ofile.encode(c[1])
      expect(text):is_nil()
      expect(f.verdict):equals("bad_input")
      expect(f.message):contains(c[2])
    end
    local deep = {}
    local t = deep
    for _ = 1, ofile.MAX_DEPTH + 2 do t.x = {} t = t.x end
    expect(select(2, ofile.encode({ deep })).message):contains("nested deeper than")
  end)

  it("reads any JSON of the same values, and refuses the rest with its line and column", function()
    local list = assert(ofile.decode(' { "b" : [ 1 , 2.5e0 ] , "a" : "\\u00e9\\/\\ud83d\\ude00\\n" }\n{}\n'))
    expect_same(list, { { a = "é/😀\n", b = { 1, 2.5 } }, {} })
    expect(assert(ofile.decode(""))):equals({})
    local cases = {
      { '{"a":null}\n', "line 1, column 6: null" },
      { '{"a":1}\n{"a":1,"a":2}\n', "line 2, column 8: the key \"a\" twice" },
      { '{"a":9223372036854775808}\n', "an integer beyond 64 bits" },
      { '{"a":1e999}\n', "a number beyond a double" },
      { '{"a":01}\n', "column 6: a malformed number" },
      { '{"a":1 2}\n', "',' or '}' expected" },
      { '{"a":1.}\n', "a malformed number" },
      { '{"a":1}', "line 1: the file does not end with a newline" },
      { '{"a":1} x\n', "more after the observation" },
      { '[1]\n', "an observation is a JSON object" },
      { '{"a":"\1"}\n', "a raw control byte" },
      { '{"a":"\\q"}\n', "an unknown escape" },
      { '{"a":"\\ud800x"}\n', "a lone surrogate" },
      { '{"a":"\255"}\n', "not UTF-8" },
      { '{"a":tru}\n', "a value expected" },
      { '{"a":1\n', "column 7: ',' or '}' expected" },
      { '{"a":\n', "column 6: a value expected, the line ended" },
      { string.rep('{"a":', 40) .. "1" .. string.rep("}", 40) .. "\n", "nested deeper than" },
    }
    for _, c in ipairs(cases) do
      local back, err = ofile.decode(c[1])
      if back then fail("decoded %q", c[1]) end
      expect(err):contains(c[2])
    end
  end)
end)

describe("serialize", function()
  it("wraps a long list of integers, many a line, and keeps a short one on its line", function()
    local long = {}
    for i = 1, 60 do long[i] = i end
    local text = assert(serialize.value({ a = long, b = { 1, 2, 3 } }))
    expect(text):contains("  a = {\n    1, 2, 3,")
    expect(text):contains("  b = { 1, 2, 3 },")
    for line in text:gmatch("[^\n]+") do expect(#line):at_most(100) end
    expect(assert(load("return " .. text, "=v", "t", {}))().a):equals(long)
  end)
end)

describe("a record's two files", function()
  it("cite each observation by its index, the observations one a line beside the record", function()
    local r = learned(ID)
    local dir = scratch_dir()
    expect(assert(store.save(dir, r))):equals(dir .. "/" .. ID .. ".lua")
    expect(listing(dir)):equals({ ID .. ".lua", ID .. ".observations.jsonl" })
    local t = assert(load(read_file(dir .. "/" .. ID .. ".lua"), "=r", "t", {}))()
    expect(t.observations.file):equals(ID .. ".observations.jsonl")
    expect(t.observations.n):equals(#r.observations)
    expect(t.evidence[1]):equals(1)
    expect(#t.evidence):equals(#r.observations)
    expect(math.type(t.guards[1].evidence[1])):equals("integer")
    -- the entry a guard cites is the observation on that line
    local lines = {}
    for l in read_file(dir .. "/" .. ID .. ".observations.jsonl"):gmatch("[^\n]+") do lines[#lines + 1] = l end
    expect(#lines):equals(#r.observations)
    expect(lines[t.guards[1].evidence[1]]):contains(r.guards[1].evidence[1].key)
    local back = assert(store.load(dir))
    expect_same(back[1], r)
  end)

  it("keep as a table an evidence entry that is no observation's, and load it back as it was", function()
    local r = learned(ID)
    r.preconditions[1].evidence[1] = { run = "by-hand", key = "k1", outcome = "helped" }
    r.evidence[2].speedup = 1.25 -- now differs from what observation 2 gives
    local dir = scratch_dir()
    assert(store.save(dir, r))
    local t = assert(load(read_file(dir .. "/" .. ID .. ".lua"), "=r", "t", {}))()
    expect(t.preconditions[1].evidence[1].run):equals("by-hand")
    expect(t.evidence[2].speedup):equals(1.25)
    expect(t.evidence[3]):equals(3)
    expect_same(assert(store.load(dir))[1], r)
  end)

  it("write a record without observations as one file, no index in it", function()
    local dir = scratch_dir()
    local r = learned(ID)
    assert(store.save(dir, r))
    local bare = learned(ID)
    bare.observations = nil
    assert(store.save(dir, bare))
    expect(listing(dir)):equals({ ID .. ".lua" }) -- the old observations file went with them
    local t = assert(load(read_file(dir .. "/" .. ID .. ".lua"), "=r", "t", {}))()
    expect(type(t.evidence[1])):equals("table")
    expect_same(assert(store.load(dir))[1], bare)
  end)

  it("are refused, each a problem of its own, when they do not belong together", function()
    local src = scratch_dir()
    assert(store.save(src, learned(ID)))
    local lua = read_file(src .. "/" .. ID .. ".lua")
    local jsonl = read_file(src .. "/" .. ID .. ".observations.jsonl")
    local n = select(2, jsonl:gsub("\n", ""))
    local function load_with(lua_text, jsonl_text, fifo)
      local dir = scratch_dir()
      write_file(dir .. "/" .. ID .. ".lua", lua_text)
      if jsonl_text then write_file(dir .. "/" .. ID .. ".observations.jsonl", jsonl_text) end
      if fifo then assert(os.execute("mkfifo '" .. dir .. "/" .. ID .. ".observations.jsonl'")) end
      local records, problems = store.load(dir)
      expect(#records):equals(0)
      expect(#problems):equals(1)
      return problem_of(problems, ID .. ".lua")
    end
    expect(load_with(lua, nil)):contains("its observations: cannot open")
    expect(load_with(lua, nil, true)):contains("its observations: cannot read")
    -- a save cut short between the files, or an edit by hand
    expect(load_with(lua, (jsonl:gsub("\n", "\n\n", 1)))):contains("not the file this record was written with")
    expect(load_with((lua:gsub("n = " .. n .. ",", "n = " .. (n + 1) .. ",")), jsonl))
      :contains(string.format("holds %d observations, the record says %d", n, n + 1))
    expect(load_with((lua:gsub("\n  evidence = { 1, ", "\n  evidence = { 999, ", 1)), jsonl))
      :contains("evidence[1]: cites observation 999, but the record has " .. n)
    expect(load_with((lua:gsub('file = "', 'file = "../', 1)), jsonl)):contains("observations.file: must be")
    expect(load_with((lua:gsub("  observations = {\n", "  observations = {\n    extra = 1,\n", 1)), jsonl))
      :contains("observations.extra: unknown field")
    -- a stranger's pair whose hashes agree: its observations are still checked as data
    local odd = '{"evidence":{"key":"k","run":"r"},"from":{},"to":"x"}\n'
    local sha = require("kl.hash").sha256(odd)
    local t = lua:gsub('sha256 = "%x+"', 'sha256 = "' .. sha .. '"'):gsub("n = " .. n .. ",", "n = 1,")
    expect(load_with(t, odd)):contains("evidence[1]: observation 1 cannot be cited")
    local saved = store.MAX_OBSERVATION_BYTES
    store.MAX_OBSERVATION_BYTES = 1 << 20
    local big = load_with(lua, jsonl .. string.rep(" ", 1 << 20))
    store.MAX_OBSERVATION_BYTES = saved
    expect(big):contains("MiB limit of a skill's observations")
  end)

  it("leave the old files when the observations cannot be written", function()
    local dir = scratch_dir()
    assert(store.save(dir, learned(ID)))
    local lua, jsonl = read_file(dir .. "/" .. ID .. ".lua"), read_file(dir .. "/" .. ID .. ".observations.jsonl")
    local changed = learned(ID)
    changed.observations[1].speedup = 2.5
    local torn = function(tmp)
      local h = assert(io.open(tmp, "wb"))
      return {
        write = function(_, data) h:write(data:sub(1, #data // 2)) return nil, "No space left on device" end,
        close = function() return h:close() end,
      }
    end
    local ok, f = store.save(dir, changed, torn)
    expect(ok):is_nil()
    expect(f.message):contains(ID .. ".observations.jsonl")
    expect(read_file(dir .. "/" .. ID .. ".lua")):equals(lua)
    expect(read_file(dir .. "/" .. ID .. ".observations.jsonl")):equals(jsonl)
    expect(listing(dir)):equals({ ID .. ".lua", ID .. ".observations.jsonl" })
  end)
end)

describe("store.write_all", function()
  it("removes a stale record with its observations, and keeps observations files it cannot call its own", function()
    local dir = scratch_dir()
    local a, b = learned(ID), learned("template-bfs-v1_queue")
    assert(store.write_all(dir, { a, b }))
    expect(#listing(dir)):equals(4)
    write_file(dir .. "/orphan.observations.jsonl", "{}\n")
    write_file(dir .. "/mine.lua", "-- by hand\nreturn {}\n")
    write_file(dir .. "/mine.observations.jsonl", "{}\n")
    local done = assert(store.write_all(dir, { a }))
    table.sort(done.removed)
    expect(done.removed):equals({ dir .. "/template-bfs-v1_queue.lua", dir .. "/template-bfs-v1_queue.observations.jsonl" })
    table.sort(done.kept)
    expect(done.kept):equals({ dir .. "/mine.lua", dir .. "/mine.observations.jsonl", dir .. "/orphan.observations.jsonl" })
    expect(listing(dir)):equals({ ID .. ".lua", ID .. ".observations.jsonl", "mine.lua", "mine.observations.jsonl",
                                  "orphan.observations.jsonl" })
  end)

  it("writes a repository of the layout before in the new one, the same records", function()
    local old = assert(store.load(OLD_LAYOUT))
    local dir = scratch_dir()
    assert(store.write_all(dir, old))
    expect(#listing(dir)):equals(4)
    local new, problems = store.load(dir)
    expect(#problems):equals(0)
    for i, r in ipairs(old) do expect(serialize.value(new[i])):equals(serialize.value(r)) end
  end)
end)

describe("layout", function()
  it("packs without changing the record, and unpacks to it", function()
    local r = learned(ID)
    local before = serialize.value(r)
    local t, text = assert(layout.pack(r))
    expect(serialize.value(r)):equals(before)
    expect(layout.cites(t)):is_true()
    expect(serialize.value(assert(layout.unpack(t, ID, text)))):equals(before)
    expect(select(2, layout.unpack(t, "other", text))):contains("observations.file: must be 'other.observations.jsonl'")
  end)
end)
