-- Reading and writing the project's files with one-line, user-facing errors.
--
--   files.MAX_SOURCE_BYTES = 4 MiB: the largest source file read_text takes
--   files.read_file(path [, max_bytes [, what]]) -> bytes | nil, failure
--       (bad_input: missing, unreadable, not a regular file (a directory, a
--       FIFO, a device such as /dev/zero: refused before a byte is read, so
--       nothing blocks or fills memory), or over max_bytes
--       (MAX_SOURCE_BYTES), "the N MiB limit of <what>" (default "a source
--       file")); failure.stage says which: "open", "type", "size" or "read".
--       Every file the engine reads goes through here (or read_text,
--       load_lua), never io.open: one check, one cap, one message
--   files.read_text(path [, max_bytes [, what]]) -> text | nil, failure:
--       read_file, and not binary (bad_input for a NUL byte, stage "binary")
--   files.load_lua(path [, what]) -> chunk | nil, failure (bad_input): a Lua
--       file read by read_file, then loaded as loadfile would (text or
--       precompiled, a first #! line skipped), named @path
--   files.regular(path) -> true | false, why: whether path (links followed)
--       is a regular file, without opening it (an open blocks on a FIFO)
--   files.open_append(path) -> handle | nil, failure (bad_input: not a
--       regular file; io_error: the system refused): a file to append to,
--       created when missing
--   files.inside(dir, path) -> real path | nil, failure (bad_input): path,
--       its links resolved, lies under dir (its links resolved too)
--   files.write_out(path, data [, inputs]) -> true | nil, failure: a file a
--       command writes (optimize --out), atomic and checked. bad_input: path
--       is not a regular file (a folder, /dev/full), or it is one of the
--       inputs (paths; the same file by device and inode, through links and
--       hard links); io_error: a write, flush or rename failed (a full
--       disk): the old file stays as it was and no temporary is left
--   files.check_out(path [, inputs]) -> true | nil, failure: write_out's
--       refusals alone, for a command to check before it works
--   files.display(path) -> path with control characters as C escapes
--       (\n, \t, \ooo), for one-line messages
--   files.write_atomic(path, data) -> true | nil, failure (io_error)
--   files.replace(path, data) -> true [, note] | nil, failure (io_error):
--       an edit of an existing file, written where its links lead
--   files.walk(roots [, suffixes]) -> entries: the files the roots stand for
local verdicts = require "klineage.base.verdicts"

local M = {}

M.MAX_SOURCE_BYTES = 4 * 1024 * 1024

-- One escaping for everything shown from outside: klineage.base.term's.
function M.display(path) return require("klineage.base.term").text(path) end

function M.read_file(path, max_bytes, what)
  max_bytes = max_bytes or M.MAX_SOURCE_BYTES
  local data, why, stage = require("kl.nvrtc").read_source(path, max_bytes)
  if data then return data end
  if stage == "open" then
    return nil, verdicts.failure("bad_input", string.format("cannot open '%s': %s", M.display(path), why), { stage = stage })
  end
  if stage == "size" and max_bytes % (1 << 20) == 0 then
    why = why:gsub("over the limit of %d+", string.format("over the %d MiB limit of %s", max_bytes >> 20, what or "a source file"))
  end
  return nil, verdicts.failure("bad_input", string.format("cannot read '%s': %s", M.display(path), why), { stage = stage })
end

function M.read_text(path, max_bytes, what)
  local data, f = M.read_file(path, max_bytes, what)
  if not data then return nil, f end
  local nul = data:find("\0", 1, true)
  if nul then
    return nil, verdicts.failure("bad_input", string.format("'%s' is a binary file (NUL byte at offset %d), not CUDA source",
      M.display(path), nul - 1), { stage = "binary" })
  end
  return data
end

function M.load_lua(path, what)
  local text, f = M.read_file(path, M.MAX_SOURCE_BYTES, what)
  if not text then return nil, f end
  if text:sub(1, 1) == "#" then text = text:gsub("^#[^\n]*", "", 1) end -- a #! line, as loadfile skips it
  local chunk, err = load(text, "@" .. path)
  if not chunk then return nil, verdicts.failure("bad_input", tostring(err), { stage = "load" }) end
  return chunk
end

function M.regular(path)
  local st, err = require("kl.fs").stat(path)
  if not st then return false, err end
  if st.type ~= "file" then return false, string.format("a %s, not a regular file", st.type) end
  return true
end

function M.open_append(path)
  local h, why, stage = require("kl.fs").open_append(path)
  if h then return h end
  if stage == "type" then
    return nil, verdicts.failure("bad_input", string.format("cannot write '%s': %s", M.display(path), why), { stage = stage })
  end
  return nil, verdicts.failure("io_error", string.format("cannot open '%s': %s", M.display(path), why), { stage = stage })
end

function M.inside(dir, path)
  local fs = require "kl.fs"
  local root, rerr = fs.realpath(dir)
  if not root then
    return nil, verdicts.failure("bad_input", string.format("cannot resolve '%s': %s", M.display(dir), rerr))
  end
  local real, err = fs.realpath(path)
  if not real then
    return nil, verdicts.failure("bad_input", string.format("cannot resolve '%s': %s", M.display(path), err))
  end
  local prefix = root == "/" and "/" or root .. "/"
  if real:sub(1, #prefix) ~= prefix then
    return nil, verdicts.failure("bad_input", string.format("'%s' leads out of '%s' (to '%s')", M.display(path),
      M.display(dir), M.display(real)), { stage = "outside" })
  end
  return real
end

local function split(path)
  local dir, base = path:match("^(.*)/([^/]*)$")
  if not dir then return ".", path end
  if dir == "" then dir = "/" end
  return dir, base
end

local function refuse(id, fmt, ...) return nil, verdicts.failure(id, string.format(fmt, ...)) end

-- Data into the open temporary h (at tmp, in target's folder dir), flushed
-- to disk, renamed over target, then the folder flushed: a crash leaves
-- the old file or the new one, never a torn one. The temporary is removed
-- on any failure. shown names the file in messages; verb says what a
-- failed rename did not do ("write" a new file, "replace" an old one).
local function commit_temp(h, tmp, data, target, dir, shown, verb)
  local proc = require "kl.proc"
  local ok, werr = h:write(data)
  local synced, yerr = true, nil
  if ok then synced, yerr = proc.fsync(h) end
  local cok, cerr = h:close()
  if not ok or not synced or not cok then
    os.remove(tmp)
    return refuse("io_error", "cannot write '%s': %s", shown, tostring(werr or yerr or cerr))
  end
  local rok, rerr = os.rename(tmp, target)
  if not rok then
    os.remove(tmp)
    return refuse("io_error", "cannot %s '%s': %s", verb, shown, tostring(rerr))
  end
  proc.fsync(dir) -- the rename itself; the new text is on disk already
  return true
end

-- The path write_out's rename lands on, and the file there now (nil when
-- none): the file a link leads to, else the name in its folder's real path
-- (a rename never crosses file systems).
local function out_target(path, inputs)
  local fs = require "kl.fs"
  local shown = M.display(path)
  local dir, base = split(path)
  if base == "" or base == "." or base == ".." then return refuse("bad_input", "cannot write '%s': not a file name", shown) end
  local st = fs.stat(path)
  if st then
    if st.type ~= "file" then return refuse("bad_input", "cannot write '%s': a %s, not a regular file", shown, st.type) end
    for _, input in ipairs(inputs or {}) do
      local ist = fs.stat(input)
      if ist and ist.dev == st.dev and ist.ino == st.ino then
        return refuse("bad_input", "will not write '%s': it is an input of this command ('%s')", shown, M.display(input))
      end
    end
    local real, rerr = fs.realpath(path)
    if not real then return refuse("io_error", "cannot write '%s': %s", shown, rerr) end
    return real, st
  end
  local real, rerr = fs.realpath(dir)
  if not real then return refuse("io_error", "cannot write '%s': %s", shown, rerr) end
  return (real == "/" and "" or real) .. "/" .. base
end

function M.check_out(path, inputs)
  local target, f = out_target(path, inputs)
  if not target then return nil, f end
  return true
end

function M.write_out(path, data, inputs)
  local fs, proc = require "kl.fs", require "kl.proc"
  local shown = M.display(path)
  local target, st = out_target(path, inputs)
  if not target then return nil, st end
  local base = target:match("([^/]*)$")
  local tdir = split(target)
  local h, tmp = fs.open_temp((tdir == "/" and "" or tdir) .. "/." .. base:sub(1, 64) .. ".tmp-", st and st.mode or 420) -- 0644
  if not h then return refuse("io_error", "cannot write next to '%s': %s", shown, tmp) end
  return commit_temp(h, tmp, data, target, tdir, shown, "write")
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

-- Replaces an existing file's contents, for an edit in place (klineage
-- match --in-place). Where path is a link, the file it leads to is written
-- and the link stays a link. The new file keeps the old one's mode (and its
-- owner and group, where we may set them), and the write is atomic: a
-- temporary in the target's own folder (a rename never crosses file
-- systems), flushed to disk, renamed over the target, then the folder
-- flushed, so that a crash leaves the old text or the new one, never a
-- torn or missing file. A rename gives the target a new inode: other hard
-- links to it keep the old text, and the second result says so.
function M.replace(path, data)
  local fs, proc = require "kl.fs", require "kl.proc"
  local function io_error(fmt, ...) return nil, verdicts.failure("io_error", string.format(fmt, ...)) end
  local real, rerr = fs.realpath(path)
  if not real then return io_error("cannot write '%s': %s", M.display(path), rerr) end
  local st, serr = fs.stat(real)
  if not st then return io_error("cannot write '%s': %s", M.display(path), serr) end
  if st.type ~= "file" then return io_error("cannot write '%s': a %s, not a regular file", M.display(path), st.type) end
  local dir = real:match("^(.*)/[^/]*$")
  if dir == "" then dir = "/" end
  local h, tmp = fs.open_temp((dir == "/" and "" or dir) .. "/.klineage-", st.mode, st.uid, st.gid)
  if not h then return io_error("cannot write next to '%s': %s", M.display(path), tmp) end
  local ok, f = commit_temp(h, tmp, data, real, dir, M.display(path), "replace")
  if not ok then return nil, f end
  if st.nlink > 1 then
    return true, string.format("'%s' had %d hard links: the other names keep the old text", M.display(path), st.nlink)
  end
  return true
end

local function has_suffix(name, suffixes)
  for _, sfx in ipairs(suffixes) do
    if #name > #sfx and name:sub(-#sfx) == sfx then return true end
  end
  return false
end

local function join(dir, name)
  if dir:sub(-1) == "/" then return dir .. name end
  return dir .. "/" .. name
end

-- The files a command line's paths stand for, in a fixed order, never
-- reading a byte of them (kl.fs: no other program sees the paths).
--   A root (a path as given) is followed where it is a link. A folder
--   stands for the files under it whose names end with one of suffixes
--   (default .cu and .cuh); a regular file stands for itself, whatever its
--   name.
--   Under a folder, entries go in the byte order of their names, a folder
--   sorting as "name/" (the order of the full paths, as LC_ALL=C sort has
--   it). A folder is entered unless it is a link: links to folders are
--   never followed there (they may loop, or lead out of the tree that was
--   named), and each one gives a note. A link whose name has a suffix is
--   followed to a regular file.
--   A file or folder reached twice (two roots, a bind mount, hard links)
--   is taken once, by (device, inode).
-- Returns a list of entries, each one of
--   { path = p, size = bytes }        a regular file to read
--   { path = p, skip = why }          one that would be read but is not a
--                                     regular file (a FIFO, a device, a
--                                     dangling link): never opened
--   { path = p, note = why }          a link to a folder, not entered
--   { path = p, error = message }     a root, or a folder under one, that
--                                     cannot be reached or listed
function M.walk(roots, suffixes)
  local fs = require "kl.fs"
  suffixes = suffixes or { ".cu", ".cuh" }
  local out, seen = {}, {}
  local function once(st)
    local id = st.dev .. ":" .. st.ino
    if seen[id] then return false end
    seen[id] = true
    return true
  end
  local function take(path, st)
    if st.type == "file" then
      if once(st) then out[#out + 1] = { path = path, size = st.size } end
    else
      out[#out + 1] = { path = path, skip = string.format("a %s, not a regular file", st.type) }
    end
  end
  -- Folders to list, last first: each frame is a folder's entries in order.
  local stack = {}
  local function enter(path, follow)
    local names, lerr = fs.list(path, follow)
    if not names then
      out[#out + 1] = { path = path, error = string.format("cannot list '%s': %s", M.display(path), lerr) }
      return
    end
    local entries = {}
    for _, name in ipairs(names) do
      local child = join(path, name)
      local st, serr = fs.stat(child, false)
      if st then
        entries[#entries + 1] = { key = st.type == "directory" and name .. "/" or name, path = child, st = st, name = name }
      else
        entries[#entries + 1] = { key = name, path = child, err = serr, name = name }
      end
    end
    -- Lua compares strings with strcoll: byte order in the C locale, which
    -- klineage never leaves.
    table.sort(entries, function(a, b) return a.key < b.key end)
    stack[#stack + 1] = { entries = entries, i = 0 }
  end
  local function step(e)
    local st = e.st
    if not st then
      if has_suffix(e.name, suffixes) then out[#out + 1] = { path = e.path, skip = e.err } end
    elseif st.type == "directory" then
      if once(st) then enter(e.path, false) end
    elseif st.type == "link" then
      local target = fs.stat(e.path)
      if target and target.type == "directory" then
        out[#out + 1] = { path = e.path, note = "a link to a folder, not followed inside a folder" }
      elseif has_suffix(e.name, suffixes) then
        if target then take(e.path, target) else out[#out + 1] = { path = e.path, skip = "a dangling link" } end
      end
    elseif has_suffix(e.name, suffixes) then
      take(e.path, st)
    end
  end
  for _, root in ipairs(roots) do
    local st, serr = fs.stat(root)
    if not st then
      out[#out + 1] = { path = root, error = string.format("cannot open '%s': %s", M.display(root), serr) }
    elseif st.type == "directory" then
      if once(st) then enter(root, true) end
      while #stack > 0 do
        local top = stack[#stack]
        top.i = top.i + 1
        local e = top.entries[top.i]
        if e then step(e) else stack[#stack] = nil end
      end
    else
      take(root, st)
    end
  end
  return out
end

return M
