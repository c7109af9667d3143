-- Recorded transcripts, for tests and reproducible reports. A transcript
-- is a JSON-lines file, one call a line:
--   {"schema":"klineage-llm-replay-1","prompt_hash":<64 hex>,"answer":...,
--    "provider":...,"model":...}
-- prompt_hash is replay.key(prompt, system): the SHA-256 of the system prompt and
-- the prompt, framed (kl.hash.sha256_parts). A later line for the same key
-- wins. (No API key is ever written: answers are scrubbed before.)
--
--   replay.key(prompt, system) -> 64 hex digits
--   replay.load(path) -> { [key] = answer } | nil, failure (io_error, bad_input:
--       also a transcript that is not a regular file or is over MAX_BYTES)
--   replay.MAX_BYTES: the largest transcript read (64 MiB)
--   replay.complete(ctx, cfg, prompt, system) -> text, {} | nil, failure
--       llm_replay_miss: the transcript has no answer for this prompt
--   replay.append(path, entry) -> true | nil, failure (io_error)
--       entry = { prompt_hash, answer, provider, model }; the line is written whole
--       and flushed, so a crash loses at most the call in flight
local cjson = require "cjson"
local hash = require "kl.hash"
local verdicts = require "klineage.base.verdicts"

local M = {}

M.SCHEMA = "klineage-llm-replay-1"
M.MAX_BYTES = 64 * 1024 * 1024

function M.key(prompt, system)
  return hash.sha256_parts(system or "", prompt)
end

function M.load(path)
  local files = require "klineage.base.files"
  -- a FIFO or /dev/zero is refused before a byte is read
  local text, f = files.read_file(path, M.MAX_BYTES, "a transcript")
  if not text then
    return nil, verdicts.failure(f.stage == "open" and "io_error" or "bad_input", "the transcript: " .. f.message, { path = path })
  end
  local answers, n = {}, 0
  for line in text:gmatch("([^\n]*)\n?") do
    n = n + 1
    if line:match("%S") then
      local ok, e = pcall(cjson.decode, line)
      if not ok or type(e) ~= "table" or e.schema ~= M.SCHEMA or type(e.prompt_hash) ~= "string" or type(e.answer) ~= "string" then
        return nil, verdicts.failure("bad_input", string.format("%s:%d: not a %s line", files.display(path), n, M.SCHEMA), { path = path })
      end
      answers[e.prompt_hash] = e.answer
    end
  end
  return answers
end

function M.complete(ctx, cfg, prompt, system)
  if not ctx.answers then
    local answers, f = M.load(cfg.replay)
    if not answers then return nil, f end
    ctx.answers = answers
  end
  local key = M.key(prompt, system)
  local text = ctx.answers[key]
  if not text then
    return nil, verdicts.failure("llm_replay_miss", string.format(
      "the transcript %s has no answer for this prompt (key %s)", cfg.replay, key:sub(1, 16)), { prompt_hash = key })
  end
  return text, {}
end

function M.append(path, entry)
  local h, f = require("klineage.base.files").open_append(path)
  if not h then return nil, verdicts.failure(f.verdict, "the transcript: " .. f.message, { path = path }) end
  local line = cjson.encode({
    schema = M.SCHEMA, prompt_hash = entry.prompt_hash, answer = entry.answer, provider = entry.provider, model = entry.model,
  }) .. "\n"
  local ok, werr = h:write(line)
  if ok then ok, werr = h:flush() end
  h:close()
  if not ok then return nil, verdicts.failure("io_error", "cannot write the transcript: " .. tostring(werr), { path = path }) end
  return true
end

return M
