-- The run journal: runs/<id>/journal.jsonl, one JSON record per line,
-- appended and never rewritten. Each append is flushed and fsync'd before
-- it returns, so a record that append() returned for survives a crash.
-- Walks and optimizations resume from it; reports are regenerated from it.
--
--   journal.open(path)          -> J | nil, failure    (creates folders and file)
--   J:append(record)            -> true | nil, failure (adds seq and time if absent)
--   J:close()
--   journal.read(path)          -> records, warnings | nil, failure
--   (every failure is io_error, but a journal.jsonl that is not a regular
--   file (a FIFO, /dev/zero, a folder) or is over MAX_BYTES: bad_input,
--   refused before a byte is read or written, as klineage.base.files does)
--   journal.MAX_BYTES: the largest journal read back (512 MiB)
--       a line that does not parse (the torn last line of a crashed run, even
--       when later runs appended after it) is skipped with a warning naming
--       its line; the file is never changed.
--   journal.new_run_id()        -> "20261130-001122-ab12cd"
--   journal.path(root, id)      -> root/<id>/journal.jsonl
--
-- NaN and infinities (an error of a failed comparison) are written as null.
local cjson = require "cjson"
local proc = require "kl.proc"
local files = require "klineage.base.files"
local verdicts = require "klineage.base.verdicts"

local M = {}

-- Far above any run's (a walk of thousands of candidates writes tens of
-- MiB), far below what would exhaust memory once decoded.
M.MAX_BYTES = 512 * 1024 * 1024

local encoder = cjson.new()
encoder.encode_invalid_numbers("null")
encoder.encode_sparse_array(true)
local decoder = cjson.new()

local Journal = {}
Journal.__index = Journal

function M.path(root, id) return string.format("%s/%s/journal.jsonl", root, id) end

function M.new_run_id()
  return string.format("%s-%06x", os.date("!%Y%m%d-%H%M%S"), math.random(0, 0xffffff))
end

-- The number of complete lines, and whether the file ends in the middle of
-- a line (a torn write).
local function scan_tail(path)
  local h = io.open(path, "rb")
  if not h then return 0, false end
  local lines, last = 0, nil
  while true do
    local chunk = h:read(1 << 16)
    if not chunk then break end
    local _, n = chunk:gsub("\n", "")
    lines = lines + n
    last = chunk:sub(-1)
  end
  h:close()
  return lines, last ~= nil and last ~= "\n"
end

local function open(path)
  local dir = path:match("^(.*)/[^/]*$")
  if dir then
    local ok, err = proc.mkdir_p(dir)
    if not ok then return nil, err end
  end
  local existed = require("kl.fs").stat(path) ~= nil
  -- Opened first: a FIFO or a device is refused here, before scan_tail reads it.
  local h, f = files.open_append(path)
  if not h then return nil, f end
  local size = h:seek("end")
  if size and size > M.MAX_BYTES then
    h:close()
    return nil, verdicts.failure("bad_input", string.format("cannot read '%s': %d bytes, over the %d MiB limit of a journal",
      files.display(path), size, M.MAX_BYTES >> 20), { stage = "size" })
  end
  local lines, torn = scan_tail(path)
  if not existed and dir then
    -- the new file's name must survive a crash as well as its records
    local ok, serr = proc.fsync(dir)
    if not ok then
      h:close()
      return nil, serr
    end
  end
  if torn then
    -- End the torn fragment so that the next record starts on its own
    -- line; the fragment itself stays as it is.
    h:write("\n")
    lines = lines + 1
  end
  return setmetatable({ handle = h, path = path, seq = lines }, Journal)
end

local redact = require "klineage.base.redact"

local function append(self, record)
  if type(record) ~= "table" then error("journal append: record must be a table", 2) end
  if not self.handle then error("journal append: journal is closed", 2) end
  self.seq = self.seq + 1
  if record.seq == nil then record.seq = self.seq end
  if record.time == nil then record.time = os.time() end
  -- a key or a password written into a base URL or a command line stays
  -- out of the file (klineage.base.redact.text)
  local ok, line = pcall(encoder.encode, redact.text(record))
  if not ok then return nil, "journal: cannot encode the record: " .. tostring(line) end
  if line:find("\n", 1, true) then return nil, "journal: encoded record has a newline" end
  local wok, werr = self.handle:write(line, "\n")
  if not wok then return nil, werr end
  return proc.fsync(self.handle)
end

function Journal:close()
  if self.handle then
    self.handle:close()
    self.handle = nil
  end
end
Journal.__close = Journal.close
Journal.__gc = Journal.close

local function read(path)
  local text, f = files.read_file(path, M.MAX_BYTES, "a journal")
  if not text then
    if f.stage == "open" then return nil, verdicts.failure("io_error", f.message) end -- missing: as it always was
    return nil, f
  end
  local records, warnings, n = {}, {}, 0
  for line in text:gmatch("([^\n]*)\n?") do
    n = n + 1
    if line ~= "" then
      local ok, rec = pcall(decoder.decode, line)
      if ok and type(rec) == "table" then
        records[#records + 1] = rec
      else
        warnings[#warnings + 1] = string.format("%s:%d: skipped a torn or unreadable record (%d bytes)", path, n, #line)
      end
    end
  end
  return records, warnings
end

-- The boundary: every failure above is a message; here it becomes io_error.
-- (files' failures pass as they are: bad_input for a file refused by type
-- or size.)
function M.open(path) return verdicts.lift("io_error", open(path)) end
function Journal:append(record) return verdicts.lift("io_error", append(self, record)) end
function M.read(path) return verdicts.lift("io_error", read(path)) end

return M
