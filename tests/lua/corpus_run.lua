-- ctest's entry for the outside corpus (labels corpus and long):
--   klineage run tests/lua/corpus_run.lua
-- Runs corpus_transforms.lua on the corpus scripts/fetch-corpus.sh fetched
-- (where corpus_dir.lua says). A corpus is there when its manifest.txt is
-- the repository's. Without it: exit 77 (ctest SKIP_RETURN_CODE) when $CI
-- is unset, a failure when $CI is set, since CI fetches it (make corpus).
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."

local function read(path)
  local h = io.open(path, "rb")
  if not h then return nil end
  local s = h:read("a")
  h:close()
  return s
end

local dir = dofile(here .. "/corpus_dir.lua")
local want = assert(read(here .. "/../corpus/manifest.txt"))
if read(dir .. "/manifest.txt") ~= want then
  local ci = os.getenv("CI")
  local what = string.format("no complete corpus for tests/corpus/manifest.txt in %s; make corpus "
    .. "(scripts/fetch-corpus.sh) fetches it from Debian's archive\n", dir)
  if ci and ci ~= "" then
    io.stderr:write("corpus: FAIL: CI is set but there is " .. what)
    return 1
  end
  io.stderr:write("corpus: SKIP: there is " .. what)
  return 77
end
local _, failed = require("klineage.cli.testing").run({ here .. "/corpus_transforms.lua" }, { verbose = true })
return failed == 0 and 0 or 1
