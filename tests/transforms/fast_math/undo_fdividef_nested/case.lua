return { direction = "undo", key = "ratio:__fdividef", roundtrip = false,
  why = "the parentheses undo adds stay when apply puts __fdividef back: __fdividef(a[i], __fdividef(b[i], c)) - -(__fdividef(c, a[i]))" }
