-- What register_prefetch checks about memory and text, kept apart from
-- the idiom itself: where a store goes (its root name), which names are
-- shared-memory pointers or register arrays, and whole-line spans.
--
--   lib.range(n) -> b, e
--   lib.line(text, b, e [, comment_ok]) -> lb, le | nil: the line holding
--     bytes b..e alone (blanks before, blanks or a // comment after when
--     comment_ok); lb = its first byte, le = its newline (or #text + 1)
--   lib.indent(text, b) -> the blanks from the line's start to b
--   lib.root(expr) -> the ident node a store through expr lands in, or nil
--   lib.kinds(unit, fn) -> { name = "register" | "shared" | "param" | "other" }
--   lib.flatten(expr, op) -> { nodes... } of a left-nested op chain (a, b, c)
--   lib.norm(s) -> s without blanks
local M = {}

function M.range(n) local r = { n:range() }; return r[5], r[6] end

function M.line(text, b, e, comment_ok)
  local lb = b
  while lb > 1 and text:sub(lb - 1, lb - 1) ~= "\n" do lb = lb - 1 end
  if not text:sub(lb, b - 1):match("^[ \t]*$") then return nil end
  local le = text:find("\n", e + 1, true) or #text + 1
  local tail = text:sub(e + 1, le - 1)
  if not (tail:match("^[ \t]*$") or (comment_ok and tail:match("^[ \t]*//"))) then return nil end
  return lb, le
end

function M.indent(text, b)
  local lb = b
  while lb > 1 and text:sub(lb - 1, lb - 1) ~= "\n" do lb = lb - 1 end
  return text:sub(lb, b - 1):match("^[ \t]*")
end

function M.root(n)
  while n do
    local k = n.kind
    if k == "ident" then return n end
    if k == "index" or k == "member" then n = n:field("object")
    elseif k == "paren" or k == "unary" then n = n:children()[1]
    elseif k == "cast" or k == "cxx_cast" then local c = n:children(); n = c[#c]
    elseif k == "binary" and (n.op == "+" or n.op == "-") then n = n:field("lhs")
    else return nil end
  end
end

-- Locals declared without '*' are registers (or local memory) whatever
-- their dims; __shared__ arrays and pointers initialized from them (and
-- never assigned again) are shared; pointer parameters are param.
function M.kinds(unit, fn)
  local out = {}
  for _, p in ipairs(fn:params()) do
    if p.name and p.name ~= "" then out[p.name] = (p.pointer_depth or 0) > 0 and "param" or (p.reference and "other" or "register") end
  end
  local body = fn:body()
  local assigned = {}
  for a in body:walk({ "assign" }) do
    local l = a:field("lhs")
    if l and l.kind == "ident" then assigned[l:text()] = true end
  end
  local function mark(dd)
    for _, x in ipairs(dd.declarators) do
      local name = x.name and x.name.text
      if name then
        local kind
        if dd.shared then kind = "shared"
        elseif x.node:text():match("^%s*&") or (dd.type and dd.type.text:find("&", 1, true)) then kind = "other" -- a reference: where it points is unknown
        elseif (x.stars or 0) == 0 then kind = "register"
        elseif x.init and not assigned[name] then kind = "pending" else kind = "other" end
        if out[name] and out[name] ~= kind then kind = "other" end
        out[name] = kind
      end
    end
  end
  for _, dd in ipairs(unit:declarations()) do if dd.shared then mark(dd) end end
  local pending = {}
  for d in body:walk({ "decl" }) do
    local dd = d:declaration()
    if dd and not dd.alias then
      mark(dd)
      for _, x in ipairs(dd.declarators) do
        if x.name and out[x.name.text] == "pending" then pending[#pending + 1] = { x.name.text, x.node } end
      end
    end
  end
  -- A pointer is shared when its initializer's root is (in declaration order).
  for _, pd in ipairs(pending) do
    local init
    for _, c in ipairs(pd[2]:children()) do if c.kind ~= "ident" or c:text() ~= pd[1] then init = c end end
    local r = init and M.root(init)
    out[pd[1]] = r and out[r:text()] == "shared" and "shared" or "other"
  end
  return out
end

function M.flatten(n, op)
  if n.kind == "binary" and n.op == op then
    local l = M.flatten(n:field("lhs"), op)
    l[#l + 1] = n:field("rhs")
    return l
  end
  return { n }
end

function M.norm(s) return (s:gsub("%s+", "")) end

return M
