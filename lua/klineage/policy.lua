-- Loading a policy: a built-in one by name from its folder, or a user's
-- Lua file, which returns a table. Walk and optimize policies share this;
-- each says what its table must hold.
--
--   policy.load(ref, kind) -> policy | nil, failure (bad_input)
--     ref  = a table (taken as it is), a built-in name, or a path to a .lua file
--     kind = { module = "klineage.walk.policies", names = { built-in names },
--              check = function(p) -> nil | "what is wrong" }
local verdicts = require "klineage.verdicts"

local M = {}

function M.load(ref, kind)
  local p
  if type(ref) == "table" then
    p = ref
  elseif type(ref) == "string" and ref:match("^[%w_]+$") then
    local ok, mod = pcall(require, kind.module .. "." .. ref)
    if not ok then
      if tostring(mod):find("not found", 1, true) then
        return nil, verdicts.failure("bad_input", string.format("no policy named '%s' (built in: %s; or give a .lua file)",
          ref, table.concat(kind.names, ", ")))
      end
      error(mod, 0)
    end
    p = mod
  else
    -- read as every file is (klineage.files): a FIFO or a device is refused, not waited on
    local chunk, f = require("klineage.files").load_lua(tostring(ref), "a policy file")
    if not chunk then return nil, verdicts.failure("bad_input", "cannot load the policy: " .. f.message) end
    local ok, mod = pcall(chunk)
    if not ok then return nil, verdicts.failure("bad_input", "the policy raised while loading: " .. tostring(mod)) end
    p = mod
  end
  local wrong = type(p) ~= "table" and "it did not return a table" or (type(p.name) ~= "string" and "it has no name") or kind.check(p)
  if wrong then return nil, verdicts.failure("bad_input", "not a policy: " .. wrong) end
  return p
end

return M
