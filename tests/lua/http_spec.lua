local http = require "kl.http"

describe("kl.http", function()
  it("returns nil and a reason when the connection is refused", function()
    -- Port 9 on loopback: nothing listens there, so the call fails at once.
    local r, err = http.request { url = "http://127.0.0.1:9/", timeout = 5 }
    expect(r):is_nil()
    expect(err):contains("127.0.0.1")
  end)
  it("rejects malformed headers before any request", function()
    expect(function() http.request { url = "http://127.0.0.1:9/", headers = { 1 } } end):raises("headers[1]")
  end)
  it("reports the libcurl version", function()
    expect(http.version):matches("^%d+%.%d+")
  end)
end)
