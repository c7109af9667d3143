-- klineage match and the file system, and the misses it must not hide:
-- paths named like options (a folder "-delete" once reached find and
-- deleted the tree), links, FIFOs and loops while walking folders, --in-place
-- keeping links and modes, the file size limit, the step cap, and the
-- validation of numeric options. End to end through the klineage binary
-- where the shell matters (a glob, PATH), in-process elsewhere.
local testing = require "klineage.cli.testing"
local fs = require "kl.fs"
local cmd = require "klineage.cli.commands.match"
local exe = require("kl.host").executable()
local q = testing.shell_quote

local KERNEL = [[
__global__ void k(float *a) {
  a[threadIdx.x] = 1.0f;
  __syncthreads();
}
]]

local mkdtemp, write, read = scratch_dir, write_file, read_file -- the runner's helpers



-- Every file under dir, with its contents, found by kl.fs (no find).
local function snapshot(dir)
  local out = {}
  local function walk(d, rel)
    for _, name in ipairs(assert(fs.list(d, false))) do
      local p, r = d .. "/" .. name, rel .. name
      local st = assert(fs.stat(p, false))
      if st.type == "directory" then
        walk(p, r .. "/")
      elseif st.type == "file" then
        out[r] = read(p)
      else
        out[r] = st.type
      end
    end
  end
  walk(dir, "")
  return out
end

-- The klineage binary under sh: `script` is shell text after the binary's
-- name (so a glob expands), run in cwd with PATH = path when given.
-- Returns stdout, stderr and the exit code.
local function sh(cwd, script, path)
  local err = os.tmpname()
  local line = string.format("cd %s && %sexec %s %s 2>%s", q(cwd), path and ("PATH=" .. q(path) .. " ") or "", q(exe),
    script, q(err))
  local h = io.popen(line, "r")
  local out = h:read("a")
  local _, _, code = h:close()
  local e = read(err)
  os.remove(err)
  return out, e, code
end

-- cmd.run in this process: the exit code, stdout and stderr (a usage
-- error comes back as exit 2 with its message, as cli.lua prints it).
local function run(argv)
  local out, err = {}, {}
  local env = {
    stdout = { write = function(_, s) out[#out + 1] = s end },
    stderr = { write = function(_, s) err[#err + 1] = s end },
  }
  local ok, code = pcall(cmd.run, argv, env)
  if not ok then
    if type(code) == "table" and code.usage then return 2, table.concat(out), table.concat(err) .. code.usage end
    error(code, 0)
  end
  return code, table.concat(out), table.concat(err)
end

describe("klineage match: paths named like options", function()
  it("searches a folder named -delete from a glob and deletes nothing", function()
    local dir = mkdtemp()
    assert(os.execute("mkdir -p " .. q(dir .. "/-delete/sub")))
    write(dir .. "/-delete/a.cu", KERNEL)
    write(dir .. "/-delete/sub/b.cuh", KERNEL)
    write(dir .. "/-delete/notes.txt", "not CUDA\n")
    write(dir .. "/keep.cu", KERNEL)
    write(dir .. "/readme.txt", "hello\n")
    local before = snapshot(dir)
    local out, err, code = sh(dir, "match " .. q("__syncthreads();") .. " *")
    check(code == 0, "exit %s: %s", tostring(code), err)
    expect(snapshot(dir)):equals(before)
    -- the glob's order, then each folder's .cu and .cuh files in path
    -- order; readme.txt, named, is searched too (and does not match)
    expect(out):equals("-delete/a.cu:3:3: __syncthreads();\n-delete/sub/b.cuh:3:3: __syncthreads();\n"
      .. "keep.cu:3:3: __syncthreads();\n")
    expect(err):equals("")
  end)

  it("needs no other program: it walks folders with PATH empty", function()
    local dir = mkdtemp()
    assert(os.execute("mkdir -p " .. q(dir .. "/src/deep")))
    write(dir .. "/src/deep/k.cu", KERNEL)
    local out, err, code = sh(dir, "match " .. q("__syncthreads();") .. " src", dir .. "/no-such-bin")
    check(code == 0, "exit %s: %s", tostring(code), err)
    expect(out):equals("src/deep/k.cu:3:3: __syncthreads();\n")
  end)

  it("ends options at --: every later word is a FILE, even --in-place and -h", function()
    local dir = mkdtemp()
    write(dir .. "/--in-place", KERNEL)
    write(dir .. "/-h", KERNEL)
    local before = snapshot(dir)
    local out, err, code = sh(dir, "match " .. q("__syncthreads();") .. " --rewrite " .. q("__syncwarp();") .. " -- *")
    check(code == 0, "exit %s: %s", tostring(code), err)
    expect(snapshot(dir)):equals(before) -- a diff, not an edit in place
    expect(out):contains("--- a/--in-place\n+++ b/--in-place\n")
    expect(out):contains("--- a/-h\n+++ b/-h\n")
    expect(out):contains("+  __syncwarp();")
  end)

  it("takes a pattern that starts with -- after --", function()
    local path = write(os.tmpname() .. ".cu", "__global__ void k(int i) { --i; }\n")
    local code, out = run({ "--", "--i", path })
    expect(code):equals(0)
    expect(out):equals(path .. ":1:28: --i\n")
  end)
end)

describe("klineage match: walking folders", function()
  it("takes files in path order, follows file links, never folder links, and skips FIFOs", function()
    local dir = mkdtemp()
    assert(os.execute("mkdir -p " .. q(dir .. "/t/a")))
    write(dir .. "/t/a/x.cu", KERNEL)
    write(dir .. "/t/a.cu", KERNEL)
    write(dir .. "/t/a-b.cu", KERNEL)
    write(dir .. "/t/B.cu", KERNEL)
    write(dir .. "/real.cu", KERNEL)
    assert(os.execute(table.concat({
      "cd " .. q(dir .. "/t"),
      "ln -s .. up",                 -- a loop back to the parent
      "ln -s a again",               -- a second way into a/
      "ln -s ../real.cu link.cu",    -- a file out of the tree, by a link
      "ln -s nowhere.cu dangling.cu",
      "mkfifo pipe.cu",
    }, " && ")))
    local t = dir .. "/t"
    local code, out, err = run({ "__syncthreads();", t })
    expect(code):equals(cmd.exit.skipped)
    local files = {}
    for f in out:gmatch("([^\n]*):3:3: __syncthreads%(%);\n") do files[#files + 1] = f:sub(#t + 2) end
    -- C order of the paths: "B" < "a-b.cu" < "a.cu" < "a/x.cu" < "link.cu"
    expect(files):equals({ "B.cu", "a-b.cu", "a.cu", "a/x.cu", "link.cu" })
    expect(err):contains("note: " .. t .. "/again: a link to a folder, not followed inside a folder\n")
    expect(err):contains("note: " .. t .. "/up: a link to a folder, not followed inside a folder\n")
    expect(err):contains("warning: " .. t .. "/pipe.cu: skipped: a fifo, not a regular file\n")
    expect(err):contains("warning: " .. t .. "/dangling.cu: skipped: a dangling link\n")
  end)

  it("follows a link named on the command line, and searches a file reached twice once", function()
    local dir = mkdtemp()
    write(dir .. "/k.cu", KERNEL)
    assert(os.execute("cd " .. q(dir) .. " && ln -s . here && ln -s k.cu alias.cu"))
    local code, out = run({ "__syncthreads();", dir .. "/here", dir .. "/k.cu", dir .. "/alias.cu" })
    expect(code):equals(0)
    -- here/alias.cu comes first (in byte order) and is k.cu, by a link
    expect(out):equals(dir .. "/here/alias.cu:3:3: __syncthreads();\n")
  end)

  it("skips a FIFO or a device named on the command line without opening it, and goes on", function()
    local dir = mkdtemp()
    assert(os.execute("mkfifo " .. q(dir .. "/fifo")))
    local k = write(dir .. "/k.cu", KERNEL)
    local code, out, err = run({ "__syncthreads();", dir .. "/fifo", "/dev/zero", k })
    expect(code):equals(cmd.exit.skipped)
    expect(out):equals(k .. ":3:3: __syncthreads();\n")
    expect(err):contains(dir .. "/fifo: skipped: a fifo, not a regular file")
    expect(err):contains("/dev/zero: skipped: a char device, not a regular file")
  end)

  it("prints a name with a newline escaped, on one line", function()
    local dir = mkdtemp()
    write(dir .. "/new\nline.cu", KERNEL)
    local code, out = run({ "__syncthreads();", dir })
    expect(code):equals(0)
    expect(out):equals(dir .. "/new\\nline.cu:3:3: __syncthreads();\n")
  end)

  it("says which file is missing, exits 2, and still searches the others", function()
    local k = write(os.tmpname() .. ".cu", KERNEL)
    local code, out, err = run({ "__syncthreads();", "/no/such/file.cu", k })
    expect(code):equals(2)
    expect(out):equals(k .. ":3:3: __syncthreads();\n")
    expect(err):contains("cannot open '/no/such/file.cu': No such file or directory")
  end)
end)

describe("klineage match --in-place", function()
  local REWRITE = { "__syncthreads();", "--rewrite", "__syncwarp();", "--in-place" }
  local function rewrite(path)
    local argv = { table.unpack(REWRITE) }
    table.insert(argv, 2, path)
    return run(argv)
  end
  local want = (KERNEL:gsub("__syncthreads", "__syncwarp"))

  it("writes where a link leads and leaves the link a link", function()
    local dir = mkdtemp()
    write(dir .. "/real.cu", KERNEL)
    assert(os.execute("cd " .. q(dir) .. " && ln -s real.cu link.cu"))
    local code, _, err = rewrite(dir .. "/link.cu")
    check(code == 0, "exit %s: %s", tostring(code), err)
    expect(fs.stat(dir .. "/link.cu", false).type):equals("link")
    expect(read(dir .. "/real.cu")):equals(want)
    expect(assert(fs.list(dir))):equals({ "link.cu", "real.cu" }) -- no temporary left behind
  end)

  it("keeps the file's mode: 755 stays 755, 640 stays 640, whatever the umask", function()
    local dir = mkdtemp()
    for _, m in ipairs({ { "x.cu", "755", 493 }, { "p.cu", "640", 416 }, { "s.cu", "4750", 2536 } }) do
      local path = write(dir .. "/" .. m[1], KERNEL)
      assert(os.execute("chmod " .. m[2] .. " " .. q(path)))
      expect(fs.stat(path).mode):equals(m[3])
      local code, _, err = rewrite(path)
      check(code == 0, "exit %s: %s", tostring(code), err)
      expect(read(path)):equals(want)
      expect(fs.stat(path).mode):equals(m[3])
    end
  end)

  -- Only root may give a file away, so only root can see this kept.
  local probe = write(os.tmpname(), "")
  local as_root = fs.stat(probe).uid == 0
  os.remove(probe)
  if as_root then
    it("keeps the file's owner and group", function()
      local path = write(os.tmpname() .. ".cu", KERNEL)
      assert(os.execute("chown 65534:65534 " .. q(path) .. " && chmod 4755 " .. q(path)))
      expect((rewrite(path))):equals(0)
      local st = fs.stat(path)
      expect({ st.uid, st.gid, st.mode }):equals({ 65534, 65534, tonumber("4755", 8) })
      expect(read(path)):equals(want)
    end)
  else
    it.skip("keeps the file's owner and group", "needs root, to give a file to another user")
  end

  it("keeps a link into another folder, and writes in the target's folder", function()
    local a, b = mkdtemp(), mkdtemp()
    write(b .. "/t.cu", KERNEL)
    assert(os.execute("ln -s " .. q(b .. "/t.cu") .. " " .. q(a .. "/l.cu")))
    local code = rewrite(a .. "/l.cu")
    expect(code):equals(0)
    expect(fs.stat(a .. "/l.cu", false).type):equals("link")
    expect(read(b .. "/t.cu")):equals(want)
    expect(assert(fs.list(a))):equals({ "l.cu" })
    expect(assert(fs.list(b))):equals({ "t.cu" })
  end)

  -- A write that fails half-way (EFBIG under ulimit -f, as ENOSPC on a
  -- full disk) leaves the old file whole and no temporary beside it.
  it("loses nothing when the write fails", function()
    local dir = mkdtemp()
    local path = write(dir .. "/k.cu", KERNEL)
    -- the rewrite makes the file some 40 KB; ulimit -f 4 allows 2 to 4 KB
    local big = "__syncwarp(); /*" .. string.rep("x", 40000) .. "*/"
    local h = io.popen(string.format("cd %s && trap '' XFSZ; ulimit -f 4; exec %s match %s k.cu --in-place --rewrite %s 2>&1",
      q(dir), q(exe), q("__syncthreads();"), q(big)))
    local out = h:read("a")
    local _, _, code = h:close()
    expect(code):equals(2)
    expect(out):contains("cannot write 'k.cu': File too large")
    expect(read(path)):equals(KERNEL)
    expect(assert(fs.list(dir))):equals({ "k.cu" })
    -- without the limit the same edit goes through
    expect((run({ "__syncthreads();", path, "--in-place", "--rewrite", big }))):equals(0)
    expect(#read(path)):at_least(40000)
  end)

  it("says that other hard links keep the old text", function()
    local dir = mkdtemp()
    write(dir .. "/one.cu", KERNEL)
    assert(os.execute("ln " .. q(dir .. "/one.cu") .. " " .. q(dir .. "/two.cu")))
    local code, _, err = rewrite(dir .. "/one.cu")
    expect(code):equals(0)
    expect(err):contains("had 2 hard links: the other names keep the old text")
    expect(read(dir .. "/one.cu")):equals(want)
    expect(read(dir .. "/two.cu")):equals(KERNEL)
  end)
end)

describe("klineage match: the size limit", function()
  -- Just over the default 4 MiB: many copies of the kernel.
  local big_text = string.rep(KERNEL, (4 * 1024 * 1024) // #KERNEL + 1)

  it("skips a file over --max-file-size unread, names it, searches the rest, and exits 4", function()
    local dir = mkdtemp()
    local big = write(dir .. "/big.cu", big_text)
    local small = write(dir .. "/small.cu", KERNEL)
    local code, out, err = run({ "__syncthreads();", big, small })
    expect(code):equals(cmd.exit.skipped)
    expect(out):equals(small .. ":3:3: __syncthreads();\n")
    expect(err):equals(string.format("klineage match: warning: %s: skipped: %d bytes, over --max-file-size (4194304 bytes)\n",
      big, #big_text))
    local c2, o2 = run({ "__syncthreads();", "--max-file-size", tostring(#big_text), big })
    expect(c2):equals(0)
    local n = 0
    for _ in o2:gmatch("__syncthreads%(%);\n") do n = n + 1 end
    expect(n):equals((4 * 1024 * 1024) // #KERNEL + 1)
    local c3, _, e3 = run({ "__syncthreads();", "--max-file-size", "10", small })
    expect(c3):equals(cmd.exit.skipped)
    expect(e3):contains("small.cu: skipped: " .. #KERNEL .. " bytes, over --max-file-size (10 bytes)")
  end)

  it("refuses limits that are not positive whole numbers, or over the ceiling", function()
    local small = write(os.tmpname() .. ".cu", KERNEL)
    for _, bad in ipairs({ "-5", "0", "1.5", "abc", "1e300", tostring(cmd.MAX_FILE_CEILING + 1) }) do
      local code, out, err = run({ "__syncthreads();", small, "--max-file-size=" .. bad })
      expect(code):equals(2)
      expect(out):equals("")
      expect(err):contains("--max-file-size")
    end
  end)
end)

describe("klineage match: the step cap", function()
  local match = require "klineage.pattern.match"
  local PATTERN = "__syncthreads(); ... __syncwarp();"
  -- A short sequence that matches in a few steps, and a long one whose
  -- `...` has thousands of statements to walk.
  local function sequence(name, n)
    local body = {}
    for i = 1, n do body[#body + 1] = string.format("  x[%d] = %d;\n", i, i) end
    return string.format("__global__ void %s(int *x) {\n  __syncthreads();\n%s  __syncwarp();\n}\n", name,
      table.concat(body))
  end
  local text = sequence("small", 1) .. sequence("big", 3000)
  local path = write(os.tmpname() .. ".cu", text)
  -- A cap between what the two need, found with kl.match itself.
  local cap
  local pat = assert(match.compile(PATTERN))
  for _, n in ipairs({ 10, 20, 50, 100, 200, 500, 1000, 2000 }) do
    local found, stats = pat:find(text, { max_steps = n })
    if #found >= 1 and stats.capped >= 1 then cap = n break end
  end

  it("warns with the file and the number of capped attempts, and exits 3 though it matched", function()
    check(cap ~= nil, "no cap in 10..2000 lets the short sequence match and stops the long one")
    local code, out, err = run({ PATTERN, path, "--max-steps", tostring(cap) })
    expect(code):equals(cmd.exit.capped)
    expect(out):contains(path .. ":2:3: __syncthreads(); x[1] = 1; __syncwarp();\n")
    expect(err):matches("klineage match: warning: " .. path:gsub("%p", "%%%0")
      .. ": %d+ match attempts? stopped at the step cap %(%-%-max%-steps " .. cap .. "%)")
    local c2, o2, e2 = run({ PATTERN, path, "--max-steps", "1000000" })
    expect(c2):equals(0)
    expect(e2):equals("")
    expect(o2):contains(path .. ":7:3: __syncthreads(); x[1] = 1; x[2] = 2;")
  end)

  it("says so at the default cap too, as kl.match counts it", function()
    local long = write(os.tmpname() .. ".cu", sequence("long", 40000))
    local _, stats = pat:find(read(long), { max_steps = cmd.DEFAULT_MAX_STEPS })
    local code, _, err = run({ PATTERN, long })
    if stats.capped > 0 then
      expect(code):equals(cmd.exit.capped)
      expect(err):contains("stopped at the step cap (--max-steps 20000)")
    else
      expect(code):equals(0)
      expect(err):equals("")
    end
    os.remove(long)
  end)

  it("does not write a file in place whose search was capped", function()
    check(cap ~= nil, "no cap found")
    local copy = write(os.tmpname() .. ".cu", text)
    local code, _, err = run({ PATTERN, copy, "--rewrite", "__syncwarp(); ... __syncthreads();", "--in-place",
      "--max-steps", tostring(cap) })
    expect(code):equals(cmd.exit.capped)
    expect(err):contains(copy .. ": not written: its search hit the step cap")
    expect(read(copy)):equals(text)
    local c2 = run({ PATTERN, copy, "--rewrite", "__syncwarp(); ... __syncthreads();", "--in-place" ,
      "--max-steps", "1000000" })
    expect(c2):equals(0)
    expect(read(copy)):never_contains("__syncthreads();\n  x[1]")
    os.remove(copy)
  end)

  it("warns when a file's whole search stops at --max-total-steps, and writes nothing in place", function()
    local copy = write(os.tmpname() .. ".cu", text)
    local code, out, err = run({ PATTERN, copy, "--max-total-steps", "5" })
    expect(code):equals(cmd.exit.capped)
    expect(err):contains(copy .. ": the search stopped at its total work cap (5 steps)")
    expect(out):equals("")
    local c2, _, e2 = run({ PATTERN, copy, "--rewrite", "__syncwarp(); ... __syncthreads();", "--in-place",
      "--max-total-steps", "5" })
    expect(c2):equals(cmd.exit.capped)
    expect(e2):contains("total work cap")
    expect(read(copy)):equals(text)
    for _, bad in ipairs({ "0", "-5", "1.5", "x" }) do
      local c3, _, e3 = run({ PATTERN, copy, "--max-total-steps=" .. bad })
      expect(c3):equals(cmd.exit.error)
      expect(e3):contains("--max-total-steps")
    end
    os.remove(copy)
  end)

  it("warns when a file's matches are too many to show, and exits 3", function()
    -- 20,000 nested ifs: each match holds the rest of the nest
    local nested = write(os.tmpname() .. ".cu",
      "void f(int c, int x) {\n" .. string.rep("if (c) ", 20000) .. "x = 1;\n}\n")
    local code, out, err = run({ "if ($c) $S", nested })
    expect(code):equals(cmd.exit.capped)
    expect(err):matches("klineage match: warning: .*: %d+ matches not shown: nested matches repeat")
    expect(out):contains(":2:1: if (c) if (c)")
    os.remove(nested)
  end)

  it("refuses caps that are not positive whole numbers, or over 32 bits", function()
    for _, bad in ipairs({ "-5", "0", "2.5", "x", "4294967296" }) do
      local code, out, err = run({ PATTERN, path, "--max-steps=" .. bad })
      expect(code):equals(2)
      expect(out):equals("")
      expect(err):contains("--max-steps")
    end
    expect((run({ PATTERN, path, "--max-steps", "4294967295" }))):equals(0)
  end)
end)

describe("klineage match --help", function()
  it("documents the options, the exit statuses and the limits", function()
    local out, code = testing.klineage("match", "--help")
    expect(code):equals(0)
    for _, s in ipairs({ "--max-steps N", "--max-file-size B", "--in-place", "default 20000", "default 4194304",
                         "\n  2  a bad option", "\n  4  some input was skipped", "\n  3  some match attempt hit the step cap",
                         "\n  0  something matched", "\n  1  nothing matched", "a link to a folder is not",
                         "'klineage match PATTERN -- *'" }) do
      expect(out):contains(s)
    end
  end)
end)

describe("kl.fs", function()
  it("lists a folder in byte order, whatever the locale", function()
    local dir = mkdtemp()
    for _, n in ipairs({ "b", "B", "a", "\xc3\xa9", ".h", "a b" }) do write(dir .. "/" .. n, "") end
    expect(assert(fs.list(dir))):equals({ ".h", "B", "a", "a b", "b", "\xc3\xa9" })
  end)

  it("refuses to list through a link when told not to follow", function()
    local dir = mkdtemp()
    assert(os.execute("mkdir " .. q(dir .. "/d") .. " && ln -s d " .. q(dir .. "/l")))
    expect(assert(fs.list(dir .. "/l"))):equals({})
    local names, why, code = fs.list(dir .. "/l", false)
    expect(names):is_nil()
    expect(code == "ELOOP" or code == "ENOTDIR"):is_true()
    expect(why):never_contains(dir) -- the reason alone
    expect(fs.stat(dir .. "/l", false).type):equals("link")
    expect(fs.stat(dir .. "/l").type):equals("directory")
    local none, _, ncode = fs.stat(dir .. "/nothing")
    expect(none):is_nil()
    expect(ncode):equals("ENOENT")
  end)

  it("makes a temporary with exactly the mode asked, the umask aside", function()
    local dir = mkdtemp()
    local h, path = assert(fs.open_temp(dir .. "/.t-", tonumber("666", 8)))
    assert(h:write("x"))
    assert(h:close())
    expect(path:sub(1, #dir + 4)):equals(dir .. "/.t-")
    expect(#path):equals(#dir + 4 + 6)
    expect(fs.stat(path).mode):equals(tonumber("666", 8))
    expect(read(path)):equals("x")
    expect(function() fs.open_temp(dir .. "/.t-", 8 ^ 5) end):raises("mode must be")
    expect(function() fs.open_temp("", 420) end):raises("prefix empty")
  end)
end)
