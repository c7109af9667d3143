-- klineage.llm against a fake server (tests/llm/fake_server.c, built next
-- to the klineage binary), a fake local model (tests/llm/fake_model.sh) and
-- recorded transcripts.
local cjson = require "cjson"
local proc = require "kl.proc"
local llm = require "klineage.llm"
local answer = require "klineage.llm.answer"
local ratelimit = require "klineage.llm.ratelimit"
local redact = require "klineage.base.redact"
local replay = require "klineage.llm.providers.replay"
local template = require "klineage.llm.template"
local transport = require "klineage.llm.transport"
local verdicts = require "klineage.base.verdicts"
local args = require "klineage.base.args"

local HERE = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")
local FIXTURES = HERE .. "/../llm"
local SERVER = require("kl.host").executable():match("^(.*)/") .. "/fake_llm_server"

local KEY = "sk-test-0123456789abcdefSECRET"

local server = assert(proc.spawn { argv = { SERVER, FIXTURES .. "/answers" } })
local port = assert(server:read_line(10), "the fake server did not start: " .. server:stderr())
local BASE = "http://127.0.0.1:" .. port

local KERNEL = [[
extern "C" __global__ void scale(float *out, const float *in, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
}
]]
local KINDS = { "buf", "buf", "i32", "f32" }

-- A client with a fake environment (the key), and sleeps recorded, not slept.
local function client(cfg, env)
  local waits = {}
  cfg.getenv = function(name) return (env or {})[name] end
  cfg.sleep = cfg.sleep or function(s) waits[#waits + 1] = s end
  local c, f = llm.from_config(cfg)
  assert(c, f and tostring(f))
  return c, waits
end

-- Every string inside v (keys, values, nested tables, a failure's fields),
-- joined: functions and userdata are skipped, what they close over is not
-- reachable from a journal.
local function strings_of(v, out, seen)
  if type(v) == "string" then out[#out + 1] = v
  elseif type(v) == "number" or type(v) == "boolean" then out[#out + 1] = tostring(v)
  elseif type(v) == "table" and not seen[v] then
    seen[v] = true
    for k, x in pairs(v) do
      strings_of(k, out, seen)
      strings_of(x, out, seen)
    end
  end
  return out
end

local function scrubbed(v, what)
  local text = table.concat(strings_of(v, {}, {}), "\n")
  check(not text:find(KEY, 1, true), "%s holds the key: %s", what, text)
  check(not text:find("0123456789abcdef", 1, true), "%s holds part of the key: %s", what, text)
end

describe("template", function()
  it("fills each placeholder verbatim, once, and leaves other braces alone", function()
    local t = "a {{x}} b {{ y }} {{Z}} {{x}} {{y_2}}"
    expect(template.fill(t, { x = "{{y_2}}", y_2 = 7 })):equals("a {{y_2}} b {{ y }} {{Z}} {{y_2}} 7")
    expect(template.placeholders(t)):equals({ "x", "y_2" })
  end)
  it("raises on a missing value or one that is not text", function()
    expect(function() template.fill("{{kernel}} {{facts}}", { kernel = "k" }) end):raises("{{facts}}")
    expect(function() template.fill("{{kernel}}", { kernel = {} }) end):raises("is a table")
  end)
  it("materialize.md asks for exactly the documented placeholders", function()
    local names = template.placeholders(template.load("materialize"))
    table.sort(names)
    expect(names):equals({ "entry", "example_diff", "facts", "guards", "intent", "kernel", "preconditions", "skill_name" })
  end)
end)

describe("answer", function()
  it("finds fenced blocks with their language, indented or not, and skips an unclosed one", function()
    local b = answer.blocks("x\n```CUDA extra\nint a;\n```\n  ```\nb\n  ```\n```python\nopen\n")
    expect(#b):equals(2)
    expect(b[1].lang):equals("cuda")
    expect(b[1].code):equals("int a;\n")
    expect(b[2].lang):equals("")
    local crlf = answer.blocks("```cuda\r\nint a;\r\n```\r\n")
    expect(crlf[1].lang):equals("cuda")
  end)
  it("picks the last block that defines the entry", function()
    local code = assert(answer.extract(read_file(FIXTURES .. "/answers/two_blocks.md"), "scale", KINDS))
    expect(code):contains("gridDim.x")
  end)
  it("takes an unfenced answer that is itself the kernel", function()
    expect(answer.extract(KERNEL, "scale", KINDS)):equals(KERNEL)
  end)
  it("gives llm_no_code for prose and for non-C blocks", function()
    local _, f = answer.extract(read_file(FIXTURES .. "/answers/prose.md"), "scale", KINDS)
    expect(f.verdict):equals("llm_no_code")
    _, f = answer.extract("```python\nprint(1)\n```\n", "scale", KINDS)
    expect(f.verdict):equals("llm_no_code")
  end)
  it("gives llm_bad_signature for changed kinds or a missing entry", function()
    local _, f = answer.extract(read_file(FIXTURES .. "/answers/bad_signature.md"), "scale", KINDS)
    expect(f.verdict):equals("llm_bad_signature")
    expect(f.got):equals({ "buf", "buf", "f32", "f32" })
    expect(f.message):contains("(buf, buf, f32, f32)")
    _, f = answer.extract("```cuda\n__global__ void other(int n) {}\n```", "scale", KINDS)
    expect(f.verdict):equals("llm_bad_signature")
    expect(f.message):contains("defines scale")
  end)
  it("registers the llm verdicts with stage and blame llm", function()
    for _, id in ipairs({ "llm_no_code", "llm_bad_signature", "llm_unavailable", "llm_refused", "llm_bad_answer", "llm_replay_miss" }) do
      local v = verdicts.get(id)
      check(v and v.stage == "llm" and v.blame == "llm", "verdict %s is not registered as stage/blame llm", id)
    end
  end)
end)

describe("configuration", function()
  it("reads the environment, with the config table winning", function()
    local c = client({ model = "from-config" }, {
      KLINEAGE_LLM_PROVIDER = "openai", KLINEAGE_LLM_MODEL = "from-env", KLINEAGE_LLM_BASE_URL = "http://h:1/v1",
      KLINEAGE_LLM_TIMEOUT = "7", KLINEAGE_LLM_RPM = "30",
    })
    expect(c.info):equals({ provider = "openai", model = "from-config", base_url = "http://h:1/v1" })
    expect(c.cfg.timeout):equals(7)
    expect(c.cfg.rpm):equals(30)
  end)
  it("defaults the hosted base URLs", function()
    expect(client({ provider = "anthropic", model = "m" }).info.base_url):equals("https://api.anthropic.com/v1")
    expect(client({ provider = "openai", model = "m" }).info.base_url):equals("https://api.openai.com/v1")
  end)
  it("takes the command line's flags", function()
    local parsed = args.parse({ "--llm-provider", "command", "--llm-command", "cat", "--llm-timeout", "3" }, { flags = llm.ARG_FLAGS })
    expect(llm.config_from_args(parsed)):equals({ provider = "command", command = "cat", timeout = 3 })
  end)
  it("fails clearly without a provider, model or command, and refuses a key in the config", function()
    local function fails(cfg, want)
      cfg.getenv = function() end
      local c, f = llm.from_config(cfg)
      expect(c):is_nil()
      expect(f.verdict):equals("bad_input")
      expect(f.message):contains(want)
    end
    fails({}, "KLINEAGE_LLM_PROVIDER")
    fails({ provider = "gpt" }, "unknown LLM provider")
    fails({ provider = "openai" }, "KLINEAGE_LLM_MODEL")
    fails({ provider = "command" }, "KLINEAGE_LLM_COMMAND")
    fails({ provider = "openai", model = "m", timeout = 0 }, "timeout")
    expect(function() llm.from_config { provider = "openai", api_key = KEY } end):raises("environment only")
  end)
  it("prefers KLINEAGE_LLM_API_KEY, else the provider's own variable", function()
    local env = { OPENAI_API_KEY = "sk-openai-key-1", KLINEAGE_LLM_API_KEY = "sk-klineage-key-2" }
    expect(client({ provider = "openai", model = "m" }, env).api_key()):equals("sk-klineage-key-2")
    expect(client({ provider = "openai", model = "m" }, { OPENAI_API_KEY = "sk-openai-key-1" }).api_key()):equals("sk-openai-key-1")
    expect(client({ provider = "anthropic", model = "m" }, { OPENAI_API_KEY = "sk-openai-key-1" }).api_key()):is_nil()
  end)
end)

describe("openai and anthropic against the fake server", function()
  it("gets an OpenAI answer, with a record for the journal", function()
    local c = client({ provider = "openai", model = "m", base_url = BASE .. "/ok/good/v1" })
    local text, rec = c:complete("optimize it", "be brief")
    expect(text):contains("a * in[i]")
    expect(rec.attempts):equals(1)
    expect(rec.usage):equals({ input = 11, output = 7 })
    expect(rec.prompt_hash):equals(replay.key("optimize it", "be brief"))
    expect(rec.answer_sha256):equals(require("kl.hash").sha256(text))
  end)
  it("sends OpenAI's request shape", function()
    local c = client({ provider = "openai", model = "the-model", base_url = BASE .. "/echo_ok/v1" }, { OPENAI_API_KEY = KEY })
    local text = assert(c:complete("the prompt", "the system"))
    expect(text):contains("POST /echo_ok/v1/chat/completions")
    expect(text):contains("Authorization: [redacted]")
    local req = cjson.decode(text:match("\r\n\r\n(.*)$"))
    expect(req.model):equals("the-model")
    expect(req.messages):equals({ { role = "system", content = "the system" }, { role = "user", content = "the prompt" } })
    scrubbed(text, "the echoed answer")
  end)
  it("gets an Anthropic answer and sends its request shape", function()
    local c = client({ provider = "anthropic", model = "m", base_url = BASE .. "/ok/good/v1" })
    local text, rec = c:complete("optimize it")
    expect(text):contains("a * in[i]")
    expect(rec.usage):equals({ input = 11, output = 7 })
    c = client({ provider = "anthropic", model = "claude", base_url = BASE .. "/echo_ok/v1", max_tokens = 99 }, { ANTHROPIC_API_KEY = KEY })
    text = assert(c:complete("p", "s"))
    expect(text):contains("POST /echo_ok/v1/messages")
    expect(text):contains("x-api-key: [redacted]")
    expect(text):contains("anthropic-version: 2023-06-01")
    local req = cjson.decode(text:match("\r\n\r\n(.*)$"))
    expect(req.system):equals("s")
    expect(req.max_tokens):equals(99)
    expect(req.messages):equals({ { role = "user", content = "p" } })
  end)
  it("materializes a skill into a checked kernel", function()
    local c = client({ provider = "openai", model = "m", base_url = BASE .. "/ok/good/v1" })
    local code, rec = llm.materialize(c, { skill = { intent = "coalesce the loads", guards = { "not for tiny n" } },
      kernel = KERNEL, entry = "scale", facts = { n = 4096 } })
    expect(code):contains("a * in[i]")
    expect(rec.provider):equals("openai")
    c = client({ provider = "openai", model = "m", base_url = BASE .. "/ok/bad_signature/v1" })
    local none, f = llm.materialize(c, { skill = { intent = "x" }, kernel = KERNEL, entry = "scale" })
    expect(none):is_nil()
    expect(f.verdict):equals("llm_bad_signature")
    expect(f.record.verdict):equals("llm_bad_signature")
    expect(f.record.attempts):equals(1)
  end)
  it("serves the orchestrator's seam with a skill record of the repository", function()
    local record = dofile(HERE .. "/../../skills/sm_90/fast_math.lua")
    local c = client({ provider = "openai", model = "m", base_url = BASE .. "/ok/good/v1" })
    local seam = llm.seam(c)
    local code, rec = seam({ skill = record, kernel = KERNEL, workload = { kernel = "scale" } })
    expect(code):contains("a * in[i]")
    expect(rec.attempts):equals(1)
    -- the prompt it sends, seen through a "model" that answers with its
    -- prompt (cat) and a transcript of the call
    local path = scratch_file("", ".jsonl")
    local echo = client({ provider = "command", command = { "cat" }, record = path })
    local same = assert(llm.seam(echo)({ skill = record, kernel = KERNEL, workload = { kernel = "scale" },
      facts = { registers = 12 } }))
    expect(same):equals(KERNEL .. "\n") -- the quoted input (the template adds a newline) is its only kernel
    local sent = cjson.decode(read_file(path)).answer
    expect(sent):contains("## Skill: fast_math")
    expect(sent):contains(record.intent)
    expect(sent):contains("- registers < 48 per thread after the change")
    expect(sent):contains("```cuda\n" .. KERNEL)
    expect(sent):contains("- registers: 12")
    expect(sent):never_contains("{{")
  end)
  it("puts the skill card, kernel and facts into the prompt", function()
    local c = client({ provider = "openai", model = "m", base_url = BASE .. "/echo_ok/v1" })
    local _, f = llm.materialize(c, { skill = { name = "ldg", intent = "read through the read-only cache",
      preconditions = { "in is never written" }, example_diff = "-x\n+y" }, kernel = KERNEL, entry = "scale",
      facts = { registers = 12, coalesced = true } })
    -- the echo is a request (the prompt JSON-escaped, fences and all on one line): no code
    expect(f.verdict):equals("llm_no_code")
    expect(f.record.attempts):equals(1)
    local c2 = client({ provider = "openai", model = "m", base_url = BASE .. "/echo_ok/v1" })
    local sent = c2:complete(llm.prompt("materialize", { skill_name = "ldg", intent = "I", preconditions = "- in is never written",
      guards = "(none)", example_diff = "-x", kernel = KERNEL, entry = "scale", facts = "- registers: 12" }))
    expect(sent):contains("in is never written")
    expect(sent):contains("## Skill: ldg")
  end)
end)

describe("resilience", function()
  it("honours Retry-After in seconds on a 429", function()
    local logs = {}
    local c, waits = client({ provider = "openai", model = "m", base_url = BASE .. "/429/2/secs/good/v1",
      log = function(line) logs[#logs + 1] = line end })
    local text, rec = c:complete("p")
    expect(text):contains("a * in[i]")
    expect(rec.attempts):equals(3)
    expect(waits):equals({ 1, 1 })
    expect(logs[1]):contains("HTTP 429: slow down; retry 1 of 3 in 1 s")
  end)
  it("honours Retry-After as an HTTP date", function()
    local c, waits = client({ provider = "anthropic", model = "m", base_url = BASE .. "/429date/1/date/good/v1" })
    assert(c:complete("p"))
    expect(#waits):equals(1)
    expect(waits[1]):at_least(1)
    expect(waits[1]):at_most(3)
  end)
  it("parses both Retry-After forms", function()
    expect(transport.retry_after(" 12 ")):equals(12)
    expect(transport.retry_after("Thu, 01 Jan 1970 00:01:40 GMT", 40)):equals(60)
    expect(transport.retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 - 5)):equals(5)
    expect(transport.retry_after("soon")):is_nil()
  end)
  it("backs off exponentially on 500s, then succeeds", function()
    local c, waits = client({ provider = "openai", model = "m", base_url = BASE .. "/500/3/exp/good/v1", backoff = 0.5 })
    local _, rec = assert(c:complete("p"))
    expect(waits):equals({ 0.5, 1, 2 })
    expect(rec.attempts):equals(4)
  end)
  it("retries a connection closed without an answer", function()
    local c, waits = client({ provider = "openai", model = "m", base_url = BASE .. "/drop/1/drop/good/v1" })
    local _, rec = assert(c:complete("p"))
    expect(rec.attempts):equals(2)
    expect(waits):equals({ 1 })
  end)
  it("sends no temperature when it is false", function()
    local c = client({ provider = "openai", model = "m", base_url = BASE .. "/echo_ok/v1", temperature = false })
    local req = cjson.decode(assert(c:complete("p")):match("\r\n\r\n(.*)$"))
    expect(req.temperature):is_nil()
    expect(req.max_tokens):equals(4096)
  end)
  it("gives up after its retries with llm_unavailable", function()
    local c, waits = client({ provider = "openai", model = "m", base_url = BASE .. "/500/9/giveup/good/v1", retries = 1 })
    local none, f = c:complete("p")
    expect(none):is_nil()
    expect(f.verdict):equals("llm_unavailable")
    expect(f.message):contains("after 2 attempts: HTTP 500: fake overload")
    expect(f.record.attempts):equals(2)
    expect(#waits):equals(1)
  end)
  it("gives up at once when Retry-After asks for more than max_wait", function()
    local c, waits = client({ provider = "openai", model = "m", base_url = BASE .. "/429/1/long/good/v1", max_wait = 0.5 })
    local _, f = c:complete("p")
    expect(f.verdict):equals("llm_unavailable")
    expect(f.message):contains("asks to wait 1 s")
    expect(#waits):equals(0)
  end)
  it("times out on a server that never answers", function()
    local c, waits = client({ provider = "openai", model = "m", base_url = BASE .. "/hang/v1", timeout = 1, retries = 1 })
    local t0 = require("kl.host").clock()
    local _, f = c:complete("p")
    local took = require("kl.host").clock() - t0
    expect(f.verdict):equals("llm_unavailable")
    expect(f.message):contains("no answer within 1 s")
    expect(f.attempts):equals(2)
    expect(#waits):equals(1)
    expect(took):at_most(6)
  end)
  it("says clearly, without retrying, that a provider is unreachable", function()
    local c, waits = client({ provider = "openai", model = "m", base_url = "http://127.0.0.1:9/v1" })
    local _, f = c:complete("p")
    expect(f.verdict):equals("llm_unavailable")
    expect(f.message):contains("openai is unreachable")
    expect(f.kind):equals("connect")
    expect(f.attempts):equals(1)
    expect(#waits):equals(0)
  end)
  it("does not retry a refusal, and names its status", function()
    local c, waits = client({ provider = "openai", model = "m", base_url = BASE .. "/status/401/v1" })
    local _, f = c:complete("p")
    expect(f.verdict):equals("llm_refused")
    expect(f.status):equals(401)
    expect(f.message):contains("HTTP 401: fake error 401")
    expect(#waits):equals(0)
  end)
  it("gives llm_bad_answer for a body that is not the API's", function()
    local c = client({ provider = "openai", model = "m", base_url = BASE .. "/garbage/v1" })
    local _, f = c:complete("p")
    expect(f.verdict):equals("llm_bad_answer")
  end)
  it("spaces requests with a token bucket", function()
    local now, slept = 100, {}
    local bucket = ratelimit.new { rpm = 60, clock = function() return now end,
      sleep = function(s) slept[#slept + 1] = s; now = now + s end }
    expect(bucket:take()):equals(0)
    expect(bucket:take()):near(1, 1e-9)
    now = now + 0.25
    expect(bucket:take()):near(0.75, 1e-9)
    now = now + 10
    expect(bucket:take()):equals(0)
    local burst = ratelimit.new { rpm = 60, burst = 3, clock = function() return now end, sleep = function() end }
    expect({ burst:take(), burst:take(), burst:take() }):equals({ 0, 0, 0 })
    expect(burst:take()):near(1, 1e-9)
    expect(#slept):equals(2)
  end)
  it("rate-limits the client's calls", function()
    local now = 0
    local c, waits = client({ provider = "openai", model = "m", base_url = BASE .. "/ok/good/v1", rpm = 120,
      clock = function() return now end })
    c.ctx.bucket.sleep = function(s) waits[#waits + 1] = s; now = now + s end
    for _ = 1, 3 do assert(c:complete("p")) end
    expect(#waits):equals(2)
    expect(waits[1]):near(0.5, 1e-9)
    expect(waits[2]):near(0.5, 1e-9)
  end)
end)

describe("the key never leaks", function()
  local env = { OPENAI_API_KEY = KEY, ANTHROPIC_API_KEY = KEY }
  it("from an error whose body echoes the request headers", function()
    for _, provider in ipairs({ "openai", "anthropic" }) do
      local logs = {}
      local c = client({ provider = provider, model = "m", base_url = BASE .. "/echo/v1",
        log = function(l) logs[#logs + 1] = l end }, env)
      local _, f = c:complete("p")
      expect(f.verdict):equals("llm_refused")
      expect(f.message):contains("[redacted]")
      scrubbed(f.message, provider .. "'s error")
      scrubbed(f.record, provider .. "'s record")
      scrubbed(logs, provider .. "'s log")
    end
  end)
  it("from answers, records, log lines and transcripts", function()
    local path = scratch_file("", ".jsonl")
    local logs = {}
    local c = client({ provider = "openai", model = "m", base_url = BASE .. "/echo_ok/v1", record = path,
      log = function(l) logs[#logs + 1] = l end }, env)
    local text, rec = assert(c:complete("p"))
    scrubbed(text, "the answer")
    scrubbed(rec, "the record")
    scrubbed(read_file(path), "the transcript")
    expect(read_file(path)):contains("Authorization: [redacted]")
    c = client({ provider = "openai", model = "m", base_url = BASE .. "/429/1/leaklog/good/v1",
      log = function(l) logs[#logs + 1] = l end }, env)
    assert(c:complete("p"))
    expect(#logs):equals(1)
    scrubbed(logs, "the log")
    scrubbed(c, "the client")
  end)
  it("from a URL with the key in it", function()
    local urls = {
      "http://127.0.0.1:9/v1?key=" .. KEY,                 -- the known key, in a query
      "http://user:" .. KEY .. "@127.0.0.1:9/v1",          -- in the user info
    }
    for _, url in ipairs(urls) do
      -- the key here is not in the environment: only its shape gives it away
      local c = client({ provider = "openai", model = "m", base_url = url })
      local _, f = c:complete("p")
      expect(f.verdict):equals("llm_unavailable")
      expect(f.message):contains("127.0.0.1")
      scrubbed(f.message, "the error")
      scrubbed(f.record, "the record")
      scrubbed(c.info, "the client's info")
    end
    local c = client({ provider = "openai", model = "m", base_url = BASE .. "/garbage/v1?api_key=" .. KEY }, env)
    local _, f = c:complete("p")
    expect(f.verdict):equals("llm_bad_answer")
    scrubbed(f, "the bad-answer failure")
  end)
  it("redacts credential shapes", function()
    local scrub = redact.new({ "abcd1234" })
    expect(scrub("k=abcd1234 https://u:pw@h/x?token=zz&n=1 Bearer qq x-api-key: vv"))
      :equals("k=[redacted] https://[redacted]@h/x?token=[redacted]&n=1 Bearer [redacted] x-api-key: [redacted]")
    expect(scrub({ a = { "abcd1234" } })):equals({ a = { "[redacted]" } })
  end)
end)

describe("command provider", function()
  local script = FIXTURES .. "/fake_model.sh"
  it("sends the prompt on stdin and takes stdout as the answer", function()
    local c = client({ provider = "command", model = "tiny", command = "sh '" .. script .. "' echo" })
    local text, rec = c:complete(KERNEL)
    expect(text):matches("^Model tiny says:\n```cuda\n")
    expect(text):matches("```$") -- no final newline, and nothing lost
    expect(rec.provider):equals("command")
    expect(answer.extract(text, "scale", KINDS)):contains("a * in[i]")
  end)
  it("takes an argv list too, and materializes through a program that ignores its stdin", function()
    local c = client({ provider = "command", command = { "/bin/cat", FIXTURES .. "/answers/good.md" } })
    local code, rec = llm.materialize(c, { skill = { intent = "x" }, kernel = KERNEL, entry = "scale" })
    expect(code):contains("a * in[i]")
    expect(rec.attempts):equals(1)
  end)
  it("fails with the program's stderr, scrubbed", function()
    local c = client({ provider = "command", command = "sh '" .. script .. "' fail " .. KEY }, { KLINEAGE_LLM_API_KEY = KEY })
    local _, f = c:complete("p")
    expect(f.verdict):equals("llm_unavailable")
    expect(f.message):contains("exited with 3: fake_model: out of credits for key [redacted]")
    scrubbed(f, "the command's failure")
  end)
  it("times out on a program that never answers", function()
    local c = client({ provider = "command", command = "exec sh '" .. script .. "' hang", timeout = 1 })
    local t0 = require("kl.host").clock()
    local _, f = c:complete("p")
    expect(f.verdict):equals("llm_unavailable")
    expect(f.message):contains("no answer within 1 s")
    expect(require("kl.host").clock() - t0):at_most(5)
  end)
  it("says so when the program cannot start", function()
    local c = client({ provider = "command", command = { "/nonexistent/model" } })
    local _, f = c:complete("p")
    expect(f.verdict):equals("llm_unavailable")
    expect(f.message):contains("cannot start")
  end)
end)

describe("replay", function()
  it("records a real provider's answers and plays them back", function()
    local path = scratch_file("", ".jsonl")
    local live = client({ provider = "openai", model = "m", base_url = BASE .. "/ok/good/v1", record = path })
    local a1 = assert(live:complete("first", "sys"))
    local live2 = client({ provider = "anthropic", model = "m", base_url = BASE .. "/ok/two_blocks/v1", record = path })
    local a2 = assert(live2:complete("second"))
    local lines = 0
    for _ in read_file(path):gmatch("[^\n]+") do lines = lines + 1 end
    expect(lines):equals(2)
    local played = client({ provider = "replay", replay = path })
    local b1, rec = played:complete("first", "sys")
    expect(b1):equals(a1)
    expect(rec.answer_sha256):equals(require("kl.hash").sha256(a1))
    expect(played:complete("second")):equals(a2)
    local none, f = played:complete("first") -- no system prompt: another key
    expect(none):is_nil()
    expect(f.verdict):equals("llm_replay_miss")
  end)
  it("refuses a malformed transcript and reports a missing one", function()
    local c = client({ provider = "replay", replay = scratch_file("{\"schema\":\"other\"}\n", ".jsonl") })
    local _, f = c:complete("p")
    expect(f.verdict):equals("bad_input")
    expect(f.message):contains(":1: not a klineage-llm-replay-1 line")
    c = client({ provider = "replay", replay = "/nonexistent/calls.jsonl" })
    _, f = c:complete("p")
    expect(f.verdict):equals("io_error")
  end)
end)

server:close()
