-- The held-out evaluation suite (examples/suites/held-out/): every task
-- folder holds a spec the engine's loader accepts, the naive kernel.cu and
-- the reference.c the spec names, and the kernel passes the gate on emu
-- against that C reference at the test sizes. A deliberately wrong copy of
-- each task's kernel is refused by the same reference, so the references
-- can fail. The suite's split (split.lua) into a tuning part and a test
-- part covers every task once, by the rule it states. No GPU: the emu
-- backend only.
--
-- KL_SUITE picks what runs (default all):
--   sample  the checks of every task's files, spec and launch, the split,
--           and the gate and the wrong kernel of a stable sample of the
--           tasks: per family (split.lua), the first task by name
--           (tests/lua/site_sample.lua's rule, one per family). ctest
--           lua/suite_heldout_spec, in `make test`.
--   rest    the gate and the wrong kernel of every other task. ctest
--           lua/suite_heldout_rest, label long (`make test-long`, CI).
--   all     everything: the two together, each check once.
local annotations = require "klineage.workload.annotations"
local gate = require "klineage.gate"
local context = require "klineage.device.context"
local files = require "klineage.base.files"
local workload = require "klineage.workload"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local suite = here .. "/../../examples/suites/held-out"
local sample = dofile(here .. "/site_sample.lua")

local MODES = { sample = true, rest = true, all = true }
local mode = os.getenv("KL_SUITE") or "all"
if not MODES[mode] then error("KL_SUITE must be sample, rest or all, not '" .. mode .. "'", 0) end

-- The held-out kinds the suite must keep (the brief's list): each a folder.
local REQUIRED = {
  "jacobi2d", "stencil3d", "histogram", "spmv_csr", "layernorm", "gemv", "batched_gemm",
  "scan_rows", "elementwise_chain", "attention_scores",
}
local MIN_TASKS = 30
-- The families the suite covers (issue 31), each with at least
-- MIN_PER_FAMILY tasks and at least one in each part of the split.
local FAMILIES = {
  "elementwise", "reductions", "normalization", "contractions", "stencils", "gathers_scatters",
  "scans", "sparse", "all_pairs",
}
local MIN_PER_FAMILY = 3
-- The split's rule (split.lua): the seed of the hash that orders a family's
-- tasks not seen.
local SPLIT_SEED = "klineage held-out split:"

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

-- 32-bit FNV-1a of a string.
local function fnv1a(text)
  local h = 2166136261
  for i = 1, #text do h = ((h ~ text:byte(i)) * 16777619) & 0xffffffff end
  return h
end

-- The split's rule over { [task] = family } and the set of seen tasks:
-- per family of n tasks, the tasks not seen ordered by
-- fnv1a(SPLIT_SEED .. name), the first ceil(n / 3) of them (all, if fewer)
-- to test, every other task to tune. Returns { [task] = "tune" | "test" }.
local function draw_split(families, seen)
  local by_family = {}
  for task, fam in pairs(families) do
    by_family[fam] = by_family[fam] or {}
    table.insert(by_family[fam], task)
  end
  local part = {}
  for _, list in pairs(by_family) do
    local fresh = {}
    for _, task in ipairs(list) do
      part[task] = "tune"
      if not seen[task] then fresh[#fresh + 1] = task end
    end
    table.sort(fresh, function(a, b)
      local ha, hb = fnv1a(SPLIT_SEED .. a), fnv1a(SPLIT_SEED .. b)
      if ha ~= hb then return ha < hb end
      return a < b
    end)
    for i = 1, math.min((#list + 2) // 3, #fresh) do part[fresh[i]] = "test" end
  end
  return part
end

local split_ok, split = pcall(dofile, suite .. "/split.lua")
if not split_ok or type(split) ~= "table" then split = nil end
local families = split and type(split.families) == "table" and split.families or {}

local tasks = tasks_of(suite)
local ctx = assert(context.new { backend = "emu", timeout = 600, journal = false })

-- The sampled tasks: per family, the first by name. A task
-- with no family in split.lua is sampled, so that it is never skipped
-- silently (the split's own test fails for it).
local sampled = {}
do
  local by_family = {}
  for _, t in ipairs(tasks) do
    local fam = families[t]
    if fam == nil then
      sampled[t] = true
    else
      by_family[fam] = by_family[fam] or {}
      table.insert(by_family[fam], t)
    end
  end
  for _, list in pairs(by_family) do
    for i in pairs(sample.pick(#list, 1)) do sampled[list[i]] = true end
  end
end

-- Whether a task's gate and wrong kernel run in this mode.
local function gated(task) return sample.keep(mode, sampled[task] == true) end
local static = mode ~= "rest"

if static then
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

    it("gives every task folder one family, " .. MIN_PER_FAMILY .. " tasks or more in each family", function()
      if not split then fail("%s/split.lua does not load to a table", suite) end
      if type(split.families) ~= "table" then fail("split.lua has no families table") end
      local folder = {}
      for _, t in ipairs(tasks) do
        folder[t] = true
        if split.families[t] == nil then fail("task '%s' has no family in split.lua", t) end
      end
      local known, count = {}, {}
      for _, fam in ipairs(FAMILIES) do known[fam], count[fam] = true, 0 end
      for t, fam in pairs(split.families) do
        if not folder[t] then fail("split.lua gives a family to '%s', which is no task folder", tostring(t)) end
        if not known[fam] then fail("task '%s' has the family '%s', not one of %s", t, tostring(fam), table.concat(FAMILIES, ", ")) end
        count[fam] = count[fam] + 1
      end
      for _, fam in ipairs(FAMILIES) do
        check(count[fam] >= MIN_PER_FAMILY, "family %s has %d tasks, fewer than %d", fam, count[fam], MIN_PER_FAMILY)
      end
    end)

    it("splits the tasks into tune and test, each task folder exactly once", function()
      if not split then fail("%s/split.lua does not load to a table", suite) end
      local seen = {}
      for _, part in ipairs({ "tune", "test" }) do
        if type(split[part]) ~= "table" then fail("split.lua has no list '%s'", part) end
        for _, t in ipairs(split[part]) do
          if seen[t] then fail("task '%s' is listed twice (in %s and in %s)", t, seen[t], part) end
          seen[t] = part
        end
      end
      for _, t in ipairs(tasks) do
        if not seen[t] then fail("task '%s' is in neither part of the split", t) end
      end
      local folder = {}
      for _, t in ipairs(tasks) do folder[t] = true end
      local listed = 0
      for t, part in pairs(seen) do
        if not folder[t] then fail("split.lua lists '%s' in %s, which is no task folder", t, part) end
        listed = listed + 1
      end
      expect(listed):equals(#tasks)
    end)

    it("keeps at least one task of every family in each part, a third to a half of them in test", function()
      if not split then fail("%s/split.lua does not load to a table", suite) end
      local tune, test = {}, {}
      for _, t in ipairs(split.tune or {}) do
        local fam = split.families[t] or "?"
        tune[fam] = (tune[fam] or 0) + 1
      end
      for _, t in ipairs(split.test or {}) do
        local fam = split.families[t] or "?"
        test[fam] = (test[fam] or 0) + 1
      end
      for _, fam in ipairs(FAMILIES) do
        check((test[fam] or 0) >= 1, "family %s has no task in the test part", fam)
        check((tune[fam] or 0) >= 1, "family %s has no task in the tuning part", fam)
      end
      local n_test, n = #(split.test or {}), #(split.test or {}) + #(split.tune or {})
      check(3 * n_test >= n and 2 * n_test <= n, "%d of %d tasks in test: not a third to a half", n_test, n)
    end)

    it("keeps every task seen before the split in tune", function()
      if not split then fail("%s/split.lua does not load to a table", suite) end
      if type(split.seen) ~= "table" then fail("split.lua has no list 'seen'") end
      local folder, test = {}, {}
      for _, t in ipairs(tasks) do folder[t] = true end
      for _, t in ipairs(split.test or {}) do test[t] = true end
      for _, t in ipairs(split.seen) do
        if not folder[t] then fail("split.lua's seen names '%s', which is no task folder", t) end
        if test[t] then fail("task '%s' was seen before the split, and is in test", t) end
      end
      -- the 16 tasks of the first H200 evaluations (README.md)
      expect(#split.seen):equals(16)
    end)

    it("draws the split by its stated rule (the FNV-1a order within each family)", function()
      if not split then fail("%s/split.lua does not load to a table", suite) end
      local seen = {}
      for _, t in ipairs(split.seen or {}) do seen[t] = true end
      local want = draw_split(split.families, seen)
      local got = {}
      for _, t in ipairs(split.tune or {}) do got[t] = "tune" end
      for _, t in ipairs(split.test or {}) do got[t] = "test" end
      for t, part in pairs(want) do
        if got[t] ~= part then fail("the rule puts '%s' in %s, split.lua in %s", t, part, tostring(got[t])) end
      end
      -- the hash itself, on the reference values of FNV-1a 32
      expect(fnv1a("")):equals(0x811c9dc5)
      expect(fnv1a("a")):equals(0xe40c292c)
      expect(fnv1a("foobar")):equals(0xbf9cf968)
    end)

    it("samples one task a family for make test, the first by name", function()
      local n, per = 0, {}
      for t in pairs(sampled) do
        n = n + 1
        local fam = families[t] or "?"
        per[fam] = (per[fam] or 0) + 1
      end
      for _, fam in ipairs(FAMILIES) do expect(per[fam] or 0):equals(1) end
      expect(n):equals(#FAMILIES)
      for t in pairs(sampled) do
        for _, other in ipairs(tasks) do
          if families[other] == families[t] and other < t then fail("'%s' is sampled but '%s' of its family comes first", t, other) end
        end
      end
    end)
  end)
end

for _, task in ipairs(tasks) do
  local dir = suite .. "/" .. task
  describe(task, function()
    local w, f = workload.load(dir .. "/workload.lua")

    if static then
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
        local source = assert(files.read_text(dir .. "/kernel.cu"))
        local first = source:match("^//[^\n]*")
        if not first or #first < 20 then fail("kernel.cu does not open with a comment saying what it computes") end
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
    end

    if gated(task) then
      it("runs kernel.cu through the gate on emu against reference.c: ok", function()
        if not w then fail("%s", f.message) end
        local r = gate.evaluate(ctx, { file = dir .. "/kernel.cu", label = "kernel.cu" }, w)
        if r.verdict ~= "ok" then fail("%s", why(r)) end
        expect(r.stages.reference.verdict):equals("ok")
        expect(r.stages.reference.sizes):equals(#w.test_params) -- every test size checked
        expect(r.stages.correct.sizes):at_least(2)
      end)
    end
  end)
end

-- One plausible bug per task, written into a copy of the task's folder as
-- its kernel: the task's reference.c must refuse it (the baseline is then
-- "baseline_broken", cause "wrong"). { the text in kernel.cu, its wrong
-- replacement, the bug }.
local MUTATIONS = {
  attention_scores = { "sqrtf((float)D)", "(float)D", "scaled by 1 / D instead of 1 / sqrt(D)" },
  axpby = { "beta * y[i]", "beta * x[i]", "beta applied to x instead of y" },
  batched_gemm = { "a[i * K + p]", "a[i + p * M]", "A[b] read transposed" },
  batched_matvec = { "x + b * cols", "x", "the first batch's vector used for every matrix" },
  batchnorm_infer = { "(i / ((long long)H * W)) % C", "i % C", "the channel taken as the fastest index (NHWC)" },
  bias_gelu = { "erff(v * 0.70710678f)", "tanhf(0.7978845608f * (v + 0.044715f * v * v * v))",
                "the tanh approximation of GELU instead of the exact one" },
  cast_f16 = { "float v = x[i] * scale;", "float v = x[i];", "the scale left out" },
  colabsmax = { "fabsf(x[(long long)r * cols + c])", "x[(long long)r * cols + c]",
                "the largest signed value instead of the largest magnitude" },
  colsum = { "r < rows", "r < rows - 1", "the last row left out" },
  conv1d = { "sum += w[k + R]", "sum += w[R - k]", "the filter flipped (convolution, not cross-correlation)" },
  cummax_cols = { "run = fmaxf(run, x[at]);\n    y[at] = run;", "y[at] = run;\n    run = fmaxf(run, x[at]);",
                  "an exclusive scan: each row stores the maximum of the rows above it" },
  depthwise_conv2d = { "f + c * KS * KS", "f", "channel 0's filter used for every channel" },
  elementwise_chain = { "a * x[i] + b", "a * (x[i] + b)", "the bias added before the scale" },
  embedding_gather = { "table[(long)ids[t] * D + d]", "table[(long)(t % V) * D + d]", "the ids ignored" },
  gemv = { "j < N", "j < N - 1", "the last column left out" },
  histogram = { "if (i < n)", "if (i < n - 1)", "the last byte not counted" },
  index_select = { "x[r * cols + index[j]]", "x[r * k + index[j]]", "the output's row stride used for the input" },
  jacobi2d = { "u[at + 1]", "u[at]", "the east tap off by one" },
  layernorm = { "sq / cols", "sq / (cols - 1)", "the unbiased variance" },
  matmul_abt = { "B[n * K + k]", "B[k * N + n]", "B read as K x N, not transposed" },
  maxpool2d = { "int OH = (H + 1) / 2", "int OH = H / 2", "floor mode: odd heights lose the last row of windows" },
  nbody = { "inv * inv * inv", "inv * inv", "the inverse square of the distance instead of its cube" },
  nearest_neighbor = { "d < best_d", "d <= best_d", "ties going to the last index instead of the first" },
  pairwise_dist = { "s += diff * diff", "s += fabsf(diff)", "absolute differences (L1) instead of squares" },
  permute3d = { "((unsigned long long)a * B + b) * C + c", "((unsigned long long)b * A + a) * C + c",
                "the input's first two axes swapped" },
  rmsnorm = { "ss / cols", "ss", "the root of the sum of squares instead of their mean" },
  row_argmax = { "int c = 1", "int c = 2", "the second element never looked at" },
  row_l2norm = { "sqrtf(acc)", "acc", "the sum of squares without its square root" },
  scan_rows = { "k <= c", "k < c", "an exclusive scan" },
  scatter_add = { "index[i], src[i])", "index[i], src[index[i]])", "the value read at the bin instead of at the element" },
  segmented_scan = { "sum += x[j];\n    if (j == 0 || head[j]) break;", "if (j == 0 || head[j]) break;\n    sum += x[j];",
                     "each segment's head left out of the sums" },
  spmm_csr = { "B[(long)col_idx[e] * N + col]", "B[col_idx[e] + (long)col * K]", "B read column-major" },
  spmv_coo = { "val[k] * x[col[k]])", "val[k] * x[row[k]])", "x gathered by row instead of column" },
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
  if static then
    it("has a wrong kernel for every task and none for a task that is not there", function()
      local folder = {}
      for _, t in ipairs(tasks) do
        folder[t] = true
        if not MUTATIONS[t] then fail("no wrong kernel is written for task '%s' (MUTATIONS)", t) end
      end
      local n = 0
      for t in pairs(MUTATIONS) do
        if not folder[t] then fail("MUTATIONS has '%s', which is no task folder", t) end
        n = n + 1
      end
      expect(n):equals(#tasks)
    end)
  end

  for _, task in ipairs(tasks) do
    local m = MUTATIONS[task]
    if gated(task) then
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
  end
end)

ctx:close()
