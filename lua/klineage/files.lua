-- Reading and writing the project's files with one-line, user-facing errors.
local M = {}

-- Reads a text file. Returns its contents, or nil and a one-line reason:
-- missing, unreadable, a directory, or binary (a NUL byte).
function M.read_text(path)
  local h, err = io.open(path, "rb")
  if not h then
    return nil, (err:gsub("^" .. path:gsub("%p", "%%%0") .. ": ", "cannot open '" .. path .. "': "))
  end
  local data, rerr = h:read("a")
  h:close()
  if not data then return nil, string.format("cannot read '%s': %s", path, rerr or "read error") end
  local nul = data:find("\0", 1, true)
  if nul then return nil, string.format("'%s' is a binary file (NUL byte at offset %d), not CUDA source", path, nul - 1) end
  return data
end

-- Writes through a temporary file and a rename, so a crash never leaves a
-- torn file behind, and two processes writing the same path never share a
-- temporary name (the pid is part of it).
function M.write_atomic(path, data)
  local tmp = string.format("%s.tmp.%d.%d", path, require("kl.proc").getpid(), math.random(1 << 30))
  local h, err = io.open(tmp, "wb")
  if not h then return nil, err end
  local ok, werr = h:write(data)
  local cok, cerr = h:close()
  if not ok or not cok then
    os.remove(tmp)
    return nil, werr or cerr
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then
    os.remove(tmp)
    return nil, rerr
  end
  return true
end

return M
