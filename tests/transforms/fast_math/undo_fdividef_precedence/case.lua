return { direction = "undo", key = "blend:__fdividef", roundtrip = false,
  why = "the parentheses undo adds around the product's quotient, w * (a / (b + 1.0f)), stay when apply puts __fdividef back: w * (__fdividef(a, b + 1.0f))" }
