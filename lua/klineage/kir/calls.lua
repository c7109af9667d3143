-- Calls from a kernel to functions of its own file (a `__device__` helper):
-- the IR keeps such a call opaque, which is sound only when nothing the
-- callee does is hidden from the IR but the values it writes through its
-- reference parameters. A callee is accepted when it takes no pointer or
-- array, reads no thread id, uses no barrier, warp collective, atomic or
-- launch, keeps no static or device variable, writes nothing but its own
-- parameters and locals (no store through a pointer, no address of
-- anything else taken), and the
-- functions of the file it calls pass the same check.
--
--   calls.checker(unit) -> check(name) -> nil (no function of the file:
--     a builtin), { refs = { position... } } (the argument positions the
--     callee writes through a non-const reference), or false, reason
local M = {}

M.MAX_DEPTH = 8

local THREAD_IDS = { threadIdx = true, blockIdx = true, blockDim = true, gridDim = true, warpSize = true }
local PREFIXES = { "atomic", "__sync", "__shfl", "__ballot", "__any", "__all", "__activemask", "__threadfence",
  "__match", "__reduce", "printf", "malloc", "free", "__trap", "cooperative_groups", "__shared__" }
local KINDS = { asm = "inline assembly", launch = "a kernel launch", lambda = "a lambda", new = "new", delete = "delete",
  throw = "throw", try = "try" }

local function forbidden_word(text)
  for w in text:gmatch("[%a_][%w_]*") do
    if THREAD_IDS[w] then return "reads " .. w end
    for _, p in ipairs(PREFIXES) do
      if w:sub(1, #p) == p then return "uses " .. w end
    end
  end
end

-- The identifier a target or address names once subscripts, members and
-- parentheses are peeled off, and whether a subscript or dereference was
-- crossed on the way (a write into memory, not into the variable).
local function base_of(node)
  local through = false
  while node do
    local k = node.kind
    if k == "index" then
      through = true
      node = node:field("object")
    elseif k == "member" then
      if node.op ~= "." then through = true end
      node = node:field("object")
    elseif k == "paren" then
      node = node:field("operand")
    elseif k == "unary" and node.op == "*" then
      through = true
      node = node:field("operand")
    elseif k == "cast" or k == "cxx_cast" then
      node = node:field("operand")
    else
      break
    end
  end
  if node and node.kind == "ident" then return node:text(), through end
  return nil, through
end

-- The names a function declares: its parameters (pointer or not) and its
-- locals (arrays and pointers told apart).
local function names_of(fn)
  local own = {}
  for _, p in ipairs(fn:params()) do
    if p.name then own[p.name] = { param = true, reference = p.reference } end
  end
  local body = fn:body()
  for d in body:walk({ "decl_stmt", "decl" }) do
    local info = d:declaration()
    for _, dd in ipairs(info and info.declarators or {}) do
      own[dd.name.text] = { array = dd.dims and #dd.dims > 0, pointer = (dd.stars or 0) > 0 }
    end
  end
  return own
end

local function short(node)
  local t = node:text():gsub("%s+", " ")
  if #t > 40 then t = t:sub(1, 37) .. "..." end
  return t
end

function M.checker(unit)
  -- the definitions by name (a prototype alone: declared, not defined)
  local by_name, declared = {}, {}
  for _, fn in ipairs(unit:functions()) do
    local name = fn:name()
    if name and fn:body() then
      by_name[name] = by_name[name] or {}
      table.insert(by_name[name], fn)
    elseif name then
      declared[name] = true
    end
  end
  local memo = {}

  local check

  -- One function: its reference positions, or false and why.
  local function one(fn, depth)
    local info = fn:info()
    if info.global then return false, "a __global__ function" end
    if info.template then return false, "a template function" end
    local body = fn:body()
    local refs = {}
    for i, p in ipairs(fn:params()) do
      local ty = p.type or ""
      if (p.pointer_depth or p.stars or 0) > 0 or ty:find("[", 1, true) or ty:find("*", 1, true) then
        return false, "it takes a pointer (" .. tostring(p.name) .. "): its memory accesses would be hidden from the IR"
      end
      if p.reference and not p.const then refs[#refs + 1] = i end
    end
    local why = forbidden_word(body:text())
    if why then return false, "it " .. why end
    local kinds = {}
    for kind in pairs(KINDS) do kinds[#kinds + 1] = kind end
    table.sort(kinds)
    for n in body:walk(kinds) do return false, "it holds " .. KINDS[n.kind] end
    for d in body:walk({ "decl_stmt", "decl" }) do
      local info = d:declaration()
      if info and (info.static or info.extern or info.shared or info.device or info.managed) then
        return false, "it declares a static, extern or device variable (" .. short(d) .. "): state every call shares"
      end
    end
    local own = names_of(fn)
    local function owned_write(target, what)
      local name, through = base_of(target)
      local o = name and own[name]
      if not o then return false, string.format("it %s %s, which is not its own (%s)", what, name or "memory", short(target)) end
      if through and not o.array and not o.reference then
        return false, string.format("it %s through %s (%s)", what, name, short(target))
      end
      return true
    end
    for n in body:walk({ "assign", "postfix", "unary", "call" }) do
      if n.kind == "assign" then
        local ok, w = owned_write(n:field("lhs"), "writes")
        if not ok then return false, w end
      elseif (n.kind == "postfix" or n.kind == "unary") and (n.op == "++" or n.op == "--") then
        local ok, w = owned_write(n:field("operand"), "writes")
        if not ok then return false, w end
      elseif n.kind == "unary" and n.op == "&" then
        local ok, w = owned_write(n:field("operand"), "takes the address of")
        if not ok then return false, w end
      elseif n.kind == "call" then
        local callee = n:field("callee")
        if not callee or callee.kind ~= "ident" then return false, "it calls something that is not a plain name (" .. short(n) .. ")" end
        local inner, iwhy = check(callee:text(), depth + 1)
        if inner == false then return false, "it calls " .. callee:text() .. ", and " .. iwhy end
        if inner then
          local args = {}
          for _, c in ipairs(n:children()) do
            if c.id ~= callee.id then args[#args + 1] = c end
          end
          for _, pos in ipairs(inner.refs) do
            if args[pos] then
              local ok, w = owned_write(args[pos], "passes by reference")
              if not ok then return false, w end
            end
          end
        end
      end
    end
    return { refs = refs }
  end

  check = function(name, depth)
    depth = depth or 0
    local fns = by_name[name]
    if not fns then
      if declared[name] then return false, "declared without a body in this file" end
      return nil
    end
    if memo[name] ~= nil then
      if memo[name] == "pending" then -- recursion: its body is being checked; its arguments are checked here
        local refs, seen = {}, {}
        for _, fn in ipairs(fns) do
          for i, p in ipairs(fn:params()) do
            if p.reference and not p.const and not seen[i] then seen[i] = true refs[#refs + 1] = i end
          end
        end
        table.sort(refs)
        return { refs = refs }
      end
      return table.unpack(memo[name])
    end
    if depth > M.MAX_DEPTH then return false, "calls nested deeper than " .. M.MAX_DEPTH end
    memo[name] = "pending"
    local refs, seen = {}, {}
    for _, fn in ipairs(fns) do
      local r, why = one(fn, depth)
      if not r then
        memo[name] = { false, why }
        return false, why
      end
      for _, pos in ipairs(r.refs) do
        if not seen[pos] then seen[pos] = true refs[#refs + 1] = pos end
      end
    end
    table.sort(refs)
    memo[name] = { { refs = refs } }
    return { refs = refs }
  end

  return function(name) return check(name, 0) end
end

return M
