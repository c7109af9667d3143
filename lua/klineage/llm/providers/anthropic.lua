-- Anthropic's messages API: POST <base_url>/messages.
--
--   anthropic.request(cfg, prompt, system, key) -> { url, headers, body }
--   anthropic.parse(body) -> text, usage | nil, message
--       text joins the answer's text blocks
local cjson = require "cjson"

local M = {}

M.DEFAULT_BASE_URL = "https://api.anthropic.com/v1"
M.API_VERSION = "2023-06-01"

function M.request(cfg, prompt, system, key)
  local headers = { "Content-Type: application/json", "Accept: application/json",
    "anthropic-version: " .. M.API_VERSION }
  if key then headers[#headers + 1] = "x-api-key: " .. key end
  return {
    url = cfg.base_url:gsub("/+$", "") .. "/messages",
    headers = headers,
    body = cjson.encode({
      model = cfg.model, system = system, max_tokens = cfg.max_tokens, temperature = cfg.temperature or nil,
      messages = { { role = "user", content = prompt } },
    }),
  }
end

function M.parse(body)
  local ok, r = pcall(cjson.decode, body)
  if not ok or type(r) ~= "table" then return nil, "the answer is not JSON" end
  if type(r.content) ~= "table" then return nil, "the answer has no content" end
  local parts = {}
  for _, block in ipairs(r.content) do
    if type(block) == "table" and block.type == "text" and type(block.text) == "string" then
      parts[#parts + 1] = block.text
    end
  end
  if #parts == 0 then return nil, "the answer has no text block" end
  local usage = {}
  if type(r.usage) == "table" then
    usage.input = tonumber(r.usage.input_tokens)
    usage.output = tonumber(r.usage.output_tokens)
  end
  return table.concat(parts), usage, type(r.stop_reason) == "string" and r.stop_reason or nil
end

return M
