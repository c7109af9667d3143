-- The C reference check: the baseline (the lineage's v0, or the kernel an
-- evaluation names as its baseline) against the workload's own C reference,
-- before any candidate is judged against that baseline. Every candidate is
-- compared with the baseline run in the same worker, so a wrong baseline
-- would pass wrong candidates; reference.c is the independent answer.
--
--   reference.judge(ctx, record, base, w, options, opts) -> nil | verdict
--       the gate's hook (gate/init.lua, before the correctness stage):
--       record.stages.reference = reference.stage(...); the verdict to end
--       the evaluation with when the check did not pass
--   reference.stage(ctx, base, w [, { seeds, worker, async }]) -> stage
--       stage = { verdict, message, sizes (how many), trials, seeds,
--                 skipped = { { size, why } }, backend (where the baseline
--                 ran), reference = { file, sha256 }, ms, compiled (this
--                 check built the .so), reused (kept from an earlier
--                 evaluation), baseline = { ran, kept, stored } (how the
--                 trials got the baseline's outputs: session.lua's
--                 baseline_outputs), and on a failure cause, at = { size, seed },
--                 compare (the failed compare reply), log (a compile
--                 error's), signal, code, stderr, retried }
--   reference.parameters(w) -> params | nil, failure (bad_input)
--       reference.c's `reference` declaration read with kl.source and
--       checked against the spec's args, by count, name, and kind (a
--       buffer is a pointer to its element type or void, a parameter a
--       scalar of klineage.base.types): params[i] = { name, kind = "buf" | a
--       scalar type name, ctype, text }
--   reference.wrapper(w, params) -> the generated C text
--   reference.compile(w [, { cc, cache_dir }]) -> { path, key, compiled, params } | nil, failure
--
-- Compile. In the engine process, never in a worker (a worker may be
-- sandboxed from compilers): the wrapper is reference.c's text followed by
-- `void kl_reference_entry(void **args)`, which calls `reference` with
-- args[i] cast to the declared parameter's type (protocol.lua,
-- "host_reference", says how the worker packs them). The host C compiler
-- ($KLINEAGE_CC, else M.DEFAULT_CC, plus M.REQUIRED_FLAGS: no FMA
-- contraction, so the reference's arithmetic is the one it writes) builds
-- emu.cache_dir()/cref_<key>.so, named by the hash of the wrapper and the
-- command, written through a temporary name and a rename. Headers the
-- reference includes from its folder are found (-I) but are not part of
-- the key.
--
-- Check. For each test size (workload.sizes(w), never a bench size) that
-- the baseline's `@kl requires` allows, and each seed:
--   * on an emu worker (ctx:reference_pool()): alloc, fill from the seed
--     (bit-identical to the device generator, engine/core/randgen.h; custom
--     inits from workload.host_inputs), host_reference, and a check that
--     no float output of the reference is NaN or infinite (an element it
--     left unwritten is NaN);
--   * its outputs become "<name>@cref" in the run's worker: on emu the
--     same worker snapshots them; on any other backend they are read back
--     and uploaded into a snapshot-made "<name>@cref" there;
--   * the run's worker fills the same seed's inputs, runs the baseline and
--     compares each output with "<name>@cref" with the workload's tolerance.
--     The baseline's outputs are those the correctness stage's trials then
--     use (gate/session.lua, baseline_outputs): kept in the worker, and on
--     emu on disk too (gate/baseline_store.lua), so a check in another
--     process compares stored outputs of the same baseline build with a
--     fresh run of reference.c.
-- A spec that declares in-place launches (alias = { { out, in } }) has
-- each size and seed checked twice: as above, then with both the reference
-- and the baseline given one buffer for each pair (alias.in_place(w)).
-- A worker killed from outside (worker_lost) gets one more try.
--
-- Verdicts: "ok"; "skipped" (no reference, or no test size the baseline
-- allows); "baseline_broken" (cause "wrong" with the first bad index and
-- the errors, or the way the baseline failed to run); "bad_input" for the
-- reference's own faults (a declaration that does not fit args, a compile
-- error, a crash or hang in its worker, a non-finite output: cause says
-- which), never the candidate's; "unsupported" when the emulator cannot
-- run the baseline; the engine's verdicts (worker_lost, io_error, ...).
-- A context keeps each outcome (ctx.reference_checks) by (spec, reference,
-- baseline, entry, seeds, backend): a bench of ten versions checks v0 once.
-- The engine's own failures are not kept; the next evaluation tries again.
local alias = require "klineage.workload.alias"
local baseline_store = require "klineage.gate.baseline_store"
local cache = require "klineage.device.cache"
local emu = require "klineage.device.emu"
local protocol = require "klineage.device.worker.protocol"
local session = require "klineage.gate.session"
local types = require "klineage.base.types"
local verdicts = require "klineage.base.verdicts"
local workload = require "klineage.workload"
local host = require "kl.host"
local kemu = require "kl.emu"

local M = {}

M.DEFAULT_CC = "cc -std=c17 -O2 -fPIC -shared"
M.REQUIRED_FLAGS = "-ffp-contract=off"
M.ENTRY = "kl_reference_entry"
M.FUNCTION = "reference"
M.NO_REFERENCE = "the workload has no C reference: the baseline is the reference"

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function bad_input(message, fields) return nil, verdicts.failure("bad_input", message, fields) end

-- --- the declaration ---------------------------------------------------------

-- The parameter as the spec's argument it must be.
local function describe_arg(w, a)
  local b = w.buffer_by_name[a]
  if b then return string.format("'%s', a %s buffer", a, b.type) end
  return string.format("'%s', a parameter", a)
end

local function declaration(fn, params)
  local parts = {}
  for i, p in ipairs(params) do parts[i] = p.text end
  return string.format("%s(%s)", fn, table.concat(parts, ", "))
end

function M.parameters(w)
  local ref = w.reference
  if not ref then error("reference.parameters: the workload has no C reference", 2) end
  local unit = require("kl.source").parse(ref.source, ref.path)
  local fn
  for _, f in ipairs(unit:functions()) do
    if f:name() == M.FUNCTION and f:body() then fn = f end
  end
  if not fn then
    return bad_input(string.format("%s defines no function `void %s(...)` (the spec's args: %s)", ref.path, M.FUNCTION,
      table.concat(w.args, ", ")))
  end
  local plain, failure = require("klineage.gate.kernel").plain_params(fn, ref.path .. ": " .. M.FUNCTION)
  if not plain then return nil, failure end
  local params = {}
  for i, p in ipairs(plain) do
    local ty = p.type or "?"
    local text = p.name and (ty .. (ty:match("%*$") and "" or " ") .. p.name) or ty
    local base = p.base or p.type or ""
    local entry = { text = text, ctype = base, name = p.name }
    if p.reference or p.pointer_depth > 1 then
      -- no kind: a C++ reference or a pointer to pointers is nothing the gate passes
    elseif p.pointer_depth == 1 then
      entry.kind = "buf"
      if base == "void" then entry.element = "void" else entry.element = types.of_c(base) end
    else
      local t = types.get(types.of_c(base) or "")
      entry.kind = t and t.scalar and t.name or nil
    end
    params[i] = entry
  end
  local decl = declaration(M.FUNCTION, params)
  local function mismatch(why)
    return bad_input(string.format("%s: %s does not fit the spec's args (%s): %s", ref.path, decl,
      table.concat(w.args, ", "), why), { cause = "signature" })
  end
  if #params ~= #w.args then
    return mismatch(string.format("%d parameters for %d args", #params, #w.args))
  end
  for i, a in ipairs(w.args) do
    local p, b = params[i], w.buffer_by_name[a]
    if p.name ~= a then
      -- names are what tell two float pointers apart
      return mismatch(string.format("parameter %d is named '%s', args[%d] is '%s'", i, tostring(p.name), i, a))
    elseif not p.kind then
      return mismatch(string.format("parameter %d (%s) has a type the gate cannot pass", i, p.text))
    elseif b and p.kind ~= "buf" then
      return mismatch(string.format("parameter %d (%s) is a value, args[%d] is %s", i, p.text, i, describe_arg(w, a)))
    elseif not b and p.kind == "buf" then
      return mismatch(string.format("parameter %d (%s) is a pointer, args[%d] is %s", i, p.text, i, describe_arg(w, a)))
    elseif b and p.element ~= "void" and p.element ~= b.type then
      return mismatch(string.format("parameter %d (%s) points to %s, args[%d] is %s", i, p.text,
        p.element or p.ctype, i, describe_arg(w, a)))
    end
  end
  return params
end

-- --- the wrapper and its compile ----------------------------------------------

local function c_string(s) return '"' .. s:gsub("[\\\"]", "\\%0"):gsub("\n", "\\n") .. '"' end

function M.wrapper(w, params)
  local ref = w.reference
  local call = {}
  for i, p in ipairs(params) do
    -- args[i] points at the value: a buffer's address or the packed scalar
    if p.kind == "buf" then
      call[i] = string.format("*(void *const *)a[%d]", i - 1)
    else
      call[i] = string.format("*(const %s *)a[%d]", p.ctype, i - 1)
    end
  end
  return table.concat({
    string.format("#line 1 %s", c_string(ref.path)),
    ref.source,
    '#line 1 "<klineage reference entry>"',
    string.format("void %s(void **a);", M.ENTRY),
    string.format("void %s(void **a) {", M.ENTRY),
    string.format("  %s(%s);", M.FUNCTION, table.concat(call, ",\n    ")),
    "  (void)a;", -- a reference of no arguments leaves it unused
    "}",
    "",
  }, "\n")
end

local first_error = emu.first_error

function M.compile(w, opts)
  opts = opts or {}
  local params, f = M.parameters(w)
  if not params then return nil, f end
  local text = M.wrapper(w, params)
  local cc = opts.cc or os.getenv("KLINEAGE_CC")
  if not cc or cc == "" then cc = M.DEFAULT_CC end
  local flags = "-I" .. quote(w.reference.path:match("^(.*)/[^/]*$") or ".")
  local key = kemu.hash(text, cc, M.REQUIRED_FLAGS, flags)
  -- the emu cache's rules (device/emu.lua, device/cache.lua): a private folder, and
  -- only files of ours that no one else can write are loaded
  local dir, owned = opts.cache_dir, 1
  if not dir then
    dir, owned = emu.cache_dir()
    if not dir then return nil, owned end
  end
  local safe, serr = cache.private_dir(dir, owned, true)
  if not safe then return nil, serr end
  local so = string.format("%s/cref_%s.so", dir, key)
  local out = { path = so, key = key, params = params, compiled = false }
  local have, uerr = emu.usable(so)
  if have == nil then return nil, uerr end
  if have then return out end
  local src = string.format("%s/cref_%s.c", dir, key)
  local wok, werr = cache.write_private(src, text)
  if not wok then return nil, werr end
  local tmp = string.format("%s.tmp.%d.%d", so, require("kl.proc").getpid(), math.random(1 << 30))
  local cmd = string.format("umask 077 && %s %s %s -o %s %s -lm 2>&1", cc, M.REQUIRED_FLAGS, flags, quote(tmp), quote(src))
  local h = assert(io.popen(cmd, "r"))
  local log = h:read("a")
  local ok, _, code = h:close()
  if not ok then
    os.remove(tmp)
    if code == 127 then
      return nil, verdicts.failure("io_error", string.format("no host C compiler for the C reference (%s): %s",
        cc, first_error(log)), { command = cmd })
    end
    return nil, verdicts.failure("bad_input", string.format("the C reference does not compile: %s", first_error(log)),
      { cause = "compile_error", log = log, command = cmd })
  end
  local rok, rerr = os.rename(tmp, so)
  if not rok then
    os.remove(tmp)
    return nil, verdicts.failure("io_error", "cannot move the compiled reference into the cache: " .. tostring(rerr))
  end
  out.compiled = true
  return out
end

-- --- the check -----------------------------------------------------------------

-- The host_reference request at params p.
local function host_request(lib, w, p)
  local args = {}
  for i, a in ipairs(w.args) do
    -- by the buffer's own name: in an in-place view an input names its output
    if w.buffer_by_name[a] then args[i] = { "buf", w.buffer_by_name[a].name } else args[i] = { lib.params[i].kind, p[a] } end
  end
  return { op = "host_reference", so_path = lib.path, args = args }
end

-- A failure of the reference's own run, in the failure shape: its worker
-- crashed or hung (the reference's fault, hence the spec's), or the
-- engine's trouble (passed on as it is).
local ENGINE = { worker_lost = true, worker_unavailable = true, io_error = true, bad_request = true, internal = true }

local function reference_failed(w, f, where)
  if ENGINE[f.verdict] then error(f, 0) end
  local how
  if f.verdict == "timeout" then how = "did not finish in time"
  elseif f.verdict == "fault" then how = "crashed its worker" .. (f.signal and (" with " .. f.signal) or "")
  else how = "failed (" .. f.verdict .. ")" end
  -- a signal says it all; the worker's stderr stays in the stage
  local detail = f.signal and "" or (": " .. tostring(f.message))
  verdicts.raise("bad_input", string.format("the C reference (%s) %s at %s%s", w.reference.file, how, where, detail),
    { cause = f.verdict, signal = f.signal, code = f.code, stderr = f.stderr })
end

-- The reference's float outputs must be finite: NaN is what it left unwritten.
local function check_finite(rs, w, where)
  for _, name in ipairs(w.outputs) do
    if workload.is_float(w.buffer_by_name[name].type) then
      local c = rs:call { op = "compare", buffer = name, against = name, rtol = 0, atol = 0 }
      if (c.nonfinite or 0) > 0 then
        verdicts.raise("bad_input", string.format("the C reference (%s) left %d of %d elements of '%s' not finite at %s "
          .. "(an element it does not write stays NaN)", w.reference.file, c.nonfinite, c.count, name, where),
          { cause = "nonfinite" })
      end
    end
  end
end

-- One size and seed: the reference's outputs into "<name>@cref" in the
-- run's worker, then the baseline on the same inputs against them.
local function trial(rs, bs, base, lib, w, size, seed)
  local p = size.params
  local where = string.format("%s, seed %d%s", size.label, seed, w.in_place and (", " .. w.in_place) or "")
  bs:load(base)
  rs:alloc(w, p)
  rs:fill(w, p, seed)
  local ok, f = verdicts.catch(rs.call, rs, host_request(lib, w, p))
  if not ok then reference_failed(w, f, where) end
  check_finite(rs, w, where)
  if rs == bs then
    rs:call { op = "snapshot", buffers = w.outputs, as = "cref" }
  else
    local data = {}
    for _, name in ipairs(w.outputs) do
      local bytes, uf = protocol.unbase64(rs:call({ op = "read", buffer = name }).data_b64 or "")
      if not bytes then error(uf, 0) end
      data[name] = bytes
    end
    bs:alloc(w, p)
    bs:call { op = "snapshot", buffers = w.outputs, as = "cref" } -- makes "<name>@cref"; the upload fills it
    for _, name in ipairs(w.outputs) do bs:call_with_bytes({ op = "upload", name = name .. "@cref" }, "data", data[name]) end
  end
  -- the baseline's outputs on the same seed's inputs, as the correctness
  -- stage's trials take them (a run, or a copy one left: session.lua)
  local how, rf = verdicts.catch(bs.baseline_outputs, bs, base, w, p, seed)
  if not how then
    if ENGINE[rf.verdict] then error(rf, 0) end
    verdicts.raise("baseline_broken", string.format("the baseline (%s) failed at %s: %s: %s", base.file, where,
      rf.verdict, rf.message), { cause = rf.verdict, signal = rf.signal, code = rf.code, stderr = rf.stderr })
  end
  for _, c in ipairs(bs:compare_against(w, "cref", "ref")) do
    if not c.pass then
      verdicts.raise("baseline_broken", string.format("the baseline (%s) disagrees with the C reference (%s) at %s: %s",
        base.file, w.reference.file, where, session.mismatch(c)), { cause = "wrong", compare = c })
    end
  end
  return how
end

local function check(ctx, base, w, opts, stage)
  local lib, cf = M.compile(w)
  if not lib then error(cf, 0) end
  stage.compiled = lib.compiled
  local rpool, pf = ctx:reference_pool()
  if not rpool then error(pf, 0) end
  local worker = opts.worker or 1
  local bs = session.new { pool = ctx.pool, worker = worker, timeout = ctx.timeout, async = opts.async,
                           store = baseline_store.of_context(ctx) }
  -- Requests to another pool never go through the scheduler of
  -- gate.evaluate_all, which waits on the context's pool: they are synchronous.
  local rs = bs
  if rpool ~= ctx.pool then rs = session.new { pool = rpool, worker = 1, timeout = ctx.timeout } end
  -- a spec that declares in-place launches: the reference and the
  -- baseline are run that way too (klineage.workload.alias)
  local in_place = alias.in_place(w)
  for _, size in ipairs(workload.sizes(w)) do
    if not size.bench then
      local g = session.geometry(base, size.params)
      if not g.allowed then
        stage.skipped[#stage.skipped + 1] = { size = size.label, why = "baseline: " .. g.why }
      else
        stage.sizes = stage.sizes + 1
        for _, seed in ipairs(stage.seeds) do
          for _, form in ipairs({ w, in_place }) do
            stage.at = { size = size.label, seed = seed, in_place = form.in_place }
            local how, f = verdicts.catch(trial, rs, bs, base, lib, form, size, seed)
            if not how and f.verdict == "worker_lost" then
              stage.retried = { size = size.label, seed = seed, verdict = f.verdict, message = f.message }
              how, f = verdicts.catch(trial, rs, bs, base, lib, form, size, seed)
            end
            if not how then error(f, 0) end
            stage.trials = stage.trials + 1
            stage.baseline[how] = stage.baseline[how] + 1
          end
        end
      end
    end
  end
  stage.at = nil
  if stage.sizes == 0 then
    stage.verdict, stage.message = "skipped", "no test size is allowed by the baseline's requires"
  else
    stage.verdict = "ok"
    stage.message = string.format("the baseline agrees with %s at %d size(s) x %d seed(s)", w.reference.file,
      stage.sizes, #stage.seeds)
  end
  return true
end

local KEPT = { ok = true, skipped = true, baseline_broken = true, bad_input = true, unsupported = true }

function M.stage(ctx, base, w, opts)
  opts = opts or {}
  if not w.reference then return { verdict = "skipped", message = M.NO_REFERENCE } end
  local seeds = opts.seeds or { 1, 2, 3 }
  local key = table.concat({ w.sha256 or w.path, w.reference.sha256, base.sha256, base.entry, ctx.backend,
                             table.concat(seeds, ",") }, "|")
  local kept = ctx.reference_checks[key]
  if kept then
    local copy = { reused = true }
    for k, v in pairs(kept) do copy[k] = v end
    return copy
  end
  local t0 = host.clock()
  local stage = { sizes = 0, trials = 0, seeds = seeds, skipped = {}, backend = ctx.backend,
                  reference = { file = w.reference.file, sha256 = w.reference.sha256 },
                  baseline = { ran = 0, kept = 0, stored = 0 } }
  local ok, f = verdicts.catch(check, ctx, base, w, opts, stage)
  if not ok then
    for k, v in pairs(session.stage_of(f)) do stage[k] = v end
    stage.log = f.log and f.log:sub(1, 4000) or nil -- a compile error's
    stage.compare = f.compare -- a disagreement's numbers
  end
  stage.ms = (host.clock() - t0) * 1e3
  if KEPT[stage.verdict] then ctx.reference_checks[key] = stage end
  return stage
end

function M.judge(ctx, record, base, w, options, opts)
  local stage = M.stage(ctx, base, w, { seeds = options.seeds, worker = opts.worker, async = opts.async })
  record.stages.reference = stage
  if stage.verdict ~= "ok" and stage.verdict ~= "skipped" then return stage.verdict end
  return nil
end

return M
