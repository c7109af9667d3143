return { direction = "undo", key = "dot8:for#1", roundtrip = false,
         why = "the undo site's params hold factor 2, but the counterpart apply site carries no params, so it rebuilds a bare #pragma unroll" }
