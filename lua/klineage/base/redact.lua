-- Keeps API keys out of everything the llm module hands back: answers,
-- call records, log lines, transcripts and failure messages.
--
--   redact.new(secrets) -> scrub, where scrub(s) is s with every secret (the
--       literal keys given) and every credential-shaped text replaced by
--       "[redacted]"; scrub(table) scrubs every string in a copy of it
--   redact.MARK -> "[redacted]"
--   redact.KEY_NAMES -> the variables that hold a provider's key: every one
--       is scrubbed, whichever provider is in use (a key of another
--       provider can still show up in a wrapper's stderr)
--   redact.env_secrets([getenv]) -> the values of KEY_NAMES that are set
--   redact.text(v) -> v scrubbed for a journal, a report or a terminal: the
--       keys of this process's environment, a URL's user:password@ and the
--       credential query parameters. Narrower than new()'s scrub (no
--       Bearer or header forms, which ordinary words could match); a
--       table is scrubbed as a copy, as new()'s.
--
-- Credential-shaped, whether or not the key is known (a key written into a
-- base URL by hand): a URL's user:password@, a query parameter whose name
-- holds key, token, secret, password, auth or sig, "Bearer <token>" and the
-- values of x-api-key / api-key / authorization headers.
local M = {}

M.MARK = "[redacted]"

local CREDENTIAL_NAMES = { "key", "token", "secret", "password", "auth", "sig" }

-- "name: value" of the headers that carry credentials, any case; the
-- value runs to the end of its line (or a quote, in JSON).
local CREDENTIAL_HEADERS = { "x-api-key", "api-key", "authorization", "proxy-authorization" }

local function any_case(word)
  return (word:gsub("%a", function(c) return "[" .. c:upper() .. c:lower() .. "]" end):gsub("%-", "%%-"))
end

local HEADER_PATTERNS = {}
for _, h in ipairs(CREDENTIAL_HEADERS) do
  HEADER_PATTERNS[#HEADER_PATTERNS + 1] = "(%f[%w%-]" .. any_case(h) .. "%s*:%s*)([^\r\n\"]+)"
end

local function credential_name(name)
  local lower = name:lower()
  for _, w in ipairs(CREDENTIAL_NAMES) do
    if lower:find(w, 1, true) then return true end
  end
  return false
end

M.KEY_NAMES = { "KLINEAGE_LLM_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY" }

local function scrub_string(s, secrets, narrow)
  for _, secret in ipairs(secrets) do
    local from = 1
    while true do
      local i, j = s:find(secret, from, true)
      if not i then break end
      s = s:sub(1, i - 1) .. M.MARK .. s:sub(j + 1)
      from = i + #M.MARK
    end
  end
  s = s:gsub("(://)[^/@%s:]+:[^/@%s]+@", "%1" .. M.MARK .. "@")
  s = s:gsub("([?&;])([%w_%-%.]+)=([^&#%s\"']+)", function(sep, name, value)
    if credential_name(name) and value ~= M.MARK then return sep .. name .. "=" .. M.MARK end
  end)
  if narrow then return s end
  s = s:gsub("([Bb][Ee][Aa][Rr][Ee][Rr]%s+)([^%s\"',;]+)", function(lead, value)
    if value ~= M.MARK then return lead .. M.MARK end
  end)
  for _, pattern in ipairs(HEADER_PATTERNS) do
    s = s:gsub(pattern, function(lead, value)
      if value ~= M.MARK then return lead .. M.MARK end
    end)
  end
  return s
end

local function scrub_any(v, secrets, seen, narrow)
  if type(v) == "string" then return scrub_string(v, secrets, narrow) end
  if type(v) ~= "table" then return v end
  if seen[v] then return seen[v] end
  local out = {}
  seen[v] = out
  for k, x in pairs(v) do out[scrub_any(k, secrets, seen, narrow)] = scrub_any(x, secrets, seen, narrow) end
  return setmetatable(out, getmetatable(v))
end

local function usable(secrets)
  local list = {}
  for _, s in ipairs(secrets or {}) do
    -- a very short "key" would blank out ordinary words: refuse it loudly
    if type(s) ~= "string" then error("redact.new: secrets must be strings", 2) end
    if #s >= 4 then list[#list + 1] = s end
  end
  table.sort(list, function(a, b) return #a > #b end) -- a key inside a longer one
  return list
end

function M.new(secrets)
  local list = usable(secrets)
  return function(v) return scrub_any(v, list, {}) end
end

function M.env_secrets(getenv)
  getenv = getenv or os.getenv
  local out = {}
  for _, name in ipairs(M.KEY_NAMES) do
    local v = getenv(name)
    if type(v) == "string" and v ~= "" then out[#out + 1] = v end
  end
  return out
end

-- The environment does not change under us: its keys are read once.
local env_list
function M.text(v)
  env_list = env_list or usable(M.env_secrets())
  return scrub_any(v, env_list, {}, true)
end

return M
