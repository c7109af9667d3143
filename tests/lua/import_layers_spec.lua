-- The layers of lua/klineage/ (lua/klineage/LAYERS.md): every require of
-- a klineage module, in every spelling, goes to the importer's own folder,
-- a lower layer, or a same-layer folder the table names; no folder is
-- missing from the table or unknown to it; no Lua file sits at the root.
-- The checker is fed synthetic sources too, so that each rule is seen to
-- fail.
local files = require "klineage.base.files"
local fs = require "kl.fs"

local home = require("kl.host").home
local ROOT = home .. "/lua/klineage"

-- LAYERS.md -> { folder = { layer = n, peers = { folder = true } } },
-- { name.lua = true } (the files allowed at the root)
local function parse_layers(text)
  local layers, root_ok, section = {}, {}, nil
  for line in text:gmatch("[^\n]*") do
    local heading = line:match("^##%s+(.-)%s*$")
    if heading then section = heading end
    local folder, layer, peers = line:match("^|%s*`([%w_]+)/`%s*|%s*(%d+)%s*|[^|]*|%s*(.-)%s*|%s*$")
    if folder then
      local set = {}
      for p in peers:gmatch("`([%w_]+)/`") do set[p] = true end
      layers[folder] = { layer = tonumber(layer), peers = set }
    end
    local name = section == "Files at the root" and line:match("^%-%s+`?([%w_]+%.lua)`?%s*$")
    if name then root_ok[name] = true end
  end
  return layers, root_ok
end

-- The klineage modules a chunk requires: { { line = n, name = "klineage.x.y" } }.
-- Comments are not imports: a line comment, and a --[[ ]] block.
local SPELLINGS = {
  "require%s*%(?%s*[\"']([^\"']+)[\"']",       -- require "x", require 'x', require("x"), require"x"
  "pcall%s*%(%s*require%s*,%s*[\"']([^\"']+)[\"']", -- pcall(require, "x")
}
local function requires_of(text)
  local out, n, in_block = {}, 0, false
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    if in_block then
      if line:find("]]", 1, true) then in_block = false end
    elseif line:match("^%s*%-%-%[=*%[") then
      in_block = not line:find("]]", 1, true)
    elseif not line:match("^%s*%-%-") then
      local seen = {}
      for _, pat in ipairs(SPELLINGS) do
        for name in line:gmatch(pat) do
          if name:match("^klineage%.") and not seen[name] then
            seen[name] = true
            out[#out + 1] = { line = n, name = name }
          end
        end
      end
    end
  end
  return out
end

-- sources = { { path = relative to lua/klineage, text }... } -> { "path:line: why"... }
local function violations(layers, root_ok, sources)
  local bad = {}
  for _, s in ipairs(sources) do
    local from = s.path:match("^([^/]+)/")
    if not from then
      if not root_ok[s.path] then bad[#bad + 1] = s.path .. ": a Lua file at the root of lua/klineage (LAYERS.md lists none)" end
    elseif not layers[from] then
      bad[#bad + 1] = s.path .. ": its folder " .. from .. "/ is not in LAYERS.md"
    else
      for _, r in ipairs(requires_of(s.text)) do
        local to = r.name:match("^klineage%.([%w_]+)")
        local where = s.path .. ":" .. r.line .. ": "
        if not to or not layers[to] then
          bad[#bad + 1] = where .. r.name .. " is in no folder of LAYERS.md"
        elseif to ~= from then
          local a, b = layers[from].layer, layers[to].layer
          if b > a then
            bad[#bad + 1] = string.format("%s%s/ (layer %d) requires %s of %s/ (layer %d)", where, from, a, r.name, to, b)
          elseif b == a and not layers[from].peers[to] then
            bad[#bad + 1] = string.format("%s%s/ requires %s of %s/, the same layer %d, which LAYERS.md does not allow", where, from, r.name, to, a)
          end
        end
      end
    end
  end
  return bad
end

local function lua_sources(dir, rel, out)
  for _, name in ipairs(fs.list(dir)) do
    local path, r = dir .. "/" .. name, rel and (rel .. "/" .. name) or name
    if fs.stat(path).type == "directory" then
      lua_sources(path, r, out)
    elseif name:match("%.lua$") then
      out[#out + 1] = { path = r, text = assert(files.read_text(path)) }
    end
  end
  table.sort(out, function(x, y) return x.path < y.path end)
  return out
end

local layers, root_ok = parse_layers(assert(files.read_text(ROOT .. "/LAYERS.md")))

describe("LAYERS.md", function()
  it("has a row for every folder of lua/klineage, and a folder for every row", function()
    local missing, extra, on_disk = {}, {}, {}
    for _, name in ipairs(fs.list(ROOT)) do
      if fs.stat(ROOT .. "/" .. name).type == "directory" then
        on_disk[name] = true
        if not layers[name] then missing[#missing + 1] = name end
      end
    end
    for name in pairs(layers) do if not on_disk[name] then extra[#extra + 1] = name end end
    table.sort(missing); table.sort(extra)
    expect("no row: " .. table.concat(missing, " ") .. "; no folder: " .. table.concat(extra, " ")):equals("no row: ; no folder: ")
  end)

  it("gives base/ the lowest layer and cli/ the highest", function()
    local lo, hi = math.huge, -1
    for _, l in pairs(layers) do lo, hi = math.min(lo, l.layer), math.max(hi, l.layer) end
    expect(layers.base.layer):equals(lo)
    expect(layers.cli.layer):equals(hi)
  end)
end)

describe("the imports of lua/klineage", function()
  it("never go up a layer, sideways unless allowed, or to an unknown folder", function()
    local sources = lua_sources(ROOT, nil, {})
    expect(#sources > 100):is_true()
    expect(table.concat(violations(layers, root_ok, sources), "\n")):equals("")
  end)

  it("find every spelling of require, and no comment", function()
    local text = table.concat({
      'local a = require "klineage.base.files"',
      "local b = require 'klineage.store.runs'",
      'local c = require("klineage.gate")',
      'local d = require"klineage.pattern.match"',
      'local ok, e = pcall(require, "klineage.llm")',
      'local f = require ( "klineage.transforms." .. name)',
      '-- local g = require "klineage.cli"',
      '--[[ local h = require "klineage.slurm"',
      ']]',
    }, "\n")
    local got = {}
    for _, r in ipairs(requires_of(text)) do got[#got + 1] = r.line .. " " .. r.name end
    expect(table.concat(got, ", ")):equals("1 klineage.base.files, 2 klineage.store.runs, 3 klineage.gate, "
      .. "4 klineage.pattern.match, 5 klineage.llm, 6 klineage.transforms.")
  end)

  it("fail on a synthetic violation of each rule, naming file:line", function()
    local bad = violations(layers, root_ok, {
      { path = "store/journal.lua", text = 'local files = require "klineage.base.files"\nlocal s = require("klineage.search")\n' },
      { path = "gate/x.lua", text = "local v = require 'klineage.verdicts'\n" },
      { path = "pattern/y.lua", text = 'local ok, w = pcall(require, "klineage.workload")\n' },
      { path = "stray.lua", text = "return {}\n" },
      { path = "kitchen/sink.lua", text = "return {}\n" },
      { path = "cli/z.lua", text = 'local s = require"klineage.slurm.submit"\nlocal b = require "klineage.base.term"\n' },
    })
    expect(#bad):equals(5)
    expect(bad[1]):equals("store/journal.lua:2: store/ (layer 1) requires klineage.search of search/ (layer 6)")
    expect(bad[2]):equals("gate/x.lua:1: klineage.verdicts is in no folder of LAYERS.md")
    expect(bad[3]):equals("pattern/y.lua:1: pattern/ requires klineage.workload of workload/, the same layer 1, which LAYERS.md does not allow")
    expect(bad[4]):contains("stray.lua: a Lua file at the root")
    expect(bad[5]):equals("kitchen/sink.lua: its folder kitchen/ is not in LAYERS.md")
  end)

  it("allow a same-layer import the table names, and a root file it lists", function()
    local t = parse_layers(table.concat({
      "| folder | layer | responsibility | same-layer imports |",
      "|---|---|---|---|",
      "| `low/` | 0 | the bottom | — |",
      "| `left/` | 1 | one side | `right/` |",
      "| `right/` | 1 | the other | — |",
      "## Files at the root",
      "- `init.lua`",
    }, "\n"))
    expect(t.left.layer):equals(1)
    local _, root = parse_layers("## Files at the root\n- `init.lua`\n")
    local bad = violations(t, root, {
      { path = "left/a.lua", text = 'require "klineage.right.b"\nrequire "klineage.low"\n' },
      { path = "right/b.lua", text = 'require "klineage.left.a"\n' },
      { path = "init.lua", text = "return {}\n" },
    })
    expect(table.concat(bad, "\n")):equals("right/b.lua:1: right/ requires klineage.left.a of left/, the same layer 1, which LAYERS.md does not allow")
  end)
end)

describe("the old root modules", function()
  it("are gone: a stray old name fails loudly", function()
    for _, old in ipairs({ "verdicts", "files", "journal", "runs", "cache", "context", "backends", "emu", "commands.walk",
                           "worker.pool", "measure.stats", "args", "match", "stepdiff", "spec_sandbox", "lineage_table", "progress" }) do
      local ok, err = pcall(require, "klineage." .. old)
      expect(ok):equals(false)
      expect(tostring(err)):contains("module 'klineage." .. old .. "' not found")
    end
  end)
end)
