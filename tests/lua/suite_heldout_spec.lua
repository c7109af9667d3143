-- The held-out evaluation suite (examples/suites/held-out/): every task
-- folder holds a spec the engine's loader accepts, the naive kernel.cu and
-- the reference.c the spec names, and the kernel passes the gate on emu
-- against that C reference at the test sizes. A deliberately wrong copy of
-- each task's kernel is refused by the same reference, so the references
-- can fail. No GPU: the emu backend only.
local annotations = require "klineage.annotations"
local gate = require "klineage.gate"
local context = require "klineage.context"
local files = require "klineage.files"
local workload = require "klineage.workload"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local suite = here .. "/../../examples/suites/held-out"

-- The held-out kinds the suite must keep (the brief's list): each a folder.
local REQUIRED = {
  "jacobi2d", "stencil3d", "histogram", "spmv_csr", "layernorm", "gemv", "batched_gemm",
  "scan_rows", "elementwise_chain", "attention_scores",
}
local MIN_TASKS = 14

local function exists(path)
  local h = io.open(path, "rb")
  if h then h:close() end
  return h ~= nil
end

-- The task folders of the suite: the subfolders holding a workload.lua, sorted.
local function tasks_of(dir)
  local h = assert(io.popen("ls -1 '" .. dir .. "'"))
  local out = {}
  for name in h:lines() do
    if exists(dir .. "/" .. name .. "/workload.lua") then out[#out + 1] = name end
  end
  h:close()
  table.sort(out)
  return out
end

-- Why an evaluation did not pass, from its first failing stage.
local function why(r)
  for _, k in ipairs({ "compile", "reference", "correct" }) do
    local s = r.stages[k]
    if s and s.verdict ~= "ok" and s.verdict ~= "skipped" then
      return string.format("%s stage: %s: %s", k, s.verdict, tostring(s.message))
    end
  end
  return tostring(r.verdict)
end

local tasks = tasks_of(suite)
local ctx = assert(context.new { backend = "emu", timeout = 600, journal = false })

describe("the held-out suite", function()
  it("has at least " .. MIN_TASKS .. " tasks, the required kinds among them", function()
    expect(#tasks):at_least(MIN_TASKS)
    local have = {}
    for _, t in ipairs(tasks) do have[t] = true end
    for _, t in ipairs(REQUIRED) do
      if not have[t] then fail("no task folder '%s' in %s", t, suite) end
    end
  end)

  it("has no task named like a workload with a lineage under gpu/workloads", function()
    local lineages = tasks_of(here .. "/../../gpu/workloads")
    expect(#lineages):at_least(7)
    for _, t in ipairs(tasks) do
      for _, l in ipairs(lineages) do
        if t == l then fail("task '%s' has a lineage in gpu/workloads", t) end
      end
    end
  end)
end)

for _, task in ipairs(tasks) do
  local dir = suite .. "/" .. task
  describe(task, function()
    local w, f = workload.load(dir .. "/workload.lua")

    it("loads with the engine's loader, single-launch, with kernel.cu and reference.c", function()
      if not w then fail("%s", f.message) end
      expect(w.name):equals(task)
      expect(w.run):is_nil() -- one launch of the kernel's own geometry
      expect(w.lineage):is_nil() -- held out: nothing to learn from
      if not exists(dir .. "/kernel.cu") then fail("%s/kernel.cu is missing", dir) end
      if not w.reference then fail("the spec names no reference") end
      expect(w.reference.file):equals("reference.c")
      expect(w.reference.path):equals(dir .. "/reference.c")
      expect(#(w.test_params or {})):at_least(2)
    end)

    -- emu runs only the test sizes: the bench launch is resolved here
    -- (annotations.resolve refuses a grid or block past CUDA's limits).
    it("resolves its launch at the bench size, blocks of whole warps", function()
      if not w then fail("%s", f.message) end
      local g, gf = annotations.resolve(assert(files.read_text(dir .. "/kernel.cu")), w.params, { file = "kernel.cu" })
      if not g then fail("%s", gf.message) end
      if not g.allowed then fail("the bench size is ruled out: %s", tostring(g.why)) end
      check(g.geometry.threads % 32 == 0, "a block of %d threads is not whole warps", g.geometry.threads)
    end)

    it("runs kernel.cu through the gate on emu against reference.c: ok", function()
      if not w then fail("%s", f.message) end
      local source = assert(files.read_text(dir .. "/kernel.cu"))
      local first = source:match("^//[^\n]*")
      if not first or #first < 20 then fail("kernel.cu does not open with a comment saying what it computes") end
      local r = gate.evaluate(ctx, { file = dir .. "/kernel.cu", label = "kernel.cu" }, w)
      if r.verdict ~= "ok" then fail("%s", why(r)) end
      expect(r.stages.reference.verdict):equals("ok")
      expect(r.stages.reference.sizes):equals(#w.test_params) -- every test size checked
      expect(r.stages.correct.sizes):at_least(2)
    end)
  end)
end

-- One plausible bug per task, written into a copy of the task's folder as
-- its kernel: the task's reference.c must refuse it (the baseline is then
-- "baseline_broken", cause "wrong"). { the text in kernel.cu, its wrong
-- replacement, the bug }.
local MUTATIONS = {
  attention_scores = { "sqrtf((float)D)", "(float)D", "scaled by 1 / D instead of 1 / sqrt(D)" },
  batched_gemm = { "a[i * K + p]", "a[i + p * M]", "A[b] read transposed" },
  bias_gelu = { "erff(v * 0.70710678f)", "tanhf(0.7978845608f * (v + 0.044715f * v * v * v))",
                "the tanh approximation of GELU instead of the exact one" },
  colsum = { "r < rows", "r < rows - 1", "the last row left out" },
  conv1d = { "sum += w[k + R]", "sum += w[R - k]", "the filter flipped (convolution, not cross-correlation)" },
  elementwise_chain = { "a * x[i] + b", "a * (x[i] + b)", "the bias added before the scale" },
  embedding_gather = { "table[(long)ids[t] * D + d]", "table[(long)(t % V) * D + d]", "the ids ignored" },
  gemv = { "j < N", "j < N - 1", "the last column left out" },
  histogram = { "if (i < n)", "if (i < n - 1)", "the last byte not counted" },
  jacobi2d = { "u[at + 1]", "u[at]", "the east tap off by one" },
  layernorm = { "sq / cols", "sq / (cols - 1)", "the unbiased variance" },
  maxpool2d = { "int OH = (H + 1) / 2", "int OH = H / 2", "floor mode: odd heights lose the last row of windows" },
  row_argmax = { "int c = 1", "int c = 2", "the second element never looked at" },
  scan_rows = { "k <= c", "k < c", "an exclusive scan" },
  spmv_csr = { "k < row_ptr[r + 1]", "k < row_ptr[r + 1] - 1", "the last nonzero of every row dropped" },
  stencil3d = { "u[at + nx]", "u[at + nx + 1]", "the south neighbour shifted by one" },
}

-- source with its one occurrence of `from` replaced by `to`, or nil, why.
local function replace_once(source, from, to)
  local at = source:find(from, 1, true)
  if not at then return nil, "not found" end
  if source:find(from, at + 1, true) then return nil, "found more than once" end
  return source:sub(1, at - 1) .. to .. source:sub(at + #from)
end

describe("the references can fail", function()
  for _, task in ipairs(tasks) do
    local m = MUTATIONS[task]
    it(task .. ": refuses a kernel with " .. (m and m[3] or "a bug"), function()
      if not m then fail("no wrong kernel is written for task '%s' (MUTATIONS)", task) end
      local from = suite .. "/" .. task
      local wrong, why_not = replace_once(assert(files.read_text(from .. "/kernel.cu")), m[1], m[2])
      if not wrong then fail("'%s' in %s/kernel.cu: %s", m[1], task, why_not) end
      local d = scratch_dir()
      write_file(d .. "/workload.lua", assert(files.read_text(from .. "/workload.lua")))
      write_file(d .. "/reference.c", assert(files.read_text(from .. "/reference.c")))
      write_file(d .. "/kernel.cu", wrong)
      local w = assert(workload.load(d .. "/workload.lua"))
      local r = gate.evaluate(ctx, { file = d .. "/kernel.cu", label = "kernel.cu" }, w)
      if r.verdict ~= "baseline_broken" then fail("verdict %s, expected baseline_broken (%s)", r.verdict, why(r)) end
      expect(r.stages.reference.verdict):equals("baseline_broken")
      expect(r.stages.reference.cause):equals("wrong")
    end)
  end
end)

ctx:close()
