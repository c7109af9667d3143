-- The lock of a folder a command writes (a run folder, an eval's folder):
-- one writer at a time, so that two commands on one run never both judge
-- and charge the same candidates (two evals on one folder once spent 8
-- cycles under a budget of 4).
--
--   runlock.acquire(dir) -> lock | nil, failure (bad_input: another
--       process holds it, named by its pid and command line; io_error: the
--       lock file cannot be made)
--   lock:release()   (also lock:close(), <close>); safe to call twice
--   runlock.FILE = ".lock", the lock file inside the folder
--
-- The lock is an flock(2) on DIR/.lock (kl.fs.lock), which the kernel drops
-- when the process ends, crashed or killed: nothing stale is left to clean
-- up. The holder writes "pid N: command line" into the file, for the one
-- that finds it taken. Within one process a folder is taken once and
-- counted (a command that holds its run folder may render its report into
-- it): two flocks of one process on one file would refuse each other.
local files = require "klineage.base.files"
local verdicts = require "klineage.base.verdicts"

local M = {}

M.FILE = ".lock"

local held = {} -- real path of the folder -> { lock, count }

local Lock = {}
Lock.__index = Lock

-- This process's command line, as the system has it (the script a
-- `klineage run` runs included); arguments joined by spaces.
local function command_line()
  local raw = files.read_file("/proc/self/cmdline", 64 * 1024)
  if not raw or raw == "" then return "klineage" end
  local words = {}
  for w in raw:gmatch("([^%z]*)%z") do words[#words + 1] = w end
  if #words == 0 then words[1] = raw end
  return files.display(table.concat(words, " "))
end

function M.acquire(dir)
  local fs = require "kl.fs"
  local real, rerr = fs.realpath(dir)
  if not real then
    return nil, verdicts.failure("io_error", string.format("cannot lock '%s': %s", files.display(dir), rerr))
  end
  local entry = held[real]
  if not entry then
    local pid = require("kl.proc").getpid()
    local lock, why, holder = fs.lock(real .. "/" .. M.FILE, string.format("pid %d: %s\n", pid, command_line()))
    if not lock then
      if why == "held" then
        local who = holder and holder:match("^[^\n]+") or "another process (it has not said which yet)"
        return nil, verdicts.failure("bad_input", string.format("the folder '%s' is in use by %s: wait for it to end",
          files.display(dir), files.display(who)), { stage = "locked" })
      end
      return nil, verdicts.failure("io_error", string.format("cannot lock '%s': %s", files.display(real .. "/" .. M.FILE), why))
    end
    entry = { lock = lock, count = 0 }
    held[real] = entry
  end
  entry.count = entry.count + 1
  return setmetatable({ real = real }, Lock)
end

function Lock:release()
  local real = self.real
  local entry = real and held[real]
  if not entry then return end
  self.real = nil
  entry.count = entry.count - 1
  if entry.count == 0 then
    entry.lock:release()
    held[real] = nil
  end
end

Lock.close = Lock.release
Lock.__close = Lock.release
Lock.__gc = Lock.release

return M
