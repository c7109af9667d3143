-- Every transform at every site it finds in outside CUDA code: the corpus
-- of tests/corpus/manifest.txt (Debian source packages), fetched by
-- scripts/fetch-corpus.sh (where corpus_dir.lua says; corpus_run.lua
-- checks it is complete). Per file, for every site of every transform:
--   - the site lies in device code: not inside a function that is neither
--     __global__ nor __device__ (file-scope sites, a #define, are counted
--     apart);
--   - the edit succeeds, its result has the counterpart site (same key,
--     other direction), and that counterpart's edit gives the file back as
--     the transform claims (t.round_trip, transforms/init.lua): byte for
--     byte by default; "tokens": the same tokens, spacing aside, less the
--     tokens the transform says its undo keeps (t.undo_keeps);
--   - where the unedited file compiles with NVRTC (sm_90; its own folder
--     searched for includes, then its package's options from
--     tests/corpus/preludes/compile.txt), the edited and the restored texts
--     compile too.
-- A file NVRTC cannot compile even with its package's prelude is named with
-- its first error, and its sites count as "compile not checked"; the text
-- checks above need no compiler and run on it all the same. The output ends
-- with the coverage per package and the lines corpus-files-compiled: N/M
-- and corpus-sites-compile-checked: N/M.
local transforms = require "klineage.transforms"
local source = require "kl.source"
local nvrtc = require "kl.nvrtc"
local cache = require "klineage.device.cache"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local root = dofile(here .. "/corpus_dir.lua")

-- The text's tokens without their spacing and comments, one a line, less
-- the words in `keeps` (tokens an undo leaves behind).
local function token_text(text, keeps)
  local drop = {}
  for _, k in ipairs(keeps or {}) do drop[k] = true end
  local out = {}
  for _, tok in ipairs(source.parse(text):tokens()) do
    if not drop[tok.text] then out[#out + 1] = tok.text end
  end
  return table.concat(out, "\n")
end

local files = {}
for line in io.lines(here .. "/../corpus/manifest.txt") do
  local pkg, path = line:match("^file (%S+) (%S+)$")
  if pkg then files[#files + 1] = { pkg = pkg, path = path } end
end

-- The NVRTC options of compile.txt: records "options PACKAGE SCOPE OPTION...",
-- SCOPE being * (every file of the package), a file's path, or a folder's
-- (ending in /). {preludes} is the preludes folder, {package} the
-- package's folder in the corpus.
local preludes = here .. "/../corpus/preludes"
local option_records = {}
for line in io.lines(preludes .. "/compile.txt") do
  local pkg, scope, rest = line:match("^options (%S+) (%S+) (.+)$")
  if pkg then
    local list = {}
    for o in rest:gmatch("%S+") do
      list[#list + 1] = (o:gsub("{preludes}", preludes):gsub("{package}", root .. "/" .. pkg))
    end
    option_records[#option_records + 1] = { pkg = pkg, scope = scope, options = list }
  elseif not line:match("^%s*#") and line:match("%S") then
    error("compile.txt: not a record: " .. line)
  end
end

local function is_dir(path)
  local h = io.open(path .. "/.")
  if h then h:close() end
  return h ~= nil
end

-- One file's options: its own folder first, then the prelude folder's
-- mirror of it (stand-ins for the headers beside the file, where there
-- are any), then the records that name its package, in file order.
local function compile_options(pkg, path)
  local folder = path:match("^(.*)/") or ""
  local options = { "--include-path=" .. root .. "/" .. pkg .. (folder ~= "" and "/" .. folder or "") }
  local mirror = preludes .. "/" .. pkg .. (folder ~= "" and "/" .. folder or "")
  if folder ~= "" and is_dir(mirror) then options[#options + 1] = "--include-path=" .. mirror end
  for _, r in ipairs(option_records) do
    if r.pkg == pkg and (r.scope == "*" or r.scope == path
        or (r.scope:sub(-1) == "/" and path:sub(1, #r.scope) == r.scope)) then
      for _, o in ipairs(r.options) do options[#options + 1] = o end
    end
  end
  return options
end

local function compiles(text, name, options)
  local r, f = cache.compile(text, { arch = "sm_90", name = name, options = options })
  if r then return true end
  return false, tostring(f and f.message or f)
end

-- The innermost function around each line: device (global or device),
-- host (neither), or nil at file scope.
local function scope_of(unit)
  local spans = {}
  for _, fn in ipairs(unit:functions()) do
    local l1, _, l2 = fn:range()
    local info = fn:info()
    spans[#spans + 1] = { l1 = l1, l2 = l2, device = info.global or info.device, name = fn:name() }
  end
  return function(line)
    local best
    for _, s in ipairs(spans) do
      if line >= s.l1 and line <= s.l2 and (not best or s.l2 - s.l1 < best.l2 - best.l1) then best = s end
    end
    if not best then return nil end
    return best.device and "device" or "host", best.name
  end
end

local summary = { files = #files, compiled = 0, not_compiled = {}, sites = {}, total = 0, applied_ok = 0,
                  restored = 0, tokens_restored = 0, file_scope = 0, failures = {}, packages = {}, package_order = {} }
-- Per package: files compiled and in all, sites whose edits were compiled
-- and in all.
local function package_counts(pkg)
  local c = summary.packages[pkg]
  if not c then
    c = { files = 0, compiled = 0, sites = 0, checked = 0 }
    summary.packages[pkg] = c
    summary.package_order[#summary.package_order + 1] = pkg
  end
  return c
end
local function count_site(name)
  summary.sites[name] = (summary.sites[name] or 0) + 1
  summary.total = summary.total + 1
end
local function failure(kind, where, message)
  summary.failures[kind] = (summary.failures[kind] or 0) + 1
  return string.format("[%s] %s: %s", kind, where, message)
end

-- The problems at one site, appended to problems.
local function check_site(site, text, name, options, compiled, scope, problems)
  local where = string.format("%s:%d %s %s %s", name, site.line or 0, site.transform, site.direction, tostring(site.key))
  local kind = site.line and scope(site.line)
  if kind == "host" then
    problems[#problems + 1] = failure("host_code", where, "the site lies in the host function " .. tostring(select(2, scope(site.line))))
  elseif not kind then
    summary.file_scope = summary.file_scope + 1
  end
  local out, f = transforms.run(site, site.params)
  if not out then problems[#problems + 1] = failure("edit_failed", where, tostring(f and f.message or f)) return end
  if compiled then
    local ok, why = compiles(out, name, options)
    if not ok then problems[#problems + 1] = failure("edit_does_not_compile", where, why) return end
  end
  summary.applied_ok = summary.applied_ok + 1
  local back_site = transforms.counterpart(site, out)
  if not back_site then problems[#problems + 1] = failure("no_counterpart", where, "the edited text has no counterpart site") return end
  -- an undo site's params are what apply needs to rebuild it
  local back, bf = transforms.run(back_site, site.direction == "undo" and site.params or back_site.params)
  if not back then problems[#problems + 1] = failure("inverse_failed", where, tostring(bf and bf.message or bf)) return end
  if compiled then
    local ok, why = compiles(back, name, options)
    if not ok then problems[#problems + 1] = failure("inverse_does_not_compile", where, why) return end
  end
  if back ~= text then
    local t = transforms.get(site.transform)
    if t.round_trip ~= "tokens" then
      problems[#problems + 1] = failure("not_restored", where, "the counterpart's edit does not give the file back byte for byte")
      return
    end
    if token_text(back, t.undo_keeps) ~= token_text(text, t.undo_keeps) then
      problems[#problems + 1] = failure("not_restored", where, "the counterpart's edit does not give the file's tokens back")
      return
    end
    summary.tokens_restored = summary.tokens_restored + 1
    return
  end
  summary.restored = summary.restored + 1
end

describe("every transform at every site of the outside corpus", function()
  it("the corpus has every file of the manifest", function()
    local missing = {}
    for _, e in ipairs(files) do
      if not io.open(root .. "/" .. e.pkg .. "/" .. e.path) then missing[#missing + 1] = e.pkg .. "/" .. e.path end
    end
    if #missing > 0 then fail("missing from %s: %s", root, table.concat(missing, ", ")) end
    expect(#files):at_least(50)
  end)
  for _, e in ipairs(files) do
    local name = e.pkg .. "/" .. e.path
    it(name, function()
      local file = root .. "/" .. name
      local text = assert(nvrtc.read_source(file))
      local options = compile_options(e.pkg, e.path)
      local compiled, why = compiles(text, name, options)
      local counts = package_counts(e.pkg)
      counts.files = counts.files + 1
      if compiled then
        summary.compiled = summary.compiled + 1
        counts.compiled = counts.compiled + 1
      else
        summary.not_compiled[#summary.not_compiled + 1] = name .. ": " .. tostring(why):gsub("\n.*", "")
      end
      local unit = source.parse(text)
      expect(tostring(unit)):equals(text)
      local scope = scope_of(unit)
      local problems = {}
      for _, site in ipairs(transforms.sites(unit)) do
        count_site(site.transform)
        counts.sites = counts.sites + 1
        if compiled then counts.checked = counts.checked + 1 end
        check_site(site, text, name, options, compiled, scope, problems)
      end
      if #problems > 0 then fail("%d problem(s):\n%s", #problems, table.concat(problems, "\n")) end
    end)
  end
end)

local out = io.stdout
out:write(string.format("# corpus: %d files, %d compile with NVRTC (with their package's prelude), %d do not (their sites get the text checks only)\n",
  summary.files, summary.compiled, #summary.not_compiled))
for _, line in ipairs(summary.not_compiled) do out:write("#   not compiled: " .. line .. "\n") end
local names = {}
for n in pairs(summary.sites) do names[#names + 1] = n end
table.sort(names)
local parts = {}
for _, n in ipairs(names) do parts[#parts + 1] = n .. "=" .. summary.sites[n] end
out:write(string.format("# sites: %d (%s)\n", summary.total, table.concat(parts, " ")))
out:write(string.format("# edited (and compiled where the file does): %d; restored byte for byte: %d; token for token (as claimed): %d; at file scope: %d\n",
  summary.applied_ok, summary.restored, summary.tokens_restored, summary.file_scope))
local kinds = {}
for k, n in pairs(summary.failures) do kinds[#kinds + 1] = k .. "=" .. n end
table.sort(kinds)
out:write("# failures by kind: " .. (#kinds > 0 and table.concat(kinds, " ") or "none") .. "\n")
local files_compiled, files_all, sites_checked, sites_all = 0, 0, 0, 0
for _, pkg in ipairs(summary.package_order) do
  local c = summary.packages[pkg]
  out:write(string.format("# %s: files compiled %d/%d, sites compile-checked %d/%d\n", pkg, c.compiled, c.files, c.checked, c.sites))
  files_compiled, files_all = files_compiled + c.compiled, files_all + c.files
  sites_checked, sites_all = sites_checked + c.checked, sites_all + c.sites
end
out:write(string.format("corpus-files-compiled: %d/%d\n", files_compiled, files_all))
out:write(string.format("corpus-sites-compile-checked: %d/%d\n", sites_checked, sites_all))
