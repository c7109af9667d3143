local cache = require "klineage.device.cache"
local proc = require "kl.proc"
local nvrtc = require "kl.nvrtc"

local dir = os.tmpname()
os.remove(dir)
dir = dir .. "-cubin"

local saxpy = [[
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]]

-- A compile function that counts its calls and delegates to NVRTC.
local calls = 0
local function counting(src, opts)
  calls = calls + 1
  return nvrtc.compile(src, opts)
end

local function files_in(d)
  local out = {}
  local h = io.popen("find '" .. d .. "' -type f 2>/dev/null | sort")
  for line in h:lines() do out[#out + 1] = line end
  h:close()
  return out
end

describe("cache: keys", function()
  local base = { arch = "sm_90", options = { "-DX=1" }, nvrtc_version = "13.0" }
  local k = cache.key(saxpy, base)
  it("is a SHA-256 in hex", function()
    expect(k):matches("^%x+$")
    expect(#k):equals(64)
  end)
  it("is stable", function()
    expect(cache.key(saxpy, { arch = "sm_90", options = { "-DX=1" }, nvrtc_version = "13.0" })):equals(k)
  end)
  it("changes with each component", function()
    expect(cache.key(saxpy .. " ", base) ~= k):is_true()
    expect(cache.key(saxpy, { arch = "sm_80", options = { "-DX=1" }, nvrtc_version = "13.0" }) ~= k):is_true()
    expect(cache.key(saxpy, { arch = "sm_90", options = { "-DX=2" }, nvrtc_version = "13.0" }) ~= k):is_true()
    expect(cache.key(saxpy, { arch = "sm_90", options = { "-DX=1" }, nvrtc_version = "13.1" }) ~= k):is_true()
    expect(cache.key(saxpy, { arch = "sm_90", options = { "-DX=1" }, nvrtc_version = "13.0", names = { "k<1>" } }) ~= k):is_true()
  end)
  it("keeps option order and boundaries", function()
    local a = cache.key(saxpy, { options = { "-DA", "-DB" }, nvrtc_version = "13.0" })
    local b = cache.key(saxpy, { options = { "-DB", "-DA" }, nvrtc_version = "13.0" })
    local c = cache.key(saxpy, { options = { "-DA-DB" }, nvrtc_version = "13.0" })
    expect(a ~= b and a ~= c and b ~= c):is_true()
  end)
  it("changes with the include folders kl.nvrtc adds (a toolkit with or without cccl)", function()
    local real = nvrtc.include_paths
    local before = cache.key(saxpy, base)
    nvrtc.include_paths = function() return { "/elsewhere/include" } end
    local ok, other = pcall(cache.key, saxpy, base)
    nvrtc.include_paths = real
    expect(ok):is_true()
    expect(other ~= before):is_true()
    expect(cache.key(saxpy, base)):equals(before)
  end)
  it("uses the installed NVRTC's version by default", function()
    local major, minor = nvrtc.version()
    expect(cache.key(saxpy, { arch = "sm_90" })):equals(cache.key(saxpy, { arch = "sm_90", nvrtc_version = major .. "." .. minor }))
  end)
end)

describe("cache: compile", function()
  it("misses, stores, then hits with the same result", function()
    calls = 0
    local a = assert(cache.compile(saxpy, { arch = "sm_90", cache_dir = dir, compile = counting }))
    expect(a.cached):is_false()
    expect(calls):equals(1)
    local b = assert(cache.compile(saxpy, { arch = "sm_90", cache_dir = dir, compile = counting }))
    expect(b.cached):is_true()
    expect(calls):equals(1)
    expect(b.cubin == a.cubin):is_true()
    expect(b.ptx == a.ptx):is_true()
    expect(b.functions):equals(a.functions)
    expect(math.type(b.functions.saxpy.registers)):equals("integer")
    expect(b.key):equals(a.key)
  end)
  it("leaves no temporary files", function()
    for _, f in ipairs(files_in(dir)) do expect(f):never_contains(".tmp.") end
    expect(#files_in(dir)):equals(3)
  end)
  it("misses on another option", function()
    calls = 0
    local c = assert(cache.compile(saxpy, { arch = "sm_90", options = { "-DUNUSED=1" }, cache_dir = dir, compile = counting }))
    expect(c.cached):is_false()
    expect(calls):equals(1)
  end)
  it("does not cache compile errors", function()
    calls = 0
    local r, msg = cache.compile("this is not CUDA", { cache_dir = dir, compile = counting })
    expect(r):is_nil()
    expect(msg):exists()
    cache.compile("this is not CUDA", { cache_dir = dir, compile = counting })
    expect(calls):equals(2)
  end)
end)

describe("cache: torn writes", function()
  local key = cache.key(saxpy, { arch = "sm_90" })
  local cubin_path = string.format("%s/%s/%s.cubin", dir, key:sub(1, 2), key)
  local json_path = cubin_path:gsub("%.cubin$", ".json")

  it("treats a truncated cubin as a miss and repairs it", function()
    local good = assert(cache.lookup(key, dir))
    -- a writer that crashed halfway (or a non-atomic one) left half a cubin
    local h = assert(io.open(cubin_path, "wb"))
    h:write(good.cubin:sub(1, #good.cubin // 2))
    h:close()
    local hit, why = cache.lookup(key, dir)
    expect(hit):is_false()
    expect(why):contains("torn: cubin")
    calls = 0
    local r = assert(cache.compile(saxpy, { arch = "sm_90", cache_dir = dir, compile = counting }))
    expect(r.cached):is_false()
    expect(calls):equals(1)
    expect(r.cubin == good.cubin):is_true()
    expect(assert(cache.lookup(key, dir)).cubin == good.cubin):is_true()
  end)
  it("treats a cubin with the right size but other bytes as a miss", function()
    local good = assert(cache.lookup(key, dir))
    local h = assert(io.open(cubin_path, "wb"))
    h:write(string.rep("\0", #good.cubin))
    h:close()
    expect(select(2, cache.lookup(key, dir))):contains("does not match its hash")
    assert(cache.store(key, good, dir))
  end)
  it("treats a torn JSON as a miss", function()
    local text = assert(io.open(json_path, "rb")):read("a")
    local h = assert(io.open(json_path, "wb"))
    h:write(text:sub(1, 20))
    h:close()
    expect(select(2, cache.lookup(key, dir))):contains("torn: unreadable JSON")
  end)
  it("never sees a temporary file that a crashed writer left", function()
    os.remove(json_path)
    local h = assert(io.open(json_path .. ".tmp.1.2", "wb"))
    h:write("{\"cubin_sha256\": \"x\"}")
    h:close()
    expect(select(2, cache.lookup(key, dir))):equals("absent")
  end)
  it("survives concurrent writers of the same key", function()
    -- Four processes store the same entry while this one reads it in a loop:
    -- every read is either a miss or the complete entry.
    local good = assert(cache.compile(saxpy, { arch = "sm_90", cache_dir = dir }))
    local exe = require("kl.host").executable()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write(string.format([[
      local cache = require "klineage.device.cache"
      local r = assert(cache.lookup(%q, %q))
      for i = 1, 200 do assert(cache.store(%q, r, %q)) end
    ]], key, dir, key, dir))
    f:close()
    local writers = {}
    for i = 1, 4 do writers[i] = assert(proc.spawn({ argv = { exe, "run", script } })) end
    local reads, torn = 0, 0
    while true do
      local any = false
      for _, w in ipairs(writers) do any = any or w:running() end
      local r, why = cache.lookup(key, dir)
      reads = reads + 1
      if r then
        if r.cubin ~= good.cubin then torn = torn + 1 end
      elseif why ~= "absent" then
        torn = torn + 1
      end
      if not any then break end
    end
    for _, w in ipairs(writers) do expect(w:wait(10).code):equals(0) end
    os.remove(script)
    expect(torn):equals(0)
    expect(reads):at_least(2)
  end)
end)

describe("cache: location", function()
  it("follows KLINEAGE_CACHE, then XDG_CACHE_HOME, then HOME", function()
    local exe = require("kl.host").executable()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write("print(require('klineage.device.cache').dir())\n")
    f:close()
    local function dir_with(env)
      local p = assert(proc.spawn({ argv = { exe, "run", script }, env = env }))
      local line = p:read_line(10)
      p:wait(10)
      return line
    end
    expect(dir_with({ KLINEAGE_CACHE = "/x/cubins" })):equals("/x/cubins")
    expect(dir_with({ KLINEAGE_CACHE = false, XDG_CACHE_HOME = "/xdg" })):equals("/xdg/klineage/cubin")
    expect(dir_with({ KLINEAGE_CACHE = false, XDG_CACHE_HOME = false, HOME = "/home/u" }))
      :equals("/home/u/.cache/klineage/cubin")
    os.remove(script)
  end)
end)

os.execute("rm -rf '" .. dir .. "'")

describe("cache: compiles in child processes", function()
  local pdir = os.tmpname() .. "-par"
  local sources = {}
  for i = 1, 3 do
    sources[i] = string.format("extern \"C\" __global__ void k%d(float *x) { x[threadIdx.x] *= %d.0f; }\n", i, i)
  end
  it("runs several compiles at once and reads each result from the cache", function()
    local jobs = {}
    for i, s in ipairs(sources) do jobs[i] = cache.spawn_compile(s, { arch = "sm_90", cache_dir = pdir }) end
    for i, job in ipairs(jobs) do
      local r, msg = cache.finish(job, 120)
      expect(msg):is_nil()
      expect(r.functions["k" .. i].entry):is_true()
      expect(r.cached):is_false()
      expect(#r.cubin):at_least(100)
    end
  end)
  it("answers a hit without a child", function()
    local job = cache.spawn_compile(sources[1], { arch = "sm_90", cache_dir = pdir })
    expect(job.proc):is_nil()
    expect(assert(cache.finish(job)).cached):is_true()
  end)
  it("passes compile errors back", function()
    local r, f = cache.finish(cache.spawn_compile("int x = ;", { arch = "sm_90", cache_dir = pdir }), 120)
    expect(r):is_nil()
    expect(f.verdict):equals("compile_error")
    expect(f.message):exists()
    expect(type(f.details)):equals("table")
  end)
  os.execute("rm -rf '" .. pdir .. "'")
end)
