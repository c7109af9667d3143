-- restrict and ldg on code where they may not be sound: pointers that may
-- share memory with a written one (the workload's alias declaration, or
-- unknown without one), writes the parser did not structure, and
-- declarations that must agree (prototypes, function-pointer tables).
local transforms = require "klineage.transforms"
local aliasing = require "klineage.transforms.lib.aliasing"
local reads = require "klineage.transforms.lib.reads"
local nvrtc = require "kl.nvrtc"

local NEVER = { alias = { pairs = {} } } -- the spec's alias = {}

local function keys(src, name, facts, direction)
  local out = {}
  for _, s in ipairs(transforms.sites(src, { names = { name }, facts = facts, direction = direction or "apply" })) do
    out[s.key] = s
  end
  return out
end

local SCALE = [==[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void scale(int n, const float *x, float *y, const int *idx) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[idx[i]];
}
]==]

describe("restrict and ldg: pointers that may be one buffer", function()
  for _, name in ipairs({ "restrict", "ldg" }) do
    it(name .. ": unknown aliasing refuses a pointer of the written one's type, with why", function()
      local s = keys(SCALE, name, nil)
      expect(s["scale:x"]):is_nil()
      expect(s["scale:idx"] ~= nil):is_true() -- an int pointer is no float buffer
      local unit = require("kl.source").parse(SCALE)
      local fn = unit:functions()[1]
      local why = aliasing.conflict(unit, fn, 2, nil)
      expect(why):contains("x may be the same buffer as y, which the kernel writes")
      expect(why):contains("whether it is launched in place is unknown")
      expect(why):contains("alias = {}")
    end)
    it(name .. ": a spec that says never in place allows it, and the check says why", function()
      local s = keys(SCALE, name, NEVER)
      expect(s["scale:x"] ~= nil):is_true()
      if name == "restrict" then expect(s["scale:x"].check):contains("the workload's alias declaration keeps it apart") end
    end)
    it(name .. ": a declared in-place pair is refused, another pair is not", function()
      expect(keys(SCALE, name, { alias = { pairs = { { 3, 2 } } } })["scale:x"]):is_nil()
      expect(keys(SCALE, name, { alias = { pairs = { { 3, 4 } } } })["scale:x"] ~= nil):is_true()
      local unit = require("kl.source").parse(SCALE)
      expect(aliasing.conflict(unit, unit:functions()[1], 2, { alias = { pairs = { { 3, 2 } } } }))
        :contains("x and y are launched as one buffer (the workload's alias declares it)")
    end)
    it(name .. ": the facts come from the workload", function()
      local w = { kernel = "scale", args = { "n", "x", "y", "idx" }, alias_pairs = { { output = "y", input = "x" } } }
      expect(keys(SCALE, name, aliasing.facts(w))["scale:x"]):is_nil()
      w.alias_pairs = {}
      expect(keys(SCALE, name, aliasing.facts(w))["scale:x"] ~= nil):is_true()
      w.alias_pairs = nil
      expect(keys(SCALE, name, aliasing.facts(w))["scale:x"]):is_nil()
    end)
  end
end)

-- Each writes p where the parser gives no plain store: p is never "only read".
local WRITES = {
  reference_binding = "float &r = p[i]; r = 1.0f; out[i] = q[i];",
  auto_reference = "auto &r = p[i]; r += 1.0f; out[i] = q[i];",
  address_to_function = "bump(&p[i]); out[i] = q[i];",
  pointer_to_function = "bump(p + i); out[i] = q[i];",
  atomic_pointer = "atomicAdd(p + i, 1.0f); out[i] = q[i];",
  atomic_address = "atomicAdd(&p[i], 1.0f); out[i] = q[i];",
  element_by_reference = "set_one(p[i]); out[i] = q[i];",
  library_swap = "swap(p[i], p[i + 1]); out[i] = q[i];",
  asm_store = 'asm volatile("st.global.f32 [%0], %1;" :: "l"(p + i), "f"(1.0f)); out[i] = q[i];',
  opaque_region = "weird_t w = p[i] + ; out[i] = q[i];",
  macro_store = "PUT(i); out[i] = q[i];",
}
local PRELUDE = [[
__device__ void bump(float *v) { *v += 1.0f; }
__device__ void set_one(float &v) { v = 1.0f; }
#define PUT(k) p[k] = 0.0f
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void k(int n, const float *q, float *p, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  %s
}
]]

describe("restrict and ldg: writes the parser did not structure", function()
  for kind, body in pairs(WRITES) do
    it(kind, function()
      local src = PRELUDE:gsub("%%s", function() return body end)
      local unit = require("kl.source").parse(src)
      local fn
      for _, f in ipairs(unit:functions()) do if f:name() == "k" then fn = f end end
      expect(reads.written(unit, fn, "p")):is_true()
      for _, name in ipairs({ "restrict", "ldg" }) do
        -- p itself is not only read, even where nothing may alias it
        expect(keys(src, name, NEVER)["k:p"]):is_nil()
        expect(keys(src, name, NEVER)["k:q"] ~= nil):is_true()
        -- and q, of p's type, may be p when aliasing is unknown
        expect(keys(src, name, nil)["k:q"]):is_nil()
      end
    end)
  end
  it("a macro's own parameter of that name is not a use", function()
    local src = [[
#define CDIV(p, b) (((p) + (b) - 1) / (b))
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void k(int n, const float *p, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < CDIV(n, 1)) out[i] = p[i];
}
]]
    expect(keys(src, "restrict", NEVER)["k:p"] ~= nil):is_true()
  end)
end)

local PROTO = [[
extern "C" __global__ void k(int n, float *x, float *y);
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void k(int n, float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
]]

describe("restrict: every declaration agrees", function()
  it("an earlier prototype gets the same const __restrict__, and the result compiles", function()
    local s = keys(PROTO, "restrict", NEVER)["k:x"]
    expect(s.check):contains("and in its 1 prototype")
    local out = assert(transforms.run(s))
    expect(out):contains("extern \"C\" __global__ void k(int n, const float *__restrict__ x, float *y);")
    expect(out):contains("extern \"C\" __global__ void k(int n, const float *__restrict__ x, float *y) {")
    local ok, err = nvrtc.compile(out, { arch = "sm_90" })
    if not ok then fail("%s", tostring(err)) end
    -- and back
    local back = assert(transforms.run(assert(transforms.counterpart(s, out))))
    expect(back):contains("void k(int n, const float *x, float *y) {")
    expect(nvrtc.compile(back, { arch = "sm_90" }) ~= nil):is_true()
  end)
  it("a function whose address is taken gets no const added: the site is refused", function()
    local src = PROTO .. "typedef void (*kfn)(int, float *, float *);\nkfn table[] = { k };\n"
    expect(keys(src, "restrict", NEVER)["k:x"]):is_nil()
    -- a pointer already const only gains __restrict__, which leaves the type alone
    local const = src:gsub("float %*x", "const float *x"):gsub("float %*, float %*%)", "const float *, float *)")
    local s = keys(const, "restrict", NEVER)["k:x"]
    expect(s ~= nil):is_true()
    local out = assert(transforms.run(s))
    expect(out):contains("void k(int n, const float *__restrict__ x, float *y);")
    expect(out):contains("void k(int n, const float *__restrict__ x, float *y) {")
    expect(out):contains("typedef void (*kfn)(int, const float *, float *);")
  end)
end)
