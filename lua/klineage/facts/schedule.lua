-- The schedule signature of a kernel: how its threads map onto the work,
-- read from its source (kl.source) and its `@kl launch` line, whatever
-- names and spelling it uses. Each feature is a named value, data like the
-- other facts; M.FEATURES says what each one means. A feature that does
-- not hold is absent (never false or 0), so two signatures differ exactly
-- where a schedule changed.
--
--   schedule.signature(text, kernel [, opts]) -> sig | nil, why
--     opts = { params = { NAME = int } (the sizes the lanes are read at; a
--              kernel's integer parameter without one is 4096) }
--     sig = { kernel, features = { name = value }, why = { name = text },
--             block = { x, y, z } | nil, threads, map_x (the name that moves
--             the output one element a lane, when there is one), per_trip =
--             { [outputs|inputs.per_thread] = the most elements one growing
--             loop moves a trip }, traffic = { access... }, loops = the
--             lanes' loops }
--     access = { base (the pointer parameter), read, write, atomic (name),
--                class (as global.<P>.load classes it), sectors (a warp's),
--                active (lanes that take it), elements (an access moves),
--                loops (the lanes' loops around it), grows (one of them grows
--                with the problem), trips_at (the product of their trips at
--                the params, when known), offsets (each active lane's byte
--                offset from a common base, nil when they have none), written
--                (the kernel writes the parameter somewhere) }
--   schedule.kernels(text) -> { name... } the __global__ functions with a body
--
-- The lanes (klineage.facts.lanes) are the first warp of a block at its
-- first trip through every loop. A global access is classified by the
-- 32-byte sectors its active lanes touch: broadcast (one address),
-- coalesced (at most one sector more than the bytes it moves need),
-- strided, or indirect (an address read from memory). A __shared__ array is a stage of a global operand
-- when everything written into it is a copy of that operand (zeros for
-- padding allowed), a private copy when threads update it by atomics, a
-- reduction buffer when threads combine partial values in it (a tree, or
-- one slot a warp), and an exchange otherwise.
local annotations = require "klineage.workload.annotations"
local lanes = require "klineage.facts.lanes"

local M = {}

M.DEFAULT_SIZE = 4096

-- What each feature means; <P> a pointer parameter of the kernel, <A> a
-- __shared__ array that stages nothing.
M.FEATURES = {
  { name = "block", meaning = "the block's shape, threads along x, y, z (the @kl launch line)" },
  { name = "grid.dims", meaning = "dimensions of the grid" },
  { name = "grid.fixed", meaning = "the grid does not grow with the problem: persistent blocks" },
  { name = "loops.grid_stride", meaning = "a loop steps by the grid's size: each thread walks the problem" },
  { name = "global.<P>.load", meaning = "the warp's dominant load of P: coalesced, broadcast, strided or indirect" },
  { name = "global.<P>.store", meaning = "the warp's dominant store of P: coalesced, broadcast, strided or indirect" },
  { name = "global.<P>.width", meaning = "elements of P one access moves (4: float4), when more than one" },
  { name = "stage.<P>", meaning = "P is staged in a __shared__ tile of these dims (largest first, padding aside)" },
  { name = "stage.<P>.padded", meaning = "the staged tile has a padding column" },
  { name = "stage.<P>.buffers", meaning = "stages of the tile in shared memory (2: double buffering)" },
  { name = "stage.<P>.bank_ways", meaning = "worst shared-memory bank conflict of the tile's accesses (1: none)" },
  { name = "shared.<A>.bank_ways", meaning = "worst bank conflict of another __shared__ array's accesses" },
  { name = "shared.width", meaning = "elements one shared-memory access moves, when more than one" },
  { name = "shared.exchange", meaning = "__shared__ arrays through which threads exchange computed values" },
  { name = "registers.acc", meaning = "a thread's register accumulators of outputs (8x8: an 8 x 8 tile)" },
  { name = "outputs.per_thread", meaning = "output elements a thread stores (n: a loop that grows with the problem)" },
  { name = "inputs.per_thread", meaning = "input elements a thread loads (n: a loop that grows with the problem)" },
  { name = "split", meaning = "threads that share one work item's loop: warp, block, grid (joined by +)" },
  { name = "reduce.combine", meaning = "how partial values meet: shuffle, tree (shared memory), slots, warp-sync" },
  { name = "scan", meaning = "a prefix sum across the threads: warp or block" },
  { name = "atomics.global", meaning = "atomic operations on global memory" },
  { name = "atomics.shared", meaning = "atomic operations on shared memory" },
  { name = "warp.vote", meaning = "warp votes: __ballot_sync, __all_sync, __any_sync, __syncthreads_or ..." },
  { name = "pipeline", meaning = "loads for a later iteration overlap this one: double-buffer, prefetch" },
  { name = "unroll", meaning = "loops with a #pragma unroll" },
  { name = "loops", meaning = "loops of the kernel and the __device__ functions it calls" },
}

local function bad(fmt, ...) return nil, string.format(fmt, ...) end

function M.kernels(text)
  local S = require "kl.source"
  local unit = S.parse(text)
  local out = {}
  for _, fn in ipairs(unit:functions()) do
    if fn:body() and fn:info().global then out[#out + 1] = fn:name() end
  end
  return out
end

-- ---- the launch -------------------------------------------------------------------

local function eval_list(list, envs)
  local out = {}
  for i, c in ipairs(list or {}) do
    local v = c:eval(table.unpack(envs))
    if math.type(v) ~= "integer" then return nil end
    out[i] = v
  end
  return out
end

local function launch_of(text, kernel, params, params_b, consts)
  local ann = annotations.parse(text)
  if not ann then return nil end
  local launch = ann.launches[kernel] or ann.launch
  if not launch then return nil end
  local env_a, env_b = { params, consts }, { params_b, consts }
  local block = eval_list(launch.block, env_a)
  local grid, grid_b = eval_list(launch.grid, env_a), eval_list(launch.grid, env_b)
  return { block = block, grid = grid, grid_b = grid_b, ngrid = #launch.grid }
end

-- ---- classifying accesses ---------------------------------------------------------

local function addr_parts(a)
  -- every active lane's address as (token, bytes); nil when one is unknown
  local token, parts, n = nil, {}, 0
  for l = 1, lanes.WARP do
    if a.active[l] then
      local x = a.addr[l]
      if x == false then return nil, "unknown" end
      local s, k
      if math.type(x) == "integer" then s, k = "", x else s, k = x.s, x.k end
      if token == nil then token = s elseif token ~= s then return nil, "indirect" end
      n = n + 1
      parts[#parts + 1] = k
    end
  end
  if n == 0 then return nil, "idle" end
  -- one token for the warp (a base read from memory, the same for all):
  -- the lanes' offsets from it still say how they fall on memory
  return parts
end

local function classify_global(a)
  local parts, why = addr_parts(a)
  if not parts then return why end
  local first, same = parts[1], true
  local sectors, bytes = {}, {}
  local nsec, nbytes = 0, 0
  for _, k in ipairs(parts) do
    if k ~= first then same = false end
    for b = k, k + a.width - 1 do
      if not bytes[b] then bytes[b] = true; nbytes = nbytes + 1 end
      local s = b // 32
      if not sectors[s] then sectors[s] = true; nsec = nsec + 1 end
    end
  end
  if same then return "broadcast", nsec end
  -- at most one sector more than the bytes it moves need (an unaligned run)
  if nsec <= (nbytes + 31) // 32 + 1 then return "coalesced", nsec end
  return "strided", nsec
end

-- Worst bank conflict of a shared access: lanes are served in groups of
-- 128 bytes (32 lanes of 4-byte words, 16 of 8, 8 of 16).
local function bank_ways(a)
  local parts, why = addr_parts(a)
  if not parts then return nil, why end
  local group = math.max(1, 128 // math.max(4, a.width))
  local worst, active = 1, {}
  for l = 1, lanes.WARP do if a.active[l] then active[#active + 1] = l end end
  for g0 = 0, lanes.WARP - 1, group do
    local words = {}
    for i, l in ipairs(active) do
      if l - 1 >= g0 and l - 1 < g0 + group then
        local k = parts[i]
        for w = k // 4, (k + a.width - 1) // 4 do
          local bank = w % 32
          words[bank] = words[bank] or {}
          words[bank][w] = true
        end
      end
    end
    for _, ws in pairs(words) do
      local n = 0
      for _ in pairs(ws) do n = n + 1 end
      if n > worst then worst = n end
    end
  end
  return worst
end

local RANK = { coalesced = 1, broadcast = 2, strided = 3, indirect = 4, unknown = 0, idle = -1 }

local function weight(a)
  local w = 1
  for _, lp in ipairs(a.loops) do w = w * (lp.trips == "n" and 64 or math.max(lp.trips, 1)) end
  return w
end

-- Elements a thread moves through a set of accesses, as text: "c" for
-- c in all, "n*k+c" for k a trip of the loops that grow with the problem
-- (summed over them) and c besides; and the most one growing loop moves a
-- trip (an unrolled loop's factor shows there).
local function count_of(accesses, elem_of)
  local n, c, by_loop, most = 0, 0, {}, 0
  for _, a in ipairs(accesses) do
    local any = false
    for l = 1, lanes.WARP do if a.active[l] then any = true break end end
    if any then
      local prod, inner = math.max(a.width // math.max(elem_of(a), 1), 1), nil
      for _, lp in ipairs(a.loops) do
        if lp.trips == "n" then inner = lp else prod = prod * lp.trips end
      end
      if inner then
        n = n + prod
        local key = inner.node.id .. ":" .. inner.frame.id
        by_loop[key] = (by_loop[key] or 0) + prod
        if by_loop[key] > most then most = by_loop[key] end
      else
        c = c + prod
      end
    end
  end
  if n == 0 and c == 0 then return nil end
  if n == 0 then return tostring(c), nil end
  return "n*" .. n .. (c > 0 and ("+" .. c) or ""), most
end
M.count_of = count_of

-- ---- copies: what a value written to shared memory is made of ---------------------

local Copies = {}
Copies.__index = Copies

local function decl_of(prog, f, name, node)
  local list = f.info.decls[name]
  if not list then return nil end
  local at, best = select(5, node:range()), nil
  for _, d in ipairs(list) do
    if d.at <= at and (not d.scope or lanes.contains(d.scope, node)) and (not best or d.at > best.at) then best = d end
  end
  return best and best.node
end

-- The global operands a value copies (a set, empty for a constant), or
-- nil when the value is computed.
function Copies:of(node, f, depth)
  depth = depth or 0
  if depth > 12 or not node then return nil end
  local n = lanes.strip(node)
  local key = n.id .. ":" .. f.id
  if self.memo[key] ~= nil then return self.memo[key] or nil end
  self.memo[key] = false -- a cycle computes nothing new
  local r = self:of_(n, f, depth)
  self.memo[key] = r or false
  return r
end

local function union(a, b)
  if not a or not b then return nil end
  local out = {}
  for k in pairs(a) do out[k] = true end
  for k in pairs(b) do out[k] = true end
  return out
end

function Copies:writes_of(f, name, decl)
  -- every `name[...] = rhs`, `name = rhs` of the frame's function, and the
  -- writes of callees that take name as an argument
  local out = {}
  for a in f.fn:body():walk({ "assign" }) do
    if a.op == "=" then
      local lhs = lanes.strip(a:field("lhs"))
      while lhs and (lhs.kind == "index" or lhs.kind == "member") do lhs = lanes.strip(lhs:field("object")) end
      if lhs and lhs.kind == "ident" and lhs:text() == name and decl_of(self.prog, f, name, lhs) == decl then
        out[#out + 1] = { node = a:field("rhs"), frame = f }
      end
    elseif a.op ~= "=" then
      local lhs = lanes.strip(a:field("lhs"))
      while lhs and (lhs.kind == "index" or lhs.kind == "member") do lhs = lanes.strip(lhs:field("object")) end
      if lhs and lhs.kind == "ident" and lhs:text() == name then out[#out + 1] = { computed = true } end
    end
  end
  for _, g in ipairs(self.prog.frames) do
    if g.parent == f then
      for i, arg in ipairs(lanes.args_of(g.call)) do
        local s = lanes.strip(arg)
        if s.kind == "ident" and s:text() == name then
          local p = g.fn:params()[i]
          if p and p.name then
            for _, w in ipairs(self:writes_of(g, p.name, nil)) do out[#out + 1] = w end
          end
        end
      end
    end
  end
  return out
end

function Copies:of_(n, f, depth)
  local k = n.kind
  if k == "int_lit" or k == "float_lit" or k == "bool_lit" then return {} end
  if k == "ternary" then return union(self:of(n:field("then"), f, depth + 1), self:of(n:field("else"), f, depth + 1)) end
  if k == "member" then return self:of(n:field("object"), f, depth + 1) end
  if k == "call" then
    local name = lanes.callee_name(n)
    if name == "__ldg" then
      local v = self.prog:eval(lanes.args_of(n)[1], f)
      local p = v[1]
      return (lanes.is_ptr(p) and p.space == "global") and { [p.base] = true } or nil
    end
    if name and name:match("^make_%a+%d$") then
      local acc = {}
      for _, a in ipairs(lanes.args_of(n)) do acc = union(acc, self:of(a, f, depth + 1)); if not acc then return nil end end
      return acc
    end
    return nil
  end
  if k == "index" or (k == "unary" and n.op == "*") then
    local p = k == "index" and self.prog:address(n, f, 1)[1] or self.prog:eval(n:field("operand"), f, 1)[1]
    if not lanes.is_ptr(p) then return nil end
    if p.space == "global" then return { [p.base] = true } end
    if p.space == "local" then
      -- a register array: what its elements are given
      local base = n
      while base.kind == "index" or base.kind == "unary" or base.kind == "cast" or base.kind == "cxx_cast" or base.kind == "paren" do
        base = base:field("object") or base:field("operand")
      end
      if base and base.kind == "ident" then return self:of_ident(base, f, depth) end
    end
    return nil
  end
  if k == "ident" then return self:of_ident(n, f, depth) end
  return nil
end

function Copies:of_ident(n, f, depth)
  local name = n:text()
  local d = decl_of(self.prog, f, name, n)
  if not d then
    local p = f.info.params[name]
    if p and f.parent then
      local b = f.binds[p.index]
      return b and self:of(b.node, b.frame, depth + 1) or nil
    end
    return nil
  end
  local acc, any = {}, false
  local init = d:field("value")
  if init and init.kind ~= "init_list" then acc = self:of(init, f, depth + 1); any = true; if not acc then return nil end end
  for _, w in ipairs(self:writes_of(f, name, d)) do
    if w.computed then return nil end
    acc = union(acc, self:of(w.node, w.frame, depth + 1))
    any = true
    if not acc then return nil end
  end
  return any and acc or nil
end

-- ---- the signature ------------------------------------------------------------------

local function dims_text(list)
  local t = {}
  for i, d in ipairs(list) do t[i] = tostring(d) end
  return table.concat(t, "x")
end

local function set_text(set)
  local t = {}
  for k in pairs(set) do t[#t + 1] = k end
  if #t == 0 then return nil end
  table.sort(t)
  return table.concat(t, "+")
end

local function is_pow2(n) return n >= 8 and n & (n - 1) == 0 end

local VOTES = { __ballot_sync = true, __all_sync = true, __any_sync = true, __activemask = true,
                __syncthreads_or = true, __syncthreads_and = true, __syncthreads_count = true, __match_any_sync = true,
                __match_all_sync = true }

local function rhs_of_write(node)
  local n, child = node:parent(), node
  while n and (n.kind == "paren" or n.kind == "member") do child, n = n, n:parent() end
  if n and n.kind == "assign" then return n:field("rhs"), n.op end
end

local function reads_in(node, pred)
  for x in node:walk({ "index" }) do
    if pred(x) then return true end
  end
  return false
end

-- Does the value of expression e (in frame f) read array `name`, directly
-- or through the locals it is computed from (a few levels deep)?
local function flows_from(f, e, name)
  local pattern = "%f[%w_]" .. name .. "%s*%["
  local seen, frontier = {}, { e }
  for _ = 1, 4 do
    local next_frontier = {}
    for _, x in ipairs(frontier) do
      if x:text():find(pattern) then return true end
      for id in x:walk({ "ident" }) do
        local n = id:text()
        if not seen[n] and f.info.decls[n] then
          seen[n] = true
          for a in f.fn:body():walk({ "assign", "declarator" }) do
            if a.kind == "declarator" then
              if a:field("name") and a:field("name"):text() == n and a:field("value") then next_frontier[#next_frontier + 1] = a:field("value") end
            else
              local lhs = lanes.strip(a:field("lhs"))
              while lhs and (lhs.kind == "index" or lhs.kind == "member") do lhs = lanes.strip(lhs:field("object")) end
              if lhs and lhs.kind == "ident" and lhs:text() == n then next_frontier[#next_frontier + 1] = a:field("rhs") end
            end
          end
        end
      end
    end
    frontier = next_frontier
  end
  return false
end

local function function_calls(fn, name)
  for c in fn:body():walk({ "call" }) do
    if lanes.callee_name(c) == name then return true end
  end
  return false
end

local function build(text, unit, fn, kernel, opts)
  local consts = {}
  for _, c in ipairs(unit:constants()) do
    if math.type(c.value) == "integer" then consts[c.name] = c.value end
  end
  local params, params_b = {}, {}
  for _, p in ipairs(fn:params()) do
    if p.name and (p.pointer_depth or 0) == 0 then
      local t = (p.base or p.type or ""):gsub("const", ""):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
      if t == "int" or t == "long" or t == "unsigned" or t == "size_t" or t == "unsigned int" or t == "long long"
        or t == "int64_t" or t == "uint32_t" or t == "int32_t" then
        local v = opts.params and opts.params[p.name]
        if math.type(v) ~= "integer" then v = M.DEFAULT_SIZE end
        params[p.name], params_b[p.name] = v, v * 16 + 4096
      end
    end
  end
  for k, v in pairs(opts.params or {}) do
    if params[k] == nil then params[k] = v; params_b[k] = math.type(v) == "integer" and v * 16 + 4096 or v end
  end
  local ok_l, launch = pcall(launch_of, text, kernel, params, params_b, consts)
  if not ok_l then launch = nil end
  local block = launch and launch.block
  local prog = lanes.program(unit, fn, { block = block, grid = launch and launch.grid, grid_b = launch and launch.grid_b,
                                         params = params, params_b = params_b, consts = consts })
  local F, why = {}, {}
  local function set(name, v, w) if v ~= nil then F[name] = v; why[name] = w end end
  local threads = block and ((block[1] or 1) * (block[2] or 1) * (block[3] or 1)) or nil

  -- the launch
  if block then
    local b = { block[1] or 1, block[2] or 1, block[3] or 1 }
    while #b > 1 and b[#b] == 1 do b[#b] = nil end
    set("block", dims_text(b), "the @kl launch line")
  end
  if launch then
    set("grid.dims", launch.ngrid, "the @kl launch line")
    local fixed = launch.grid and launch.grid_b and true or false
    if fixed then for i = 1, #launch.grid do if launch.grid[i] ~= launch.grid_b[i] then fixed = false end end end
    if fixed then set("grid.fixed", true, "grid(" .. dims_text(launch.grid) .. ") at any size") end
  end

  -- the kernel's own pointer parameters: their element size
  local elem_of_param, written = {}, {}
  for _, p in ipairs(fn:params()) do
    if p.name and (p.pointer_depth or 0) > 0 then elem_of_param[p.name] = lanes.sizeof(p.base or "") or 4 end
  end
  local function elem_of(a) return a.space == "global" and (elem_of_param[a.base] or a.elem) or a.elem end
  for _, a in ipairs(prog.accesses) do if a.space == "global" and a.write then written[a.base] = true end end

  -- global accesses
  local by_param = {}
  local atomics = { global = {}, shared = {} }
  for _, a in ipairs(prog.accesses) do
    if a.atomic then atomics[a.space][a.atomic] = true end
    if a.space == "global" then
      local e = by_param[a.base] or { loads = {}, stores = {}, width = 1 }
      by_param[a.base] = e
      if a.read then e.loads[#e.loads + 1] = a end
      if a.write then e.stores[#e.stores + 1] = a end
      local w = a.width // math.max(elem_of(a), 1)
      if w > e.width then e.width = w end
    end
  end
  local function dominant(list)
    local best, bw, bclass, bsec
    for _, a in ipairs(list) do
      local cls, sec = classify_global(a)
      if cls ~= "idle" then
        local w = weight(a)
        if not best or w > bw or (w == bw and RANK[cls] > RANK[bclass]) then best, bw, bclass, bsec = a, w, cls, sec end
      end
    end
    return best, bclass, bsec
  end
  local function access_text(a, cls, sec)
    local t = a.node:text():gsub("%s+", " ")
    if #t > 60 then t = t:sub(1, 57) .. "..." end
    return t .. (sec and string.format(": %s, %d sectors a warp", cls, sec) or (": " .. cls))
  end
  for name, e in pairs(by_param) do
    local a, cls, sec = dominant(e.loads)
    if a then set("global." .. name .. ".load", cls, access_text(a, cls, sec)) end
    a, cls, sec = dominant(e.stores)
    if a then set("global." .. name .. ".store", cls, access_text(a, cls, sec)) end
    if e.width > 1 then set("global." .. name .. ".width", e.width, "a " .. (e.width * (elem_of_param[name] or 4)) .. "-byte access") end
  end
  set("atomics.global", set_text(atomics.global), "atomic calls on global memory")

  -- every global access a lane takes, as data (klineage.facts.roles reads it)
  local traffic = {}
  for _, a in ipairs(prog.accesses) do
    if a.space == "global" then
      local cls, sec = classify_global(a)
      if cls ~= "idle" then
        local active = 0
        for l = 1, lanes.WARP do if a.active[l] then active = active + 1 end end
        local loops, grows, at = {}, false, 1
        for i, lp in ipairs(a.loops) do
          loops[i] = lp
          if lp.trips == "n" then grows = true end
          local n = math.type(lp.trips) == "integer" and lp.trips or lp.trips_at
          at = at and n and at * math.max(n, 0) or nil
        end
        traffic[#traffic + 1] = {
          base = a.base, read = a.read and not a.atomic or false, write = a.write or false, atomic = a.atomic,
          class = cls, sectors = sec, active = active, elements = math.max(a.width // math.max(elem_of(a), 1), 1),
          loops = loops, grows = grows, trips_at = at, offsets = (addr_parts(a)), node = a.node, frame = a.frame,
          written = written[a.base] or false,
        }
      end
    end
  end
  set("atomics.shared", set_text(atomics.shared), "atomic calls on shared memory")

  -- shared arrays: their role
  local copies = setmetatable({ prog = prog, memo = {} }, Copies)
  local arrays, order = {}, {}
  for _, a in ipairs(prog.accesses) do
    if a.space == "shared" then
      local s = arrays[a.base]
      if not s then s = { name = a.base, accesses = {} }; arrays[a.base] = s; order[#order + 1] = a.base end
      s.accesses[#s.accesses + 1] = a
    end
  end
  table.sort(order)
  local combine, exchange, shared_width = {}, {}, 1
  local has_syncthreads = false
  for _, c in ipairs(prog.calls) do
    if c.name == "__syncthreads" then has_syncthreads = true end
    if c.name == "__shfl_xor_sync" or c.name == "__shfl_down_sync" then combine.shuffle = true end
    if c.name == "__syncwarp" then combine["warp-sync"] = true end
  end
  local staged = {}
  for _, name in ipairs(order) do
    local s = arrays[name]
    local ops, computed, rmw, slot, atomic = {}, false, false, false, false
    local first_var = false
    for _, a in ipairs(s.accesses) do
      if a.atomic then atomic = true end
      local w = a.width // math.max(a.elem, 1)
      if w > shared_width then shared_width = w end
      if a.write and not a.atomic then
        local rhs, op = rhs_of_write(a.node)
        local c = rhs and op == "=" and copies:of(rhs, a.frame) or nil
        if c then for p in pairs(c) do ops[p] = true end else computed = true end
        -- a read of the same array in what is written, or in the same loop
        -- between barriers: threads combine values in it
        if rhs and reads_in(rhs, function(x)
          return x ~= a.node and x.kind == "index" and x:text():match("^[%w_]+") == a.node:text():match("^[%w_]+")
        end) then rmw = true end
        if op and op ~= "=" then rmw = true end
        local parts = addr_parts(a)
        if parts then
          local same, n = true, 0
          for _, k in ipairs(parts) do n = n + 1; if k ~= parts[1] then same = false end end
          if same and not c then slot = true end
        end
      end
      -- the first subscript of a multi-stage tile
      local idx = a.node.kind == "index" and a.node
      while idx and idx:field("object") and idx:field("object").kind == "index" do idx = idx:field("object") end
      if idx and idx.kind == "index" and idx:field("index") and idx:field("index").kind ~= "int_lit" then first_var = true end
    end
    local all_copies = not computed and next(ops) ~= nil
    -- the array's declared dims
    local d0
    for _, fr in ipairs(prog.frames) do
      local list = fr.info.decls[name]
      if list then d0 = list[1].node break end
    end
    local dims = {}
    if d0 then
      local decl = d0:parent()
      local okd, dd = pcall(decl.declaration, decl)
      for _, x in ipairs(okd and dd and dd.declarators or {}) do
        if x.node:equals(d0) then for _, dm in ipairs(x.dims or {}) do dims[#dims + 1] = lanes.dim_value(dm, consts) or "?" end end
      end
    end
    local ways
    for _, a in ipairs(s.accesses) do
      local w = bank_ways(a)
      if w and (not ways or w > ways) then ways = w end
    end
    if all_copies and #dims >= 1 then
      local buffers
      if #dims >= 2 and math.type(dims[1]) == "integer" and dims[1] <= 4 and dims[1] >= 2 and first_var then
        buffers = table.remove(dims, 1)
      end
      local padded = false
      local inner = {}
      for i, d in ipairs(dims) do
        if i == #dims and math.type(d) == "integer" and is_pow2(d - 1) then padded = true; d = d - 1 end
        inner[#inner + 1] = d
      end
      table.sort(inner, function(x, y)
        if math.type(x) == "integer" and math.type(y) == "integer" then return x > y end
        return tostring(x) > tostring(y)
      end)
      local plist = {}
      for p in pairs(ops) do plist[#plist + 1] = p end
      table.sort(plist)
      for _, p in ipairs(plist) do
        local prev = staged[p]
        staged[p] = { dims = prev and (prev.dims .. "+" .. dims_text(inner)) or dims_text(inner), padded = padded or (prev and prev.padded),
                      buffers = buffers or (prev and prev.buffers), ways = math.max(ways or 1, prev and prev.ways or 1), array = name }
      end
    elseif atomic then
      -- a block's private copy that threads update by atomics (a histogram)
      if ways then set("shared." .. name .. ".bank_ways", ways, name .. ": updated by atomics") end
    elseif rmw and has_syncthreads then
      combine.tree = true
      if ways then set("shared." .. name .. ".bank_ways", ways, name .. ": values combined in place") end
    elseif slot then
      combine.slots = true
      if ways then set("shared." .. name .. ".bank_ways", ways, name .. ": one slot a warp") end
    else
      exchange[#exchange + 1] = name
      if ways then set("shared." .. name .. ".bank_ways", ways, name .. ": computed values") end
    end
  end
  for p, st in pairs(staged) do
    set("stage." .. p, st.dims, "__shared__ " .. st.array .. " holds copies of " .. p)
    if st.padded then set("stage." .. p .. ".padded", true, st.array .. "'s rows have a padding column") end
    if st.buffers then set("stage." .. p .. ".buffers", st.buffers, st.array .. " holds " .. st.buffers .. " stages") end
    set("stage." .. p .. ".bank_ways", st.ways, "the worst access of " .. st.array)
  end
  if shared_width > 1 then set("shared.width", shared_width, "a vector shared-memory access") end
  if #exchange > 0 then set("shared.exchange", #exchange, table.concat(exchange, ", ")) end
  set("reduce.combine", set_text(combine), "shuffles, barriers and partial values in shared memory")

  -- scans and votes
  local votes = {}
  for _, c in ipairs(prog.calls) do
    if c.name and VOTES[c.name] then votes[c.name] = true end
    if c.name == "__shfl_up_sync" then
      local level = function_calls(c.frame.fn, "__syncthreads") and "block" or "warp"
      if F.scan ~= "block" then set("scan", level, "__shfl_up_sync in " .. c.frame.fn:name()) end
    end
  end
  set("warp.vote", set_text(votes), "warp-wide votes")

  -- loops: who shares them, unrolling, the grid stride
  local split, unrolled, seen = {}, 0, {}
  for _, lp in ipairs(prog.loops) do
    if lp.unrolled and not seen[lp.node.id] then unrolled = unrolled + 1 end
    seen[lp.node.id] = true
    if lp.grid_step then split.grid = true end
    local init, step = lp.init, lp.step
    if init and step and math.type(step[1]) == "integer" and lanes.repr(init[1]) ~= lanes.repr(init[2]) then
      local fills_shared = false
      for _, a in ipairs(prog.accesses) do
        if a.space == "shared" and a.write and a.frame == lp.frame and lanes.contains(lp.node, a.node) then fills_shared = true end
      end
      if not fills_shared and not lp.grid_step then
        if step[1] == lanes.WARP then split.warp = true
        elseif threads and step[1] == threads then split.block = true end
      end
    end
  end
  if combine.shuffle then split.warp = true end
  if (combine.tree or combine.slots) and has_syncthreads then split.block = true end
  if split.grid then set("loops.grid_stride", true, "a loop steps by gridDim") end
  set("split", (function()
    local t = {}
    for _, k in ipairs({ "warp", "block", "grid" }) do if split[k] then t[#t + 1] = k end end
    return #t > 0 and table.concat(t, "+") or nil
  end)(), "lane-strided loops and cross-thread combines")
  if unrolled > 0 then set("unroll", unrolled, unrolled .. " loops with #pragma unroll") end
  local nloops = 0
  for _ in pairs(seen) do nloops = nloops + 1 end
  if nloops > 0 then set("loops", nloops, "loops of the kernel and its callees") end

  -- register accumulators of outputs
  local acc_best, acc_n
  for _, fr in ipairs(prog.frames) do
    for name, list in pairs(fr.info.decls) do
      for _, d in ipairs(list) do
        local decl = d.node:parent()
        local okd, dd = pcall(decl.declaration, decl)
        if okd and dd and not dd.shared then
          local dims
          for _, x in ipairs(dd.declarators or {}) do
            if x.node:equals(d.node) and #(x.dims or {}) > 0 then
              dims = {}
              for _, dm in ipairs(x.dims) do dims[#dims + 1] = lanes.dim_value(dm, consts) or 0 end
            end
          end
          if dims then
            -- accumulated in a loop that does not index it, and read by a global store
            local accumulates = false
            for a in fr.fn:body():walk({ "assign" }) do
              local lhs = lanes.strip(a:field("lhs"))
              local base = lhs
              while base and base.kind == "index" do base = base:field("object") end
              if base and base.kind == "ident" and base:text() == name and lhs.kind == "index" then
                local rhs = a:field("rhs")
                local self_ref = a.op ~= "=" or (rhs and rhs:text():find(lhs:text(), 1, true) ~= nil)
                if self_ref then
                  -- the tile's shape: the trips of the loops that index it
                  -- (acc[i * TN + j] in loops over i and j is TM x TN)
                  local shape, whole = {}, true
                  for _, lp in ipairs(lanes.loops_around(a, fr.fn:body())) do
                    local parts = lp.kind == "for" and lp:field("init")
                    local var = parts and parts.kind == "decl" and parts:field("declarator") and parts:field("declarator"):field("name")
                    if var and not lhs:text():find("%f[%w_]" .. var:text() .. "%f[^%w_]") then accumulates = true end
                    if lp.kind ~= "for" then accumulates = true end
                    if var and lhs:text():find("%f[%w_]" .. var:text() .. "%f[^%w_]") then
                      local rec = prog.loop_at[lp.id .. ":" .. fr.id]
                      if rec and math.type(rec.trips) == "integer" and rec.trips > 1 then shape[#shape + 1] = rec.trips else whole = false end
                    end
                  end
                  local n = 1
                  for _, t in ipairs(shape) do n = n * t end
                  local m = 1
                  for _, t in ipairs(dims) do m = m * math.max(t, 1) end
                  if accumulates and whole and #shape > 0 and n == m then dims = shape end
                end
              end
            end
            local stored = false
            if accumulates then
              for _, a in ipairs(prog.accesses) do
                if a.space == "global" and a.write and a.frame == fr then
                  local rhs = rhs_of_write(a.node)
                  if rhs and flows_from(fr, rhs, name) then stored = true end
                end
              end
            end
            if stored then
              local n = 1
              for _, x in ipairs(dims) do n = n * math.max(x, 1) end
              if not acc_n or n > acc_n then acc_best, acc_n = dims, n end
            end
          end
        end
      end
    end
  end
  if acc_best then set("registers.acc", dims_text(acc_best), acc_n .. " accumulators a thread") end

  -- work per thread
  local outs, ins = {}, {}
  for _, a in ipairs(prog.accesses) do
    if a.space == "global" then
      if a.write then outs[#outs + 1] = a elseif not written[a.base] then ins[#ins + 1] = a end
    end
  end
  local out_text, out_trip = count_of(outs, elem_of)
  local in_text, in_trip = count_of(ins, elem_of)
  set("outputs.per_thread", out_text, "stores to written parameters")
  set("inputs.per_thread", in_text, "loads of read-only parameters")
  local per_trip = { ["outputs.per_thread"] = out_trip, ["inputs.per_thread"] = in_trip }

  -- loads for a later trip: register prefetch
  local prefetch = false
  for _, lp in ipairs(prog.loops) do
    local f = lp.frame
    local reads, writes = {}, {}
    for c in lp.node:walk({ "call" }) do
      for _, g in ipairs(prog.frames) do
        if g.parent == f and g.call:equals(c) then
          for i, arg in ipairs(lanes.args_of(c)) do
            local s = lanes.strip(arg)
            if s.kind == "ident" then
              local d = decl_of(prog, f, s:text(), s)
              if d and not lanes.contains(lp.node, d) then
                local p = g.fn:params()[i]
                local loads, uses = false, false
                for _, a in ipairs(prog.accesses) do
                  if a.frame == g and a.space == "global" and a.read then loads = true end
                end
                if p and p.name then
                  for asg in g.fn:body():walk({ "assign" }) do
                    local lhs = lanes.strip(asg:field("lhs"))
                    while lhs and lhs.kind == "index" do lhs = lhs:field("object") end
                    if lhs and lhs.kind == "ident" and lhs:text() == p.name and loads then
                      local cp = copies:of(asg:field("rhs"), g)
                      if cp and next(cp) then writes[#writes + 1] = { at = select(5, c:range()), name = s:text() } end
                    end
                  end
                  for x in g.fn:body():walk({ "ident" }) do
                    if x:text() == p.name and not lanes.target_of(x:parent()) and x:parent().kind == "index" then uses = true end
                  end
                end
                if uses then reads[#reads + 1] = { at = select(5, c:range()), name = s:text() } end
              end
            end
          end
        end
      end
    end
    for _, w in ipairs(writes) do
      for _, r in ipairs(reads) do
        if r.name == w.name and r.at < w.at then prefetch = true end
      end
    end
  end
  local pipe = {}
  for _, st in pairs(staged) do if st.buffers then pipe["double-buffer"] = true end end
  if prefetch then pipe.prefetch = true end
  set("pipeline", set_text(pipe), "loads issued a trip ahead")

  -- the output's contiguous index, for a map's x
  local map_x
  for _, a in ipairs(prog.accesses) do
    if a.space == "global" and a.write and not map_x then
      local idx = a.node.kind == "index" and a.node:field("index")
      if idx then
        for x in idx:walk({ "ident" }) do
          local v = prog:eval(x, a.frame)
          if math.type(v[1]) == "integer" and math.type(v[2]) == "integer" and v[2] - v[1] == 1 then map_x = x:text() break end
        end
      end
    end
  end
  return { kernel = kernel, features = F, why = why, block = block, threads = threads, map_x = map_x, per_trip = per_trip,
           traffic = traffic, loops = prog.loops }
end

function M.signature(text, kernel, opts)
  opts = opts or {}
  if type(text) ~= "string" then return bad("a kernel's text expected") end
  local S = require "kl.source"
  local unit = S.parse(text)
  local fn
  local globals = {}
  for _, f in ipairs(unit:functions()) do
    if f:body() and f:info().global then
      globals[#globals + 1] = f:name()
      if f:name() == kernel or (not kernel) then fn = fn or f end
    end
  end
  if kernel and not fn then return bad("no __global__ function '%s' with a body", kernel) end
  if not kernel and #globals > 1 then return bad("%d __global__ functions (%s): name one", #globals, table.concat(globals, ", ")) end
  if not fn then return bad("no __global__ function with a body") end
  local ok, sig = pcall(build, text, unit, fn, fn:name(), opts)
  if not ok then return bad("the signature of %s failed: %s", fn:name(), (tostring(sig):gsub("\n.*", ""))) end
  return sig
end

return M
