-- Reading and writing the project's files with one-line, user-facing errors.
--
--   files.read_text(path) -> text | nil, failure (bad_input: missing,
--       unreadable, a directory, or binary: a NUL byte)
--   files.write_atomic(path, data) -> true | nil, failure (io_error)
local verdicts = require "klineage.verdicts"

local M = {}

function M.read_text(path)
  local h, err = io.open(path, "rb")
  if not h then
    return nil, verdicts.failure("bad_input", (err:gsub("^" .. path:gsub("%p", "%%%0") .. ": ", "cannot open '" .. path .. "': ")))
  end
  local data, rerr = h:read("a")
  h:close()
  if not data then return nil, verdicts.failure("bad_input", string.format("cannot read '%s': %s", path, rerr or "read error")) end
  local nul = data:find("\0", 1, true)
  if nul then
    return nil, verdicts.failure("bad_input", string.format("'%s' is a binary file (NUL byte at offset %d), not CUDA source", path, nul - 1))
  end
  return data
end

-- Writes through a temporary file and a rename, so a crash never leaves a
-- torn file behind, and two processes writing the same path never share a
-- temporary name (the pid is part of it).
function M.write_atomic(path, data)
  local tmp = string.format("%s.tmp.%d.%d", path, require("kl.proc").getpid(), math.random(1 << 30))
  local h, err = io.open(tmp, "wb")
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
