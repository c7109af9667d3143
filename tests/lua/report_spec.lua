-- Reports regenerated from fixture journals alone (a real H200 walk and an
-- emu bench), the fake backend's bench writing its own, klineage report,
-- and the page's safety: outside text escaped, no script, no request.
local cjson = require "cjson"
local doc = require "klineage.report.doc"
local escape = require "klineage.report.escape"
local journal = require "klineage.store.journal"
local md = require "kl.md"
local report = require "klineage.report"
local svg = require "klineage.report.svg"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local fixtures = here .. "/../fixtures/report"

local function unpack_fixture(name)
  local dir = scratch_dir()
  assert(os.execute(string.format("tar xzf '%s/%s.tar.gz' -C '%s'", fixtures, name, dir)))
  return dir .. "/" .. name
end

local function count(s, needle)
  local n, at = 0, 1
  while true do
    local b, e = s:find(needle, at, true)
    if not b then return n end
    n, at = n + 1, e + 1
  end
end

-- What no page may hold: a script, a request to anywhere, a style that
-- loads. Checked on the tags (escaped text may say anything) and the style.
local function self_contained(html)
  expect(html):never_contains("<script")
  for tag in html:gmatch("<[^!][^>]*>") do
    local t = tag:lower()
    for _, bad in ipairs({ "<link", "<iframe", "<img", "<object", "<embed", "<base", "<form", "<meta http-equiv=\"refresh" }) do
      if t:sub(1, #bad) == bad then fail("the page has %s", tag) end
    end
    if t:find("%ssrc%s*=") then fail("a tag loads something: %s", tag) end
    local href = t:match("%shref%s*=%s*[\"']?([^\"'%s>]*)")
    if href and href:sub(1, 1) ~= "#" then fail("a link leaves the page: %s", tag) end
    if t:find("https?://") then fail("a tag names a URL: %s", tag) end
    if t:find("%son%a+%s*=") then fail("an event handler: %s", tag) end
    if t:find("url%s*%(") then fail("a style that loads: %s", tag) end
  end
  local style = html:match("<style>(.-)</style>")
  expect(style):exists()
  expect(style:lower():find("url%s*%(")):is_nil()
  expect(style):never_contains("@import")
end

-- Every chart is <svg role="img"> with a <title>.
local function charts_named(html)
  local n = 0
  for open, rest in html:gmatch("(<svg[^>]*>)(.-)</svg>") do
    n = n + 1
    expect(open):contains('role="img"')
    expect(rest):matches("^%s*<title[^>]*>[^<]+</title>")
  end
  return n
end

local function records_of(dir, kind)
  local out = {}
  for _, r in ipairs((journal.read(dir .. "/journal.jsonl"))) do
    if r.kind == kind then out[#out + 1] = r end
  end
  return out
end

describe("the walk report", function()
  local dir = unpack_fixture("walk-reduction-breadth-cuda")
  local r = assert(report.render(dir))
  local html = r.html

  it("is a walk page with <main> and its kind in head", function()
    expect(r.kind):equals("walk")
    expect(html):matches("^<!DOCTYPE html>")
    expect(html):contains('<meta name="klineage-report" content="walk">')
    expect(count(html, "<main>")):equals(1)
    expect(html:find("<head>.-klineage%-report.-</head>")):exists()
  end)

  it("has one section per walk_step, id step-N", function()
    local steps = records_of(dir, "walk_step")
    expect(#steps):equals(3)
    expect(count(html, '<section class="step"')):equals(#steps)
    for _, s in ipairs(steps) do
      expect(html):contains(string.format('<section class="step" id="step-%d">', math.tointeger(s.step)))
    end
  end)

  it("shows each step's diff with the changed text marked", function()
    -- step 2 is the undo of retune at BLOCK: 256 back to 128
    local s2 = html:match('<section class="step" id="step%-2">(.-)</section>')
    expect(s2):contains('<pre class="diff">')
    expect(s2):contains('<span class="del">-#define BLOCK <mark>256</mark>')
    expect(s2):contains('<span class="add">+#define BLOCK <mark>128</mark>')
    expect(r.markdown):contains("```diff\n")
    expect(r.markdown):contains("\n-#define BLOCK 256")
  end)

  it("gives the gate's numbers with their backend, the facts that changed, and each candidate's reason", function()
    local s1 = html:match('<section class="step" id="step%-1">(.-)</section>')
    expect(s1):contains("<td>profile</td>")
    expect(s1):matches("0%.2459 ms")
    expect(s1):contains("<td>cuda</td>")
    expect(s1):contains("<code>define.UNROLL</code>")
    -- a hunk reverted alone that does not compile: rejected, with the compiler's words
    expect(s1):contains("rejected by the gate: compile:")
    expect(s1):contains("identifier &quot;UNROLL&quot; is undefined")
    expect(s1):contains("passed the gate; the walk followed it")
  end)

  it("has a card for each skill the journal teaches", function()
    local ids = {}
    for id in html:gmatch('<article class="skill%-card" data%-skill="([^"]+)">') do ids[#ids + 1] = id end
    expect(#ids):at_least(3)
    local set = {}
    for _, id in ipairs(ids) do set[id] = true end
    expect(set.retune):is_true()
    expect(set.warp_shuffle):is_true()
    local card = html:match('<article class="skill%-card" data%-skill="retune">(.-)</article>')
    expect(card):contains("Applies when")
    expect(card):contains("Evidence")
    expect(card):contains('href="#step-2"')
  end)

  it("has real tables and named charts, and nothing external", function()
    expect(html):contains("<table>")
    expect(html):matches("<th[^>]*>step</th>")
    expect(html):never_contains("<p>|")
    expect(charts_named(html)):equals(2)
    self_contained(html)
    -- long kernel lines scroll inside their block instead of widening the page
    expect(html:match("<style>(.-)</style>")):matches("\npre {[^}]*overflow%-x: auto;")
  end)

  it("renders the same page twice (nothing but the journal goes in)", function()
    local again = assert(report.render(dir))
    expect(again.html == html):is_true()
    expect(again.markdown == r.markdown):is_true()
  end)
end)

describe("klineage walk", function()
  it("writes its report at the end; an emu walk's first kernel comes from the lineage", function()
    local root = scratch_dir()
    local out, code = klineage("walk", "transpose", "--backend", "emu", "--policy", "recorded", "--max-steps", "1",
      "--journal", root, "--run", "w")
    expect(code):equals(0)
    expect(out):contains("klineage walk: report: " .. root .. "/w/report.html\n")
    local html = read_file(root .. "/w/report.html")
    expect(html):contains('<meta name="klineage-report" content="walk">')
    expect(html):contains('<section class="step" id="step-1">')
    expect(html):contains('<pre class="diff">')
    expect(html):contains("No chart: nothing in this walk was timed")
    self_contained(html)
  end)
end)

describe("a journal of several walks", function()
  it("numbers each walk's steps step-<walk>-N, all of class step", function()
    -- The fixture's walk twice: its walk records again under a second walk id.
    local dir = unpack_fixture("walk-reduction-breadth-cuda")
    local lines, again = {}, {}
    for line in io.lines(dir .. "/journal.jsonl") do
      lines[#lines + 1] = line
      local rec = cjson.decode(line)
      if tostring(rec.kind):match("^walk_") then
        rec.walk = "second-" .. rec.walk
        if rec.key then rec.key = "second-" .. rec.key end
        again[#again + 1] = cjson.encode(rec)
      end
    end
    write_file(dir .. "/journal.jsonl", table.concat(lines, "\n") .. "\n" .. table.concat(again, "\n") .. "\n")
    local html = assert(report.render(dir)).html
    expect(count(html, '<section class="step"')):equals(6)
    for w = 1, 2 do
      for n = 1, 3 do expect(html):contains(string.format('<section class="step" id="step-%d-%d">', w, n)) end
    end
    expect(html):never_contains('id="step-1">')
    expect(html):contains("<h2>Walk 2</h2>")
    expect(charts_named(html)):equals(4)
  end)
end)

describe("outside text in a report", function()
  -- The fixture with a kernel comment and a step label that try to break
  -- out of the page.
  local dir = unpack_fixture("walk-reduction-breadth-cuda")
  local hostile = "// </code></pre><script>alert(1)</script><img src=http://evil.example/x.png> ]]> --> `x` | y"
  local steps = records_of(dir, "walk_step")
  -- Step 2 changes BLOCK from 256 to 128: the hostile text goes where the
  -- diff shows it unmarked (the end both lines share), marked (the change)
  -- and as context (the next line).
  -- Each changed text is stored under its own hash, as a run stores it
  -- (a file that no longer matches its name is refused), and the journal
  -- names the new hashes.
  local renamed = {}
  for _, sha in ipairs({ steps[2].from, steps[2].to }) do
    local path = dir .. "/src/" .. sha .. ".cu"
    local text = read_file(path)
    text = text:gsub("(#define BLOCK %d+[^\n]*)", "%1 " .. hostile, 1)
    text = text:gsub("#define GRID_BLOCKS 1056", "#define GRID_BLOCKS 1056 " .. hostile, 1)
    if sha == steps[2].to then text = text:gsub("#define BLOCK 128", "#define BLOCK 128 /* <script>alert(3)</script> */", 1) end
    local new = require("kl.hash").sha256(text)
    os.remove(path)
    write_file(dir .. "/src/" .. new .. ".cu", text)
    renamed[sha] = new
  end
  local lines = {}
  for line in io.lines(dir .. "/journal.jsonl") do
    line = line:gsub("%x+", function(h) return renamed[h] end)
    local rec = cjson.decode(line)
    if rec.kind == "walk_step" and rec.step == 2 then
      rec.labels.to = "<script>alert(2)</script> | **bold** [link](http://evil.example)"
      line = cjson.encode(rec)
    end
    lines[#lines + 1] = line
  end
  write_file(dir .. "/journal.jsonl", table.concat(lines, "\n") .. "\n")
  local r = assert(report.render(dir))

  it("is escaped in the diff, the tables, the headings and the charts", function()
    self_contained(r.html)
    expect(r.html):contains("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(r.html):contains("&lt;script&gt;alert(2)&lt;/script&gt;")
    local s2 = r.html:match('<section class="step" id="step%-2">(.-)</section>')
    expect(s2):contains('<span class="ctx"> #define GRID_BLOCKS 1056 // &lt;/code&gt;&lt;/pre&gt;&lt;script&gt;')
    expect(s2):contains("<mark>128 /* &lt;script&gt;alert(3)&lt;/script&gt; */</mark>")
    expect(s2):matches('<span class="add">%+#define BLOCK <mark>[^\n]-</mark>[^<]*// threads[^<]*&lt;script&gt;alert%(1%)')
    expect(r.html):never_contains("<strong>bold</strong>")
    expect(r.html):never_contains("evil.example/x.png\">")
    expect(count(r.html, '<section class="step"')):equals(3)
  end)
end)

describe("the bench report", function()
  it("has the lineage table from an emu journal, and says why there is no chart", function()
    local dir = unpack_fixture("bench-reduction-emu")
    local r = assert(report.render(dir))
    expect(r.kind):equals("bench")
    expect(r.html):contains('<meta name="klineage-report" content="bench">')
    local tbody = r.html:match("<h2>The lineage</h2>.-<table>.-<tbody>(.-)</tbody>")
    expect(count(tbody, "<tr>")):equals(10)
    expect(tbody):contains("<td><code>v0_interleaved.cu</code></td>")
    expect(tbody):contains("<td><code>v9_unrolled_loads.cu</code></td>")
    expect(r.html):contains("No chart: no version was timed")
    expect(r.markdown):contains("| `v9_unrolled_loads.cu` | bench | ok |")
    self_contained(r.html)
  end)

  it("is written by klineage bench, with the time chart and its interval", function()
    local root = scratch_dir()
    local out, code = klineage("bench", here .. "/../fixtures/workloads/saxpy_sizes", "--backend", "fake", "--max-seconds", "0.05",
      "--journal", root)
    expect(code):equals(0)
    local run = out:match("klineage bench: report: (%S+)/report%.html\n")
    expect(run):exists()
    expect(out):matches("expert%-speedup%-over%-v0: [%d.]+ x\n$") -- the figures stay the last lines
    local html = read_file(run .. "/report.html")
    expect(read_file(run .. "/report.md")):contains("## The lineage")
    expect(charts_named(html)):at_least(1)
    expect(html):contains("Time per version at the bench size")
    expect(html):contains("<td><code>v1.cu</code></td>")
    self_contained(html)
  end)
end)

describe("klineage report", function()
  it("writes report.md and report.html into the run folder, or --open-in DIR", function()
    local dir = unpack_fixture("bench-reduction-emu")
    local out, code = klineage("report", dir)
    expect(code):equals(0)
    expect(out):equals(dir .. "/report.md\n" .. dir .. "/report.html\n")
    expect(read_file(dir .. "/report.html")):contains("<main>")
    local other = scratch_dir() .. "/out"
    out, code = klineage("report", dir, "--open-in", other, "--html")
    expect(code):equals(0)
    expect(out):equals(other .. "/report.html\n")
    expect(read_file(other .. "/report.md")):contains("# Bench: reduction")
  end)

  it("refuses what is not a run folder, or a run no kind reports, in one line, exit 2", function()
    local out, code = klineage("report", scratch_dir())
    expect(code):equals(2)
    expect(out):matches("^klineage report: .*is not a run folder[^\n]*\n$")
    local dir = scratch_dir()
    write_file(dir .. "/journal.jsonl", cjson.encode({ kind = "run", command = { "klineage", "doctor" } }) .. "\n")
    out, code = klineage("report", dir)
    expect(code):equals(2)
    expect(out):contains("no report kind (bench, eval, optimize, walk)")
  end)

  it("never costs a bench its run: a report that cannot render is said on stderr, the exit code stays", function()
    -- a home whose reports/ has no page template
    local home, real = scratch_dir(), require("kl.host").home
    for _, d in ipairs({ "lua", "gpu", "skills", "examples" }) do assert(os.execute(string.format("ln -s '%s/%s' '%s/%s'", real, d, home, d))) end
    assert(os.execute(string.format("mkdir -p '%s/reports/style' && cp '%s/reports/style/report.css' '%s/reports/style/'", home, real, home)))
    local root = scratch_dir()
    local h = io.popen(string.format("env KLINEAGE_HOME='%s' '%s' bench '%s' --backend fake --max-seconds 0.05 --journal '%s' 2>&1", home,
      require("kl.host").executable(), here .. "/../fixtures/workloads/saxpy_sizes", root))
    local out = h:read("a")
    local _, _, code = h:close()
    expect(code):equals(0)
    expect(out):matches("klineage bench: the report could not be rendered %(the report template: cannot open [^\n]*%); the run is kept: klineage report ")
    local run = out:match("the run is kept: klineage report (%S+)\n")
    expect(#records_of(run, "evaluation")):equals(2)
    expect(io.open(run .. "/report.html")):is_nil()
  end)

  it("never loses a run: a report that cannot render is said, and nothing raises", function()
    local dir = scratch_dir()
    write_file(dir .. "/journal.jsonl", "not json\n")
    expect(report.after_run("test", dir)):is_nil()
    expect(io.open(dir .. "/report.html")):is_nil()
  end)
end)

describe("report pieces", function()
  it("escape.md renders as exactly the text, through kl.md", function()
    for _, s in ipairs({ "<script>x</script>", "a | b", "*em* _u_ `c` [l](u) ![i](u)", "&amp; &lt;", "# h", "- item", "1. one",
                         "\\*", "~~s~~", "line\nbreak" }) do
      local html = md.html("| c |\n|---|\n| " .. escape.md(s) .. " |\n")
      expect(html):contains("<td>" .. escape.html((s:gsub("\n", " "))) .. "</td>")
    end
  end)

  it("escape.code_block fences text holding backticks", function()
    local html = md.html(escape.code_block("a ``` b\n````\n<script>", "cuda"))
    expect(html):contains("a ``` b\n````\n&lt;script&gt;")
  end)

  it("doc puts engine HTML only where the engine placed it", function()
    local d = doc.new()
    d:md("text klrawdeadbeefx1 and <b>raw</b>")
    d:raw('<svg role="img"><title>t</title></svg>', "*a chart*")
    d:md("klraw0000x1")
    local html = d:body_html()
    expect(count(html, "<svg")):equals(1)
    expect(html):contains("klraw0000x1")
    expect(html):never_contains("<b>")
    expect(d:markdown()):equals("text klrawdeadbeefx1 and <b>raw</b>\n\n*a chart*\n\nklraw0000x1\n")
  end)

  it("svg draws axes with nice ticks, escapes labels and refuses empty charts", function()
    expect(svg.ticks(0, 9.3)):equals({ 0, 2, 4, 6, 8, 10 })
    expect(svg.log_ticks(0.3, 40)):equals({ 0.1, 1, 10, 100 })
    local chart = svg.bar_chart({ id = "c", title = "t <x>", unit = "ms", log = true,
      bars = { { label = "<b>v0</b>", value = 12.5, low = 12, high = 13 }, { label = "v1", value = 0.4 }, { label = "v2" } },
      reference = { value = 1, label = "vendor" } })
    expect(chart):contains('role="img"')
    expect(chart):contains("<title id=\"c-title\">t &lt;x&gt;</title>")
    expect(chart):contains("&lt;b&gt;v0&lt;/b&gt;")
    expect(chart):contains("ms (log scale)")
    expect(chart):contains(">n/a<")
    expect(count(chart, "<rect")):equals(2)
    expect(function() svg.bar_chart({ bars = { { label = "x" } } }) end):raises("no bar has a value")
    local line = svg.line_chart({ id = "l", title = "time", unit = "ms", x_label = "step",
      series = { { name = "a", points = { { x = 1, y = 2 }, { x = 2, y = 3 } } } } })
    expect(line):contains("<polyline")
    expect(line):contains(">step<")
  end)

  it("svg wraps a line chart's legend into rows that stay inside the chart", function()
    local series = {}
    for i = 1, 9 do series[i] = { name = "policy " .. i, points = { { x = 0, y = 1 }, { x = 30, y = i } } } end
    local chart = svg.line_chart({ id = "w", title = "t", series = series })
    local rows = {}
    for x, y, name in chart:gmatch('<text x="([%d.]+)" y="([%d.]+)"[^>]*>(policy %d)</text>') do
      if tonumber(x) > 720 - 20 - 60 then fail("%s starts at x = %s, too near the right edge for its text", name, x) end
      rows[y] = true
    end
    local n = 0
    for _ in pairs(rows) do n = n + 1 end
    expect(n):equals(3) -- four entries a row at the default width
    -- six series, six colours (the eval's five policies drew two alike before)
    local all = svg.line_chart({ id = "s6", series = { table.unpack(series, 1, 6) } })
    local colours = {}
    for c in all:gmatch('<polyline points="[^"]*" fill="none" stroke="(#%x+)"') do colours[c] = true end
    local k = 0
    for _ in pairs(colours) do k = k + 1 end
    expect(k):equals(6)
  end)
end)
