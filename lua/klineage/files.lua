-- Reading and writing the project's files with one-line, user-facing errors.
--
--   files.MAX_SOURCE_BYTES = 4 MiB: the largest source file read_text takes
--   files.read_file(path [, max_bytes]) -> bytes | nil, failure (bad_input:
--       missing, unreadable, not a regular file (a directory, a FIFO, a
--       device such as /dev/zero: refused before a byte is read, so nothing
--       blocks or fills memory), or over max_bytes (MAX_SOURCE_BYTES))
--   files.read_text(path) -> text | nil, failure: read_file, and not binary
--       (bad_input for a NUL byte)
--   files.display(path) -> path with control characters as C escapes
--       (\n, \t, \ooo), for one-line messages
--   files.write_atomic(path, data) -> true | nil, failure (io_error)
local verdicts = require "klineage.verdicts"

local M = {}

M.MAX_SOURCE_BYTES = 4 * 1024 * 1024

local ESCAPES = { ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r" }

function M.display(path)
  return (tostring(path):gsub("[%c]", function(c) return ESCAPES[c] or string.format("\\%03o", c:byte()) end))
end

function M.read_file(path, max_bytes)
  max_bytes = max_bytes or M.MAX_SOURCE_BYTES
  local data, why, stage = require("kl.nvrtc").read_source(path, max_bytes)
  if data then return data end
  if stage == "open" then return nil, verdicts.failure("bad_input", string.format("cannot open '%s': %s", M.display(path), why)) end
  if stage == "size" and max_bytes % (1 << 20) == 0 then
    why = why:gsub("over the limit of %d+", string.format("over the %d MiB limit of a source file", max_bytes >> 20))
  end
  return nil, verdicts.failure("bad_input", string.format("cannot read '%s': %s", M.display(path), why))
end

function M.read_text(path)
  local data, f = M.read_file(path)
  if not data then return nil, f end
  local nul = data:find("\0", 1, true)
  if nul then
    return nil, verdicts.failure("bad_input", string.format("'%s' is a binary file (NUL byte at offset %d), not CUDA source",
      M.display(path), nul - 1))
  end
  return data
end

-- Writes through a temporary file and a rename, so a crash never leaves a
-- torn file behind, and two processes writing the same path never share a
-- temporary name (the pid is part of it). open(tmp) -> handle | nil, err
-- makes the temporary (default: io.open for writing).
function M.write_atomic(path, data, open)
  local tmp = string.format("%s.tmp.%d.%d", path, require("kl.proc").getpid(), math.random(1 << 30))
  local h, err = (open or function(t) return io.open(t, "wb") end)(tmp)
  if not h then return nil, verdicts.failure("io_error", err) end
  local ok, werr = h:write(data)
  local cok, cerr = h:close()
  if not ok or not cok then
    os.remove(tmp)
    return nil, verdicts.failure("io_error", string.format("cannot write '%s': %s", path, tostring(werr or cerr)))
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then
    os.remove(tmp)
    return nil, verdicts.failure("io_error", rerr)
  end
  return true
end

return M
