-- The caches against other local users: the emu cache (shared objects that
-- run on the host) and the cubin cache live only in folders of this user's
-- that no one else can write, found without /tmp fallbacks; a planted
-- folder or file is refused with io_error, naming the path and why.
local cache = require "klineage.device.cache"
local emu = require "klineage.device.emu"
local proc = require "kl.proc"
local safedir = require "kl.safedir"
local host = require "kl.host"

local root = os.tmpname()
os.remove(root)
assert(os.execute("mkdir -m 0700 '" .. root .. "'"))

local function sh(cmd) return os.execute(cmd) == true end
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function mode_of(path)
  local h = io.popen("stat -c %a " .. q(path))
  local m = h:read("l")
  h:close()
  return m
end

local SRC = 'extern "C" __global__ void k(int *o) { o[threadIdx.x] = threadIdx.x; }\n'

-- as root, another owner is one chown away; as anyone else it cannot be faked
local function give_away(path)
  return sh("chown -h 65534 " .. q(path) .. " 2>/dev/null")
end

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")

-- Runs klineage with these arguments and env laid over this one's; returns
-- its stdout lines, exit code and stderr.
local function klineage_with(env, ...)
  local p = assert(proc.spawn { argv = { host.executable(), ... }, env = env })
  local lines = {}
  while true do
    local line = p:read_line(120)
    if not line then break end
    lines[#lines + 1] = line
  end
  local status = p:wait(30) or {}
  local err = p:stderr()
  p:close()
  return lines, status.code, err
end

-- Runs a Lua script in a fresh klineage, as klineage_with.
local function run_with(env, script)
  local file = root .. "/script-" .. math.random(1 << 30) .. ".lua"
  local h = assert(io.open(file, "w"))
  h:write(script)
  h:close()
  local lines, code, err = klineage_with(env, "run", file)
  os.remove(file)
  return lines, code, err
end

describe("the emu cache: where", function()
  it("follows KLINEAGE_CACHE: $KLINEAGE_CACHE/emu, made 0700", function()
    local dir = root .. "/kc"
    local lines, code, err = run_with({ KLINEAGE_CACHE = dir, XDG_CACHE_HOME = false, HOME = "/nonexistent" }, [[
      local emu = require "klineage.device.emu"
      print((emu.cache_dir()))
      local m = assert(emu.compile('extern "C" __global__ void k(int *o) { o[0] = 1; }\n'))
      print(m.path)
    ]])
    if code ~= 0 then fail("exit %s: %s", tostring(code), err) end
    expect(lines[1]):equals(dir .. "/emu")
    expect(lines[2]:sub(1, #dir + 5)):equals(dir .. "/emu/")
    expect(mode_of(dir .. "/emu")):equals("700")
  end)
  it("is where the gate's emu builds go, through `klineage gate`", function()
    local dir = root .. "/kg"
    local lines, code, err = klineage_with({ KLINEAGE_CACHE = dir }, "gate", here .. "/../fixtures/workloads/saxpy",
      "--backend", "emu", "--journal", root .. "/journal")
    if code ~= 0 then fail("exit %s: %s %s", tostring(code), table.concat(lines, "\n"), err) end
    expect(table.concat(lines, "\n")):contains("(emu): ok")
    local h = io.popen("ls " .. q(dir .. "/emu"))
    local listing = h:read("a")
    h:close()
    expect(listing):matches("%x+%.so\n")
  end)
  it("never falls back to /tmp: without HOME, the password database's home", function()
    local home = assert(safedir.home())
    local lines = run_with({ KLINEAGE_CACHE = false, XDG_CACHE_HOME = false, HOME = false },
      'print((require("klineage.device.emu").cache_dir()))\nprint((require("klineage.device.cache").dir()))\n')
    expect(lines[1]):equals(home .. "/.cache/klineage/emu")
    expect(lines[2]):equals(home .. "/.cache/klineage/cubin")
  end)
  it("ignores a relative XDG_CACHE_HOME, as the XDG spec says", function()
    local lines = run_with({ KLINEAGE_CACHE = false, XDG_CACHE_HOME = "rel", HOME = "/home/u" },
      'print((require("klineage.device.emu").cache_dir()))\n')
    expect(lines[1]):equals("/home/u/.cache/klineage/emu")
  end)
end)

describe("the emu cache: planted folders and files", function()
  it("builds into a fresh private folder, the .so closed to others", function()
    local built = assert(emu.build(SRC, { cache_dir = root .. "/fresh/emu" }))
    expect(built.compiled):is_true()
    expect(mode_of(root .. "/fresh/emu")):equals("700")
    expect(tonumber(mode_of(built.path), 8) & 18):equals(0) -- no group or other write
  end)
  it("refuses a folder others can write", function()
    local dir = root .. "/open"
    assert(sh("mkdir -m 0777 " .. q(dir) .. " && chmod 0777 " .. q(dir)))
    local m, f = emu.compile(SRC, { cache_dir = dir })
    expect(m):is_nil()
    expect(f.verdict):equals("io_error")
    expect(f.message):contains(dir)
    expect(f.message):contains("writable by group or others (mode 0777)")
  end)
  it("refuses a symbolic link to a folder, even one of ours", function()
    local real, link = root .. "/real", root .. "/link"
    assert(sh("mkdir -m 0700 " .. q(real) .. " && ln -s " .. q(real) .. " " .. q(link)))
    local m, f = emu.compile(SRC, { cache_dir = link })
    expect(m):is_nil()
    expect(f.verdict):equals("io_error")
    expect(f.message):contains("'" .. link .. "' is a symbolic link")
  end)
  it("refuses a folder under one others can write (no sticky bit)", function()
    local open = root .. "/open2"
    assert(sh("mkdir -m 0777 " .. q(open) .. " && chmod 0777 " .. q(open)))
    local m, f = emu.compile(SRC, { cache_dir = open .. "/emu" })
    expect(m):is_nil()
    expect(f.verdict):equals("io_error")
    expect(f.message):contains("without the sticky bit")
  end)
  it("refuses a $KLINEAGE_CACHE/emu that others can write", function()
    local dir = root .. "/kp"
    assert(sh("mkdir -m 0700 " .. q(dir) .. " && mkdir -m 0777 " .. q(dir .. "/emu") .. " && chmod 0777 " .. q(dir .. "/emu")))
    local lines = run_with({ KLINEAGE_CACHE = dir }, [[
      local m, f = require("klineage.device.emu").compile('extern "C" __global__ void k(int *o) { o[0] = 2; }\n')
      print(f and f.verdict, f and f.message)
    ]])
    expect(lines[1]):contains("io_error")
    expect(lines[1]):contains(dir .. "/emu")
  end)
  it("refuses a folder of another user", function()
    local dir = root .. "/theirs"
    assert(sh("mkdir -m 0755 " .. q(dir)))
    if not give_away(dir) then it.skip("refuses a folder of another user", "needs root to chown") end
    local m, f = emu.compile(SRC, { cache_dir = dir })
    expect(m):is_nil()
    expect(f.message):contains("owned by uid 65534")
  end)
  it("refuses a planted .so, and one that is a link; replaces one others could write", function()
    local dir = root .. "/planted"
    local built = assert(emu.build(SRC, { cache_dir = dir }))
    local so = built.path
    -- a link in its place, to a library of ours
    assert(sh("mv " .. q(so) .. " " .. q(so .. ".real") .. " && ln -s " .. q(so .. ".real") .. " " .. q(so)))
    local m, f = emu.compile(SRC, { cache_dir = dir })
    expect(m):is_nil()
    expect(f.verdict):equals("io_error")
    expect(f.message):contains("is a symbolic link")
    local _, of = emu.open(so)
    expect(of.verdict):equals("io_error")
    -- ours, but writable by others: built again, closed this time
    assert(sh("rm " .. q(so) .. " && mv " .. q(so .. ".real") .. " " .. q(so) .. " && chmod 0666 " .. q(so)))
    local again = assert(emu.build(SRC, { cache_dir = dir }))
    expect(again.compiled):is_true()
    expect(tonumber(mode_of(so), 8) & 18):equals(0)
    if give_away(so) then
      local _, gf = emu.compile(SRC, { cache_dir = dir })
      expect(gf.verdict):equals("io_error")
      expect(gf.message):contains("owned by uid 65534")
    end
  end)
end)

describe("the cubin cache: the same rules", function()
  local saxpy = 'extern "C" __global__ void s(float *y) { y[threadIdx.x] *= 2.0f; }\n'
  it("stores into private folders and files", function()
    local dir = root .. "/cubin"
    local r = assert(cache.compile(saxpy, { arch = "sm_90", cache_dir = dir }))
    expect(r.cached):is_false()
    expect(r.cache_error):is_nil()
    expect(mode_of(dir)):equals("700")
    expect(mode_of(dir .. "/" .. r.key:sub(1, 2))):equals("700")
    expect(mode_of(dir .. "/" .. r.key:sub(1, 2) .. "/" .. r.key .. ".json")):equals("600")
    expect(assert(cache.compile(saxpy, { arch = "sm_90", cache_dir = dir })).cached):is_true()
  end)
  it("refuses a cubin folder others can write, and a linked one", function()
    local open = root .. "/cubin-open"
    assert(sh("mkdir -m 0777 " .. q(open) .. " && chmod 0777 " .. q(open)))
    local r, f = cache.compile(saxpy, { arch = "sm_90", cache_dir = open })
    expect(r):is_nil()
    expect(f.verdict):equals("io_error")
    expect(f.message):contains("writable by group or others")
    local link = root .. "/cubin-link"
    assert(sh("ln -s " .. q(root .. "/cubin") .. " " .. q(link)))
    local r2, f2 = cache.compile(saxpy, { arch = "sm_90", cache_dir = link })
    expect(r2):is_nil()
    expect(f2.message):contains("is a symbolic link")
    local job = cache.spawn_compile(saxpy, { arch = "sm_90", cache_dir = link })
    local r3, f3 = cache.finish(job)
    expect(r3):is_nil()
    expect(f3.verdict):equals("io_error")
  end)
  it("refuses a planted entry: a link in place of its JSON", function()
    local dir = root .. "/cubin"
    local key = cache.key(saxpy, { arch = "sm_90" })
    local json = string.format("%s/%s/%s.json", dir, key:sub(1, 2), key)
    assert(sh("mv " .. q(json) .. " " .. q(json .. ".real") .. " && ln -s " .. q(json .. ".real") .. " " .. q(json)))
    local hit, f = cache.lookup(key, dir)
    expect(hit):is_nil()
    expect(f.verdict):equals("io_error")
    expect(f.message):contains("is a symbolic link")
    assert(sh("rm " .. q(json) .. " && mv " .. q(json .. ".real") .. " " .. q(json)))
    expect(assert(cache.lookup(key, dir)).cached):is_true()
  end)
  it("takes a JSON others could write as a miss, and rewrites it closed", function()
    local dir = root .. "/cubin"
    local key = cache.key(saxpy, { arch = "sm_90" })
    local json = string.format("%s/%s/%s.json", dir, key:sub(1, 2), key)
    assert(sh("chmod 0666 " .. q(json)))
    local hit, why = cache.lookup(key, dir)
    expect(hit):is_false()
    expect(why):contains("loose")
    expect(assert(cache.compile(saxpy, { arch = "sm_90", cache_dir = dir })).cached):is_false()
    expect(mode_of(json)):equals("600")
  end)
end)

os.execute("rm -rf " .. q(root))
