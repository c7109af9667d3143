local http = require "kl.http"

describe("kl.http", function()
  it("returns nil and a reason when the connection is refused", function()
    -- Port 9 on loopback: nothing listens there, so the call fails at once.
    local r, err, kind = http.request { url = "http://127.0.0.1:9/", timeout = 5 }
    expect(r):is_nil()
    expect(err):contains("127.0.0.1")
    expect(kind):equals("connect")
  end)
  it("returns the response's headers, lower-cased, with its status and body", function()
    -- the fake LLM server of llm_spec.lua, built next to the klineage binary
    local proc = require "kl.proc"
    local dir = require("kl.host").executable():match("^(.*)/")
    local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")
    local server = assert(proc.spawn { argv = { dir .. "/fake_llm_server", here .. "/../llm/answers" } })
    local port = assert(server:read_line(10))
    local res = assert(http.request { url = "http://127.0.0.1:" .. port .. "/429/1/h/good/v1/chat/completions",
      method = "POST", body = "{}", timeout = 5 })
    expect(res.status):equals(429)
    expect(res.body):contains("slow down")
    expect(res.headers["retry-after"]):equals("1")
    expect(res.headers["content-type"]):equals("application/json")
    expect(res.headers["Retry-After"]):is_nil()
    local none, err, why = http.request { url = "http://127.0.0.1:" .. port .. "/hang/", timeout = 0.5 }
    expect(none):is_nil()
    expect(err):contains("/hang/")
    expect(why):equals("timeout")
    server:close()
  end)
  it("rejects malformed headers before any request", function()
    expect(function() http.request { url = "http://127.0.0.1:9/", headers = { 1 } } end):raises("headers[1]")
  end)
  it("reports the libcurl version", function()
    expect(http.version):matches("^%d+%.%d+")
  end)
end)
