-- Facts by role, never by name (issue 33): the role.* facts of a kernel
-- (klineage.facts.roles) do not change when its names do, and the learner
-- refuses a fact keyed by a name the kernel or its spec chose.
local words = require "klineage.skills.describe"
local facts = require "klineage.facts"
local learn = require "klineage.skills.learn"
local roles = require "klineage.facts.roles"
local workload = require "klineage.workload"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local root = here .. "/../.."

local function read(path)
  local h = assert(io.open(path, "rb"))
  local s = h:read("a")
  h:close()
  return s
end

local function role_values(f)
  local out = {}
  for k, v in pairs(f.values) do if k:match("^role%.") then out[k] = v end end
  return out
end

-- Every whole-word occurrence of a name in the text replaced.
local function renamed(text, map)
  for from, to in pairs(map) do text = text:gsub("%f[%w_]" .. from .. "%f[^%w_]", to) end
  return text
end

-- One thread an output, with the launch line the facts read.
local ROW_SUM = [[
// @kl launch grid(cdiv(R, 256)) block(256)
extern "C" __global__ void k(int R, int C, const float *in, float *out) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < R) {
    float s = 0.0f;
    for (int c = 0; c < C; ++c) s += in[r * C + c];
    out[r] = s;
  }
}
]]
local COL_SUM = ROW_SUM:gsub("in%[r %* C %+ c%]", "in[c * R + r]")
local SCALE = [[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void k(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
]]
local STENCIL = [[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void k(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) y[i] = x[i - 1] + x[i] + x[i + 1];
}
]]

describe("role facts", function()
  it("name each kernel's pattern and its heaviest access's stride", function()
    local function of(text, params)
      return role_values(assert(facts.of(text, "k", { params = params, compile = false })))
    end
    local row = of(ROW_SUM, { R = 4096, C = 4096 })
    expect(row["role.pattern"]):equals("row_reduce")
    expect(row["role.dominant.stride"]):equals("strided")
    expect(row["role.reduction.length"]):equals(4096)
    local col = of(COL_SUM, { R = 4096, C = 4096 })
    expect(col["role.pattern"]):equals("col_reduce")
    expect(col["role.dominant.stride"]):equals("coalesced")
    expect(of(SCALE, { n = 1 << 20 })["role.pattern"]):equals("elementwise")
    expect(of(STENCIL, { n = 1 << 20 })["role.pattern"]):equals("stencil")
  end)

  it("are the same whatever the kernel calls its parts, and no key holds a name", function()
    local w = assert(workload.load(root .. "/gpu/workloads/sgemm/workload.lua"))
    local text = read(root .. "/gpu/workloads/sgemm/v0_naive.cu")
    local f = assert(facts.of(text, "sgemm", { workload = w, compile = false }))
    local other = renamed(text, { A = "lhs", B = "rhs", C = "dst", row = "i", col = "j", acc = "sum", BLOCK_DIM = "T" })
    local g = assert(facts.of(other, "sgemm", { workload = w, compile = false }))
    local a, b = role_values(f), role_values(g)
    expect(a["role.pattern"]):equals("contraction")
    expect(a["role.operands.reused"]):equals(2)
    expect(a["role.intensity"] > 100):equals(true)
    expect(a):equals(b)
    -- while the access facts are keyed by the names
    expect(f.values["access.A.coalesced"] ~= nil):equals(true)
    expect(g.values["access.A.coalesced"]):equals(nil)
    local unit = require("kl.source").parse(text)
    local fn
    for _, x in ipairs(unit:functions()) do if x:name() == "sgemm" then fn = x end end
    local names = roles.names(unit, fn, w)
    expect(names.A ~= nil and names.row ~= nil and names.BLOCK_DIM ~= nil and names.M ~= nil):equals(true)
    for k in pairs(a) do
      if roles.name_in(k, names) then fail("%s is keyed by a name", k) end
    end
    expect((roles.name_in("access.A.coalesced", names))):equals("A")
    expect((roles.name_in("size.M.div.BLOCK_DIM", names))):equals("M")
  end)

  it("say what they hold in words", function()
    expect(words.condition({ "role.pattern", "==", "row_reduce" })):equals("the kernel is a reduction along rows")
    expect(words.negation({ "role.dominant.stride", "==", "strided" })):equals("its heaviest global access is not strided")
    expect(words.condition({ "role.reduction.length", ">=", 4096 })):equals("elements reduced into one output ≥ 4096")
  end)
end)

describe("names in fact keys", function()
  it("are found in a name's place of the vocabulary, and by the kernel's own names elsewhere", function()
    expect((roles.name_in("access.x.coalesced", {}))):equals("x")
    expect((roles.name_in("define.ALPHA_after", {}))):equals("ALPHA")
    expect((roles.name_in("shared.tile.bank_ways", {}))):equals("tile")
    -- a literal of the vocabulary holds no name, even one a kernel also uses
    expect(roles.name_in("role.pattern", { role = "a local", pattern = "a local" })):equals(nil)
    expect(roles.name_in("occupancy", { occupancy = "a local" })):equals(nil)
    -- outside the vocabulary, any part that is a name
    expect((roles.name_in("derived.rows.ratio", { rows = "a workload parameter" }))):equals("rows")
    expect(roles.name_in("derived.rows.ratio", { cols = "a workload parameter" })):equals(nil)
    -- a number in a loop's place is a name only where the kernel chose it
    expect(roles.name_in("loop.2.trip_count", {})):equals(nil)
    expect((roles.name_in("occupancy.limit.tile", { tile = "a __shared__ array" }))):equals("tile")
  end)
end)

describe("the learner", function()
  local n = 0
  local function obs(outcome, fs, names)
    n = n + 1
    return { skill = "s", transform = "coalesce", lineage = "l", outcome = outcome, measured = true,
             speedup = outcome == "helped" and 2 or 0.8, facts = fs, facts_after = {}, names = names,
             evidence = { run = "r", key = "k" .. n } }
  end

  it("refuses a name-keyed fact that separates best, and takes the role fact", function()
    -- access.A.coalesced excludes both failures; the role fact one of them
    local r = learn.skill("s", {
      obs("helped", { ["access.A.coalesced"] = false, ["role.dominant.stride"] = "strided" }),
      obs("helped", { ["access.A.coalesced"] = false, ["role.dominant.stride"] = "strided" }),
      obs("no_difference", { ["access.A.coalesced"] = true, ["role.dominant.stride"] = "coalesced" }),
      obs("no_difference", { ["access.A.coalesced"] = true, ["role.dominant.stride"] = "strided" }),
    })
    expect(#r.preconditions):equals(1)
    expect(r.preconditions[1][1]):equals("role.dominant.stride")
    expect(r.confidence.why):contains("access.A.coalesced (A is a pointer parameter)")
  end)

  it("learns nothing where only a name separates, and says so", function()
    local r = learn.skill("s", {
      obs("helped", { ["size.cols"] = 32768, ["role.pattern"] = "row_reduce" }),
      obs("helped", { ["size.cols"] = 65536, ["role.pattern"] = "row_reduce" }),
      obs("hurt", { ["size.cols"] = 1024, ["role.pattern"] = "row_reduce" }),
    })
    expect(#r.preconditions):equals(0)
    expect(#r.guards):equals(0)
    expect(#(r.unexplained or {})):equals(1)
    expect(r.confidence.why):contains("size.cols (cols is a workload parameter)")
  end)

  it("checks the observations' own names: a fact keyed by one is refused wherever it sits", function()
    -- role.length stands for a fact outside the vocabulary's name places
    local helped = { ["launch.threads"] = 256 }
    local list = {
      obs("helped", helped, { "threads_x" }), obs("helped", helped, { "threads_x" }),
      obs("hurt", { ["launch.threads"] = 1024 }, { "threads_x" }),
    }
    local r = learn.skill("s", list)
    expect(#r.guards):equals(1)
    expect(r.guards[1][1]):equals("launch.threads")
    local names = learn.names(list)
    expect(names.threads_x ~= nil):equals(true)
    expect((learn.name_keyed("launch.threads", names))):equals(nil)
    expect((learn.name_keyed("custom.threads_x", names))):equals("threads_x")
  end)
end)
