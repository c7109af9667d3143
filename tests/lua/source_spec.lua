local source = require "kl.source"

local saxpy = [[
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x,
                                 float *__restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]]

local function kinds(list)
  local out = {}
  for i, n in ipairs(list) do out[i] = n.kind end
  return table.concat(out, " ")
end

describe("kl.source: parse and print", function()
  it("round-trips byte for byte, garbage and invalid UTF-8 included", function()
    for _, text in ipairs({ saxpy, "", "}}}{{{ \xff\xfe R\"x(", "#define A \\\n 1\n/* open",
                            "a<<<b>>>(c" }) do
      local u, diags = source.parse(text)
      expect(tostring(u)):equals(text)
      expect(type(diags)):equals("table")
      expect(#u):equals(#text)
    end
  end)
  it("never fails on any byte string", function()
    local seed = 12345
    for _ = 1, 200 do
      local bytes = {}
      for i = 1, 64 do
        seed = (seed * 1103515245 + 12345) % 2147483648
        bytes[i] = string.char(seed % 256)
      end
      local text = table.concat(bytes)
      local u = source.parse(text)
      expect(tostring(u)):equals(text)
    end
  end)
  it("reports opaque regions as diagnostics with stable ids", function()
    local u, diags = source.parse("void f() { x = (1 + ; y = 2; }", "bad.cu")
    expect(u.name):equals("bad.cu")
    expect(#diags):at_least(1)
    expect(diags[1].id):equals("KLS001")
    expect(diags[1].line):equals(1)
    expect(diags[1].text):equals("x = (1 + ;")
    local stmts = {}
    for n in u:walk("expr_stmt") do stmts[#stmts + 1] = n:text() end
    expect(stmts[1]):equals("y = 2;")
  end)
  it("caps the nesting depth with a clear error", function()
    local text = "void f() { x = " .. string.rep("(", 5000) .. "1" .. string.rep(")", 5000) .. "; }"
    local u, diags = source.parse(text)
    expect(tostring(u)):equals(text)
    expect(diags[1].id):equals("KLS002")
    expect(diags[1].message):contains("nesting deeper than")
    local opaque = u:nodes("opaque")[1]
    expect(opaque.truncated):is_true()
  end)
end)

describe("kl.source: nodes", function()
  it("exposes kind, text, range, children, parent and fields", function()
    local u = source.parse(saxpy)
    local fns = u:functions()
    expect(#fns):equals(1)
    local fn = fns[1]
    expect(fn.kind):equals("function")
    expect(fn:name()):equals("saxpy")
    local info = fn:info()
    expect(info.global):is_true()
    expect(info.extern_c):is_true()
    local body = fn:body()
    expect(body.kind):equals("compound")
    expect(kinds(body:children())):equals("decl_stmt if")
    local iff = body:children()[2]
    expect(iff:field("cond"):text()):equals("i < n")
    expect(iff:field("then").kind):equals("expr_stmt")
    expect(iff:field("else")):is_nil()
    expect(iff:parent() == body):is_true()
    expect(u:root():parent()):is_nil()
    local l1, c1, l2, c2, b, e = iff:range()
    expect(l1):equals(5)
    expect(c1):equals(3)
    expect(l2):equals(5)
    expect(c2):equals(37)
    expect(saxpy:sub(b, e)):equals(iff:text())
    local _, fields = iff:children()
    expect(table.concat(fields, " ")):equals("cond then")
    expect(function() iff:field("nonsense") end):raises("unknown field")
  end)
  it("gives parameters with type, name, const, restrict and pointer depth", function()
    local fn = source.parse(saxpy):functions()[1]
    local ps = fn:params()
    expect(#ps):equals(4)
    expect(ps[1].name):equals("n")
    expect(ps[1].pointer_depth):equals(0)
    expect(ps[3].name):equals("x")
    expect(ps[3].type):equals("const float *__restrict__")
    expect(ps[3].base):equals("float")
    expect(ps[3].const):is_true()
    expect(ps[3].restrict):is_true()
    expect(ps[3].pointer_depth):equals(1)
    expect(ps[4].const):is_false()
  end)
  it("keeps the unit alive while a node is referenced", function()
    local node
    do
      local u = source.parse(saxpy)
      node = u:functions()[1]:body()
    end
    collectgarbage()
    collectgarbage()
    expect(node:text()):contains("threadIdx.x")
    expect(node.unit.name):equals("<input>")
  end)
  it("raises on nodes of a closed unit", function()
    local u = source.parse(saxpy)
    local fn = u:functions()[1]
    u:close()
    expect(function() fn:text() end):raises("closed")
  end)
  it("walks with kind filters", function()
    local u = source.parse(saxpy)
    local texts = {}
    for n in u:walk({ "index" }) do texts[#texts + 1] = n:text() end
    expect(table.concat(texts, ",")):equals("y[i],x[i],y[i]")
    local count = 0
    for _ in u:walk() do count = count + 1 end
    expect(count):equals(u.nnodes)
    local members = 0
    for _ in u:functions()[1]:walk("member") do members = members + 1 end
    expect(members):equals(3)
    expect(function() u:walk("no_such_kind") end):raises("unknown node kind")
  end)
  it("compares nodes structurally, ignoring trivia", function()
    local a = source.parse("x = a + /* c */ b;"):nodes("assign")[1]
    local b = source.parse("x=a+b;"):nodes("assign")[1]
    local c = source.parse("x = a - b;"):nodes("assign")[1]
    expect(a:equals(b)):is_true()
    expect(a:hash()):equals(b:hash())
    expect(a:equals(c)):is_false()
    expect(a.op):equals("=")
  end)
  it("attaches #pragma lines to the next statement", function()
    local u = source.parse("void f() {\n#pragma unroll 4\n#pragma nounroll\n  for (;;) {}\n  x();\n}")
    local loop = u:nodes("for")[1]
    local ps = loop:pragmas()
    expect(#ps):equals(2)
    expect(ps[1]:text()):equals("#pragma unroll 4")
    expect(ps[1]:pragma_target() == loop):is_true()
    expect(#u:nodes("expr_stmt")[1]:pragmas()):equals(0)
  end)
  it("exposes tokens with their trivia", function()
    local u = source.parse("x = /* c */ 1; // end\n")
    local toks = u:tokens()
    expect(#toks):equals(5)
    expect(toks[3].kind):equals("int")
    expect(toks[3].trivia):equals(" /* c */ ")
    expect(toks[5].kind):equals("eof")
    expect(toks[5].trivia):equals(" // end\n")
    local parts = {}
    for _, t in ipairs(toks) do parts[#parts + 1] = t.trivia .. t.text end
    expect(table.concat(parts)):equals(tostring(u))
    local first, last = u:nodes("assign")[1]:token_range()
    expect(first):equals(1)
    expect(last):equals(3)
    expect(#u:tokens(first, last)):equals(3)
  end)
  it("lists kind and field names", function()
    local kinds, fields = {}, {}
    for _, k in ipairs(source.kinds) do kinds[k] = true end
    for _, f in ipairs(source.fields) do fields[f] = true end
    for _, k in ipairs({ "function", "for", "binary", "cxx_cast", "opaque", "range_for" }) do
      expect(kinds[k]):is_true()
    end
    expect(fields.body and fields.cond and fields.callee):is_true()
    expect(source.max_depth):at_least(256)
  end)
  it("answers the word prefilter", function()
    local u = source.parse(saxpy)
    expect(u:has_word("threadIdx")):is_true()
    expect(u:has_word("__syncthreads")):is_false()
  end)
end)

describe("kl.source: facts", function()
  it("lists @kl annotation lines", function()
    local ann = source.parse(saxpy):annotations()
    expect(#ann):equals(1)
    expect(ann[1].text):equals("launch grid(cdiv(n, 256)) block(256)")
    expect(ann[1].line):equals(1)
  end)
  it("evaluates integer constants", function()
    local u = source.parse([[
#define BLOCK 256
#define HALF (BLOCK / 2)
constexpr int kWarps = HALF / 32;
template <int TILE = kWarps * 8> __global__ void k(float *p) {}
]])
    expect(u:constant("BLOCK")):equals(256)
    expect(u:constant("HALF")):equals(128)
    expect(u:constant("kWarps")):equals(4)
    expect(u:constant("TILE")):equals(32)
    expect(u:constant("nope")):is_nil()
    local cs = u:constants()
    expect(#cs):equals(4)
    expect(cs[4].kind):equals("template_param")
    expect(cs[3].expr):equals("HALF / 32")
  end)
  it("gives the affine form of an index expression", function()
    local u = source.parse(saxpy)
    local idx = u:nodes("index")[1]:field("index")
    local f = idx:affine()
    expect(f.affine):is_true()
    expect(#f.terms):equals(2)
    expect(f.tx_coef):equals("1")
    local vars = {}
    for _, t in ipairs(f.terms) do vars[#vars + 1] = t.var .. ":" .. table.concat(t.syms, "*") end
    table.sort(vars)
    expect(table.concat(vars, " ")):equals("blockIdx.x:blockDim.x threadIdx.x:")
  end)
  it("gives per-pointer access patterns", function()
    local u = source.parse([[
__global__ void mm(const float *A, const float *B, float *C, int N, int K) {
  int row = blockIdx.y * 16 + threadIdx.y;
  int col = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  for (int j = 0; j < 4; ++j) acc += C[col * N];
  C[row * N + col] = acc;
}
]])
    local ap = u:access_patterns(u:functions()[1])
    expect(ap.A.tx_stride):equals(0)
    expect(ap.A.coalesced):is_true()
    expect(ap.A.accesses[1].loop_stride):equals(1)
    expect(ap.B.tx_stride):equals(1)
    expect(ap.B.accesses[1].loop_stride):equals("N")
    expect(ap.C.coalesced):is_false()
    expect(ap.C.tx_stride):equals("N")
    expect(ap.C.loop_reuse):is_true()
    expect(ap.C.writes):is_true()
    expect(ap.C.reads):is_true()
    expect(ap.N):is_nil()
  end)
  it("follows grid-stride induction variables", function()
    local u = source.parse([[
__global__ void gs(const float *in, float *out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = in[i];
}
]])
    local ap = u:access_patterns(u:functions()[1])
    expect(ap.out.coalesced):is_true()
    expect(ap.out.tx_stride):equals(1)
    expect(ap.out.accesses[1].loop_stride):equals("gridDim.x*blockDim.x")
    expect(ap["in"].loop_reuse):is_false()
  end)
  it("simulates shared-memory bank conflicts", function()
    local u = source.parse([[
__global__ void t(float *out) {
  __shared__ float tile[32][32];
  __shared__ float pad[32][33];
  tile[threadIdx.y][threadIdx.x] = 1.f;
  out[0] = tile[threadIdx.x][threadIdx.y] + pad[threadIdx.x][threadIdx.y];
}
]])
    local sa = u:shared_accesses(u:functions()[1])
    expect(sa.tile.bank_ways):equals(32)
    expect(sa.tile.elem_bytes):equals(4)
    expect(#sa.tile.accesses):equals(2)
    expect(sa.tile.accesses[1].bank_ways):equals(1)
    expect(sa.tile.accesses[2].tx_stride):equals(32)
    expect(sa.pad.bank_ways):equals(1)
  end)
  it("reads float4 accesses and pointer aliases", function()
    local u = source.parse([[
__global__ void v(const float *x, float *y) {
  const float *xb = x + blockIdx.x * 1024;
  float4 a = *reinterpret_cast<const float4 *>(&xb[4 * threadIdx.x]);
  y[threadIdx.x] = a.x;
}
]])
    local ap = u:access_patterns(u:functions()[1])
    local acc = ap.x.accesses[1]
    expect(acc.text):equals("xb[4 * threadIdx.x]")
    expect(acc.vector_width):equals(4)
    expect(acc.tx_stride):equals(4)
    expect(ap.x.coalesced):is_true()
    expect(acc.form.const):equals(0)
  end)
end)
