-- What the 32 lanes of a kernel's first warp do, read from its source
-- (kl.source) without running it: the addresses each memory access
-- touches, the trip counts of its loops, the conditions that leave lanes
-- idle. The kernel's __device__ callees are followed through their call
-- sites (a frame per call site, its parameters bound to the arguments).
--
--   lanes.program(unit, fn, opts) -> prog
--     opts = { block = {x, y, z}, grid = {x, y, z}, params = { NAME = int },
--              consts = { NAME = int } }
--   prog.frames    the kernel's frame, then one per call of a __device__ function
--   prog.accesses  { { node, frame, space = "global" | "shared", base (the
--                    kernel's pointer parameter or the shared array), elem
--                    (bytes of its scalar), width (bytes an access moves),
--                    read, write, atomic (name), addr = { lane -> byte offset },
--                    active (lanes that take the access), loops = { loop... } } }
--   prog.loops     { { node, frame, trips = n | "n" (grows with the workload),
--                    trips_at (lane 0's count at the given params, when known),
--                    init = vec, step = vec, grid_step (the step grows with
--                    gridDim), unrolled (a #pragma unroll), depth } }
--   prog.calls     { { node, frame, name } } every call, builtins included
--   prog:eval(node, frame [, which]) -> vec: 32 lane values (which: 1 at
--     the given params, 2 at larger ones, 3 with the grid doubled)
--   prog:address(index_node, frame [, which]) -> vec of pointers
--
-- A lane value is an integer, an opaque value { s = token, k = integer }
-- (s + k: a value read from memory, or made of one, with the same token
-- exactly when two lanes hold the same thing), a pointer { space, base,
-- off (an integer or opaque), elem, dims (the sizes left of an array) },
-- or false (unknown). Every loop is taken at its first iteration and every
-- variable at its first definition: what the first trip of the warp does.
-- Trip counts are simulated on lane 0 twice, at the given params and at
-- larger ones: a count that changes grows with the workload ("n").
local M = {}

M.WARP = 32

local ELEM = {
  char = 1, ["signed char"] = 1, ["unsigned char"] = 1, int8_t = 1, uint8_t = 1, bool = 1,
  short = 2, ["unsigned short"] = 2, half = 2, __half = 2, __nv_bfloat16 = 2, int16_t = 2, uint16_t = 2,
  int = 4, unsigned = 4, ["unsigned int"] = 4, float = 4, int32_t = 4, uint32_t = 4,
  long = 8, ["long long"] = 8, ["unsigned long"] = 8, ["unsigned long long"] = 8, double = 8,
  int64_t = 8, uint64_t = 8, size_t = 8,
}
local VECTOR_SCALAR = { float = 4, int = 4, uint = 4, double = 8, half = 2, __half = 2, char = 1, uchar = 1,
                        short = 2, ushort = 2, long = 8, longlong = 8, ulong = 8 }

-- Bytes of one element of a type's text ("const float4 *" -> 16), or nil.
function M.sizeof(type_text)
  local t = (type_text or ""):gsub("__restrict__", ""):gsub("%f[%w_]const%f[^%w_]", ""):gsub("%f[%w_]volatile%f[^%w_]", "")
    :gsub("__shared__", ""):gsub("__align__%b()", ""):gsub("%*", ""):gsub("&", ""):gsub("^%s+", ""):gsub("%s+$", "")
    :gsub("%s+", " ")
  if ELEM[t] then return ELEM[t] end
  local scalar, n = t:match("^([%a_]-)(%d)$")
  if scalar and VECTOR_SCALAR[scalar] then return VECTOR_SCALAR[scalar] * tonumber(n) end
  if t == "__half2" or t == "half2" or t == "__nv_bfloat162" then return 4 end
end

-- An array dimension's value: kl.source's, else its text evaluated with
-- the file's constants (a template's parameter hides a file-scope constant
-- of its name from kl.source, not from the instantiation a caller states).
function M.dim_value(dim, consts)
  if math.type(dim.int) == "integer" then return dim.int end
  local text = dim.text
  if not text or text == "" or #text > 200 then return nil end
  local c = require("klineage.base.expr").compile(text, { c_division = true })
  local v = c and c:eval(consts or {})
  return math.type(v) == "integer" and v or nil
end

-- ---- lane values --------------------------------------------------------------

local function is_int(v) return math.type(v) == "integer" end
local function is_sym(v) return type(v) == "table" and v.s ~= nil end
local function is_ptr(v) return type(v) == "table" and v.space ~= nil end
M.is_ptr, M.is_sym = is_ptr, is_sym

-- A token longer than this is replaced by its hash: the same operands
-- still give the same token, and a chain that doubles it at each step
-- (a = a * a ...) stays small.
local MAX_TOKEN = 120

local function sym(s, k)
  if #s > MAX_TOKEN then s = "#" .. require("kl.hash").sha256(s):sub(1, 24) end
  return { s = s, k = k or 0 }
end

local function repr(v)
  if is_int(v) then return tostring(v) end
  if is_sym(v) then return v.k == 0 and v.s or (v.s .. "+" .. v.k) end
  if is_ptr(v) then return v.space .. ":" .. v.base .. "@" .. repr(v.off) end
  return "?"
end
M.repr = repr

local function num_add(a, b)
  if is_int(a) and is_int(b) then return a + b end
  if is_sym(a) and is_int(b) then return sym(a.s, a.k + b) end
  if is_int(a) and is_sym(b) then return sym(b.s, b.k + a) end
  if is_sym(a) and is_sym(b) then return sym("(" .. a.s .. "+" .. b.s .. ")", a.k + b.k) end
  return false
end

local function num_mul(a, b)
  if is_int(a) and is_int(b) then return a * b end
  if is_sym(b) and is_int(a) then a, b = b, a end
  if is_sym(a) and is_int(b) then
    if b == 0 then return 0 end
    if b == 1 then return a end
    return sym("(" .. a.s .. ")*" .. b, a.k * b)
  end
  if is_sym(a) and is_sym(b) then return sym("(" .. repr(a) .. ")*(" .. repr(b) .. ")", 0) end
  return false
end

local function num_neg(a) return num_mul(a, -1) end

local function num_sub(a, b)
  if is_sym(a) and is_sym(b) and a.s == b.s then return a.k - b.k end
  local nb = num_neg(b)
  if nb == false then return false end
  return num_add(a, nb)
end

-- C's truncating division and its remainder.
local function cdiv(a, b) local q = a // b; if q < 0 and q * b ~= a then q = q + 1 end; return q end
local function cmod(a, b) return a - cdiv(a, b) * b end

local INT_OPS = {
  ["/"] = function(a, b) return b ~= 0 and cdiv(a, b) or false end,
  ["%"] = function(a, b) return b ~= 0 and cmod(a, b) or false end,
  ["<<"] = function(a, b) return (b >= 0 and b < 63) and a << b or false end,
  [">>"] = function(a, b) return (b >= 0 and b < 63) and a >> b or false end,
  ["&"] = function(a, b) return a & b end,
  ["|"] = function(a, b) return a | b end,
  ["^"] = function(a, b) return a ~ b end,
  ["<"] = function(a, b) return a < b and 1 or 0 end,
  ["<="] = function(a, b) return a <= b and 1 or 0 end,
  [">"] = function(a, b) return a > b and 1 or 0 end,
  [">="] = function(a, b) return a >= b and 1 or 0 end,
  ["=="] = function(a, b) return a == b and 1 or 0 end,
  ["!="] = function(a, b) return a ~= b and 1 or 0 end,
  ["&&"] = function(a, b) return (a ~= 0 and b ~= 0) and 1 or 0 end,
  ["||"] = function(a, b) return (a ~= 0 or b ~= 0) and 1 or 0 end,
}

local function num_op(op, a, b)
  if op == "+" then return num_add(a, b) end
  if op == "-" then return num_sub(a, b) end
  if op == "*" then return num_mul(a, b) end
  if is_int(a) and is_int(b) then
    local f = INT_OPS[op]
    return f and f(a, b) or false
  end
  if (op == "==" or op == "!=") and is_sym(a) and is_sym(b) and a.s == b.s then
    return INT_OPS[op](a.k, b.k)
  end
  if (op == "/" or op == "%" or op == "<<" or op == ">>" or op == "&" or op == "|" or op == "^")
    and a ~= false and b ~= false and not is_ptr(a) and not is_ptr(b) then
    return sym("(" .. repr(a) .. op .. repr(b) .. ")", 0) -- the same operands, the same value
  end
  return false
end

-- ---- the program ----------------------------------------------------------------

local Prog = {}
Prog.__index = Prog

local LOOPS = { ["for"] = true, ["while"] = true, ["do"] = true }
local MAX_FRAMES, MAX_DEPTH, MAX_TRIPS = 64, 8, 100000

local function byte_of(node) return select(5, node:range()) end

local function strip(n)
  while n and (n.kind == "paren" or ((n.kind == "cast" or n.kind == "cxx_cast") and n.op ~= "reinterpret_cast"
         and not (n:field("type") and n:field("type"):text():find("%*")))) do
    n = n:field("operand")
  end
  return n
end
M.strip = strip

local function args_of(call)
  local out = {}
  for i, c in ipairs(call:children()) do if i > 1 then out[#out + 1] = c end end
  return out
end
M.args_of = args_of

local function callee_name(call)
  local c = call:field("callee")
  if not c then return nil end
  if c.kind == "ident" then return c:text() end
  if c.kind == "template" or c.kind == "template_args" then return (c:text():match("^([%w_]+)")) end
  return (c:text():match("^([%w_]+)%s*<")) or (c:text():match("^[%w_]+$"))
end
M.callee_name = callee_name

-- The function's local declarators by name, each with its scope (the
-- nearest enclosing compound or loop) and byte position.
local function index_declarations(fn)
  local by = {}
  local body = fn:body()
  for d in body:walk({ "declarator" }) do
    local name = d:field("name")
    if name then
      local scope = d:parent()
      while scope and not (scope.kind == "compound" or LOOPS[scope.kind]) do scope = scope:parent() end
      local list = by[name:text()] or {}
      list[#list + 1] = { node = d, scope = scope, at = byte_of(d) }
      by[name:text()] = list
    end
  end
  return by
end

local function contains(outer, node)
  local n = node
  while n do
    if n:equals(outer) then return true end
    n = n:parent()
  end
  return false
end
M.contains = contains

local function new_frame(prog, fn, parent, call, binds)
  local info = prog.fn_info[fn:name()]
  if not info then
    info = { fn = fn, decls = index_declarations(fn), params = {}, assigns = nil }
    for i, p in ipairs(fn:params()) do
      if p.name then info.params[p.name] = { index = i, param = p } end
    end
    prog.fn_info[fn:name()] = info
  end
  local f = { id = #prog.frames + 1, fn = fn, info = info, parent = parent, call = call, binds = binds or {},
              depth = parent and parent.depth + 1 or 0 }
  prog.frames[#prog.frames + 1] = f
  return f
end

-- The declarator a name means at `node` in frame f: { node } of a local,
-- { param } of a parameter, or nil.
local function resolve(f, name, node)
  local list = f.info.decls[name]
  if list then
    local at, best = byte_of(node), nil
    for _, d in ipairs(list) do
      if d.at <= at and (not d.scope or contains(d.scope, node)) and (not best or d.at > best.at) then best = d end
    end
    if best then return { decl = best.node } end
  end
  local p = f.info.params[name]
  if p then return { param = p } end
end

-- ---- evaluation -----------------------------------------------------------------

local function vec_of(v) local out = {}; for l = 1, M.WARP do out[l] = v end; return out end
local UNKNOWN = vec_of(false)

local function map2(a, b, fn)
  local out = {}
  for l = 1, M.WARP do
    local x, y = a[l], b[l]
    out[l] = ((x ~= false and y ~= false) or is_ptr(x) or is_ptr(y)) and fn(x, y) or false
  end
  return out
end

local function ptr_add(p, off_bytes)
  local o = (p.off ~= false and off_bytes ~= false) and num_add(p.off, off_bytes) or false
  return { space = p.space, base = p.base, off = o, elem = p.elem, dims = p.dims, local_lane = p.local_lane,
           frame = p.frame, decl = p.decl }
end

local function ptr_index(p, i)
  local stride = p.elem
  for _, d in ipairs(p.dims) do stride = stride * d end
  local off = (i ~= false and not is_ptr(i)) and num_mul(i, stride) or false
  local q = ptr_add(p, off) -- an unknown offset keeps the array: an access nobody can place
  q.dims = { table.unpack(p.dims, 2) }
  if #p.dims == 0 then q.element = true end
  return q
end

-- The value loaded from a pointer: the same token where two lanes read the
-- same place of global or shared memory; a register array is each lane's own.
local function load_of(p, lane)
  if not is_ptr(p) or p.off == false then return false end
  local where = p.space .. ":" .. p.base .. "@" .. repr(p.off)
  if p.space == "local" then where = where .. "#" .. lane end
  return sym("ld(" .. where .. ")", 0)
end

local function lit_int(text)
  local t = text:gsub("[uUlL]+$", "")
  local v = math.tointeger(tonumber(t))
  if not v and t:match("^0[0-7]+$") then v = math.tointeger(tonumber(t:sub(2), 8)) end
  return v
end

local BUILTIN = { threadIdx = true, blockIdx = true, blockDim = true, gridDim = true }
local AXIS = { x = 1, y = 2, z = 3 }

local function pointer_type(type_text)
  local t = type_text or ""
  local stars = select(2, t:gsub("%*", ""))
  return stars, M.sizeof(t)
end

function Prog:eval(node, f, which)
  local ev = self.evaluators[which or 1]
  local key = node.id .. ":" .. f.id
  local hit = ev.memo[key]
  if hit then return hit end
  if ev.busy[key] then return UNKNOWN end
  ev.busy[key] = true
  local ok, v = pcall(self.eval_node, self, node, f, which or 1)
  ev.busy[key] = nil
  if not ok then
    if type(v) == "string" and v:find("stack overflow", 1, true) then v = UNKNOWN else error(v, 0) end
  end
  ev.memo[key] = v
  return v
end

local function lane_xyz(l, block)
  local i = l - 1
  return i % block[1], (i // block[1]) % block[2], i // (block[1] * block[2])
end

function Prog:builtin(obj, axis, which)
  local ev = self.evaluators[which]
  local a = AXIS[axis]
  if not a then return UNKNOWN end
  if obj == "threadIdx" then
    local out = {}
    for l = 1, M.WARP do out[l] = select(a, lane_xyz(l, self.block)) end
    return out
  elseif obj == "blockIdx" then
    return vec_of(math.min(1, ev.grid[a] - 1))
  elseif obj == "blockDim" then
    return vec_of(self.block[a])
  elseif obj == "gridDim" then
    return vec_of(ev.grid[a])
  end
  return UNKNOWN
end

-- A declared variable's value: a shared or register array as a pointer,
-- else its initializer, else its first plain assignment.
function Prog:declared(d, f, which)
  local decl = d:parent()
  local info = self.decl_info[decl.id]
  if info == nil then
    local ok, dd = pcall(decl.declaration, decl)
    info = ok and dd or false
    self.decl_info[decl.id] = info
  end
  local name = d:field("name"):text()
  local dims, stars, base_type = {}, 0, info and info.base and info.base.text or ""
  for _, x in ipairs(info and info.declarators or {}) do
    if x.node:equals(d) then
      stars = x.stars or 0
      for _, dim in ipairs(x.dims or {}) do dims[#dims + 1] = M.dim_value(dim, self.consts) or false end
    end
  end
  local elem = M.sizeof(base_type)
  if #dims > 0 or (info and info.shared) then
    if not elem then return UNKNOWN end
    if info and info.shared then
      -- the first dim may be open (extern __shared__ float s[]): only the others scale a subscript
      local known = {}
      for i, dm in ipairs(dims) do if i > 1 then if not dm then return UNKNOWN end; known[#known + 1] = dm end end
      return vec_of({ space = "shared", base = name, off = 0, elem = elem, dims = known })
    end
    local rest = {}
    for i, dm in ipairs(dims) do if not dm then return UNKNOWN end; if i > 1 then rest[#rest + 1] = dm end end
    local out = {}
    for l = 1, M.WARP do
      out[l] = { space = "local", base = name, off = 0, elem = elem, dims = rest, local_lane = l, frame = f, decl = d }
    end
    return out
  end
  local init = d:field("value")
  if init then
    if init.kind == "init_list" then return UNKNOWN end
    return self:eval(init, f, which)
  end
  -- no initializer: the first `name = value` in the function
  local first
  for a in f.fn:body():walk({ "assign" }) do
    local lhs = a:field("lhs")
    if a.op == "=" and lhs and lhs.kind == "ident" and lhs:text() == name and byte_of(a) > byte_of(d) then
      if not first or byte_of(a) < byte_of(first) then first = a end
    end
  end
  if first then return self:eval(first:field("rhs"), f, which) end
  if stars > 0 then return UNKNOWN end
  return UNKNOWN
end

function Prog:param_value(p, f, which)
  local ev = self.evaluators[which]
  if f.parent then
    local bound = f.binds[p.index]
    if bound then return self:eval(bound.node, bound.frame, which) end
    return UNKNOWN
  end
  local prm = p.param
  local stars, elem = pointer_type(prm.type)
  if stars > 0 then
    return vec_of({ space = "global", base = prm.name, off = 0, elem = elem or 4, dims = {} })
  end
  local v = ev.params[prm.name]
  if is_int(v) then return vec_of(v) end
  if type(v) == "number" then return UNKNOWN end
  return vec_of(sym("param:" .. prm.name, 0))
end

-- The plain assignments `name = value` of a function, by name, in source order.
local function assignments(info)
  if info.assigns then return info.assigns end
  local by = {}
  for a in info.fn:body():walk({ "assign" }) do
    local lhs = a.op == "=" and a:field("lhs")
    if lhs and lhs.kind == "ident" then
      local list = by[lhs:text()] or {}
      list[#list + 1] = { node = a, at = byte_of(a) }
      by[lhs:text()] = list
    end
  end
  info.assigns = by
  return by
end

function Prog:ident(node, f, which)
  local name = node:text()
  if name == "warpSize" then return vec_of(M.WARP) end
  local r = resolve(f, name, node)
  if r and r.decl then
    -- the last plain assignment before the use in the text, if any, else
    -- the declaration: what the code says the value is by then
    local at, best = byte_of(node), nil
    for _, a in ipairs(assignments(f.info)[name] or {}) do
      if a.at > byte_of(r.decl) and a.at < at and not contains(a.node, node) and (not best or a.at > best.at) then
        local lhs = a.node:field("lhs")
        local same = resolve(f, name, lhs)
        if same and same.decl and same.decl:equals(r.decl) then best = a end
      end
    end
    if best then return self:eval(best.node:field("rhs"), f, which) end
    return self:declared(r.decl, f, which)
  end
  if r and r.param then return self:param_value(r.param, f, which) end
  local c = self.consts[name]
  if is_int(c) then return vec_of(c) end
  local s = self.file_shared[name]
  if s then return vec_of({ space = "shared", base = name, off = 0, elem = s.elem, dims = s.rest }) end
  return UNKNOWN
end

local SHUFFLE = {
  __shfl_sync = function(lane, arg) return arg end,
  __shfl_xor_sync = function(lane, arg) return (lane - 1) ~ arg end,
  __shfl_down_sync = function(lane, arg) local s = lane - 1 + arg; return s < M.WARP and s or lane - 1 end,
  __shfl_up_sync = function(lane, arg) local s = lane - 1 - arg; return s >= 0 and s or lane - 1 end,
}

function Prog:call(node, f, which)
  local name = callee_name(node)
  local args = args_of(node)
  if name and SHUFFLE[name] and #args >= 3 then
    local v = self:eval(args[2], f, which)
    local src = self:eval(args[3], f, which)
    local out = {}
    for l = 1, M.WARP do
      local s = is_int(src[l]) and SHUFFLE[name](l, src[l]) or nil
      out[l] = (s and s >= 0 and s < M.WARP) and v[s + 1] or false
    end
    return out
  end
  if (name == "min" or name == "max" or name == "umin" or name == "umax") and #args == 2 then
    local a, b = self:eval(args[1], f, which), self:eval(args[2], f, which)
    return map2(a, b, function(x, y)
      if is_int(x) and is_int(y) then return (name:find("min") and math.min or math.max)(x, y) end
      if is_sym(x) and is_sym(y) and x.s == y.s then return (name:find("min") and x.k <= y.k) and x or y end
      return false
    end)
  end
  if name == "__ldg" and #args == 1 then
    local p = self:eval(args[1], f, which)
    local out = {}
    for l = 1, M.WARP do out[l] = load_of(p[l], l) end
    return out
  end
  -- any other call (atomics, votes, math, device functions with a
  -- result): each lane's own opaque value
  local out = {}
  for l = 1, M.WARP do out[l] = sym("call" .. node.id .. "#" .. l, 0) end
  if name and (name:match("^__ballot") or name:match("^__all") or name:match("^__any") or name:match("^__syncthreads_")
               or name == "__activemask") then
    out = vec_of(sym("vote" .. node.id, 0)) -- the same for the whole warp
  end
  return out
end

function Prog:eval_node(node, f, which)
  local k = node.kind
  if k == "int_lit" then
    local v = lit_int(node:text())
    return v and vec_of(v) or UNKNOWN
  elseif k == "bool_lit" then
    return vec_of(node:text() == "true" and 1 or 0)
  elseif k == "paren" then
    return self:eval(node:field("operand"), f, which)
  elseif k == "ident" then
    return self:ident(node, f, which)
  elseif k == "member" then
    local obj, mem = node:field("object"), node:field("member")
    if obj and obj.kind == "ident" and BUILTIN[obj:text()] and mem then return self:builtin(obj:text(), mem:text(), which) end
    return UNKNOWN
  elseif k == "cast" or k == "cxx_cast" then
    local v = self:eval(node:field("operand"), f, which)
    local t = node:field("type")
    local tt = t and t:text() or ""
    if tt:find("%*") then
      local elem = M.sizeof(tt)
      local out = {}
      for l = 1, M.WARP do
        local p = v[l]
        out[l] = (is_ptr(p) and elem) and { space = p.space, base = p.base, off = p.off, elem = elem, dims = {},
                                              local_lane = p.local_lane } or false
      end
      return out
    end
    if tt:find("float") or tt:find("double") then
      local out = {}
      for l = 1, M.WARP do out[l] = is_int(v[l]) and sym("f(" .. v[l] .. ")") or false end
      return out
    end
    return v
  elseif k == "binary" then
    local a, b = self:eval(node:field("lhs"), f, which), self:eval(node:field("rhs"), f, which)
    local op = node.op
    return map2(a, b, function(x, y)
      if is_ptr(x) and not is_ptr(y) and (op == "+" or op == "-") then
        local off = num_mul(y, op == "+" and x.elem or -x.elem)
        local p = ptr_add(x, off)
        if p then p.dims = {} end
        return p
      end
      if is_ptr(y) and not is_ptr(x) and op == "+" then
        local off = num_mul(x, y.elem)
        local p = ptr_add(y, off)
        if p then p.dims = {} end
        return p
      end
      if is_ptr(x) or is_ptr(y) then return false end
      return num_op(op, x, y)
    end)
  elseif k == "unary" then
    local v = self:eval(node:field("operand"), f, which)
    local op = node.op
    if op == "&" then
      local operand = strip(node:field("operand"))
      if operand and operand.kind == "index" then return self:address(operand, f, which) end
      return UNKNOWN
    end
    local out = {}
    for l = 1, M.WARP do
      local x = v[l]
      if op == "*" then out[l] = load_of(x, l)
      elseif op == "-" then out[l] = (x ~= false and not is_ptr(x)) and num_neg(x) or false
      elseif op == "+" then out[l] = x
      elseif op == "!" then out[l] = is_int(x) and (x == 0 and 1 or 0) or false
      elseif op == "~" then out[l] = is_int(x) and ~x or false
      elseif op == "++" or op == "--" then out[l] = (x ~= false and not is_ptr(x)) and num_add(x, op == "++" and 1 or -1) or false
      else out[l] = false end
    end
    return out
  elseif k == "postfix" and (node.op == "++" or node.op == "--") then
    return self:eval(node:field("operand"), f, which) -- the value before
  elseif k == "ternary" then
    local c = self:eval(node:field("cond"), f, which)
    local a, b = self:eval(node:field("then"), f, which), self:eval(node:field("else"), f, which)
    local out = {}
    for l = 1, M.WARP do
      if is_int(c[l]) then out[l] = c[l] ~= 0 and a[l] or b[l]
      elseif repr(a[l]) == repr(b[l]) then out[l] = a[l]
      else out[l] = false end
    end
    return out
  elseif k == "index" then
    local p = self:address(node, f, which)
    local out = {}
    for l = 1, M.WARP do
      local x = p[l]
      if is_ptr(x) and not x.element then out[l] = x
      elseif is_ptr(x) and x.space == "local" and x.decl then out[l] = self:register_value(x, l, which)
      else out[l] = load_of(x, l) end
    end
    return out
  elseif k == "call" then
    return self:call(node, f, which)
  elseif k == "sizeof" then
    local t = node:field("type")
    local s = t and M.sizeof(t:text())
    return s and vec_of(s) or UNKNOWN
  elseif k == "assign" then
    return self:eval(node:field("rhs"), f, which)
  end
  return UNKNOWN
end

-- What lane l's register array element p holds: the first plain
-- assignment of the array, in source order, to the same element.
function Prog:register_value(p, l, which)
  local key = p.decl.id .. ":" .. p.frame.id
  local writes = self.register_writes[key]
  if not writes then
    writes = {}
    local name = p.base
    for a in p.frame.fn:body():walk({ "assign" }) do
      local lhs = strip(a:field("lhs"))
      local root = lhs
      while root and root.kind == "index" do root = strip(root:field("object")) end
      if a.op == "=" and lhs.kind == "index" and root and root.kind == "ident" and root:text() == name then
        writes[#writes + 1] = a
      end
    end
    self.register_writes[key] = writes
  end
  for _, a in ipairs(writes) do
    local at = self:address(strip(a:field("lhs")), p.frame, which)[l]
    if is_ptr(at) and at.decl and at.decl:equals(p.decl) and repr(at.off) == repr(p.off) then
      return self:eval(a:field("rhs"), p.frame, which)[l]
    end
  end
  return load_of(p, l)
end

-- The address an index node names (a pointer per lane).
function Prog:address(node, f, which)
  local obj, idx = node:field("object"), node:field("index")
  local base
  if obj.kind == "index" then
    base = self:address(obj, f, which)
  else
    base = self:eval(obj, f, which)
  end
  local i = self:eval(idx, f, which)
  local out = {}
  for l = 1, M.WARP do
    local p, x = base[l], i[l]
    out[l] = is_ptr(p) and ptr_index(p, x) or false
  end
  return out
end

-- ---- the structure: frames, accesses, loops ---------------------------------------

local ATOMIC = "^atomic%a+$"

-- The loops around node inside its function (innermost last), a loop's
-- init not counting as inside it.
local function loops_around(node, body)
  local out = {}
  local n, child = node:parent(), node
  while n and not n:equals(body) do
    if LOOPS[n.kind] then
      local init = n:field("init")
      if not (init and contains(init, child)) then table.insert(out, 1, n) end
    end
    child, n = n, n:parent()
  end
  return out
end
M.loops_around = loops_around

-- The conditions that must hold for node to run: { { node, want = true | false } }.
local function conditions_around(node, body)
  local out = {}
  local n, child = node:parent(), node
  while n and not n:equals(body) do
    if n.kind == "if" or n.kind == "ternary" then
      local c, t, e = n:field("cond"), n:field("then"), n:field("else")
      if t and contains(t, child) then out[#out + 1] = { node = c, want = true }
      elseif e and contains(e, child) then out[#out + 1] = { node = c, want = false } end
    end
    child, n = n, n:parent()
  end
  return out
end

function Prog:active(node, f)
  local mask = {}
  for l = 1, M.WARP do mask[l] = true end
  local fr, n = f, node
  while fr do
    for _, c in ipairs(conditions_around(n, fr.fn:body())) do
      local v = self:eval(c.node, fr, 1)
      for l = 1, M.WARP do
        if is_int(v[l]) and ((v[l] ~= 0) ~= c.want) then mask[l] = false end
      end
    end
    n, fr = fr.call, fr.parent
  end
  return mask
end

-- The loops a node of frame f runs inside, its callers' loops first.
function Prog:all_loops(node, f)
  local out = {}
  if f.parent then out = self:all_loops(f.call, f.parent) end
  for _, l in ipairs(loops_around(node, f.fn:body())) do
    local rec = self.loop_at[l.id .. ":" .. f.id]
    if rec then out[#out + 1] = rec end
  end
  return out
end

local function loop_parts(loop)
  if loop.kind ~= "for" then return nil end
  local init, cond, step = loop:field("init"), loop:field("cond"), loop:field("step")
  if not cond then return nil end
  local var, init_node
  if init and init.kind == "decl" then
    local dl = init:field("declarator")
    if dl and dl:field("name") then var, init_node = dl:field("name"):text(), dl:field("value") end
  elseif init and init.kind == "assign" and init.op == "=" and init:field("lhs").kind == "ident" then
    var, init_node = init:field("lhs"):text(), init:field("rhs")
  end
  cond = strip(cond)
  if cond.kind ~= "binary" then return nil end
  local lhs, rhs = strip(cond:field("lhs")), strip(cond:field("rhs"))
  local op, bound, var_side = cond.op, nil, nil
  local flip = { ["<"] = ">", ["<="] = ">=", [">"] = "<", [">="] = "<=", ["!="] = "!=" }
  if not flip[op] then return nil end
  if lhs.kind == "ident" and (not var or lhs:text() == var) then var_side, bound = lhs, cond:field("rhs")
  elseif rhs.kind == "ident" and (not var or rhs:text() == var) then var_side, bound, op = rhs, cond:field("lhs"), flip[op]
  else return nil end
  var = var or var_side:text()
  local step_op, amount
  if step and (step.kind == "unary" or step.kind == "postfix") and (step.op == "++" or step.op == "--") then
    step_op, amount = step.op == "++" and "+=" or "-=", nil
  elseif step and step.kind == "assign" and step:field("lhs").kind == "ident" and step:field("lhs"):text() == var then
    step_op, amount = step.op, step:field("rhs")
  else
    return nil
  end
  return { var = var, var_node = var_side, init = init_node, op = op, bound = bound, step_op = step_op, amount = amount }
end

local STEP = {
  ["+="] = function(v, a) return v + a end, ["-="] = function(v, a) return v - a end,
  ["*="] = function(v, a) return v * a end, ["<<="] = function(v, a) return v << a end,
  [">>="] = function(v, a) return v >> a end, ["/="] = function(v, a) return a ~= 0 and cdiv(v, a) or nil end,
}
local CMP = {
  ["<"] = function(a, b) return a < b end, ["<="] = function(a, b) return a <= b end,
  [">"] = function(a, b) return a > b end, [">="] = function(a, b) return a >= b end,
  ["!="] = function(a, b) return a ~= b end,
}

-- Trips of lane `lane`'s loop at the evaluator `which`, or nil.
function Prog:trips(parts, loop, f, which, lane)
  local start
  if parts.init then start = self:eval(parts.init, f, which)[lane]
  else start = self:eval(parts.var_node, f, which)[lane] end
  local bound = self:eval(parts.bound, f, which)[lane]
  local amount = parts.amount and self:eval(parts.amount, f, which)[lane] or 1
  if not (is_int(start) and is_int(bound) and is_int(amount)) then
    if is_sym(start) and is_sym(bound) and start.s == bound.s and is_int(amount) then
      start, bound = start.k, bound.k
    else
      return nil
    end
  end
  local step, cmp = STEP[parts.step_op], CMP[parts.op]
  -- an additive step: the count in closed form, however large
  if (parts.step_op == "+=" or parts.step_op == "-=") and amount ~= 0 then
    local d = parts.step_op == "+=" and amount or -amount
    if not cmp(start, bound) then return 0 end
    if parts.op == "!=" then
      if (bound - start) % d ~= 0 or (bound - start) // d < 0 then return nil end
      return (bound - start) // d
    end
    local span = bound - start
    if (d > 0) ~= (span > 0) and span ~= 0 then return nil end -- runs away
    local inclusive = parts.op == "<=" or parts.op == ">="
    local n = -((-math.abs(span)) // math.abs(d))
    if inclusive and math.abs(span) % math.abs(d) == 0 then n = n + 1 end
    return n
  end
  local n, v = 0, start
  while cmp(v, bound) do
    n = n + 1
    if n > MAX_TRIPS then return nil end
    local nv = step(v, amount)
    if nv == nil or nv == v then return nil end
    v = nv
  end
  return n
end

function Prog:add_loop(loop, f)
  local parts = loop_parts(loop)
  local rec = { node = loop, frame = f, unrolled = loop.unroll and loop:unroll() ~= nil or false, parts = parts }
  if rec.unrolled then
    local u = loop:unroll()
    rec.unroll_count = u and u.count and u.count.int
  end
  if parts then
    local a = self:trips(parts, loop, f, 1, 1)
    local b = self:trips(parts, loop, f, 2, 1)
    if a and b and a == b then rec.trips = a else rec.trips = "n" end
    rec.trips_at = a
    rec.init = parts.init and self:eval(parts.init, f, 1) or nil
    rec.step = parts.amount and self:eval(parts.amount, f, 1) or vec_of(parts.step_op == "-=" and -1 or 1)
    if parts.amount then
      local s3 = self:eval(parts.amount, f, 3)
      rec.grid_step = is_int(rec.step[1]) and is_int(s3[1]) and rec.step[1] ~= s3[1]
    end
  else
    rec.trips = "n"
  end
  self.loops[#self.loops + 1] = rec
  self.loop_at[loop.id .. ":" .. f.id] = rec
end

-- Is node the target of an assignment (or ++/--)? "w" plain, "rw" compound.
local function target_of(node)
  local n, child = node:parent(), node
  while n and (n.kind == "paren" or (n.kind == "member" and n:field("object") and n:field("object"):equals(child))) do
    child, n = n, n:parent()
  end
  if not n then return nil end
  if n.kind == "assign" and n:field("lhs") and n:field("lhs"):equals(child) then return n.op == "=" and "w" or "rw" end
  if (n.kind == "unary" or n.kind == "postfix") and (n.op == "++" or n.op == "--") then return "rw" end
  return nil
end
M.target_of = target_of

function Prog:add_access(node, f, p, atomic)
  local space, base, elem
  local addr = {}
  for l = 1, M.WARP do
    local x = p[l]
    if is_ptr(x) and x.space ~= "local" then
      space, base, elem = space or x.space, base or x.base, elem or x.elem
      addr[l] = x.space == space and x.base == base and x.off or false
    else
      addr[l] = false
    end
  end
  if not space then return end
  local t = atomic and "rw" or target_of(node)
  self.accesses[#self.accesses + 1] = {
    node = node, frame = f, space = space, base = base, elem = elem, width = elem, addr = addr,
    read = t ~= "w", write = t ~= nil, atomic = atomic, active = self:active(node, f),
    loops = self:all_loops(node, f),
  }
end

function Prog:scan_frame(f)
  local body = f.fn:body()
  for loop in body:walk({ "for", "while", "do" }) do self:add_loop(loop, f) end
  for n in body:walk({ "index", "unary", "call", "ident" }) do
    local k = n.kind
    if k == "index" then
      local parent = n:parent()
      local outer = not (parent and parent.kind == "index" and parent:field("object"):equals(n))
      local addr_of = parent and parent.kind == "unary" and parent.op == "&"
      if outer and not addr_of then self:add_access(n, f, self:address(n, f, 1)) end
    elseif k == "unary" and n.op == "*" then
      self:add_access(n, f, self:eval(n:field("operand"), f, 1))
    elseif k == "ident" then
      -- a __shared__ scalar named directly
      local parent = n:parent()
      if not (parent and (parent.kind == "declarator" or parent.kind == "call" and parent:field("callee"):equals(n)
              or parent.kind == "member" and parent:field("member") and parent:field("member"):equals(n))) then
        local r = resolve(f, n:text(), n)
        local decl = r and r.decl and r.decl:parent()
        if decl then
          local ok, dd = pcall(decl.declaration, decl)
          if ok and dd and dd.shared then
            local v = self:declared(r.decl, f, 1)
            if is_ptr(v[1]) and #(v[1].dims) == 0 then
              local p = {}
              for l = 1, M.WARP do p[l] = v[l] end
              -- only a scalar: an array's name alone is a pointer, not an access
              local dl
              for _, x in ipairs(dd.declarators or {}) do if x.node:equals(r.decl) then dl = x end end
              if dl and #(dl.dims or {}) == 0 then self:add_access(n, f, p) end
            end
          end
        end
      end
    elseif k == "call" then
      local name = callee_name(n)
      self.calls[#self.calls + 1] = { node = n, frame = f, name = name }
      local args = args_of(n)
      if name and name:match(ATOMIC) and args[1] then
        self:add_access(n, f, self:eval(args[1], f, 1), name)
      end
      local callees = name and self.fns[name]
      if callees and f.depth < MAX_DEPTH and #self.frames < MAX_FRAMES then
        for _, callee in ipairs(callees) do
          local binds = {}
          for i, a in ipairs(args) do binds[i] = { node = a, frame = f } end
          self.pending[#self.pending + 1] = new_frame(self, callee, f, n, binds)
        end
      end
    end
  end
end

function M.program(unit, fn, opts)
  opts = opts or {}
  local block = { 1, 1, 1 }
  for i = 1, 3 do block[i] = (opts.block and opts.block[i]) or (i == 1 and 256 or 1) end
  local grid = { 1, 1, 1 }
  for i = 1, 3 do grid[i] = (opts.grid and opts.grid[i]) or (i == 1 and 64 or 1) end
  local grid_b = { 1, 1, 1 }
  for i = 1, 3 do grid_b[i] = (opts.grid_b and opts.grid_b[i]) or grid[i] end
  local grid_c = { grid[1] * 2, grid[2] * 2, grid[3] * 2 }
  local prog = setmetatable({
    unit = unit, block = block, consts = opts.consts or {}, fns = {}, fn_info = {}, frames = {}, pending = {},
    accesses = {}, loops = {}, loop_at = {}, calls = {}, decl_info = {}, file_shared = {}, register_writes = {},
    evaluators = {
      { params = opts.params or {}, grid = grid, memo = {}, busy = {} },
      { params = opts.params_b or opts.params or {}, grid = grid_b, memo = {}, busy = {} },
      { params = opts.params or {}, grid = grid_c, memo = {}, busy = {} },
    },
  }, Prog)
  for _, g in ipairs(unit:functions()) do
    local info = g:info()
    if g:body() and not info.global and not g:equals(fn) then
      local list = prog.fns[g:name()] or {}
      list[#list + 1] = g
      prog.fns[g:name()] = list
    end
  end
  -- __shared__ arrays declared at file scope
  for decl in unit:root():walk({ "decl" }) do
    local p = decl:parent()
    while p and p.kind ~= "function" do p = p:parent() end
    if not p then
      local ok, dd = pcall(decl.declaration, decl)
      if ok and dd and dd.shared then
        for _, x in ipairs(dd.declarators or {}) do
          local rest, okd = {}, true
          for i, dm in ipairs(x.dims or {}) do
            local n = M.dim_value(dm, prog.consts)
            if not n then okd = false elseif i > 1 then rest[#rest + 1] = n end
          end
          local elem = M.sizeof(dd.base and dd.base.text)
          if okd and elem then prog.file_shared[x.name.text] = { elem = elem, rest = rest, dims = x.dims } end
        end
      end
    end
  end
  local top = new_frame(prog, fn, nil, nil, {})
  prog.pending = { top }
  local i = 1
  while prog.pending[i] do
    prog:scan_frame(prog.pending[i])
    i = i + 1
  end
  prog.pending = nil
  return prog
end

return M
