return { direction = "undo", key = "row_max:for#2",
         why = "a halving loop (offset >>= 1) counts 5 trips: undo drops its bare pragma and apply puts it back" }
