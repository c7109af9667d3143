-- The walk's llm proposer (search/proposers.lua, klineage.llm.simplifier):
-- greedy asks the LLM for one simplification a step, the gate judges the
-- answer like any candidate, and every call is journaled and charged.
local context = require "klineage.device.context"
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"
local llm = require "klineage.llm"
local search = require "klineage.search"
local workload = require "klineage.workload"

local w = assert(workload.load("transpose"))

local function answering(text)
  local path = scratch_dir() .. "/answer.md"
  local h = assert(io.open(path, "w"))
  h:write(text)
  h:close()
  return llm.simplifier(assert(llm.from_config({ provider = "command", model = "file", command = { "/bin/cat", path } })))
end

local function records_of(dir, kind)
  local out = {}
  for _, r in ipairs(assert(journal.read(dir .. "/journal.jsonl"))) do
    if r.kind == kind then out[#out + 1] = r end
  end
  return out
end

describe("the llm proposer", function()
  it("puts the LLM's simplification through the gate like any candidate, and journals the call", function()
    -- The LLM "removes" the last step: it answers with the expert's previous version.
    local previous = assert(files.read_text(w.dir .. "/" .. w.lineage[#w.lineage - 1]))
    local root = scratch_dir()
    local ctx = assert(context.new { backend = "emu", journal = root, run_id = "l", workloads = { w } })
    local s = assert(search.run(ctx, w, { policy = "greedy", direction = "backward", max_steps = 1,
      llm = answering("I removed the 64-wide tile.\n```cuda\n" .. previous .. "\n```\n") }))
    ctx:close()
    expect(#s.steps):equals(1)
    local calls = records_of(root .. "/l", "llm_call")
    expect(#calls):equals(1)
    expect(calls[1].verdict):equals("ok")
    expect(calls[1].charged):equals(true) -- the call is a cycle of the walk's budget, as the gate's are
    expect(s.cycles):equals(#records_of(root .. "/l", "evaluation") + 1)
    local judged = false
    for _, r in ipairs(records_of(root .. "/l", "evaluation")) do
      if r.provenance and r.provenance.producer and r.provenance.producer.kind == "llm" then
        judged = true
        expect(r.verdict):equals("ok")
      end
    end
    if not judged then fail("the LLM's candidate was never gated") end
  end)

  it("journals an unusable answer and proposes nothing for it", function()
    local root = scratch_dir()
    local ctx = assert(context.new { backend = "emu", journal = root, run_id = "n", workloads = { w } })
    assert(search.run(ctx, w, { policy = "greedy", direction = "backward", max_steps = 1, llm = answering("No.") }))
    ctx:close()
    local calls = records_of(root .. "/n", "llm_call")
    expect(#calls):equals(1)
    expect(calls[1].verdict):equals("llm_no_code")
  end)
end)
