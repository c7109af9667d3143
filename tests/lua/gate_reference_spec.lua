-- The C reference check (gate/reference.lua): a workload's reference.c
-- checks the baseline before any candidate is judged against it. On emu
-- everything runs in the one worker; on the fake backend (standing in for
-- cuda, no GPU here) the reference's outputs come from an emu worker and
-- are uploaded into the run's worker.
local gate = require "klineage.gate"
local reference = require "klineage.gate.reference"
local kernel = require "klineage.gate.kernel"
local workload = require "klineage.workload"
local protocol = require "klineage.device.worker.protocol"
local pool_mod = require "klineage.device.worker.pool"
local context = require "klineage.device.context"
local kemu = require "kl.emu"
local hash = require "kl.hash"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixtures = here .. "/../fixtures/workloads"
local adversarial = here .. "/../adversarial/reference"

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p '" .. d .. "'"))
  return d
end

local write, read = write_file, read_file -- the runner's helpers


-- w with another reference text (the same file name).
local function with_source(w, text)
  local c = {}
  for k, v in pairs(w) do c[k] = v end
  c.reference = { file = w.reference.file, path = w.reference.path, sha256 = hash.sha256(text), source = text }
  return c
end

local GEMV_SPEC = read(fixtures .. "/gemv/workload.lua")

-- A copy of the gemv fixture in a scratch folder, with `reference = <value>`.
local function gemv_variant(ref_value, files)
  local d = tmpdir()
  write(d .. "/v0.cu", read(fixtures .. "/gemv/v0.cu"))
  local spec = GEMV_SPEC:gsub('reference = "reference.c",', ref_value == nil and "" or ("reference = " .. ref_value .. ","))
  write(d .. "/workload.lua", spec)
  for name, text in pairs(files or {}) do write(d .. "/" .. name, text) end
  return d
end

describe("workload.load: the reference field", function()
  it("records the C reference's file, path, hash and text", function()
    local w = assert(workload.load(fixtures .. "/gemv"))
    local text = read(fixtures .. "/gemv/reference.c")
    expect(w.reference.file):equals("reference.c")
    expect(w.reference.path):equals(fixtures .. "/gemv/reference.c")
    expect(w.reference.sha256):equals(hash.sha256(text))
    expect(w.reference.source):equals(text)
  end)
  it("has no reference when the spec names none or says false, even with a reference.c beside it", function()
    local d = gemv_variant(nil, { ["reference.c"] = read(fixtures .. "/gemv/reference.c") })
    expect(assert(workload.load(d)).reference):is_nil()
    local d2 = gemv_variant("false")
    expect(assert(workload.load(d2)).reference):is_nil()
  end)
  it("refuses a reference that is missing, a folder, absolute or not a string", function()
    local _, f = workload.load(gemv_variant('"nothere.c"'))
    expect(f.verdict):equals("bad_input")
    expect(f.message):contains("reference: cannot open")
    local d = gemv_variant('"sub"')
    assert(os.execute("mkdir '" .. d .. "/sub'"))
    local _, f2 = workload.load(d)
    expect(f2.message):contains("reference: cannot read")
    local _, f3 = workload.load(gemv_variant('"/etc/hostname"'))
    expect(f3.message):contains("reference: must name a C file in the spec's folder")
    local _, f4 = workload.load(gemv_variant("42"))
    expect(f4.message):contains("reference: must name a C file")
  end)
  it("is declared by every lineage under gpu/workloads that ships a reference.c", function()
    local root = require("kl.host").home .. "/gpu/workloads"
    local h = assert(io.popen("ls '" .. root .. "'"))
    local seen = 0
    for name in h:lines() do
      local ref = io.open(root .. "/" .. name .. "/reference.c", "rb")
      if ref then
        ref:close()
        local w = assert(workload.load(name))
        if not w.reference or w.reference.file ~= "reference.c" then fail("%s ships reference.c but its spec does not declare it", name) end
        seen = seen + 1
      end
    end
    h:close()
    expect(seen):at_least(7)
  end)
end)

describe("reference.parameters: the declaration against the spec's args", function()
  local w = assert(workload.load(fixtures .. "/gemv"))
  it("reads each parameter's kind from reference.c", function()
    local params = assert(reference.parameters(w))
    local kinds = {}
    for i, p in ipairs(params) do kinds[i] = p.kind end
    expect(kinds):equals({ "i32", "i32", "buf", "buf", "buf" })
    expect(params[3].name):equals("A")
  end)
  it("names both the declaration and the args when the names are swapped", function()
    local ws = assert(workload.load(adversarial .. "/signature"))
    local _, f = reference.parameters(ws)
    expect(f.verdict):equals("bad_input")
    expect(f.message):contains("reference(int M, int N, const float *x, const float *A, float *y)")
    expect(f.message):contains("the spec's args (M, N, A, x, y)")
    expect(f.message):contains("parameter 3 is named 'x', args[3] is 'A'")
  end)
  it("refuses a wrong count, element type, pointer or value, and a missing function", function()
    local cases = {
      { "void reference(int M, int N, const float *A, const float *x) {}", "4 parameters for 5 args" },
      { "void reference(int M, int N, const float *A, const float *x, int *y) {}", "points to i32, args[5] is 'y', a f32 buffer" },
      { "void reference(int M, int *N, const float *A, const float *x, float *y) {}", "parameter 2 (int *N) is a pointer" },
      { "void reference(int M, int N, float A, const float *x, float *y) {}", "parameter 3 (float A) is a value" },
      { "void reference(int M, int N, const float **A, const float *x, float *y) {}", "a type the gate cannot pass" },
      { "typedef struct { float v; } cell;\nvoid reference(int M, int N, const cell *A, const float *x, float *y) {}",
        "parameter 3 (const cell *A) points to cell, args[3] is 'A', a f32 buffer" },
      { "void other(int M) {}", "defines no function `void reference(...)`" },
    }
    for _, c in ipairs(cases) do
      local _, f = reference.parameters(with_source(w, c[1]))
      if not f then fail("accepted: %s", c[1]) end
      expect(f.verdict):equals("bad_input")
      expect(f.message):contains(c[2])
    end
  end)
  it("accepts void pointers and its own scalar spellings", function()
    local params = assert(reference.parameters(with_source(w,
      "void reference(const int M, signed N, const void *A, const float *x, void *y) {}")))
    expect(params[2].kind):equals("i32")
    expect(params[3].kind):equals("buf")
  end)
end)

describe("reference.compile", function()
  local w = assert(workload.load(fixtures .. "/gemv"))
  it("builds a content-addressed shared object once", function()
    local dir = tmpdir()
    local a = assert(reference.compile(w, { cache_dir = dir }))
    expect(a.compiled):is_true()
    expect(a.path:sub(1, #dir + 6)):equals(dir .. "/cref_")
    expect(io.open(a.path, "rb") ~= nil):is_true()
    local b = assert(reference.compile(w, { cache_dir = dir }))
    expect(b.compiled):is_false()
    expect(b.path):equals(a.path)
    local c = assert(reference.compile(with_source(w, w.reference.source .. "\n// edited\n"), { cache_dir = dir }))
    expect(c.path ~= a.path):is_true()
  end)
  it("gives a compile error the reference's file and line", function()
    local bad = "void reference(int M, int N, const float *A, const float *x, float *y) {\n  y[0] = q;\n}\n"
    local _, f = reference.compile(with_source(w, bad), { cache_dir = tmpdir() })
    expect(f.verdict):equals("bad_input")
    expect(f.cause):equals("compile_error")
    expect(f.message):contains("reference.c:2:")
  end)
  it("keeps to the emu cache's rules: a folder others can write is refused, a planted library is not loaded", function()
    local open = tmpdir()
    assert(os.execute("chmod 0777 " .. open))
    local _, f = reference.compile(w, { cache_dir = open })
    expect(f.verdict):equals("io_error")
    expect(f.message):contains("refused")
    -- a library of ours that others could write is built again, not used
    local dir = tmpdir()
    local a = assert(reference.compile(w, { cache_dir = dir }))
    assert(os.execute("chmod 0666 " .. a.path))
    local b = assert(reference.compile(w, { cache_dir = dir }))
    expect(b.compiled):is_true()
  end)
  it("says io_error when there is no host C compiler", function()
    local _, f = reference.compile(w, { cache_dir = tmpdir(), cc = "/nonexistent/klineage-cc" })
    expect(f.verdict):equals("io_error")
    expect(f.message):contains("no host C compiler")
  end)
end)

describe("kl.emu host libraries", function()
  local w = assert(workload.load(fixtures .. "/gemv"))
  local lib = assert(reference.compile(w))
  it("call the reference's entry on emu buffers, with packed scalars", function()
    local A, x, y = kemu.alloc(4 * 6, "A", 4), kemu.alloc(4 * 3, "x", 4), kemu.alloc(4 * 2, "y", 4)
    A:upload(string.pack("<ffffff", 1, 2, 3, 4, 5, 6))
    x:upload(string.pack("<fff", 1, 0, -1))
    local h <close> = assert(kemu.load_host(lib.path))
    h:call(reference.ENTRY, { { "i32", 2 }, { "i32", 3 }, A, x, y })
    local y0, y1 = string.unpack("<ff", y:download())
    expect({ y0, y1 }):equals({ -2.0, -2.0 })
  end)
  it("raise on misuse and answer nil, message for a missing file", function()
    local h = assert(kemu.load_host(lib.path))
    expect(function() h:call("no_such_symbol", {}) end):raises("no function 'no_such_symbol'")
    expect(function() h:call(reference.ENTRY, { "text" }) end):raises("host argument 1 is a string")
    expect(function() h:call(reference.ENTRY, { { "nonsense", 1 } }) end):raises("expected a Buffer or {type, value}")
    h:close()
    expect(function() h:call(reference.ENTRY, {}) end):raises("closed")
    local none, err = kemu.load_host("/nonexistent/cref.so")
    expect(none):is_nil()
    expect(err):contains("cannot load '/nonexistent/cref.so'")
  end)
end)

describe("the host_reference request", function()
  it("is checked like a launch's arguments", function()
    expect((protocol.check_request { id = 1, op = "host_reference", so_path = "/x.so", args = { { "buf", "y" }, { "i32", 3 } } }))
      :is_true()
    local _, f = protocol.check_request { id = 1, op = "host_reference", args = {} }
    expect(f.message):contains("host_reference: missing field 'so_path'")
    local _, f2 = protocol.check_request { id = 1, op = "host_reference", so_path = "/x.so", args = { { "ptr", 1 } } }
    expect(f2.message):contains("host_reference: args[1] has unknown kind 'ptr'")
  end)
  it("is unsupported on the fake worker", function()
    local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
    local r, f = pool:request(1, { op = "host_reference", so_path = "/x.so", args = {} })
    expect(r):is_nil()
    expect(f.verdict):equals("unsupported")
    pool:close()
  end)
end)

describe("gate.evaluate on emu: the baseline against reference.c", function()
  local ctx = assert(context.new { backend = "emu", journal = false, timeout = 120 })
  local w = assert(workload.load(fixtures .. "/gemv"))

  it("passes a right v0 and records the check", function()
    local r = gate.evaluate(ctx, { file = w.dir .. "/v0.cu" }, w)
    if r.verdict ~= "ok" then fail("%s: %s", r.verdict, tostring((r.stages.reference or {}).message)) end
    local s = r.stages.reference
    expect(s.verdict):equals("ok")
    expect(s.sizes):equals(2)
    expect(s.trials):equals(6)
    expect(s.seeds):equals({ 1, 2, 3 })
    expect(s.backend):equals("emu")
    expect(s.reference):equals({ file = "reference.c", sha256 = w.reference.sha256 })
    expect(r.stages.correct.verdict):equals("ok")
  end)

  it("checks v0 once per context: later evaluations reuse the outcome", function()
    local r = gate.evaluate(ctx, { file = w.dir .. "/v0.cu", label = "again" }, w)
    expect(r.stages.reference.reused):is_true()
    expect(r.stages.reference.verdict):equals("ok")
    local other = gate.evaluate(ctx, { file = w.dir .. "/v0.cu" }, w, { seeds = { 7 } })
    expect(other.stages.reference.reused):is_nil()
    expect(other.stages.reference.trials):equals(2)
  end)

  it("gives a v0 that computes 2 A x baseline_broken, before any candidate is compared", function()
    local wt = assert(workload.load(adversarial .. "/twice"))
    local r = gate.evaluate(ctx, { file = wt.dir .. "/v0.cu" }, wt)
    expect(r.verdict):equals("baseline_broken")
    expect(r.blame):equals("baseline")
    expect(r.stages.reference.cause):equals("wrong")
    expect(r.stages.reference.compare.bad_count):equals(33)
    expect(r.stages.reference.at):equals({ size = "test 1", seed = 1 })
    expect(r.stages.reference.message):contains("disagrees with the C reference (reference.c) at test 1, seed 1: y: 33 of 33 elements off (first at index 0")
    expect(r.stages.correct):is_nil()
    -- a right candidate judged against that v0 is not blamed either
    local c = gate.evaluate(ctx, { file = w.dir .. "/v0.cu" }, wt)
    expect(c.verdict):equals("baseline_broken")
    expect(c.stages.reference.reused):is_true()
  end)

  it("refuses a reference whose parameters do not fit the args as bad_input", function()
    local ws = assert(workload.load(adversarial .. "/signature"))
    local r = gate.evaluate(ctx, { file = ws.dir .. "/v0.cu" }, ws)
    expect(r.verdict):equals("bad_input")
    expect(r.blame):equals("input")
    expect(r.stages.reference.cause):equals("signature")
    expect(r.stages.reference.message):contains("does not fit the spec's args (M, N, A, x, y)")
  end)

  it("gives a reference that crashes its worker a clear verdict, and the next evaluation works", function()
    local wc = assert(workload.load(adversarial .. "/crash"))
    local r = gate.evaluate(ctx, { file = wc.dir .. "/v0.cu" }, wc)
    expect(r.verdict):equals("bad_input")
    expect(r.stages.reference.cause):equals("fault")
    expect(r.stages.reference.signal):equals("SIGSEGV")
    expect(r.stages.reference.message):contains("the C reference (reference.c) crashed its worker with SIGSEGV at test 1, seed 1")
    local again = gate.evaluate(ctx, { file = w.dir .. "/v0.cu" }, w, { seeds = { 4 } })
    expect(again.verdict):equals("ok")
    expect(again.stages.reference.verdict):equals("ok")
  end)

  it("gives a reference that hangs bad_input once its request's time is up", function()
    local hang = "void reference(int M, int N, const float *A, const float *x, float *y) {\n"
      .. "  volatile int spin = 1;\n  while (spin) {}\n  (void)M; (void)N; (void)A; (void)x; (void)y;\n}\n"
    local d = gemv_variant('"reference.c"', { ["reference.c"] = hang })
    local wh = assert(workload.load(d))
    local quick = assert(context.new { backend = "emu", journal = false, timeout = 3 })
    local r = gate.evaluate(quick, { file = d .. "/v0.cu" }, wh)
    expect(r.verdict):equals("bad_input")
    expect(r.stages.reference.cause):equals("timeout")
    expect(r.stages.reference.message):contains("did not finish in time at test 1, seed 1")
    quick:close()
  end)

  it("says a workload without a C reference has its baseline as the reference", function()
    local ws = assert(workload.load(fixtures .. "/saxpy"))
    local r = gate.evaluate(ctx, { file = ws.dir .. "/v0.cu" }, ws)
    expect(r.verdict):equals("ok")
    expect(r.stages.reference):equals({ verdict = "skipped", message = "the workload has no C reference: the baseline is the reference" })
  end)

  it("skips the check when the baseline's requires allows no test size", function()
    local picky = { file = "picky.cu", source = "// @kl requires M % 4096 == 0\n" .. read(w.dir .. "/v0.cu") }
    local base = assert(kernel.prepare(picky, w, "sm_90"))
    local s = reference.stage(ctx, base, w)
    expect(s.verdict):equals("skipped")
    expect(#s.skipped):equals(2)
  end)
  ctx:close()
end)

describe("klineage gate with a C reference", function()
  it("exits 1 with baseline_broken for the 2 A x v0, and journals the check", function()
    local runs = tmpdir()
    local out, code = klineage("gate", adversarial .. "/twice", "--backend", "emu", "--journal", runs)
    expect(code):equals(1)
    expect(out):contains(": baseline_broken")
    expect(out):contains("cref     baseline_broken")
    local h = assert(io.popen("cat '" .. runs .. "'/*/journal.jsonl"))
    local journal = h:read("a")
    h:close()
    expect(journal):contains('"reference":{')
    expect(journal):contains('"cause":"wrong"')
  end)
  it("passes the gemv fixture", function()
    local out, code = klineage("gate", fixtures .. "/gemv", "--backend", "emu", "--journal", tmpdir())
    expect(code):equals(0)
    expect(out):contains("cref     ok")
  end)
end)

describe("the check on a backend other than emu (the fake worker)", function()
  local w = assert(workload.load(fixtures .. "/saxpy_ref"))
  local OFF_BY_ONE = [[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void saxpy_off_by_one(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) y[i] = a * x[i] + y[i];
}
]]

  it("uploads the reference's outputs from an emu worker and compares there", function()
    local pool = assert(pool_mod.new { backend = "fake", timeout = 30 })
    local ctx = assert(context.new { journal = false, pool = pool })
    local r = gate.evaluate(ctx, { file = w.dir .. "/v0.cu" }, w, { profile = false })
    expect(r.verdict):equals("ok")
    expect(r.stages.reference.verdict):equals("ok")
    expect(r.stages.reference.backend):equals("fake")
    expect(r.stages.reference.trials):equals(6)
    expect(ctx.emu_pool ~= nil):is_true()
    local broken = gate.evaluate(ctx, { file = w.dir .. "/v0.cu" }, w,
      { profile = false, baseline = { source = OFF_BY_ONE, file = "off_by_one.cu", kernel = "saxpy_off_by_one" } })
    expect(broken.verdict):equals("baseline_broken")
    expect(broken.stages.reference.message):contains("y: 1 of 1000 elements off (first at index 999")
    ctx:close()
    expect(ctx.emu_pool):is_nil()
    pool:close()
  end)

  it("works inside gate.evaluate_all over two workers", function()
    local pool = assert(pool_mod.new { backend = "fake", timeout = 30, devices = { "a", "b" } })
    local ctx = assert(context.new { journal = false, pool = pool })
    local c = { file = w.dir .. "/v0.cu" }
    local records = gate.evaluate_all(ctx, { c, c, c }, w, { profile = false })
    for i = 1, 3 do
      expect(records[i].verdict):equals("ok")
      expect(records[i].stages.reference.verdict):equals("ok")
    end
    ctx:close()
    pool:close()
  end)
end)
