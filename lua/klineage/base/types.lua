-- The one vocabulary of element and argument types: what a workload's
-- buffers hold, what a kernel's scalar parameters are, and the names the
-- worker protocol, the device generators and both backends' argument
-- packers (engine/lua/kernel_args.c) use for them.
--
--   types.get(name) -> { name, size, float, integer, buffer, scalar } | nil
--   types.BUFFER    the names a buffer may hold (workload specs)
--   types.SCALAR    the names a scalar kernel argument may have (protocol)
--   types.is_float(name), types.size(name)
--   types.of_c(ctype) -> name | nil: a C parameter type without const or
--       volatile ("unsigned int", "int64_t", "size_t") as its type name
local M = {}

-- c: the spellings of the type in kernel parameters.
M.list = {
  { name = "f32", size = 4, float = true, buffer = true, scalar = true, c = { "float" } },
  { name = "f64", size = 8, float = true, buffer = true, scalar = true, c = { "double" } },
  { name = "f16", size = 2, float = true, buffer = true, c = { "__half", "half" } },
  { name = "bf16", size = 2, float = true, buffer = true, c = { "__nv_bfloat16", "nv_bfloat16" } },
  { name = "i32", size = 4, integer = true, buffer = true, scalar = true,
    c = { "int", "signed", "signed int", "int32_t" } },
  { name = "u32", size = 4, integer = true, buffer = true, scalar = true,
    c = { "unsigned", "unsigned int", "uint32_t" } },
  { name = "i64", size = 8, integer = true, buffer = true, scalar = true,
    c = { "long long", "long long int", "long", "long int", "int64_t", "ptrdiff_t" } },
  { name = "u64", size = 8, integer = true, scalar = true,
    c = { "unsigned long long", "unsigned long long int", "unsigned long", "uint64_t", "size_t" } },
  { name = "u8", size = 1, integer = true, buffer = true, c = { "unsigned char", "uint8_t" } },
}

local by_name, by_c = {}, {}
M.BUFFER, M.SCALAR = {}, {}
for _, t in ipairs(M.list) do
  by_name[t.name] = t
  for _, c in ipairs(t.c) do by_c[c] = t.name end
  if t.buffer then M.BUFFER[#M.BUFFER + 1] = t.name end
  if t.scalar then M.SCALAR[#M.SCALAR + 1] = t.name end
end

function M.get(name) return by_name[name] end
function M.is_float(name) local t = by_name[name] return t ~= nil and t.float == true end
function M.size(name) local t = by_name[name] return t and t.size end

function M.of_c(ctype)
  local base = ctype:gsub("^%s+", ""):gsub("%s+$", "")
  repeat
    local before = base
    base = base:gsub("^const%s+", ""):gsub("^volatile%s+", ""):gsub("%s+const$", "")
  until base == before
  return by_c[(base:gsub("%s+", " "))]
end

return M
