-- klineage.llm: the LLM providers of the search (lua/klineage/search).
--
-- Pointing klineage at a model. The provider, model and base URL come from
-- llm.from_config's table, the command line (--llm-provider, --llm-model,
-- --llm-base-url, ...: llm.ARG_FLAGS) or the environment; the API key
-- comes from the environment only, and never appears in what this module
-- returns (answers, call records, log lines, transcripts, failures).
--
--   vLLM        KLINEAGE_LLM_PROVIDER=openai KLINEAGE_LLM_BASE_URL=http://localhost:8000/v1
--               KLINEAGE_LLM_MODEL=<the model vllm serve was given>
--   llama.cpp   KLINEAGE_LLM_PROVIDER=openai KLINEAGE_LLM_BASE_URL=http://localhost:8080/v1
--               KLINEAGE_LLM_MODEL=local   (llama-server ignores the name, but one is needed)
--   Ollama      KLINEAGE_LLM_PROVIDER=openai KLINEAGE_LLM_BASE_URL=http://localhost:11434/v1
--               KLINEAGE_LLM_MODEL=qwen2.5-coder:32b   (a model pulled with ollama pull)
--   OpenAI      KLINEAGE_LLM_PROVIDER=openai KLINEAGE_LLM_MODEL=gpt-4o OPENAI_API_KEY=sk-...
--               (the base URL defaults to https://api.openai.com/v1)
--   Anthropic   KLINEAGE_LLM_PROVIDER=anthropic KLINEAGE_LLM_MODEL=claude-sonnet-4-5
--               ANTHROPIC_API_KEY=...   (base URL https://api.anthropic.com/v1)
--   a program   KLINEAGE_LLM_PROVIDER=command KLINEAGE_LLM_COMMAND='ollama run qwen2.5-coder'
--               (the prompt on its stdin, its stdout the answer)
--   replay      KLINEAGE_LLM_PROVIDER=replay KLINEAGE_LLM_REPLAY=calls.jsonl
--               (answers recorded earlier with KLINEAGE_LLM_RECORD=calls.jsonl)
--
-- Environment (a config field, then the command line, wins over it):
--   KLINEAGE_LLM_PROVIDER  openai | anthropic | command | replay
--   KLINEAGE_LLM_MODEL, KLINEAGE_LLM_BASE_URL, KLINEAGE_LLM_COMMAND,
--   KLINEAGE_LLM_REPLAY (a transcript to play), KLINEAGE_LLM_RECORD (a
--   transcript to append every answer to), KLINEAGE_LLM_TIMEOUT (seconds an
--   attempt may take, 120), KLINEAGE_LLM_RETRIES (3), KLINEAGE_LLM_RPM
--   (requests a minute; none: no limit)
--   the key: KLINEAGE_LLM_API_KEY, else OPENAI_API_KEY (openai) or
--   ANTHROPIC_API_KEY (anthropic)
--
-- API:
--   llm.from_config(cfg) -> client | nil, failure (bad_input)
--       cfg = { provider, model, base_url, command, replay, record, timeout,
--               retries, rpm, burst, backoff = 1, max_backoff = 60,
--               max_wait = 300, max_tokens = 4096, temperature = 0 (false:
--               not sent, for models that refuse one), system,
--               log = function(line), getenv = os.getenv,
--               -- for tests: http = kl.http, clock = kl.host.clock,
--               --            sleep = kl.proc.sleep, now_epoch = os.time }
--       cfg.api_key raises: a key in a config file or a journal is a leak.
--   llm.config_from_args(parsed) -> cfg: the ARG_FLAGS of args.parse's result
--   llm.ARG_FLAGS -> the flags, for a command's args spec
--   llm.add_flags(flags) -> flags with --llm PROVIDER and the ARG_FLAGS but
--       --llm-provider; llm.USAGE, llm.HELP: their usage and help lines
--   llm.client_from_args(parsed) -> client | nil (no --llm) | nil, failure
--   client:complete(prompt [, system]) -> text, record | nil, failure
--       record (for the journal): { provider, model, base_url, prompt_hash
--       (the replay key: system and prompt), prompt_sha256, answer_sha256, attempts, ms, usage =
--       { input, output }, stop }; failure.record is the same, without the
--       answer, so a failed call is journaled too.
--       failures: llm_unavailable, llm_refused, llm_bad_answer,
--       llm_replay_miss (klineage/verdicts.lua), io_error (recording)
--   client.info -> { provider, model, base_url } (scrubbed)
--   llm.prompt(name, values) -> text: prompts/<name>.md filled
--       (klineage.llm.template: a missing value raises)
--   llm.journal_fields(kind, code, result) -> a journal record of that
--       call: { kind, llm = the call's record, verdict, message }
--   llm.simplifier(client) -> function({ kernel, workload }) -> source,
--       record | nil, failure: the walk's LLM proposer (prompts/simplify.md)
--   llm.baseline(client, w) -> source, record | nil, failure: the kernel
--       the workload needs, written from its spec and C reference (a spec
--       without one is bad_input); the failures of materialize
--   llm.materialize(client, job) -> source, record | nil, failure
--       job = { skill = { intent, preconditions, guards, example_diff },
--               kernel = source, entry = name, facts = text | table,
--               template = "materialize" }
--       Fills the template, asks the client, extracts the code block that
--       defines entry and checks its signature against the input's.
--       failure.record is set whenever the model was asked (a counted
--       cycle); failures: the complete ones, llm_no_code, llm_bad_signature,
--       bad_input (the input kernel has no such entry).
--       A skill record of skills/<arch>/ is a card: its id, intent and
--       preconditions / guards (conditions, said in English).
--   llm.seam(client) -> function(request) -> source, record | nil, failure
--       a forward search's opts.llm (lua/klineage/search): request =
--       { skill = record, kernel = source, workload = w (w.kernel is the
--       entry), facts = optional }
local answer = require "klineage.llm.answer"
local ratelimit = require "klineage.llm.ratelimit"
local redact = require "klineage.base.redact"
local template = require "klineage.llm.template"
local transport = require "klineage.llm.transport"
local verdicts = require "klineage.base.verdicts"
local hash = require "kl.hash"

local M = {}

M.PROVIDERS = { openai = true, anthropic = true, command = true, replay = true }

local HTTP_PROVIDERS = {
  openai = "klineage.llm.providers.openai",
  anthropic = "klineage.llm.providers.anthropic",
}

local ENV = {
  provider = "KLINEAGE_LLM_PROVIDER", model = "KLINEAGE_LLM_MODEL", base_url = "KLINEAGE_LLM_BASE_URL",
  command = "KLINEAGE_LLM_COMMAND", replay = "KLINEAGE_LLM_REPLAY", record = "KLINEAGE_LLM_RECORD",
  timeout = "KLINEAGE_LLM_TIMEOUT", retries = "KLINEAGE_LLM_RETRIES", rpm = "KLINEAGE_LLM_RPM",
}
local NUMERIC = { timeout = true, retries = true, rpm = true }

local KEY_ENV = { openai = "OPENAI_API_KEY", anthropic = "ANTHROPIC_API_KEY" }

M.ARG_FLAGS = {
  llm_provider = "string", llm_model = "string", llm_base_url = "string", llm_command = "string",
  llm_replay = "string", llm_record = "string", llm_timeout = "number", llm_retries = "number",
  llm_rpm = "number",
}

-- For a command that takes --llm PROVIDER and the LLM's options: its
-- flags table gets them (flags.llm included), its help the lines below,
-- and client_from_args the client (nil without --llm).
function M.add_flags(flags)
  flags.llm = "string"
  for flag, kind in pairs(M.ARG_FLAGS) do
    if flag ~= "llm_provider" then flags[flag] = kind end
  end
  return flags
end

M.USAGE = "[--llm PROVIDER] [--llm-model M] [--llm-base-url URL] [--llm-command CMD] [--llm-replay FILE] "
  .. "[--llm-record FILE] [--llm-timeout S] [--llm-retries N] [--llm-rpm N]"

M.HELP = [[
  --llm PROVIDER    openai (any OpenAI-compatible server: vLLM, llama.cpp,
                    Ollama), anthropic, command, replay (default none). The
                    API key comes from the environment only
                    (KLINEAGE_LLM_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY)
  --llm-model M     the model (or KLINEAGE_LLM_MODEL)
  --llm-base-url U  the server (or KLINEAGE_LLM_BASE_URL)
  --llm-command C   (command) the program the prompt is piped to
  --llm-replay F    (replay) the transcript to answer from
  --llm-record F    a transcript to record the calls into
  --llm-timeout S   seconds per call (default 120)
  --llm-retries N   retries of a failed call (default 3)
  --llm-rpm N       requests per minute at most]]

function M.client_from_args(parsed)
  if not parsed.llm then return nil end
  local cfg = M.config_from_args(parsed)
  cfg.provider = parsed.llm
  return M.from_config(cfg)
end

function M.config_from_args(parsed)
  local cfg = {}
  for flag in pairs(M.ARG_FLAGS) do
    if parsed[flag] ~= nil then cfg[flag:sub(5)] = parsed[flag] end
  end
  return cfg
end

local DEFAULTS = { timeout = 120, retries = 3, backoff = 1, max_backoff = 60, max_wait = 300,
  max_tokens = 4096, temperature = 0 }

local function bad(fmt, ...) return nil, verdicts.failure("bad_input", string.format(fmt, ...)) end

local function nonempty(v) if v ~= nil and v ~= "" then return v end end

-- cfg with the environment and the defaults filled in; nil, failure when
-- it cannot work.
local function resolve(cfg, getenv)
  local r = {}
  for k, v in pairs(cfg) do r[k] = v end
  for field, name in pairs(ENV) do
    if r[field] == nil then
      local v = nonempty(getenv(name))
      if v and NUMERIC[field] then
        local n = tonumber(v)
        if not n then return bad("%s=%s is not a number", name, v) end
        v = n
      end
      r[field] = v
    end
  end
  for k, v in pairs(DEFAULTS) do
    if r[k] == nil then r[k] = v end
  end
  if not r.provider then return bad("no LLM provider: set KLINEAGE_LLM_PROVIDER (openai, anthropic, command or replay)") end
  if not M.PROVIDERS[r.provider] then
    return bad("unknown LLM provider '%s' (openai, anthropic, command or replay)", tostring(r.provider))
  end
  if type(r.timeout) ~= "number" or r.timeout <= 0 then return bad("the LLM timeout must be a positive number of seconds") end
  if type(r.retries) ~= "number" or r.retries < 0 or r.retries % 1 ~= 0 then return bad("the LLM retries must be a whole number >= 0") end
  if r.rpm ~= nil and (type(r.rpm) ~= "number" or r.rpm <= 0) then return bad("the LLM rate limit (rpm) must be a positive number") end
  local http = HTTP_PROVIDERS[r.provider]
  if http then
    r.base_url = r.base_url or require(http).DEFAULT_BASE_URL
    if type(r.base_url) ~= "string" or not r.base_url:match("^https?://") then
      return bad("the LLM base URL must start with http:// or https://")
    end
    if not r.model then return bad("the %s provider needs a model: set KLINEAGE_LLM_MODEL or --llm-model", r.provider) end
  elseif r.provider == "command" then
    if type(r.command) ~= "string" and type(r.command) ~= "table" then
      return bad("the command provider needs a command: set KLINEAGE_LLM_COMMAND or --llm-command")
    end
  elseif r.provider == "replay" then
    if type(r.replay) ~= "string" then return bad("the replay provider needs a transcript: set KLINEAGE_LLM_REPLAY or --llm-replay") end
  end
  return r
end

-- The environment of a command provider's program: this process's, less
-- the LLM settings and keys it is not meant for. It keeps
-- KLINEAGE_LLM_API_KEY (the key the user gives whatever model klineage is
-- pointed at: a wrapper around a hosted model needs it) and gets
-- KLINEAGE_LLM_MODEL; OPENAI_API_KEY, ANTHROPIC_API_KEY and the other
-- KLINEAGE_LLM_* (a base URL may hold a password) are taken out.
local function child_env(r)
  local env = {}
  for _, name in pairs(ENV) do env[name] = false end
  for _, name in ipairs(redact.KEY_NAMES) do env[name] = false end
  env.KLINEAGE_LLM_API_KEY = nil
  env.KLINEAGE_LLM_MODEL = r.model or false
  return env
end

local Client = {}
Client.__index = Client

function M.from_config(cfg)
  cfg = cfg or {}
  if type(cfg) ~= "table" then error("llm.from_config: cfg must be a table", 2) end
  if cfg.api_key ~= nil then
    error("llm.from_config: the API key comes from the environment only (KLINEAGE_LLM_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY)", 2)
  end
  local getenv = cfg.getenv or os.getenv
  local r, f = resolve(cfg, getenv)
  if not r then return nil, f end
  local key = nonempty(getenv("KLINEAGE_LLM_API_KEY")) or (KEY_ENV[r.provider] and nonempty(getenv(KEY_ENV[r.provider])))
  -- every provider's key, not only the one in use: a wrapper's stderr or a
  -- server's echo may hold any of them
  local secrets = redact.env_secrets(getenv)
  secrets[#secrets + 1] = key
  local scrub = redact.new(secrets)
  local sleep = r.sleep or require("kl.proc").sleep
  local ctx = {
    name = r.provider, http = r.http or require("kl.http"), sleep = sleep, scrub = scrub, log = r.log,
    bucket = ratelimit.new { rpm = r.rpm, burst = r.burst, clock = r.clock, sleep = sleep },
    timeout = r.timeout, retries = r.retries, backoff = r.backoff, max_backoff = r.max_backoff,
    max_wait = r.max_wait, now_epoch = r.now_epoch, child_env = child_env(r),
  }
  -- the key lives in this closure only: never in the client table, so no
  -- dump of the client (a journal, a debugger) can show it
  local function api_key() return key end
  local client = setmetatable({ cfg = r, ctx = ctx, api_key = api_key }, Client)
  client.info = scrub({ provider = r.provider, model = r.model, base_url = r.base_url })
  return client
end

function Client:ask(prompt, system)
  local r, ctx = self.cfg, self.ctx
  local module = HTTP_PROVIDERS[r.provider]
  if not module then
    local provider = require("klineage.llm.providers." .. r.provider)
    local text, usage = provider.complete(ctx, r, prompt, system)
    return text, usage, 1
  end
  local provider = require(module)
  local resp, attempts = transport.post(ctx, provider.request(r, prompt, system, self.api_key()))
  if not resp then return nil, attempts end
  local text, usage, stop = provider.parse(resp.body)
  if not text then
    return nil, verdicts.failure("llm_bad_answer", ctx.scrub(string.format(
      "%s at %s: %s", r.provider, r.base_url, usage)), { attempts = attempts })
  end
  return text, usage, attempts, stop
end

function Client:complete(prompt, system)
  if type(prompt) ~= "string" then error("client:complete: prompt must be a string", 2) end
  if system ~= nil and type(system) ~= "string" then error("client:complete: system must be a string", 2) end
  system = system or self.cfg.system
  local clock = self.cfg.clock or require("kl.host").clock
  local t0 = clock()
  local record = {
    provider = self.cfg.provider, model = self.cfg.model, base_url = self.cfg.base_url,
    prompt_hash = require("klineage.llm.providers.replay").key(prompt, system), prompt_sha256 = hash.sha256(prompt),
  }
  local text, usage, attempts, stop = self:ask(prompt, system)
  record.ms = math.floor((clock() - t0) * 1000 + 0.5)
  local scrub = self.ctx.scrub
  if not text then
    local f = usage
    record.attempts = f.attempts
    record.verdict = f.verdict
    f.record = scrub(record)
    f.message = scrub(f.message)
    return nil, f
  end
  text = scrub(text)
  record.attempts, record.usage, record.stop = attempts, usage, stop
  record.answer_sha256 = hash.sha256(text)
  if self.cfg.record and self.cfg.provider ~= "replay" then
    local ok, f = require("klineage.llm.providers.replay").append(self.cfg.record, {
      prompt_hash = record.prompt_hash, answer = text, provider = record.provider, model = record.model,
    })
    if not ok then
      f.record = scrub(record)
      return nil, f
    end
  end
  return text, scrub(record)
end

function M.prompt(name, values)
  return template.fill(template.load(name), values)
end

-- A list (or one string) as Markdown bullets; "(none)" when empty. An item
-- may be a condition of a skill record ({ fact, op, value }), said in
-- English by klineage.skills.describe.
local function bullets(v)
  if v == nil then return "(none)" end
  if type(v) == "string" then return v end
  if type(v) ~= "table" then error("llm.materialize: a skill field must be a string or a list", 3) end
  local lines = {}
  for _, x in ipairs(v) do
    local text = type(x) == "table" and require("klineage.skills.describe").condition(x) or tostring(x)
    lines[#lines + 1] = "- " .. text
  end
  return #lines > 0 and table.concat(lines, "\n") or "(none)"
end

-- Facts as "- name: value" lines, sorted, unless given as text already.
local function facts_text(facts)
  if facts == nil then return "(none)" end
  if type(facts) == "string" then return facts end
  local names = {}
  for k in pairs(facts) do names[#names + 1] = tostring(k) end
  table.sort(names)
  local lines = {}
  for _, k in ipairs(names) do
    local v = facts[k]
    if v == nil then v = facts[tonumber(k)] end
    lines[#lines + 1] = "- " .. k .. ": " .. (type(v) == "table" and require("cjson").encode(v) or tostring(v))
  end
  return #lines > 0 and table.concat(lines, "\n") or "(none)"
end

-- One call whose answer must be a kernel defining entry with these
-- parameter kinds: code, record | nil, failure (its record attached when
-- the model was asked, so that the caller can journal a counted call).
local function ask(client, prompt, entry, kinds)
  local text, record = client:complete(prompt)
  if not text then return nil, record end
  local code, af = answer.extract(text, entry, kinds)
  if not code then
    record.verdict = af.verdict
    af.record = record
    return nil, af
  end
  return code, record
end

function M.materialize(client, job)
  if getmetatable(client) ~= Client then error("llm.materialize: client must come from llm.from_config", 2) end
  if type(job) ~= "table" or type(job.kernel) ~= "string" or type(job.entry) ~= "string" or type(job.skill) ~= "table" then
    error("llm.materialize: job = { skill = card, kernel = source, entry = name [, facts] [, template] }", 2)
  end
  local kinds, f = require("klineage.gate.kernel").signature(job.kernel, job.entry)
  if not kinds then return nil, f end
  local skill = job.skill
  local prompt = M.prompt(job.template or "materialize", {
    entry = job.entry, kernel = job.kernel, facts = facts_text(job.facts),
    skill_name = tostring(skill.name or skill.id or "unnamed"),
    intent = bullets(skill.intent), preconditions = bullets(skill.preconditions),
    guards = bullets(skill.guards), example_diff = type(skill.example_diff) == "string" and skill.example_diff or "(none)",
  })
  return ask(client, prompt, job.entry, kinds)
end

-- The kernel a workload needs, written from its spec and its C reference:
-- the entry's parameters are the reference's, so the gate can run it and
-- the C reference can judge it (a spec without one cannot: nothing would
-- say what correct is).
function M.baseline(client, w)
  if getmetatable(client) ~= Client then error("llm.baseline: client must come from llm.from_config", 2) end
  if not w.reference then
    return nil, verdicts.failure("bad_input", string.format("%s has no C reference (reference = \"reference.c\"): an LLM's "
      .. "baseline would be judged against itself", tostring(w.name)))
  end
  local params, pf = require("klineage.gate.reference").parameters(w)
  if not params then return nil, pf end
  local decl, kinds, scalars = {}, {}, {}
  for i, p in ipairs(params) do
    local buffer = p.kind == "buf"
    local b = buffer and w.buffers and w.buffers[p.name]
    local output = type(b) == "table" and b.output
    decl[i] = (buffer and not output and not p.text:match("^const") and "const " or "") .. p.text
    kinds[i] = p.kind
    if not buffer then scalars[#scalars + 1] = p.name end
  end
  local sizes = {}
  for k, v in pairs(w.params or {}) do sizes[#sizes + 1] = k .. " = " .. tostring(v) end
  table.sort(sizes)
  local description = string.format("%s (entry `%s`), timed at %s; outputs: %s.%s", tostring(w.name), w.kernel,
    table.concat(sizes, ", "), table.concat(w.outputs or {}, ", "),
    type(w.description) == "string" and ("\n\n" .. w.description) or "")
  local prompt = M.prompt("baseline", { description = description, reference = w.reference.source, entry = w.kernel,
                                        parameters = table.concat(decl, ", "), scalars = table.concat(scalars, ", ") })
  return ask(client, prompt, w.kernel, kinds)
end

-- What a journal keeps of one call that had to give a kernel: the call's
-- record (scrubbed: no key, no answer text), the verdict, and on a failure
-- its message. code, result: what ask's callers returned.
function M.journal_fields(kind, code, result)
  local failed = type(result) == "table" and not code
  return { kind = kind, llm = code and result or (failed and result.record) or nil,
           verdict = code and "ok" or (failed and result.verdict or "llm_bad_answer"),
           message = not code and tostring(failed and result.message or result) or nil }
end

-- The kernel made faster with no skill to follow (the llm-only baseline).
function M.optimize(client, job)
  if getmetatable(client) ~= Client then error("llm.optimize: client must come from llm.from_config", 2) end
  if type(job) ~= "table" or type(job.kernel) ~= "string" or type(job.entry) ~= "string" then
    error("llm.optimize: job = { kernel = source, entry = name [, facts] [, attempt] }", 2)
  end
  local kinds, f = require("klineage.gate.kernel").signature(job.kernel, job.entry)
  if not kinds then return nil, f end
  return ask(client, M.prompt("optimize", { entry = job.entry, kernel = job.kernel, facts = facts_text(job.facts),
                                            attempt = tostring(job.attempt or 1) }), job.entry, kinds)
end

-- The walk's LLM proposer: one optimization removed from a kernel.
function M.simplifier(client)
  if getmetatable(client) ~= Client then error("llm.simplifier: client must come from llm.from_config", 2) end
  return function(request)
    local kinds, f = require("klineage.gate.kernel").signature(request.kernel, request.workload.kernel)
    if not kinds then return nil, f end
    return ask(client, M.prompt("simplify", { entry = request.workload.kernel, kernel = request.kernel }),
      request.workload.kernel, kinds)
  end
end

function M.seam(client)
  if getmetatable(client) ~= Client then error("llm.seam: client must come from llm.from_config", 2) end
  return function(request)
    if type(request) ~= "table" or type(request.workload) ~= "table" or type(request.workload.kernel) ~= "string" then
      error("llm seam: request = { skill, kernel, workload = { kernel = entry } [, facts] }", 2)
    end
    if request.skill == nil then -- no skill card: optimize as the model sees fit
      return M.optimize(client, { kernel = request.kernel, entry = request.workload.kernel, facts = request.facts,
                                  attempt = request.attempt })
    end
    return M.materialize(client, { skill = request.skill, kernel = request.kernel,
      entry = request.workload.kernel, facts = request.facts })
  end
end

return M
