return { direction = "apply", key = "tile:for#2", params = { factor = 4 },
         why = "the inner loop is the unbraced body of an unrolled loop: the pragma goes on its own line between them" }
