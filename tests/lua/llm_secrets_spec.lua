-- Secrets on the LLM side: what a command provider's program inherits,
-- every provider's key scrubbed from what comes back, and credentials
-- written into a base URL kept out of journals and reports.
local journal = require "klineage.store.journal"
local llm = require "klineage.llm"
local redact = require "klineage.base.redact"
local report = require "klineage.report"
local testing = require "klineage.cli.testing"

local HERE = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")
local OPENAI = "sk-openai-0123456789ABCDEF"
local ANTHROPIC = "sk-ant-0123456789abcdefXYZ"
local OURS = "sk-klineage-9876543210zyx"
local URL = "https://alice:hunter2pw@llm.example.com/v1?key=kq123456&api_key=ak123456&token=tk123456"
  .. "&access_token=at123456&sig=sg123456&n=1"
local LEAKS = { OPENAI, ANTHROPIC, OURS, "hunter2pw", "kq123456", "ak123456", "tk123456", "at123456", "sg123456" }

local function no_leak(text, what)
  for _, s in ipairs(LEAKS) do check(not text:find(s, 1, true), "%s holds '%s': %s", what, s, text) end
end

describe("command provider: the program's environment", function()
  it("has no other provider's key and no KLINEAGE_LLM_* setting but the model and its own key", function()
    local out = scratch_file("")
    local script = scratch_file(string.format([[
      local llm = require "klineage.llm"
      local c = assert(llm.from_config { provider = "command", model = "tiny", command = "env > '%s'; echo ok" })
      assert(c:complete("p"))
    ]], out), ".lua")
    local h = io.popen(string.format("env OPENAI_API_KEY=%s ANTHROPIC_API_KEY=%s KLINEAGE_LLM_API_KEY=%s KLINEAGE_LLM_BASE_URL=%s %s run %s 2>&1",
      OPENAI, ANTHROPIC, OURS, testing.shell_quote(URL), testing.shell_quote(require("kl.host").executable()), script))
    local said = h:read("a")
    local _, _, code = h:close()
    expect(code):equals(0)
    expect(said):equals("")
    local env = read_file(out)
    expect(env):contains("\nKLINEAGE_LLM_MODEL=tiny\n")
    expect(env):contains("KLINEAGE_LLM_API_KEY=" .. OURS)
    expect(env):never_contains("OPENAI_API_KEY")
    expect(env):never_contains("ANTHROPIC_API_KEY")
    expect(env):never_contains("KLINEAGE_LLM_BASE_URL")
    expect(env):never_contains("hunter2pw")
  end)
end)

describe("redaction of every provider's key", function()
  it("scrubs another provider's key from a program's stderr", function()
    local fake = HERE .. "/../llm/fake_model.sh"
    local c = assert(llm.from_config { provider = "command", command = "sh '" .. fake .. "' fail " .. ANTHROPIC .. OPENAI,
      getenv = function(name) return ({ KLINEAGE_LLM_API_KEY = OURS, OPENAI_API_KEY = OPENAI, ANTHROPIC_API_KEY = ANTHROPIC })[name] end })
    local _, f = c:complete("p")
    expect(f.verdict):equals("llm_unavailable")
    expect(f.message):contains("out of credits for key [redacted][redacted]")
    no_leak(f.message, "the failure")
  end)
  it("lists the keys of the environment, each provider's", function()
    local env = { OPENAI_API_KEY = OPENAI, ANTHROPIC_API_KEY = ANTHROPIC, KLINEAGE_LLM_API_KEY = "" }
    expect(redact.env_secrets(function(n) return env[n] end)):equals({ OPENAI, ANTHROPIC })
  end)
end)

describe("credentials in a base URL", function()
  it("never reach the journal, whatever record holds them", function()
    local path = scratch_dir() .. "/r/journal.jsonl"
    local j = assert(journal.open(path))
    assert(j:append({ kind = "run", command = { "klineage", "optimize", "--llm-base-url", URL } }))
    assert(j:append({ kind = "llm", llm = { base_url = URL }, message = "openai at " .. URL .. ": 401" }))
    j:close()
    local text = read_file(path)
    no_leak(text, "the journal")
    expect(text):contains("[redacted]@llm.example.com")
    expect(text):contains("?key=[redacted]&api_key=[redacted]&token=[redacted]&access_token=[redacted]&sig=[redacted]&n=1")
  end)
  it("never reach a report, from a journal written before they were scrubbed", function()
    local root = scratch_dir()
    assert(os.execute(string.format("tar xzf '%s/../fixtures/report/bench-reduction-emu.tar.gz' -C '%s'", HERE, root)))
    local dir = root .. "/bench-reduction-emu"
    local lines = {}
    for line in io.lines(dir .. "/journal.jsonl") do lines[#lines + 1] = line end
    local first = require("cjson").decode(lines[1])
    first.command[#first.command + 1] = "--llm-base-url=" .. URL
    lines[1] = require("cjson").encode(first)
    write_file(dir .. "/journal.jsonl", table.concat(lines, "\n") .. "\n")
    local r = assert(report.render(dir))
    expect(r.markdown):contains("llm.example.com")
    no_leak(r.markdown, "the Markdown report")
    no_leak(r.html, "the HTML report")
  end)
end)
