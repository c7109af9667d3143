-- A kernel's parameter values at a workload's bench size, by the kernel's
-- own parameter names, and expressions evaluated over them: what the model
-- ranks by and what a primitive shapes its candidates to (a block as wide
-- as a narrow digit). Unknown stays nil: nothing here guesses.
--
--   sizes.of(kernel, workload) -> env { name = number } (the spec's args give
--       the order; the uniform lets such as `long total = N * C;` after them)
--   sizes.value(expr, env) -> number | nil
--   sizes.trips(loop, env) -> hi - lo | nil, an analysed loop's trip count
local ir = require "klineage.kir.ir"

local M = {}

local ARITH = {
  ["+"] = function(a, b) return a + b end, ["-"] = function(a, b) return a - b end,
  ["*"] = function(a, b) return a * b end,
  ["/"] = function(a, b) return b ~= 0 and a // b or nil end,
  ["%"] = function(a, b) return b ~= 0 and a % b or nil end,
}

function M.value(e, env)
  if not e or not env then return nil end
  e = ir.strip_casts(e)
  if e.k == "num" then return tonumber((e.v:gsub("[uUlLfF]+$", ""))) end
  if e.k == "var" then return env[e.name] end
  if e.k == "un" and e.op == "-" then
    local v = M.value(e.a, env)
    return v and -v
  end
  if e.k == "bin" and ARITH[e.op] then
    local a, b = M.value(e.a, env), M.value(e.b, env)
    if a and b then return ARITH[e.op](a, b) end
  end
end

function M.trips(loop, env)
  local lo, hi = M.value(loop.lo, env), M.value(loop.hi, env)
  return lo and hi and hi - lo or nil
end

function M.of(kernel, w)
  local env = {}
  if type(w) ~= "table" or type(w.args) ~= "table" or type(w.params) ~= "table" then return env end
  for i, p in ipairs(kernel.params or {}) do
    local v = w.params[w.args[i]]
    if type(v) == "number" then env[p.name] = v end
  end
  for _, s in ipairs(kernel.uniform or {}) do
    if s.s == "let" and s.name and s.init then env[s.name] = M.value(s.init, env) end
  end
  return env
end

return M
