-- The committed example reports (reports/examples/) are what `klineage
-- report` makes of the journals beside them, byte for byte: an example
-- never goes stale while the renderer changes.
local files = require "klineage.base.files"

local home = require("kl.host").home
local examples = home .. "/reports/examples"

local function folders()
  local out = {}
  for _, name in ipairs(assert(require("kl.fs").list(examples))) do
    if files.read_text(examples .. "/" .. name .. "/report.md") then out[#out + 1] = name end
  end
  table.sort(out)
  return out
end

describe("reports/examples", function()
  it("holds a bench, a walk, an optimize and an eval report", function()
    local kinds = {}
    for _, name in ipairs(folders()) do kinds[name:match("^(%a+)%-")] = true end
    expect(kinds.bench):equals(true)
    expect(kinds.walk):equals(true)
    expect(kinds.optimize):equals(true)
    expect(kinds.eval):equals(true)
  end)

  for _, name in ipairs(folders()) do
    it("regenerates " .. name .. " from its journal, the same bytes", function()
      local tmp = scratch_dir()
      assert(os.execute(string.format("tar xzf '%s/%s/journal.tar.gz' -C '%s'", examples, name, tmp)))
      local out, code = klineage("report", tmp .. "/" .. name, "--open-in", tmp .. "/out")
      if code ~= 0 then fail("klineage report exited %s: %s", tostring(code), out) end
      for _, f in ipairs({ "report.md", "report.html" }) do
        local got = files.read_text(tmp .. "/out/" .. f)
        expect(got):exists()
        if got ~= files.read_text(examples .. "/" .. name .. "/" .. f) then
          fail("%s/%s differs from what its journal gives: render it again (reports/examples/README.md)", name, f)
        end
      end
    end)
  end
end)
