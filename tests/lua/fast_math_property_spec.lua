-- fast_math keeps the meaning of every expression it edits: seeded random
-- float expressions (+ - * /, unary minus, casts, parentheses, indexing,
-- the libm calls and their intrinsics) go through apply then undo, and
-- undo then apply, and the parse of each text must be the parse of the
-- original once each intrinsic is read as its libm form. The trees are
-- compared, not the text: a canonical fully parenthesised rendering of
-- kl.source's parse, so a lost pair of parentheses shows as another tree.
local source = require "kl.source"
local transforms = require "klineage.transforms"

-- A small deterministic generator (xorshift), independent of math.random's
-- state so the cases are the same whatever ran before.
local function rng(seed)
  local s = seed
  return function(n)
    s = s ~ (s << 13) & 0xffffffff
    s = s ~ (s >> 17)
    s = s ~ (s << 5) & 0xffffffff
    return s % n + 1
  end
end

local LEAVES = { "a[i]", "b[i]", "c[i + 1]", "x", "y", "s", "2.5f", "0.75f", "1.0f", "a[(i + 2) % n]" }
local UNARY_CALLS = { "expf", "logf", "sinf", "cosf", "__expf", "__logf", "__sinf", "__cosf", "sqrtf", "rsqrtf" }
local BINARY_OPS = { "+", "-", "*", "/" }

-- Render an expression of at most `depth` levels. `tight` drops the blanks
-- around operators and after commas, so emitted text meets its neighbours
-- without a space (x-__fdividef(-a,b)).
local function expression(pick, depth, tight)
  local sp = tight and "" or " "
  local function gen(d)
    local r = d <= 0 and 1 or pick(12)
    if r <= 2 then return LEAVES[pick(#LEAVES)] end
    if r <= 5 then
      local op, rhs = BINARY_OPS[pick(#BINARY_OPS)], nil
      local lhs = gen(d - 1)
      rhs = gen(d - 1)
      -- "x - -y" written tight needs its blank: "x--y" is a decrement.
      local glue = sp == "" and rhs:match("^[-+]") and " " or sp
      return lhs .. sp .. op .. glue .. rhs
    end
    if r == 6 then
      local inner = gen(d - 1)
      -- "- -x" stays two minus signs; "--x" would be a decrement.
      return "-" .. (inner:sub(1, 1) == "-" and " " or "") .. inner
    end
    if r == 7 then return "(" .. gen(d - 1) .. ")" end
    if r == 8 then return UNARY_CALLS[pick(#UNARY_CALLS)] .. "(" .. gen(d - 1) .. ")" end
    if r == 9 then return "__fdividef(" .. gen(d - 1) .. "," .. sp .. gen(d - 1) .. ")" end
    -- An integral literal exponent is never offered (a negative base): the
    -- exponents are ones both directions take.
    if r == 10 then
      return (pick(2) == 1 and "powf(" or "__powf(") .. gen(d - 1) .. "," .. sp .. (pick(2) == 1 and "y" or "1.5f") .. ")"
    end
    if r == 11 then return "1.0f" .. sp .. "/" .. sp .. "sqrtf(" .. gen(d - 1) .. ")" end
    return "(float)" .. gen(d - 1)
  end
  return gen(depth)
end

local function kernel(exprs)
  local lines = { "__global__ void k(const float *a, const float *b, const float *c, float *out, float s, int n) {",
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;",
                  "  float x = a[i], y = b[i];" }
  for j, e in ipairs(exprs) do lines[#lines + 1] = string.format("  out[i + %d] = %s;", j - 1, e) end
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n") .. "\n"
end

-- The libm reading of each intrinsic: what apply may introduce and undo
-- removes, so both forms canonicalise alike.
local LIBM = { __expf = "expf", __logf = "logf", __sinf = "sinf", __cosf = "cosf", __powf = "powf" }

local canon
local function call_canon(n)
  local kids = n:children()
  local name = kids[1].kind == "ident" and kids[1]:text()
  local args = {}
  for j = 2, #kids do args[#args + 1] = canon(kids[j]) end
  if name == "__fdividef" and #args == 2 then return "(" .. args[1] .. " / " .. args[2] .. ")" end
  if name == "rsqrtf" and #args == 1 then return "(1.0f / sqrtf(" .. args[1] .. "))" end
  return (LIBM[name] or canon(kids[1])) .. "(" .. table.concat(args, ", ") .. ")"
end

-- One string per tree shape: every operator node in parentheses, source
-- parentheses dropped (the tree already says the grouping).
function canon(n)
  local k = n.kind
  if k == "paren" then return canon(n:children()[1]) end
  if k == "ident" or k == "int_lit" or k == "float_lit" then return n:text() end
  if k == "binary" then return "(" .. canon(n:field("lhs")) .. " " .. n.op .. " " .. canon(n:field("rhs")) .. ")" end
  if k == "unary" then return "(" .. n.op .. " " .. canon(n:children()[1]) .. ")" end
  if k == "cast" then return "((" .. n:field("type"):text() .. ") " .. canon(n:field("operand")) .. ")" end
  if k == "index" then return canon(n:field("object")) .. "[" .. canon(n:field("index")) .. "]" end
  if k == "member" then return canon(n:field("object")) .. n.op .. n:field("member"):text() end
  if k == "call" then return call_canon(n) end
  error("no canonical form for a " .. k .. " node: " .. n:text(), 0)
end

-- The canonical trees of the kernel's statements, one line each; nil and
-- the reason when the text does not parse to one kernel of statements.
local function shape(text)
  local unit, diags = source.parse(text)
  if diags and #diags > 0 then return nil, "diagnostic " .. tostring(diags[1].id) .. ": " .. tostring(diags[1].message) end
  local fns = unit:functions()
  if #fns ~= 1 then return nil, #fns .. " functions" end
  local out = {}
  for _, st in ipairs(fns[1]:body():children()) do
    if st.kind == "expr_stmt" then
      local v = st:children()[1]
      if v.kind ~= "assign" then return nil, "not an assignment: " .. st:text() end
      local ok, c = pcall(function() return canon(v:field("lhs")) .. " = " .. canon(v:field("rhs")) end)
      if not ok then return nil, c end
      out[#out + 1] = c
    elseif st.kind ~= "decl_stmt" then
      return nil, "a " .. st.kind .. " statement: " .. st:text()
    end
  end
  return table.concat(out, "\n")
end

local function run_site(text, site)
  local out, f = transforms.run(site)
  if not out then fail("%s of %s failed: %s\n--- on ---\n%s", site.direction, site.key, tostring(f), text) end
  return out
end

-- The text must keep the original's shape; what it was made from is said.
local function same_shape(want, text, how, original)
  local got, why = shape(text)
  check(got == want,"%s changed the expression tree\n--- original ---\n%s--- result ---\n%s--- want ---\n%s\n--- got ---\n%s",
      how, original, text, want, tostring(got or why))
end

local CASES, SEED = 300, 20240611

describe("fast_math keeps expression trees (property, seeded)", function()
  it("the generator's own texts parse to kernels of assignments", function()
    local pick = rng(SEED)
    for _ = 1, 50 do
      local text = kernel({ expression(pick, 4, pick(3) == 1) })
      local s, why = shape(text)
      check(s ~= nil, "generated text does not parse: %s\n%s", tostring(why), text)
    end
  end)

  it("apply then undo, and undo then apply, of every site keep the tree", function()
    local pick = rng(SEED)
    local applied, undone = 0, 0
    for _ = 1, CASES do
      local exprs = {}
      for j = 1, pick(3) do exprs[j] = expression(pick, 4, pick(3) == 1) end
      local text = kernel(exprs)
      local want = assert(shape(text))
      for _, site in ipairs(transforms.sites(text, { names = { "fast_math" } })) do
        local once = run_site(text, site)
        same_shape(want, once, site.direction .. " " .. site.key, text)
        local back = transforms.counterpart(site, once)
        check(back ~= nil, "%s %s: no counterpart site in\n%s", site.direction, site.key, once)
        same_shape(want, run_site(once, back), site.direction .. " then " .. back.direction .. " " .. site.key, text)
        if site.direction == "apply" then applied = applied + 1 else undone = undone + 1 end
      end
    end
    -- The generator must reach both directions often, or the property is vacuous.
    expect(applied):at_least(CASES // 2)
    expect(undone):at_least(CASES // 2)
  end)

  it("every family applied in turn, then every family undone in turn, keeps the tree", function()
    local pick = rng(SEED + 1)
    for _ = 1, CASES // 3 do
      local text = kernel({ expression(pick, 5, pick(2) == 1), expression(pick, 5, false) })
      local want = assert(shape(text))
      for _, direction in ipairs({ "apply", "undo", "apply" }) do
        local site = transforms.sites(text, { names = { "fast_math" }, direction = direction })[1]
        while site do
          local next_text = run_site(text, site)
          same_shape(want, next_text, "every " .. direction .. " (" .. site.key .. ")", text)
          text = next_text
          site = transforms.sites(text, { names = { "fast_math" }, direction = direction })[1]
        end
      end
    end
  end)

  it("known cases: nested divisions, products, unary minus, casts and intrinsic arguments", function()
    local cases = {
      { "__fdividef(a[i], __fdividef(b[i], s))", "a[i] / (b[i] / s)" },
      { "x * __fdividef(a[i], b[i] + s)", "x * ((a[i]) / (b[i] + s))" },
      { "-__fdividef(x, y)", "-(x / y)" },
      { "(float)__fdividef(x, y)", "(float)(x / y)" },
      { "__expf(a[i] + b[i])", "expf(a[i] + b[i])" },
      { "x-__fdividef(-x,y)", "x- -x / y" },
      { "__fdividef(x + y, rsqrtf(s - x))", "(x + y) / (1.0f / sqrtf(s - x))" },
    }
    for _, c in ipairs(cases) do
      local text = kernel({ c[1] })
      local want = assert(shape(text))
      local out = text
      local s = transforms.sites(out, { names = { "fast_math" }, direction = "undo" })
      check(#s > 0, "no undo site in %s", c[1])
      while #s > 0 do
        out = run_site(out, s[1])
        s = transforms.sites(out, { names = { "fast_math" }, direction = "undo" })
      end
      same_shape(want, out, "undo of " .. c[1], kernel({ c[1] }))
      -- The libm text must also read as the precise expression a person would write.
      same_shape(assert(shape(kernel({ c[2] }))), out, "undo of " .. c[1] .. " against " .. c[2], kernel({ c[1] }))
    end
  end)
end)
