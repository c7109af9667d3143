-- match.splice: edits by byte range or node, several at once, with the
-- edit script of P:rewrite; overlaps refused; hostile edits raise.
local match = require "klineage.pattern.match"
local source = require "kl.source"

local function node_of(unit, kind, text)
  for n in unit:walk({ kind }) do
    if not text or n:text() == text then return n end
  end
  error("no " .. kind .. " " .. tostring(text))
end

local src = "int f() {\n  int a = x + y;\n  return a * 2;\n}\n"

describe("match.splice", function()
  it("gives the text and edit script P:rewrite gives for the same edit", function()
    local cases = {
      { "x + y", "x - y", "binary", "x + y" },
      { "$a + $b", "$a - $b", "binary", "x + y" },
      { "a * 2", "(a * 2) + 1", "binary", "a * 2" },
      { "return a * 2;", "return 0;", "return", nil },
      { "int a = x + y;", "int a = x + y; int b = a;", "decl_stmt", nil },
    }
    for _, c in ipairs(cases) do
      local u = source.parse(src)
      local want_text, want_edits = assert(match.compile(c[1])):rewrite(u, c[2])
      expect(want_text):exists()
      local n = node_of(u, c[3], c[4])
      -- the node's new text: the rewrite replaced exactly the node's bytes
      local _, _, _, _, b, e = n:range()
      local text, edits = match.splice(u, { { node = n, text = want_text:sub(b, e + #want_text - #src) } })
      expect(text):equals(want_text)
      expect(edits):equals(want_edits)
      expect(#edits):at_least(1)
    end
  end)

  it("applies replacements, deletions and insertions together", function()
    local u = source.parse(src)
    local ret = node_of(u, "return")
    local decl = node_of(u, "decl_stmt")
    local _, _, _, _, b = ret:range()
    local text, edits = match.splice(u, {
      { node = node_of(u, "binary", "a * 2"), text = "a << 1" },
      { before = decl, text = "// first\n  " },
      { after = decl, text = " // a" },
      { begin = b, ["end"] = b - 1, text = "a += 1;\n  " },
      { begin = 1, ["end"] = 3, text = "long" },
    })
    expect(text):equals("long f() {\n  // first\n  int a = x + y; // a\n  a += 1;\n  return a << 1;\n}\n")
    local kinds = {}
    for _, e in ipairs(edits) do kinds[#kinds + 1] = e.kind end
    -- comments are no code, as in P:rewrite's scripts: they make no edit
    expect(kinds):equals({ "update", "insert", "update" })
    -- Each edit's new range holds its new text.
    for _, e in ipairs(edits) do expect(text:sub(e.new.begin, e.new["end"])):equals(e.new.text) end
  end)

  it("deletes a node given without text, and a range given empty text", function()
    local u = source.parse(src)
    local text = match.splice(u, { { node = node_of(u, "decl_stmt") }, { begin = 1, ["end"] = 4, text = "" } })
    expect(text):equals("f() {\n  \n  return a * 2;\n}\n")
  end)

  it("joins insertions at one point in list order", function()
    local u = source.parse("a;b;")
    local n = node_of(u, "expr_stmt", "b;")
    local prev = node_of(u, "expr_stmt", "a;")
    -- after(a;) and before(b;) and a raw insertion are the same point (byte 3).
    local text, edits = match.splice(u, {
      { before = n, text = "1" }, { begin = 3, ["end"] = 2, text = "2" }, { after = prev, text = "3" },
    })
    expect(text):equals("a;123b;")
    expect(#edits):equals(1)
    text = match.splice(u, { { after = prev, text = "3" }, { before = n, text = "1" } })
    expect(text):equals("a;31b;")
    -- An insertion at either end of a replacement is outside it.
    text = match.splice(u, { { node = n, text = "c;" }, { begin = 3, ["end"] = 2, text = "<" },
      { begin = 5, ["end"] = 4, text = ">" } })
    expect(text):equals("a;<c;>")
  end)

  it("refuses overlapping edits and names both", function()
    local u = source.parse(src)
    local decl = node_of(u, "decl_stmt")
    local bin = node_of(u, "binary", "x + y")
    local text, f = match.splice(u, { { node = decl, text = "int a = 0;" }, { node = bin, text = "y" } })
    expect(text):is_nil()
    expect(f.verdict):equals("bad_input")
    expect(f.message):contains("edit 1 at 2:3-2:17")
    expect(f.message):contains("edit 2 at 2:11-2:16")
    -- the same range twice, in either order of the list
    text, f = match.splice(u, { { begin = 2, ["end"] = 3, text = "" }, { begin = 2, ["end"] = 3, text = "x" } })
    expect(text):is_nil()
    expect(f.message):contains("edit 1 at 1:2-1:4")
    -- an insertion strictly inside a replacement
    text, f = match.splice(u, { { begin = 5, ["end"] = 4, text = "!" }, { begin = 1, ["end"] = 7, text = "g" } })
    expect(text):is_nil()
    expect(f.message):contains("edit 1 at 1:5-1:5 (bytes 5..4) overlaps edit 2 at 1:1-1:8 (bytes 1..7)")
    -- two big deletions that overlap (their sizes add up to more than the text)
    text, f = match.splice(u, { { begin = 1, ["end"] = 40, text = "" }, { begin = 1, ["end"] = 30, text = "" } })
    expect(text):is_nil()
    expect(f.message):contains("overlapping edits")
    -- an overlap hidden behind a short edit: [1, 20] holds [3, 4] and [10, 12]
    text, f = match.splice(u, { { begin = 1, ["end"] = 20, text = "" }, { begin = 3, ["end"] = 4, text = "" },
      { begin = 10, ["end"] = 12, text = "" } })
    expect(text):is_nil()
    expect(f.message):contains("edit 1")
  end)

  it("edits bytes, splitting a multibyte character if asked", function()
    local u = source.parse("s = \"\xc3\xa9\";\n")
    local text = match.splice(u, { { begin = 6, ["end"] = 6, text = "\xc3\xa8\xc3" } })
    expect(text):equals("s = \"\xc3\xa8\xc3\xa9\";\n")
    expect(match.splice(u, {})):equals(tostring(u))
    -- the end of the text is a valid insertion point
    expect(match.splice(u, { { begin = #tostring(u) + 1, ["end"] = #tostring(u), text = "x" } }))
      :equals(tostring(u) .. "x")
    expect(match.splice("abc", { { begin = 2, ["end"] = 2, text = "B" } })):equals("aBc")
  end)

  it("raises on hostile edits", function()
    local u = source.parse(src)
    local other = source.parse(src)
    local n = #src
    local bad = {
      { { { begin = 0, ["end"] = 1, text = "" } }, "outside the text" },
      { { { begin = 1, ["end"] = n + 1, text = "" } }, "outside the text" },
      { { { begin = n + 2, ["end"] = n + 1, text = "" } }, "outside the text" },
      { { { begin = 5, ["end"] = 2, text = "" } }, "outside the text" },
      { { { begin = 1.5, ["end"] = 2, text = "" } }, "integers" },
      { { { begin = 1 << 40, ["end"] = (1 << 40) - 1, text = "" } }, "bytes 1099511627776..1099511627775 are outside" },
      { { { begin = math.mininteger, ["end"] = 2, text = "" } }, "outside the text" },
      { { { begin = 1, text = "" } }, "integers" },
      { { { begin = 1, ["end"] = 2 } }, "text must be a string" },
      { { { before = node_of(u, "return") } }, "text must be a string" },
      { { { node = node_of(u, "return"), text = 5 } }, "text must be a string" },
      { { { node = node_of(other, "return"), text = "" } }, "another unit" },
      { { { after = "return", text = "" } }, "not a kl.source node" },
      { { { node = node_of(u, "return"), begin = 1, ["end"] = 1, text = "" } }, "exactly one of" },
      { { {} }, "exactly one of" },
      { { "x" }, "not a table" },
    }
    for _, c in ipairs(bad) do
      expect(function() match.splice(u, c[1]) end):raises(c[2])
    end
    expect(function() match.splice(u, "x") end):raises()
  end)
end)
