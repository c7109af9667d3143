-- __launch_bounds__(max_threads[, min_blocks]) on a __global__ kernel:
-- ptxas then knows the largest block it will run with (and how many blocks
-- should fit on an SM) and budgets registers for it instead of for 1024
-- threads, which can avoid spills or raise occupancy.
--
-- The static check (both directions): the kernel's `// @kl launch` line
-- (its own `launch(<kernel>)` line, or the file's default line when the
-- kernel is the only __global__ one without its own) has a block whose
-- size is an integer constant with the file's constants alone, and the
-- kernel has at most one __launch_bounds__, of at most two arguments. Undo
-- removes it; its params (the argument texts) let apply rebuild it. Both
-- keep the lineages' layout (`void __launch_bounds__(X)` ending its line,
-- the name on the next): apply breaks the line before the name, undo joins
-- it back, unless a comment or more than blanks lies between. Apply
-- without params writes the block size: the #define the launch line names,
-- else a THREADS/BLOCK-named #define of that value, else the number. Apply
-- reparses its result and refuses unless max_threads evaluates to at least
-- the launch's block size (a smaller bound makes every launch fail) and
-- min_blocks, when given, to a positive integer.
local annotations = require "klineage.workload.annotations"
local annot = require "klineage.transforms.lib.annot"
local support = require "klineage.transforms.support"
local verdicts = require "klineage.base.verdicts"

local T = {
  name = "launch_bounds",
  family = "decoration",
  intent = "bound a kernel's block size with __launch_bounds__ so ptxas budgets registers for the block it really runs",
  -- apply's min_blocks (absent: none); max_threads defaults to the block size
  params = { min_blocks = { "2", "4" } },
  -- undone at a block of 1024, a kernel may need more registers than such
  -- a block can have: the gate's launch_error (softmax v8 and v9, 1024
  -- threads, where the bound is what lets them launch)
  changes_resources = true,
}

-- The launch line of kernel `name` among `kernels` names, or nil.
local function launch_of(ann, name, kernels)
  if ann.launches[name] then return ann.launches[name] end
  if not ann.launch then return nil end
  local others = 0
  for _, k in ipairs(kernels) do
    if k ~= name and not ann.launches[k] then others = others + 1 end
  end
  if others == 0 then return ann.launch end
end

-- The block's thread count with the constants alone, or nil.
local function block_threads(launch, consts)
  local n = 1
  for _, c in ipairs(launch.block) do
    local ok, v = pcall(c.eval, c, consts)
    if not ok or math.type(v) ~= "integer" or v < 1 then return nil end
    n = n * v
  end
  if n <= 1024 then return n end
end

-- The default max_threads text for a kernel whose block has `threads`.
local function default_bound(unit, launch_line, threads, before)
  local usable = {}
  for _, d in ipairs(unit:defines()) do
    if d.value.int == threads and not d.function_like and not d.in_function and not d.conditional
       and not d.redefined and d.line["end"] < before then
      usable[d.name.text] = true
      usable[#usable + 1] = d.name.text
    end
  end
  local block = launch_line:match("block%(%s*([%a_][%w_]*)%s*%)")
  if block and usable[block] then return block end
  for _, name in ipairs(usable) do
    if name:find("THREADS", 1, true) or name:find("BLOCK", 1, true) then return name end
  end
  return tostring(threads)
end

function T.find(unit)
  local sites = {}
  local src = tostring(unit)
  local ann = annotations.parse(src)
  if not ann then return sites end
  local consts = annot.constants(unit)
  local kernels = annot.functions(unit, { global = true })
  local names = {}
  for _, k in ipairs(kernels) do names[#names + 1] = k.name end
  for _, k in ipairs(kernels) do
    local launch = launch_of(ann, k.name, names)
    local threads = launch and block_threads(launch, consts)
    local lb = threads and k.fn:launch_bounds()
    local fields = { key = k.name, line = k.fn.line, threads = threads }
    if lb and lb.present and lb.count == 1 and lb.nargs <= 2 then
      fields.direction, fields.bounds = "undo", lb
      fields.params = { max_threads = lb.max_threads.text, min_blocks = lb.min_blocks and lb.min_blocks.text }
      fields.check = string.format("kernel %s has %s and launches %d threads a block (%s)", k.name, lb.whole.text,
        threads, launch.where)
      sites[#sites + 1] = support.site(T, unit, k.fn, fields)
    elseif lb and not lb.present and lb.insert then
      local line = ""
      for _, a in ipairs(unit:annotations()) do
        if launch.where:match(":(%d+)$") == tostring(a.line) then line = a.text end
      end
      fields.direction, fields.insert = "apply", lb.insert
      fields.default = default_bound(unit, line, threads, lb.insert.begin)
      fields.check = string.format("kernel %s has no __launch_bounds__ and launches a constant %d threads a block (%s)",
        k.name, threads, launch.where)
      sites[#sites + 1] = support.site(T, unit, k.fn, fields)
    end
  end
  return sites
end

-- An argument text: a constant expression, no comma, balanced parentheses.
local function well_formed(text)
  if type(text) ~= "string" or not text:match("^[%w_%s%+%-%*/%%%(%)<>]+$") then return false end
  local depth = 0
  for ch in text:gmatch("[()]") do
    depth = depth + (ch == "(" and 1 or -1)
    if depth < 0 then return false end
  end
  return depth == 0
end

-- The blanks matching `lead` from byte `at` up to the kernel's name, or nil.
local function layout_gap(site, at, lead)
  if not (site.fn and site.fn:match("^[%a_][%w_]*$")) then return nil end
  return tostring(site.unit):sub(at, at + 200):match(lead .. site.fn .. "%f[^%w_]")
end

function T.apply(site, params)
  local ok, fail = support.same_unit(site, T, "apply")
  if not ok then return nil, fail end
  params = params or {}
  local max_threads, min_blocks = params.max_threads or site.default, params.min_blocks
  if not well_formed(max_threads) or (min_blocks ~= nil and not well_formed(min_blocks)) then
    return nil, verdicts.failure("bad_input", "launch_bounds: max_threads and min_blocks must be constant expression texts")
  end
  local i = site.insert
  local bound = "__launch_bounds__(" .. max_threads .. (min_blocks and (", " .. min_blocks) or "") .. ")"
  local edit = { begin = i.begin, ["end"] = i["end"], text = i.prefix .. bound .. i.suffix }
  -- The lineages' layout: the bound ends the line, the name starts the next.
  local gap = layout_gap(site, i.begin, "^([ \t]+)")
  if gap and i.suffix == "" then edit = { begin = i.begin, ["end"] = i.begin + #gap - 1, text = i.prefix .. bound .. "\n" } end
  local out, f = support.edit(site, { edit })
  if not out then return nil, f end
  -- Judge the bound as the compiler will: evaluated where it stands.
  local fn = annot.function_named(support.unit(out), site.key, { global = true })
  local lb = fn and fn:launch_bounds()
  if not (lb and lb.present and lb.count == 1) then return support.refuse(site, "the bound did not land on the kernel") end
  local mt = lb.max_threads and lb.max_threads.int
  if math.type(mt) ~= "integer" or mt < site.threads or mt > 1024 then
    return support.refuse(site, string.format("max_threads %s is not a constant from %d (the block) to 1024",
      max_threads, site.threads))
  end
  if min_blocks then
    local mb = lb.min_blocks and lb.min_blocks.int
    if math.type(mb) ~= "integer" or mb < 1 or mb > 32 then
      return support.refuse(site, "min_blocks " .. min_blocks .. " is not a constant from 1 to 32")
    end
  end
  return out
end

function T.undo(site)
  local ok, fail = support.same_unit(site, T, "undo")
  if not ok then return nil, fail end
  local whole = site.bounds.whole
  local r = whole.remove
  -- `void __launch_bounds__(X)\nname(`: the name comes back after the type.
  local gap = layout_gap(site, whole["end"] + 1, "^([ \t]*\n[ \t]*)")
  if gap and r["end"] == whole["end"] then
    return support.edit(site, { { begin = r.begin, ["end"] = whole["end"] + #gap, text = " " } })
  end
  return support.edit(site, { { begin = r.begin, ["end"] = r["end"], text = "" } })
end

return T
