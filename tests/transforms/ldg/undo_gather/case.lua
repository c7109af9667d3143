return { direction = "undo", key = "gather:v", roundtrip = false, alias = {},
         why = "undo unwraps all three __ldg loads of v (perm's stays); apply wraps them back but writes the third one without the blanks the input had inside its parentheses" }
