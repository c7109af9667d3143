-- A skill as a family, a change and a parameter prior (issue 33, item 2):
-- the parameters a record stores are what its transform takes, and every
-- shipped record materializes on a kernel it was not learned from.
local learn = require "klineage.skills.learn"
local store = require "klineage.skills.store"
local transforms = require "klineage.transforms"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local root = here .. "/../.."
local shipped = root .. "/skills/sm_90"

local read = read_file -- the test runner's (klineage.cli.testing)

local function lines_of(cmd)
  local out = {}
  local p = assert(io.popen(cmd))
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  table.sort(out)
  return out
end

local serial = 0
-- One observation of a transform skill, as extraction gives it.
local function obs(o)
  serial = serial + 1
  return {
    skill = o.skill, transform = o.skill, params = o.params, lineage = o.lineage or "sgemm", from = "a.cu", to = "b.cu",
    outcome = o.outcome or "helped", verdict = "ok", speedup = o.speedup or 1.2, ci = o.ci, measured = true,
    facts = o.facts or {}, facts_after = {}, backend = "cuda", arch = "sm_90",
    evidence = { run = "walk-prior", key = string.format("k%03d", serial), kind = "walk_step" },
  }
end

describe("a skill's stored parameters", function()
  it("are integers where the transform takes integers: the journal's 64.0 is 64", function()
    local r = learn.skill("retune", { obs { skill = "retune", params = { value = 64.0 }, speedup = 1.3 },
                                      obs { skill = "retune", params = { value = 16.0 }, speedup = 1.1 } })
    expect(r.materialize.params.value):equals(64)
    expect(math.type(r.materialize.params.value)):equals("integer")
    r = learn.skill("pragma_unroll", { obs { skill = "pragma_unroll", params = { factor = 0.0 } } })
    expect(math.type(r.materialize.params.factor)):equals("integer")
  end)

  it("never name the training kernel's macros: max_threads = THREADS is left to the transform's default", function()
    local r = learn.skill("launch_bounds", { obs { skill = "launch_bounds", params = { max_threads = "THREADS", min_blocks = "2" } } })
    expect(r.materialize.params):equals({ min_blocks = "2" })
    r = learn.skill("launch_bounds", { obs { skill = "launch_bounds", params = { max_threads = "BLOCK", min_blocks = "MIN_BLOCKS" } } })
    expect(r.materialize.params):is_nil()
    -- a literal expression is portable; a hex literal is not a name
    expect(learn.transform_params("launch_bounds", { max_threads = "(2 * 128)", min_blocks = "0x2" }))
      :equals({ max_threads = "(2 * 128)", min_blocks = "0x2" })
    -- a fraction where the transform takes integers is no parameter of it
    expect(learn.transform_params("retune", { value = 64.5 })):is_nil()
  end)
end)

describe("confidence", function()
  it("says how much evidence stands behind a skill: six wins on one lineage are one kernel family, not high", function()
    local function seen(lineages)
      local list = {}
      for i = 1, 6 do list[i] = obs { skill = "ldg", lineage = lineages[(i - 1) % #lineages + 1], speedup = 1.2 } end
      list[7] = obs { skill = "ldg", lineage = lineages[1], outcome = "hurt", speedup = 0.9 }
      return learn.skill("ldg", list).confidence
    end
    local one = seen({ "sgemm" })
    expect(one.level):equals("low")
    expect(one.lineages):equals(1)
    expect(one.why):contains("helped 6 of 7 labelled observations from 1 lineage")
    expect(seen({ "sgemm", "conv2d" }).level):equals("medium")
    local three = seen({ "sgemm", "conv2d", "softmax" })
    expect(three.level):equals("high")
    expect(three.lineages):equals(3)
  end)
end)

describe("a template skill", function()
  it("whose pattern does not compile is not learned into the repository, and the learner says why", function()
    local function template(skill, before)
      local o = obs { skill = skill }
      o.transform, o.template = nil, { before = before, after = before .. " // faster" }
      return o
    end
    local good = "for (int $i = 0; $i < $n; ++$i) $s += $x[$i];"
    local records, dropped = learn.repository({ template("template-a", good), template("template-b", "int x = (;") })
    expect(#records):equals(1)
    expect(records[1].id):equals("template-a")
    expect(#dropped):equals(1)
    expect(dropped[1].id):equals("template-b")
    expect(dropped[1].why):contains("its pattern does not compile: ")
    expect(learn.unusable(records[1])):is_nil()
  end)

  it("that matches no kernel of another lineage is not shipped: it is its lineage's spelling", function()
    local function template(before)
      local o = obs { skill = "template-sgemm-v9", lineage = "sgemm" }
      o.transform, o.template = nil, { before = before, after = before .. " // faster" }
      return o
    end
    local loop = "for (int $i = 0; $i < $n; ++$i) $s += $x[$i];"
    local spelled = "float acc_sgemm_only = 0.0f;"
    local elsewhere = { { lineage = "softmax", text = "__global__ void f(float *x, int n, float *o) { float s = 0; "
                            .. "for (int i = 0; i < n; ++i) s += x[i]; *o = s; }" },
                        { lineage = "sgemm", text = "__global__ void g() { float acc_sgemm_only = 0.0f; }" } }
    local records, dropped = learn.repository({ template(loop) }, { elsewhere = elsewhere })
    expect(#records):equals(1)
    records, dropped = learn.repository({ template(spelled) }, { elsewhere = elsewhere })
    expect(#records):equals(0)
    expect(dropped[1].why):contains("matches none of the 1 kernels of the other lineages")
  end)
end)

describe("blocking", function()
  -- helped on two lineages at x = 1; failed at x = 10 on `failed` (lineage, outcome)...
  local function learned(failed)
    local list = { obs { skill = "ldg", lineage = "a", facts = { registers = 20 } },
                   obs { skill = "ldg", lineage = "b", facts = { registers = 22 } } }
    for _, f in ipairs(failed) do
      list[#list + 1] = obs { skill = "ldg", lineage = f[1], outcome = f[2], speedup = 0.8, facts = { registers = 90 } }
    end
    local r = learn.skill("ldg", list)
    expect(#r.guards):equals(1)
    expect(r.guards[1][1]):equals("registers")
    return r, r.guards[1]
  end

  it("a guard learned from one lineage's slowdowns only ranks; from three lineages, or a wrong result, it blocks", function()
    local r, g = learned({ { "c", "hurt" }, { "c", "hurt" } })
    expect(g.blocks):equals(false)
    expect(g.why):contains("it only ranks: seen in 1 lineage, with no wrong result")
    expect(learn.admits(r, { registers = 90 })):equals(true)
    r, g = learned({ { "c", "hurt" }, { "d", "hurt" }, { "e", "no_difference" } })
    -- no_difference is no failure: two lineages of slowdowns
    expect(g.blocks):equals(false)
    r, g = learned({ { "c", "hurt" }, { "d", "hurt" }, { "e", "hurt" } })
    expect(g.blocks):equals(true)
    expect(g.why):contains("it blocks: seen in 3 lineages")
    -- (a precondition on registers came too, from the same three: it blocks first)
    local ok, c = learn.admits(r, { registers = 90 })
    expect(ok):equals(false)
    expect(c[1]):equals("registers")
    expect(c.blocks):equals(true)
    r, g = learned({ { "c", "wrong" } })
    expect(g.blocks):equals(true)
    expect(g.why):contains("it blocks: a wrong result")
  end)

  local KERNEL = [[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void k(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
]]
  local function record(guard)
    return assert(require("klineage.skills.record").validate({
      schema = 1, id = "launch_bounds", arch = "sm_90", status = "learned", intent = "bound the block size",
      materialize = { transform = "launch_bounds" }, pattern = { transform = "launch_bounds" },
      preconditions = {}, guards = { guard }, effect = { speedup = { median = 1.2, min = 1.1, max = 1.3, n = 3 } },
      confidence = { supporting = 3, contradicting = 2, level = "low" },
      evidence = { { run = "r", key = "k" } },
    }))
  end

  it("in match: a condition that only ranks leaves a candidate, with what speaks against it; one that blocks, blocks", function()
    local smatch = require "klineage.skills.match"
    local rows = assert(smatch.kernel({ record { "role.pattern", "==", "elementwise", blocks = false, why = "slowed one kernel" } }, KERNEL))
    expect(#rows):at_least(1)
    expect(rows[1].status):equals("candidate")
    expect(#rows[1].ranks):equals(1)
    expect(rows[1].ranks[1].kind):equals("guard")
    expect(rows[1].ranks[1].text):contains("slowed one kernel")
    -- a condition with no learned verdict (written by hand) is a rule
    rows = assert(smatch.kernel({ record { "role.pattern", "==", "elementwise" } }, KERNEL))
    expect(rows[1].status):equals("blocked")
    expect(#rows[1].ranks):equals(0)
  end)

  it("in the search's ranking: a row something speaks against comes after those nothing does, whatever its gain", function()
    local skill_rows = require "klineage.search.skill_rows"
    local function row(id, median, ranked)
      local r = record { "launch.threads", "==", 256, blocks = false }
      r.id, r.effect.speedup.median, r.effect.speedup.max = id, median, median
      return { skill = id, site = "k", params_key = "{}", record = r, ranked_down = ranked }
    end
    local ranked = skill_rows.rank({ row("fast", 1.29, { { kind = "guard", text = "x" } }), row("slow", 1.15, nil) })
    expect(ranked[1].skill):equals("slow")
    expect(ranked[2].skill):equals("fast")
  end)
end)

describe("the shipped records", function()
  local records = assert(store.load(shipped))
  local golden = {}
  for _, f in ipairs(lines_of("ls " .. root .. "/tests/transforms/*/*/in.cu")) do golden[#golden + 1] = { file = f, text = read(f) } end
  local lineage_files = {}
  for _, f in ipairs(lines_of("ls " .. root .. "/gpu/workloads/*/*.cu")) do
    lineage_files[#lineage_files + 1] = { file = f, text = read(f), lineage = f:match("workloads/([^/]+)/") }
  end

  it("store parameters as their transform takes them: integers, and no text that names something", function()
    local n = 0
    for _, r in ipairs(records) do
      local m = r.materialize
      if m.transform and m.params then
        local t = assert(transforms.get(m.transform))
        for k, v in pairs(m.params) do
          n = n + 1
          local space = t.params and t.params[k]
          if space and math.type(space[1]) == "integer" and math.type(v) ~= "integer" then
            fail("%s: %s = %s, but %s takes integers", r.id, k, tostring(v), m.transform)
          end
          if type(v) == "string" and v:find("%f[%w_][%a_]") then fail("%s: %s = %q names a macro of its training kernel", r.id, k, v) end
        end
      end
    end
    expect(n):at_least(3) -- retune, pragma_unroll and launch_bounds store some
  end)

  it("have template patterns that compile and match a kernel of another lineage, each", function()
    local elsewhere = {}
    for _, k in ipairs(lineage_files) do elsewhere[#elsewhere + 1] = { lineage = k.lineage, text = k.text } end
    local n = 0
    for _, r in ipairs(records) do
      if r.pattern.source then
        n = n + 1
        local why = learn.unusable(r, { elsewhere = elsewhere })
        if why then fail("%s: %s", r.id, why) end
      end
    end
    expect(n):at_least(1)
  end)

  it("each materialize through its transform on a kernel that is not one of its sources", function()
    local n = 0
    for _, r in ipairs(records) do
      local m = r.materialize
      if m.transform then
        local lineages = {}
        for _, o in ipairs(r.observations) do lineages[o.lineage] = true end
        -- the transforms' golden inputs, then the kernels of lineages it never saw
        local kernels = {}
        for _, k in ipairs(golden) do kernels[#kernels + 1] = k end
        for _, k in ipairs(lineage_files) do if not lineages[k.lineage] then kernels[#kernels + 1] = k end end
        local done, why
        for _, k in ipairs(kernels) do
          for _, site in ipairs(transforms.sites(k.text, { names = { m.transform }, direction = "apply" })) do
            local text, f = transforms.run(site, m.params)
            if text and text ~= k.text then done = k.file break end
            why = f and f.message or "it changed nothing"
          end
          if done then break end
        end
        if not done then fail("%s materializes on no kernel beside its sources: %s", r.id, tostring(why or "no site")) end
        n = n + 1
      end
    end
    expect(n):at_least(20)
  end)
end)

describe("a schedule skill", function()
  local kir = require "klineage.kir"
  local records = assert(store.load(shipped))

  it("is learned from observations of a schedule family: a prior over kir's rows, with name-free parameters", function()
    local function sobs(family, params, speedup, lineage)
      local o = obs { skill = "schedule:" .. family, speedup = speedup, lineage = lineage }
      o.transform, o.schedule = nil, { family = family, params = params, delta = family .. "()" }
      return o
    end
    local r = learn.skill("schedule:stage", { sobs("stage", { tile = 32 }, 1.5, "sgemm"), sobs("stage", { tile = 32 }, 1.4, "conv2d"),
                                              sobs("stage", { tile = 8 }, 1.2, "transpose") })
    expect(r.id):equals("schedule-stage")
    expect(r.pattern):equals({ schedule = "stage" })
    expect(r.materialize):equals({ schedule = "stage", params = { tile = 32 } })
    expect(r.intent):contains("shared memory")
    expect(learn.unusable(r)):is_nil()
    assert(require("klineage.skills.record").validate(r))
  end)

  it("gives no row in skills match: it weighs kir's schedule rows instead", function()
    local sched = {}
    for _, r in ipairs(records) do if r.pattern.schedule then sched[#sched + 1] = r end end
    expect(#sched):at_least(4)
    local text = read(root .. "/examples/optimize/matmul.cu")
    local rows = assert(require("klineage.skills.match").kernel(sched, text, {}))
    expect(#rows):equals(0)
  end)

  it("shipped: each names a kir primitive, stores only numbers and shapes, and finds rows on kernels it never saw", function()
    -- the development suite's tune part: kernels no lineage is
    local suite = root .. "/examples/suites/held-out"
    local kernels, searched = {}, {}
    local tasks = { "gemv", "layernorm", "attention_scores", "jacobi2d", "bias_gelu", "scan_rows", "histogram", "batched_gemm" }
    for _, t in ipairs(tasks) do
      kernels[#kernels + 1] = assert(kir.lift(read(suite .. "/" .. t .. "/kernel.cu"), {}))
    end
    -- persist is offered by the search alone, folding a grid past CUDA's
    -- limit at the bench size (batched_gemm's unflatten): its rows count too
    local function search_offers(family)
      if searched[family] == nil then
        searched[family] = false
        for _, t in ipairs(tasks) do
          local w = assert(require("klineage.workload").load(suite .. "/" .. t .. "/workload.lua"))
          local state = { workload = w, tried = {}, decided = {}, decide = function() end }
          for _, row in ipairs(require("klineage.search.schedules").rows(state, { source = read(suite .. "/" .. t .. "/kernel.cu"), sha256 = t })) do
            if row.schedule:find(family .. "(", 1, true) then searched[family] = true end
          end
        end
      end
      return searched[family]
    end
    local n = 0
    for _, r in ipairs(records) do
      local family = r.pattern.schedule
      if family then
        n = n + 1
        expect(r.materialize.schedule):equals(family)
        expect(kir.primitive(family) ~= nil):equals(true)
        for k, v in pairs(r.materialize.params or {}) do
          if not (math.type(v) == "integer" or (type(v) == "string" and v:match("^%d+x[%dx]+$"))) then
            fail("%s: %s = %s is not a number or a block shape", r.id, k, tostring(v))
          end
        end
        local found
        for _, k in ipairs(kernels) do
          for _, c in ipairs(kir.candidates(k)) do if c.name == family then found = true end end
        end
        if not found and not search_offers(family) then fail("%s: kir offers no %s row on the tune part's kernels", r.id, family) end
      end
    end
    expect(n):at_least(4)
  end)
end)

-- Issue 33, item 3: on emu the effect is not known.
describe("on an untimed backend", function()
  local forward = require "klineage.search.forward"
  local emu = { timed = false, ctx = { backend = "emu" } }
  local correct = { verdict = "ok", record = { stages = {} }, effect = { measured = false, why = "emu times nothing" } }

  -- n measurements at speedup s each, with the compare's interval s +- half
  local function measured(skill, list)
    local out = {}
    for i, m in ipairs(list) do
      out[i] = obs { skill = skill, lineage = m[4] or "softmax", outcome = m[1] > 1 and "helped" or "no_difference",
                     speedup = m[1], ci = { m[1] - m[2], m[1] + m[3] } }
    end
    return learn.skill(skill, out)
  end

  it("the learner gives the median its noise interval: a coin toss straddles 1, a clear gain does not", function()
    -- fast_math as the H200 walks saw it: ten softmax steps, median 1.003x
    local toss = measured("fast_math", {
      { 1.097, 0.003, 0.002 }, { 1.0016, 0.004, 0.008 }, { 1.007, 0.002, 0.002 }, { 1.0039, 0.0015, 0.0017 },
      { 1.0012, 0.0036, 0.0057 }, { 1.0052, 0.008, 0.005 }, { 0.9994, 0.0024, 0.002 }, { 1.0016, 0.0005, 0.0008 },
      { 0.9993, 0.008, 0.009 }, { 1.058, 0.005, 0.0036 } })
    local s = toss.effect.speedup
    expect(s.median > 1):equals(true)
    expect(s.ci[1] < 1):equals(true)
    expect(s.ci[2] > s.median):equals(true)
    local clear = measured("coalesce", { { 12.3, 0.01, 0.01 }, { 2.19, 0.002, 0.002 }, { 12.04, 0.01, 0.01 } })
    expect(clear.effect.speedup.ci[1] > 1):equals(true)
    -- under six measurements, the lowest low end to the highest high end
    expect(learn.median_interval({ { speedup = 1, measured = true, ci = { 0.5, 1.5 } } })):equals({ 0.5, 1.5 })
  end)

  it("keeps a correct candidate only where its skill's evidence says faster beyond its noise, and says so", function()
    local ok, why = forward.accept(emu, { record = { effect = { speedup = { median = 1.9, min = 1.4, max = 2.3, n = 7,
                                                                               ci = { 1.4, 2.3 } } } } }, correct)
    expect(ok):equals(true)
    expect(why):contains("kept because the skill's evidence says faster beyond its noise (1.900x median over 7 measurements, its interval 1.400x to 2.300x above 1)")
    ok, why = forward.accept(emu, { record = { effect = { speedup = { median = 1.0028, min = 0.999, max = 1.097, n = 10,
                                                                         ci = { 0.997, 1.06 } } } } }, correct)
    expect(ok):equals(false)
    expect(why):contains("correct on emu, but not kept")
    expect(why):contains("does not say faster beyond its noise (1.003x median over 10 measurements, its interval 0.997x to 1.060x not above 1)")
    -- a record learned before the interval: its median alone is no evidence of speed
    ok, why = forward.accept(emu, { record = { effect = { speedup = { median = 1.5, min = 1.5, max = 1.5, n = 1 } } } }, correct)
    expect(ok):equals(false)
    expect(why):contains("with no noise interval")
  end)

  it("the shipped fast_math and ldg are both reported correct and not kept; coalesce is kept", function()
    local by_id = {}
    for _, r in ipairs(assert(store.load(shipped))) do by_id[r.id] = r end
    for id, want in pairs({ fast_math = false, ldg = false, coalesce = true }) do
      local ok, why = forward.accept(emu, { record = by_id[id] }, correct)
      expect(ok):equals(want)
      expect(why):contains(want and "says faster beyond its noise" or "correct on emu, but not kept")
    end
  end)
end)
