-- Every result published in reports/ is what its journals give today, on a
-- machine with no GPU: bench/replay_reports.lua regenerates each table and
-- report from the tarballs beside it and compares the bytes. Some 45 CPU-s
-- (the lineages eval learns its skills from the walk and probe journals
-- before it reads its units back): label long. It needs the repository's
-- git history: evals published before the specs gained alias = {} are
-- replayed with the spec versions their units recorded.
local files = require "klineage.base.files"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local script = here .. "/../../bench/replay_reports.lua"
local reports = require("kl.host").home .. "/reports"

local function figure(out, name)
  return tonumber(out:match("\n" .. name .. ": (%d+)"))
end

describe("bench/replay_reports.lua", function()
  it("finds every published file the same as its journals make it", function()
    local out, code = klineage("run", script)
    for line in out:gmatch("[^\n]+") do
      if line:match("^differs") or line:match("^failed") or line:match("^unknown") then fail("%s", line) end
    end
    expect(code):equals(0)
    local replayed, same = figure(out, "reports%-replayed"), figure(out, "reports%-same")
    -- 9 of eval/, 4 of schedules/, 1 of walks/, 2 per example report
    expect(replayed >= 24):equals(true)
    expect(same):equals(replayed)
    -- what cannot be regenerated is said in its README; nothing else may join it unsaid
    for line in out:gmatch("[^\n]+") do
      if line:match("^cannot") then expect(line:match("^cannot%s+reports/optimize%-loo/README%.md:") ~= nil):equals(true) end
    end
  end)

  it("reports a changed table and a file no entry knows, and fails", function()
    local tmp = scratch_dir()
    assert(os.execute(string.format("cp -RL '%s' '%s/reports'", reports, tmp)))
    local rank = tmp .. "/reports/schedules/test.rank.txt"
    local text = assert(files.read_text(rank))
    write_file(rank, (text:gsub("1 of 6", "2 of 6", 1)))
    write_file(tmp .. "/reports/schedules/extra.table.txt", "| task |\n")
    local out, code = klineage("run", script, "--reports", tmp .. "/reports", "--only", "schedules")
    out = "\n" .. out -- every line, the first too, starts after a newline
    expect(code):equals(1)
    expect(out:match("\ndiffers%s+reports/schedules/test%.rank%.txt: line 3: committed «[^\n]*2 of 6") ~= nil):equals(true)
    expect(out:match("\nsame%s+reports/schedules/tune%.rank%.txt") ~= nil):equals(true)
    expect(out:match("\nunknown%s+reports/schedules/extra%.table%.txt") ~= nil):equals(true)
    expect(figure(out, "reports%-replayed")):equals(4)
    expect(figure(out, "reports%-same")):equals(3)
  end)
end)
