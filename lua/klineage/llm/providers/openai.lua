-- The OpenAI chat completions API, which vLLM, llama.cpp's server, Ollama
-- and most hosted APIs also speak: POST <base_url>/chat/completions.
--
--   openai.request(cfg, prompt, system, key) -> { url, headers, body }
--   openai.parse(body) -> text, usage | nil, message
--       usage = { input = tokens, output = tokens } (fields the server gave)
local cjson = require "cjson"

local M = {}

M.DEFAULT_BASE_URL = "https://api.openai.com/v1"

function M.request(cfg, prompt, system, key)
  local messages = {}
  if system then messages[#messages + 1] = { role = "system", content = system } end
  messages[#messages + 1] = { role = "user", content = prompt }
  local headers = { "Content-Type: application/json", "Accept: application/json" }
  -- local servers need no key; a hosted one answers 401 without it
  if key then headers[#headers + 1] = "Authorization: Bearer " .. key end
  return {
    url = cfg.base_url:gsub("/+$", "") .. "/chat/completions",
    headers = headers,
    body = cjson.encode({
      model = cfg.model, messages = messages, temperature = cfg.temperature or nil,
      max_tokens = cfg.max_tokens, stream = false,
    }),
  }
end

function M.parse(body)
  local ok, r = pcall(cjson.decode, body)
  if not ok or type(r) ~= "table" then return nil, "the answer is not JSON" end
  local choice = type(r.choices) == "table" and r.choices[1]
  local message = type(choice) == "table" and choice.message
  local text = type(message) == "table" and message.content
  if type(text) ~= "string" then return nil, "the answer has no choices[1].message.content" end
  local usage = {}
  if type(r.usage) == "table" then
    usage.input = tonumber(r.usage.prompt_tokens)
    usage.output = tonumber(r.usage.completion_tokens)
  end
  return text, usage, type(choice.finish_reason) == "string" and choice.finish_reason or nil
end

return M
