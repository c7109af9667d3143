-- klineage.base.term: outside text reaches a terminal with its control
-- characters as C escapes; and the commands that print it use it: a skill's
-- intent (skills list), an eval's task name, a journal record (journal
-- show), an LLM program's error (optimize).
local cjson = require "cjson"
local term = require "klineage.base.term"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local home = require("kl.host").home

local function no_raw_controls(out)
  -- ours: the newlines that end lines; theirs: nothing raw
  check(not out:find("[%z\1-\9\11-\31\127]"), "a raw control character reached the terminal: %q", out)
  check(not out:find("\194[\128-\159]"), "a raw C1 control reached the terminal: %q", out)
end

describe("term.text", function()
  it("writes control characters as C escapes, ESC as \\x1b", function()
    expect(term.text("a\27[2Jb\nc\td\r\0e\127")):equals("a\\x1b[2Jb\\nc\\td\\r\\x00e\\x7f")
    expect(term.text("l1\nl2\27]0;t\7", true)):equals("l1\nl2\\x1b]0;t\\a")
  end)
  it("escapes C1 controls and bytes that are not UTF-8, and keeps UTF-8 text", function()
    expect(term.text("x\194\155y\155z é ✓")):equals("x\\xc2\\x9by\\x9bz é ✓")
  end)
  it("redacts credentials written into a URL", function()
    expect(term.text("at https://u:pw@h/v1?token=abc&n=1")):equals("at https://[redacted]@h/v1?token=[redacted]&n=1")
  end)
  it("takes any value", function()
    expect(term.text(12)):equals("12")
  end)
end)

describe("the commands escape what they print from outside", function()
  it("klineage skills list: an ESC sequence in a skill's intent", function()
    local dir = scratch_dir()
    local text = read_file(home .. "/skills/sm_90/coalesce.lua")
    local patched, n = text:gsub('\n  intent = "', '\n  intent = "\\27[2J\\27]0;pwned\\7', 1)
    expect(n):equals(1)
    write_file(dir .. "/coalesce.lua", patched)
    -- the record's observations, beside it (klineage.skills.layout)
    write_file(dir .. "/coalesce.observations.jsonl", read_file(home .. "/skills/sm_90/coalesce.observations.jsonl"))
    local out, code = klineage("skills", "list", "--dir", dir)
    expect(code):equals(0)
    expect(out):contains("\\x1b[2J\\x1b]0;pwned\\a")
    no_raw_controls(out)
  end)

  it("klineage journal show: a record's fields", function()
    local root = scratch_dir()
    local run = root .. "/esc-run"
    assert(os.execute("mkdir -p '" .. run .. "'"))
    write_file(run .. "/journal.jsonl", cjson.encode({ seq = 1, kind = "run", command = { "klineage", "gate" } }) .. "\n"
      .. cjson.encode({ seq = 2, kind = "evaluation\27[31m", verdict = "ok\27]0;t\7",
                        candidate = { label = "v\27[1Ax.cu" }, message = "line\nforged" }) .. "\n")
    local out, code = klineage("journal", "show", "esc-run", "--journal", root)
    expect(code):equals(0)
    expect(out):contains("\\x1b[31m")
    no_raw_controls(out)
  end)

  it("klineage eval: a task named with an ESC sequence", function()
    local suite = scratch_dir()
    local task = suite .. "/t\27[2Jx"
    local src = here .. "/../fixtures/workloads/saxpy_sizes"
    assert(os.execute(string.format("mkdir -p '%s' && cp '%s'/*.cu '%s'/workload.lua '%s'/ && cp '%s/v0.cu' '%s/kernel.cu'",
      task, src, src, task, src, task)))
    local out, code = klineage("eval", suite, "--backend", "fake", "--policies", "random", "--seeds", "1", "--budget", "2",
      "--journal", scratch_dir(), "--quiet")
    -- A run name may hold no control character: the task is refused in one
    -- line, its name escaped.
    expect(code):equals(2)
    expect(out):contains("t\\x1b[2Jx")
    no_raw_controls(out)
  end)

  it("klineage optimize: an LLM program's error", function()
    local out, code = klineage("optimize", "--workload", here .. "/../fixtures/workloads/saxpy_ref", "--backend", "fake",
      "--journal", scratch_dir(), "--quiet", "--llm", "command",
      "--llm-command", "printf 'bad \\033[31mred\\033]0;title\\007 end' >&2; exit 3")
    expect(code):equals(1)
    expect(out):contains("the LLM wrote no usable baseline: the command exited with 3: bad \\x1b[31mred\\x1b]0;title\\a end")
    no_raw_controls(out)
  end)
end)
