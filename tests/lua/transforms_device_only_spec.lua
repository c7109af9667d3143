-- Transforms see device code only: a site in a host function would be an
-- edit nvcc refuses (__fdividef in main) or one that cannot change the
-- kernel (#pragma unroll on a host loop). The unit below puts host code
-- with every shape a transform looks for (loops, float divisions, expf,
-- pointer parameters, shared-looking arrays, reductions) next to a kernel
-- and device helpers that have some of them; no transform may offer a site
-- in a host function, whether asked through transforms.sites or its find.
local source = require "kl.source"
local transforms = require "klineage.transforms"

local UNIT = [[
#include <cstdio>
#include <cmath>
#define N 1024
#define BLOCK 256
#define DEV __device__ __forceinline__
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)

DEV float scale(float v, float w) { return expf(v) / w; }

__host__ __device__ float both(float v, float w) { return v / w; }

extern "C" __global__ void kern(int n, const float *a, const float *b, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = scale(a[i], b[i]) + both(a[i], 2.0f) + expf(a[i]) / b[i];
}

static float host_norm(const float *x, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += expf(x[i]) / (float)n;
  float t[64];
  for (int j = 0; j < 64; j++) t[j] = x[j] / s + logf(x[j] + 1.0f);
  return s / 1.0f / sqrtf(t[3]);
}

__host__ void host_fill(float *x, const float *y, int n) {
  for (int i = 0; i < n; i += 1) x[i] = y[i] * 0.5f / y[(i + 1) % n];
  int k = 0;
  while (k < n) { x[k] = powf(x[k], 0.5f); k++; }
}

void host_reduce(float *__restrict__ data, const float *__restrict__ w, int n) {
#pragma unroll 4
  for (int s = n / 2; s > 0; s >>= 1)
    for (int i = 0; i < s; i++) data[i] += data[i + s] * __fdividef(w[i], 2.0f) + __expf(w[i]);
}

int main() {
  float *a = (float *)malloc(N * sizeof(float)), *out = (float *)malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) a[i] = sinf((float)i) / cosf(1.0f + i);
  host_fill(a, out, N);
  host_reduce(a, out, N);
  kern<<<N / BLOCK, BLOCK>>>(N, a, a, out);
  printf("%f\n", host_norm(out, N) / 3.0f);
  return 0;
}
]]

local HOST = { host_norm = true, host_fill = true, host_reduce = true, main = true }

-- The lines each host function spans.
local function host_lines(unit)
  local spans = {}
  for _, fn in ipairs(unit:functions()) do
    if HOST[fn:name()] then
      local first, _, last = fn:range()
      spans[#spans + 1] = { name = fn:name(), first = first, last = last }
    end
  end
  return spans
end

local function in_host(site, spans)
  for _, s in ipairs(spans) do
    if site.fn == s.name or (site.line and site.line >= s.first and site.line <= s.last) then return s.name end
  end
end

describe("transforms offer sites in device code only", function()
  local unit = source.parse(UNIT)
  local spans = host_lines(unit)

  it("knows the unit's four host functions", function()
    expect(#spans):equals(4)
  end)

  it("transforms.sites offers none in a host function, for every transform", function()
    local bad = {}
    for _, name in ipairs(transforms.names()) do
      for _, site in ipairs(transforms.sites(unit, { names = { name } })) do
        local host = in_host(site, spans)
        if host then bad[#bad + 1] = string.format("%s %s %s (line %s, in %s)", name, site.direction,
          tostring(site.key), tostring(site.line), host) end
      end
    end
    check(#bad == 0, "sites in host functions:\n  %s", table.concat(bad, "\n  "))
  end)

  it("each transform's own find offers none in a host function", function()
    local bad = {}
    for _, t in ipairs(transforms.all()) do
      for _, site in ipairs(t.find(unit) or {}) do
        local host = in_host(site, spans)
        if host then bad[#bad + 1] = string.format("%s.find %s %s (line %s, in %s)", t.name, site.direction,
          tostring(site.key), tostring(site.line), host) end
      end
    end
    check(#bad == 0, "sites in host functions:\n  %s", table.concat(bad, "\n  "))
  end)

  it("the rule transforms.sites applies places a site by its function or its line", function()
    local rule = require("klineage.transforms.lib.device_code").rule(unit)
    local main_line
    for _, fn in ipairs(unit:functions()) do if fn:name() == "main" then main_line = fn.line + 2 end end
    expect(rule.in_host({ fn = "main" })):equals("main")
    expect(rule.in_host({ line = main_line })):equals("main")
    expect(rule.in_host({ fn = "kern" })):is_nil()
    expect(rule.in_host({ fn = "both" })):is_nil()
    expect(rule.in_host({ line = 3 })):is_nil() -- a file-scope #define
  end)

  it("transforms.sites drops a host site even from a find that walks the whole unit", function()
    local t = transforms.get("fast_math")
    local real = t.find
    -- A find that ignores support.functions, as one walking unit:walk() would.
    t.find = function(u)
      local out = {}
      for _, fn in ipairs(u:functions()) do
        out[#out + 1] = { transform = "fast_math", direction = "apply", key = fn:name(), fn = fn:name(), line = fn.line,
          check = "any function", unit = u }
      end
      return out
    end
    local ok, sites = pcall(transforms.sites, unit, { names = { "fast_math" } })
    t.find = real
    assert(ok, sites)
    local names = {}
    for _, site in ipairs(sites) do names[#names + 1] = site.fn end
    expect(table.concat(names, " ")):equals("scale both kern")
  end)

  it("still offers the device functions' sites: the kernel, a macro-qualified helper, __host__ __device__", function()
    local fns = {}
    for _, site in ipairs(transforms.sites(unit, { names = { "fast_math" } })) do fns[site.fn] = true end
    expect(fns.kern):equals(true)
    expect(fns.scale):equals(true)
    expect(fns.both):equals(true)
  end)
end)
