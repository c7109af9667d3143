-- Shared by the reduction transforms (first_add_on_load, unroll_last_warp,
-- warp_shuffle): statements read as whitespace-normalized text, line-level
-- edits (a statement, a function with its comment), the kernel's launch
-- line, and the lineage's helpers recognized by their exact shape.
-- Matching normalized text is deliberately strict: a kernel written in
-- any other way is refused, never guessed at.
local M = {}

-- The node's (or string's) text with every run of blanks made one space.
function M.norm(x)
  local t = type(x) == "string" and x or x:text()
  return (t:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

function M.span(node)
  local _, _, _, _, b, e = node:range()
  return b, e
end

-- The statements of a function body, in order.
function M.stmts(fn)
  local body = fn:body()
  return body and body:children() or {}
end

-- Byte bounds of the line holding byte `pos`: first byte, last byte
-- before the newline, and the byte after the newline.
local function line_at(text, pos)
  local b = pos
  while b > 1 and text:sub(b - 1, b - 1) ~= "\n" do b = b - 1 end
  local e = text:find("\n", pos, true) or (#text + 1)
  return b, e - 1, e + 1
end
M.line_at = line_at

-- The indentation of the node's first line.
function M.indent(unit, node)
  local text = tostring(unit)
  local b = M.span(node)
  local lb = line_at(text, b)
  return text:sub(lb, b - 1):match("^[ \t]*$") or ""
end

-- An edit deleting the node's whole lines when it stands alone on them,
-- or nil.
function M.delete_lines(unit, node)
  local text = tostring(unit)
  local b, e = M.span(node)
  local lb = line_at(text, b)
  local _, le, next_b = line_at(text, e)
  if not text:sub(lb, b - 1):match("^[ \t]*$") or not text:sub(e + 1, le):match("^[ \t]*$") then return nil end
  return { begin = lb, ["end"] = math.min(next_b - 1, #text), text = "" }
end

-- The run of `//` lines right above byte `b`'s line: begin, end (through
-- the last newline) and the comment text, or nil.
function M.comment_above(unit, b)
  local text = tostring(unit)
  local lb = line_at(text, b)
  local first, body = nil, {}
  local cur = lb
  while cur > 1 do
    local pb, pe = line_at(text, cur - 1)
    local line = text:sub(pb, pe)
    if not line:match("^%s*//") then break end
    table.insert(body, 1, line)
    first, cur = pb, pb
  end
  if not first then return nil end
  return first, lb - 1, table.concat(body, "\n")
end

-- Edits deleting a top-level function, the comment right above it and one
-- blank line after it.
function M.delete_function(unit, fn)
  local text = tostring(unit)
  local b, e = M.span(fn)
  local cb = M.comment_above(unit, b)
  local lb = cb or line_at(text, b)
  local _, _, next_b = line_at(text, e)
  local nb, ne, after = line_at(text, math.min(next_b, #text))
  if next_b <= #text and text:sub(nb, ne):match("^%s*$") then next_b = after end
  return { begin = lb, ["end"] = math.min(next_b - 1, #text), text = "" }
end

function M.is_pow2(n) return math.type(n) == "integer" and n > 0 and n & (n - 1) == 0 end

-- The integer value of a #define, or nil.
function M.define_int(unit, name)
  local d = unit:define(name)
  return d and not d.function_like and not d.redefined and d.value and math.type(d.value.int) == "integer"
    and d.value.int or nil
end

function M.functions(unit)
  local out = {}
  for _, fn in ipairs(unit:functions()) do
    if fn:body() and not fn:info().prototype then out[#out + 1] = fn end
  end
  return out
end

function M.function_named(unit, name)
  local found
  for _, fn in ipairs(M.functions(unit)) do
    if fn:name() == name then
      if found then return nil, "two functions named " .. name end
      found = fn
    end
  end
  return found
end

-- A name free in fn (no identifier, parameter or #define of that name):
-- base, base2, base3...
function M.fresh_in(unit, fn, base)
  local used = {}
  for id in fn:body():walk({ "ident" }) do used[id:text()] = true end
  for _, p in ipairs(fn:params()) do if p.name then used[p.name] = true end end
  for _, d in ipairs(unit:defines()) do used[d.name.text] = true end
  if not used[base] then return base end
  for i = 2, 99 do
    if not used[base .. i] then return base .. i end
  end
end

-- The calls of `name` in the unit.
function M.calls(unit, name)
  local out = {}
  for c in unit:root():walk({ "call" }) do
    local callee = c:field("callee")
    if callee and callee.kind == "ident" and callee:text() == name then out[#out + 1] = c end
  end
  return out
end

-- The launch line of kernel `kname`: `@kl launch(kname)`, or the unnamed
-- one when no line names the kernel and it is the unit's only __global__
-- function without one. Returns { grid, block, grid_b, grid_e } (grid's
-- inner text and its bytes in the unit), or nil.
function M.launch(unit, kname)
  local text = tostring(unit)
  local named, plain = {}, {}
  for _, a in ipairs(unit:annotations()) do
    local who = a.text:match("^launch%(%s*([%w_]+)%s*%)")
    if who then named[who] = a elseif a.text:match("^launch%s") then plain[#plain + 1] = a end
  end
  local ann = named[kname]
  if not ann then
    if #plain ~= 1 then return nil end
    local unnamed = 0
    for _, fn in ipairs(M.functions(unit)) do
      if fn:info().global and not named[fn:name()] then unnamed = unnamed + 1 end
    end
    if unnamed ~= 1 or named[kname] then return nil end
    ann = plain[1]
  end
  -- The annotation's line in the text, then grid( ... ) within it.
  local pos, line = 1, 1
  while line < ann.line do
    pos = text:find("\n", pos, true)
    if not pos then return nil end
    pos, line = pos + 1, line + 1
  end
  local lb, le = line_at(text, pos)
  local l = text:sub(lb, le)
  local g = l:find("grid(", 1, true)
  if not g then return nil end
  local depth, i = 0, g + 4
  local close
  for j = i, #l do
    local ch = l:sub(j, j)
    if ch == "(" then depth = depth + 1 elseif ch == ")" then
      depth = depth - 1
      if depth == 0 then close = j break end
    end
  end
  if not close then return nil end
  local block = l:match("block%(([^()]*)%)")
  return { grid = M.norm(l:sub(i + 1, close - 1)), block = block and M.norm(block), grid_b = lb + i, grid_e = lb + close - 2 }
end

-- Whether every use of identifier `name` in fn's body is a read (not
-- assigned, incremented or had its address taken).
function M.read_only(fn, name)
  for id in fn:body():walk({ "ident" }) do
    if id:text() == name then
      local p = id:parent()
      if p and p.kind == "assign" and p:field("lhs") and p:field("lhs").id == id.id then return false end
      if p and (p.kind == "unary" or p.kind == "postfix") and (p.op == "++" or p.op == "--" or p.op == "&") then
        return false
      end
    end
  end
  return true
end

-- The identifiers `name` in fn's body (member names left out).
function M.idents(fn, name)
  local out = {}
  for id in fn:body():walk({ "ident" }) do
    if id:text() == name then
      local p = id:parent()
      local m = p and p.kind == "member" and p:field("member")
      if not (m and m.id == id.id) then out[#out + 1] = id end
    end
  end
  return out
end

-- Whether a return statement of fn comes before `node`: some threads may
-- then have left, and a full-mask warp operation needs all 32 lanes.
function M.returns_before(fn, node)
  local b = M.span(node)
  for r in fn:body():walk({ "return" }) do
    if M.span(r) < b then return true end
  end
  return false
end

-- Whether node `inner` lies inside node `outer` (or is it).
function M.within(inner, outer)
  local b, e = M.span(inner)
  local ob, oe = M.span(outer)
  return b >= ob and e <= oe
end

-- `unsigned T = threadIdx.x;` or `int T = threadIdx.x;` among fn's
-- statements: T, or nil.
function M.tid_name(fn)
  for _, st in ipairs(M.stmts(fn)) do
    local t = st.kind == "decl_stmt" and M.norm(st):match("^[%w ]-%f[%w]([%a_][%w_]*) = threadIdx%.x;$")
    if t and M.norm(st):match("^(%a+) ") and (M.norm(st):match("^unsigned ") or M.norm(st):match("^int ")) then
      if M.read_only(fn, t) then return t end
    end
  end
end

-- The `__shared__ float NAME[SIZE];` statement of fn for NAME: the
-- statement and SIZE's text.
function M.shared_decl(fn, name)
  for _, st in ipairs(M.stmts(fn)) do
    if st.kind == "decl_stmt" then
      local n, size = M.norm(st):match("^__shared__ float ([%a_][%w_]*)%[([^%]]+)%];$")
      if n == name then return st, size end
    end
  end
end

-- Whether fn's header is `[qualifiers] TYPE NAME(`: a device function
-- returning TYPE (no template, no pointer or reference result).
function M.returns(fn, ty)
  local head = M.norm(fn:text()):match("^(.-)%(")
  if not head then return false end
  local words = {}
  for w in head:gmatch("%S+") do words[#words + 1] = w end
  if #words < 2 or words[#words] ~= fn:name() or words[#words - 1] ~= ty then return false end
  for i = 1, #words - 2 do
    if not (words[i] == "__device__" or words[i] == "__forceinline__" or words[i] == "static" or words[i] == "inline") then
      return false
    end
  end
  return true
end

-- The lineage's warp-synchronous finish (v4's warp_reduce): a void
-- function (float *P, int T) whose body is, exactly,
--   float v = P[T]; #pragma unroll for (int o = 32; o > 0; o >>= 1)
--   { v += P[T + o]; __syncwarp(); P[T] = v; __syncwarp(); }
-- It sums P[T..T+63] into P[0] for T < 32 (needs 64 slots).
function M.is_warp_reduce(fn)
  if not M.returns(fn, "void") then return false end
  local ps = fn:params()
  if #ps ~= 2 or not ps[1].name or not ps[2].name then return false end
  local p, t = ps[1].name, ps[2].name
  if not (ps[1].pointer_depth == 1 and M.norm(ps[1].base_span.text) == "float" and not ps[1].const) then return false end
  if not (ps[2].pointer_depth == 0 and M.norm(ps[2].type_span.text) == "int") then return false end
  local want = string.format("{ float v = %s[%s]; #pragma unroll for (int offset = 32; offset > 0; offset >>= 1) "
    .. "{ v += %s[%s + offset]; __syncwarp(); %s[%s] = v; __syncwarp(); } }", p, t, p, t, p, t)
  return M.norm(fn:body()) == want
end

M.WARP_REDUCE_TEXT = [[
// The last six steps run inside warp 0 only, without __syncthreads. The
// historical form read and wrote a volatile array with no barrier at all,
// trusting the 32 threads of a warp to run in lockstep; since Volta they are
// scheduled independently, so that form races. __syncwarp after each read
// (before anyone writes) and after each write (before the next read) restores
// the ordering the old code assumed.
__device__ __forceinline__ void warp_reduce(float *sdata, int tid) {
  float v = sdata[tid];
#pragma unroll
  for (int offset = 32; offset > 0; offset >>= 1) {
    v += sdata[tid + offset];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
  }
}

]]

-- A warp reduction helper of the lineage: float NAME(float P) whose body
-- is `#pragma unroll for (int offset = 16; offset > 0; offset >>= 1) STEP;
-- return P;` with STEP `P += __shfl_down_sync(0xffffffffu, P, offset)`
-- (lane 0 gets the sum), the same with __shfl_xor_sync (every lane gets
-- it), or `P = fmaxf(P, __shfl_xor_sync(...))` (the max). Returns "sum" or
-- "max" and "down" or "xor", or nil.
function M.warp_op(fn)
  if not M.returns(fn, "float") then return nil end
  local ps = fn:params()
  if #ps ~= 1 or not ps[1].name or ps[1].pointer_depth ~= 0 or M.norm(ps[1].type_span.text) ~= "float" then return nil end
  local p = ps[1].name
  local body = M.norm(fn:body())
  for _, form in ipairs({ { "sum", "down", "%s += __shfl_down_sync(0xffffffffu, %s, offset);" },
                          { "sum", "xor", "%s += __shfl_xor_sync(0xffffffffu, %s, offset);" },
                          { "max", "xor", "%s = fmaxf(%s, __shfl_xor_sync(0xffffffffu, %s, offset));" } }) do
    local step = form[3]:format(p, p, p)
    if body == "{ #pragma unroll for (int offset = 16; offset > 0; offset >>= 1) " .. step .. " return " .. p .. "; }" then
      return form[1], form[2]
    end
  end
end

-- The static_asserts the lineage writes for the tree (v3) and for the
-- warp-synchronous finish (v4), for block constant E.
function M.assert_tree(e)
  return string.format('static_assert((%s & (%s - 1)) == 0 && %s >= 32, "the tree needs a power-of-two block");', e, e, e)
end
function M.assert_warp(e)
  return string.format('static_assert(%s >= 64 && (%s & (%s - 1)) == 0, "the tree needs a power-of-two block of at least 64");', e, e, e)
end

-- The shared-memory sum tree of fn starting at statement index k, in the
-- lineage's form:
--   __syncthreads(); [#pragma ...]
--   for (unsigned|int S = C / 2; S > STOP; S >>= 1) {
--     if (T < S) SD[T] += SD[T + S];
--     __syncthreads();
--   }
--   [if (T < 32) W(SD, T);]          (STOP == 32, W the warp_reduce shape)
--   if (T == 0) OUT = SD[0];
-- with C blockDim.x or a constant, T = threadIdx.x, SD a __shared__ float
-- array of fn that no statement after the last one uses. Returns a table
-- (loop, s, c, stop, sd, t, warp (the W statement), out (the last one),
-- out_lhs, k_out), or nil.
function M.tree_at(unit, fn, st, k)
  local loop = st[k]
  if not loop or loop.kind ~= "for" then return nil end
  local j = k - 1
  while st[j] and st[j].kind == "pragma" do j = j - 1 end
  if not st[j] or M.norm(st[j]) ~= "__syncthreads();" then return nil end
  local ty, s, c, s2, stop, s3 = M.norm(loop):match("^for %((%a+) ([%a_][%w_]*) = ([%w_%.]+) / 2; ([%a_][%w_]*) > (%d+); ([%a_][%w_]*) >>= 1%) ")
  if not ty or (ty ~= "unsigned" and ty ~= "int") or s2 ~= s or s3 ~= s or (stop ~= "0" and stop ~= "32") then return nil end
  if not (c == "blockDim.x" or c:match("^[%a_][%w_]*$")) then return nil end
  local t = M.tid_name(fn)
  if not t then return nil end
  local body = M.norm(loop:field("body"))
  local sd = body:match("^{ if %(" .. t .. " < " .. s .. "%) ([%a_][%w_]*)%[")
  if not sd or body ~= string.format("{ if (%s < %s) %s[%s] += %s[%s + %s]; __syncthreads(); }", t, s, sd, t, sd, t, s) then
    return nil
  end
  if not M.shared_decl(fn, sd) then return nil end
  local f = { loop = loop, s = s, c = c, stop = tonumber(stop), sd = sd, t = t, ty = ty, k = k }
  local n = k + 1
  if f.stop == 32 then
    local w = st[n] and M.norm(st[n]):match("^if %(" .. t .. " < 32%) ([%a_][%w_]*)%(" .. sd .. ", " .. t .. "%);$")
    local h = w and M.function_named(unit, w)
    if not (h and M.is_warp_reduce(h)) then return nil end
    f.warp, f.helper, n = st[n], h, n + 1
  end
  local lhs = st[n] and M.norm(st[n]):match("^if %(" .. t .. " == 0%) (.-) = " .. sd .. "%[0%];$")
  if not lhs or lhs:find(sd, 1, true) then return nil end
  f.out, f.out_lhs, f.k_out = st[n], lhs, n
  for m = n + 1, #st do
    for _, id in ipairs(M.idents(fn, sd)) do
      if M.within(id, st[m]) then return nil end
    end
  end
  return f
end

-- The block size E a tree's C stands for: C itself when it is a constant
-- the launch line (if any) agrees with, or the launch's block(E) when C is
-- blockDim.x. Returns E and its value, or nil, why.
function M.block_constant(unit, fn, c)
  local l = M.launch(unit, fn:name())
  local e = c
  if c == "blockDim.x" then
    if not (l and l.block and l.block:match("^[%a_][%w_]*$")) then return nil, "blockDim.x with no launch line block(E)" end
    e = l.block
  elseif not l or l.block ~= c then
    return nil, "the launch line does not say block(" .. c .. ")"
  end
  local v = M.define_int(unit, e)
  if not v then return nil, e .. " is not an integer #define" end
  return e, v
end

-- Where a new top-level function goes before fn: the start of its line,
-- or of the comment right above it.
function M.before_function(unit, fn)
  local b = M.span(fn)
  return M.comment_above(unit, b) or (M.line_at(tostring(unit), b))
end

-- The top-level statement whose normalized text is `want`, or nil.
function M.top_stmt(unit, want)
  for _, ch in ipairs(unit:root():children()) do
    if M.norm(ch) == want then return ch end
  end
end

return M
